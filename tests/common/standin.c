/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "standin.h"

#include <stdio.h>
#include <string.h>
#include <systemd/sd-event.h>

int standin_serve(const char *who, const char *address, const char *name, const char *path, const char *interface,
                  const sd_bus_vtable *vtable, sd_bus **ret_bus) {
        sd_event *event = NULL;
        sd_bus *bus = NULL;
        int r = sd_event_default(&event);
        if (r >= 0)
                r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, path, interface, vtable, NULL);
        if (r >= 0)
                r = sd_bus_request_name(bus, name, 0);
        if (r >= 0)
                r = sd_bus_attach_event(bus, event, 0);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", who, strerror(-r));
                sd_bus_flush_close_unref(bus);
                sd_event_unref(event);
                return 1;
        }
        if (ret_bus)
                *ret_bus = bus;
        printf("READY\n");
        fflush(stdout);
        r = sd_event_loop(event);
        if (ret_bus)
                *ret_bus = NULL;
        sd_bus_flush_close_unref(bus);
        sd_event_unref(event);
        return r < 0 ? 1 : 0;
}
