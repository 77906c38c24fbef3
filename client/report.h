/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Errors that end a command: for people on stderr, and with --json also
 * as an {"event":"error",…} object on stdout (which stays pure JSON). Each
 * returns the exit code the error maps to. */

#include <systemd/sd-bus.h>

#include "args.h"

/* A failed method call. what: "cannot suspend", "cannot cancel", … */
int report_call_error(const Args *a, const char *what, const sd_bus_error *e);

/* A local failure, r a negative errno. */
int report_errno(const Args *a, const char *what, int r);

/* A failure with our own error name and message. */
int report_error(const Args *a, const char *name, const char *message, int exit_code);
