/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

/* A polkit question that needs a password is asked in fridgectl's
 * terminal, as systemctl asks it: pkttyagent registers for fridgectl's
 * session and answers when no graphical agent runs there (--fallback).
 * Only for a person at a terminal who is not root, and not with
 * ask_password false (--no-ask-password). Sets the bus's
 * allow-interactive-authorization flag to match; returns true when an
 * agent was started (it owns the terminal until polkit_agent_close()). */
bool polkit_agent_open(sd_bus *bus, bool ask_password);
/* Ends the agent, if one runs; twice is harmless */
void polkit_agent_close(void);
