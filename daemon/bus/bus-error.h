/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "fridge-error.h"

/* The one place a method call's error gets its name, in two tiers:
 * r > 0 is a FridgeError (an answer), named by fridge-error.h's table;
 * r < 0 is a negative errno (a plain system failure), named by sd-bus.
 * message NULL: the table's summary, or the errno's text. Returns a
 * negative errno for the handler to return. 0 counts as an internal
 * error: a caller with no error has nothing to set. */
int bus_error_set(sd_bus_error *error, int r, const char *message);
int bus_error_setf(sd_bus_error *error, int r, const char *format, ...) __attribute__((format(printf, 3, 4)));
