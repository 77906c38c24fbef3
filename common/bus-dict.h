/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* Called for each entry of an a{sv} with the entry's name; the message is
 * at the entry's variant, which the callback reads (entering it) or skips.
 * A negative answer stops the walk and is returned. */
typedef int (*BusDictEntry)(sd_bus_message *m, const char *name, void *userdata);

/* Walks the a{sv} at the current position of m, entry by entry, and leaves
 * m after it. Options, GetAll replies and PropertiesChanged all carry one. */
int bus_dict_read(sd_bus_message *m, BusDictEntry entry, void *userdata);
