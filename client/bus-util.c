/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-util.h"
#include "i18n.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

static int bus_open_address(const char *address, sd_bus **ret) {
        _cleanup_bus_ sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, address);
        if (r < 0)
                return r;
        /* A bus client says Hello and gets a unique name: it is a bus, not a
         * peer-to-peer connection, even though we chose the address. */
        r = sd_bus_set_bus_client(bus, true);
        if (r < 0)
                return r;
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

int bus_open(const Args *a, sd_bus **ret) {
        if (a->bus_address)
                return bus_open_address(a->bus_address, ret);
        if (a->bus == BUS_KIND_SESSION)
                return sd_bus_open_user(ret);
        return sd_bus_open_system(ret);
}

const char *bus_description(const Args *a) {
        static char buf[256];

        if (a->bus_address) {
                snprintf(buf, sizeof(buf), _("the bus at %s"), a->bus_address);
                return buf;
        }
        return a->bus == BUS_KIND_SESSION ? _("the session bus") : _("the system bus");
}

/* Without waiting for the bus daemon's answer: it handles a connection's
 * messages in order, so the rule is in place before the call that makes
 * fridged signal anything, and each wait is a round trip saved (three of
 * them cost ~10 ms of a client's start under emulation). A rule refused
 * closes the connection (sd-bus's default), which the client reports. */
static int add_match(sd_bus *bus, const char *match, sd_bus_message_handler_t h, void *userdata) {
        if (!h)
                return 0;
        return sd_bus_add_match_async(bus, NULL, match, h, NULL, userdata);
}

int bus_add_fridge_matches(sd_bus *bus, const FridgeHandlers *h, void *userdata) {
        int r;

        r = add_match(bus, MATCH_FRIDGE_SIGNALS, h->signal, userdata);
        if (r < 0)
                return r;
        r = add_match(bus, MATCH_FRIDGE_PROPERTIES, h->properties, userdata);
        if (r < 0)
                return r;
        r = add_match(bus, MATCH_FRIDGE_OWNER, h->owner, userdata);
        if (r < 0)
                return r;
        if (!h->disconnected)
                return 0;
        /* Synthesized locally by sd-bus; no rule goes to the bus daemon. */
        return sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                   "org.freedesktop.DBus.Local", "Disconnected", h->disconnected, userdata);
}

int event_add_exit_signals(sd_event *e, sd_event_signal_handler_t on_sigint, sd_event_signal_handler_t on_sigterm,
                           void *userdata) {
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        r = sd_event_add_signal(e, NULL, SIGINT, on_sigint, userdata);
        if (r < 0)
                return r;
        return sd_event_add_signal(e, NULL, SIGTERM, on_sigterm, userdata);
}
