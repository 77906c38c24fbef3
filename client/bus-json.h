/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Any D-Bus value as JSON, so `status --json` and `monitor` show every
 * property fridged has, including ones newer than this client. */

#include <stdio.h>
#include <systemd/sd-bus.h>

/* Reads the next complete value of m and writes it as JSON: strings and
 * object paths as strings, numbers as numbers, booleans, arrays as
 * arrays, dictionaries as objects (keys stringified), structs as arrays,
 * variants as their content. Returns 0, or -ENXIO at the end of the
 * current container, or another negative errno. */
int bus_json_write_value(sd_bus_message *m, FILE *f);
