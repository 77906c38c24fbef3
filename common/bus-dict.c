/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-dict.h"

int bus_dict_read(sd_bus_message *m, BusDictEntry entry, void *userdata) {
        int r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *name;
                r = sd_bus_message_read_basic(m, 's', &name);
                if (r < 0)
                        return r;
                r = entry(m, name, userdata);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}
