/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The a{sv} options of Sleep, read by the table in sleep-options.h. */

#include <systemd/sd-bus.h>

#include "sleep-options.h"

/* Reads the a{sv} at the message's position into *o for a Sleep of `kind`
 * ("suspend", ...). An unknown or repeated key, a value of another type or
 * outside the option's range, or an option that does not apply: InvalidArgs
 * naming the option, set in `error`. */
int bus_options_read(sd_bus_message *msg, const char *kind, CycleOptions *o, sd_bus_error *error);

/* One option's value, read as the table's type says (in the variant already
 * entered): a value of the wrong type never reaches another option's field */
int bus_options_read_value(sd_bus_message *msg, const SleepOption *s, CycleOptions *o, sd_bus_error *error);
