/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "manager.h"

/* The D-Bus face of the manager: argument checks, error names, property
 * and signal emission. It calls into the manager and never does the work. */

typedef struct Bus Bus;

int bus_new(sd_bus *bus, Manager *m, Bus **ret);
Bus *bus_free(Bus *b);

/* Errors become D-Bus error names in bus-error.h's bus_error_set, from
 * fridge-error.h's table */

extern const sd_bus_vtable fridge_vtable[];
