/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* systemd's version, for SleepFreeze. PID1 joins the system bus only once
 * the bus is running, and fridged, started from dbus.socket, can be there
 * first: the version is asked at start-up and again whenever
 * org.freedesktop.systemd1 gets an owner (also after a daemon-reexec). */
#include "bus-internal.h"

#include <stdio.h>

#include "bus-match.h"
#include "log.h"
#include "manager.h"
#include "util.h"

#define SYSTEMD_NAME "org.freedesktop.systemd1"

/* "252.33-1~deb12u1", "257.4", a build from git "v258-rc1-…": its number */
static unsigned version_major(const char *version) {
        unsigned major = 0;
        if (version && *version == 'v')
                version++;
        return version && sscanf(version, "%u", &major) == 1 ? major : 0;
}

static int on_systemd_version(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Bus *b = userdata;
        const char *version = NULL;
        b->systemd_call = sd_bus_slot_unref(b->systemd_call);
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        if (e && (sd_bus_error_has_name(e, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
                  sd_bus_error_has_name(e, SD_BUS_ERROR_NAME_HAS_NO_OWNER)))
                log_debug("systemd is not on the bus yet: its version is asked when it comes");
        else if (e)
                log_info("Cannot read systemd's version (%s): whether systemd-sleep freezes user sessions itself "
                         "is unknown", e->message ? e->message : e->name);
        else if (sd_bus_message_read(reply, "v", "s", &version) < 0 || version_major(version) == 0)
                log_warning("systemd's Version property is not a version: %s", version ? version : "(unreadable)");
        manager_set_systemd_version(b->manager, version_major(version));
        return 0;
}

/* Never activated: a bus without systemd (the tests') answers with an
 * error at once */
static int ask_systemd_version(Bus *b) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        b->systemd_call = sd_bus_slot_unref(b->systemd_call);
        int r = sd_bus_message_new_method_call(b->bus, &call, SYSTEMD_NAME, "/org/freedesktop/systemd1",
                                               "org.freedesktop.DBus.Properties", "Get");
        if (r >= 0)
                r = sd_bus_message_set_auto_start(call, false);
        if (r >= 0)
                r = sd_bus_message_append(call, "ss", "org.freedesktop.systemd1.Manager", "Version");
        return r < 0 ? r : sd_bus_call_async(b->bus, &b->systemd_call, call, on_systemd_version, b, 0);
}

static int on_systemd_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Bus *b = userdata;
        const char *name, *old_owner, *new_owner;
        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || !*new_owner)
                return 0;
        int r = ask_systemd_version(b);
        if (r < 0)
                log_warning_errno(r, "Cannot ask systemd for its version: %m");
        return 0;
}

/* The match goes out before the call: the bus handles them in order, so
 * an owner that comes after the call's error is always signalled */
int bus_systemd_watch(Bus *b) {
        int r = sd_bus_add_match_async(b->bus, &b->systemd_match, BUS_MATCH_NAME_OWNER_CHANGED(SYSTEMD_NAME),
                                       on_systemd_owner_changed, NULL, b);
        if (r >= 0)
                r = ask_systemd_version(b);
        return r;
}

void bus_systemd_unwatch(Bus *b) {
        b->systemd_match = sd_bus_slot_unref(b->systemd_match);
        b->systemd_call = sd_bus_slot_unref(b->systemd_call);
}
