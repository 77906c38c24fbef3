/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "manager.h"

/* The D-Bus face of the manager: argument checks, error names, property
 * and signal emission. It calls into the manager and never does the work. */

typedef struct Bus Bus;

int bus_new(sd_bus *bus, Manager *m, Bus **ret);
Bus *bus_free(Bus *b);

/* The one place errors become D-Bus error names */
const char *bus_cycle_error_name(FridgeError e);
int bus_error_from_errno(sd_bus_error *error, int r, const char *message);

extern const sd_bus_vtable fridge_vtable[];
