/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Names on a test's private session bus (GDBus: fridge-agent's side) */

#include <gio/gio.h>
#include <stdbool.h>

/* NameHasOwner, false when the bus does not answer */
bool session_name_has_owner(GDBusConnection *session, const char *name);
