/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "logind.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "bus-match.h"
#include "log.h"
#include "util.h"

#define LOGIND_NAME      "org.freedesktop.login1"
#define LOGIND_PATH      "/org/freedesktop/login1"
#define LOGIND_INTERFACE "org.freedesktop.login1.Manager"

struct Logind {
        sd_bus *bus;
        LogindPrepareFunc on_prepare;
        void *userdata;
        bool present;
        int lock_fd;                    /* the delay inhibitor, -1 when not held */
        sd_bus_slot *owner_match;
        sd_bus_slot *prepare_match;
        sd_bus_slot *owner_call;        /* GetNameOwner at start-up */
        sd_bus_slot *inhibit_call;      /* pending Inhibit */
        sd_bus_slot *sleep_call;        /* pending Suspend/Hibernate/HybridSleep */
        LogindSleepDoneFunc sleep_done;
        void *sleep_userdata;
        /* the block inhibitor that mirrors fridge's own (logind_set_block) */
        char *block_want;               /* its why as it should be, NULL: none */
        char *block_why;                /* as held, with block_fd */
        int block_fd;                   /* -1 when not held */
        sd_bus_slot *block_call;        /* pending Inhibit for block_asked */
        char *block_asked;
        char *block_refused;            /* the why logind last refused: not asked again */
        bool block_warned;              /* logind's absence was logged */
};

bool logind_present(const Logind *l) {
        return l && l->present;
}

bool logind_holds_lock(const Logind *l) {
        return l && l->lock_fd >= 0;
}

static void release_lock(Logind *l) {
        l->inhibit_call = sd_bus_slot_unref(l->inhibit_call);
        if (l->lock_fd < 0)
                return;
        log_debug("Releasing the logind delay lock");
        close(TAKE_FD(l->lock_fd));
}

/* Our copy of the fd of logind's answer to Inhibit, or -1 once the
 * warning says why there is none (`what`, `consequence`: for it) */
static int inhibit_reply_fd(sd_bus_message *reply, const char *what, const char *consequence) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int fd;
        if (e) {
                log_warning("logind refused fridged's %s (%s)%s", what, e->message, consequence);
                return -1;
        }
        if (sd_bus_message_read(reply, "h", &fd) < 0 || (fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
                log_warning("Cannot read the %s from logind's reply%s", what, consequence);
                return -1;
        }
        return fd;
}

/* The new fd is in before the old one goes: no gap */
static void replace_fd(int *slot, int fd) {
        if (*slot >= 0)
                close(*slot);
        *slot = fd;
}

static int on_inhibit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Logind *l = userdata;
        l->inhibit_call = sd_bus_slot_unref(l->inhibit_call);
        int fd = inhibit_reply_fd(reply, "delay lock", "");
        if (fd < 0)
                return 0;
        replace_fd(&l->lock_fd, fd);
        log_debug("Holding a logind delay lock");
        return 0;
}

/* Async: logind may be slow to answer, and the loop never waits on it */
static void take_lock(Logind *l) {
        if (!l->present || l->lock_fd >= 0 || l->inhibit_call)
                return;
        int r = sd_bus_call_method_async(l->bus, &l->inhibit_call, LOGIND_NAME, LOGIND_PATH, LOGIND_INTERFACE,
                                         "Inhibit", on_inhibit_reply, l, "ssss", "sleep", "fridge",
                                         "staged freezing", "delay");
        if (r < 0)
                log_warning_errno(r, "Cannot ask logind for a delay lock: %m");
}

/* ---- the mirror of fridge's block inhibitors ---- */

static void release_block(Logind *l) {
        l->block_call = sd_bus_slot_unref(l->block_call);
        g_clear_pointer(&l->block_asked, g_free);
        g_clear_pointer(&l->block_why, g_free);
        if (l->block_fd >= 0) {
                log_debug("Releasing fridged's logind block inhibitor");
                close(TAKE_FD(l->block_fd));
        }
}

static void sync_block(Logind *l);

static int on_block_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Logind *l = userdata;
        g_autofree char *asked = g_steal_pointer(&l->block_asked);

        l->block_call = sd_bus_slot_unref(l->block_call);
        int fd = inhibit_reply_fd(reply, "block inhibitor",
                                  ": logind's own sleeps (systemctl suspend, a desktop's suspend button) do not "
                                  "wait for fridge's block inhibitors; fridge's own cycles still do");
        if (fd < 0) {
                /* not asked again for the same why: a change may fare better */
                g_free(l->block_refused);
                l->block_refused = g_steal_pointer(&asked);
                return 0;
        }
        replace_fd(&l->block_fd, fd);
        g_free(l->block_why);
        l->block_why = g_steal_pointer(&asked);
        g_clear_pointer(&l->block_refused, g_free);
        log_debug("Holding a logind block inhibitor: %s", l->block_why);
        sync_block(l);
        return 0;
}

/* One Inhibit at a time: a change meanwhile is taken up by its reply */
static void sync_block(Logind *l) {
        if (!l->block_want) {
                release_block(l);
                return;
        }
        if (!l->present) {
                if (!l->block_warned)
                        log_warning("logind is not on the bus: fridge's block inhibitors cannot stop its sleeps "
                                    "(fridge's own cycles still wait for them)");
                l->block_warned = true;
                return;
        }
        if (l->block_call || g_strcmp0(l->block_want, l->block_why) == 0 ||
            g_strcmp0(l->block_want, l->block_refused) == 0)
                return;
        int r = sd_bus_call_method_async(l->bus, &l->block_call, LOGIND_NAME, LOGIND_PATH, LOGIND_INTERFACE,
                                         "Inhibit", on_block_reply, l, "ssss", "sleep", "fridge", l->block_want,
                                         "block");
        if (r < 0) {
                log_warning_errno(r, "Cannot ask logind for a block inhibitor: %m");
                return;
        }
        l->block_asked = g_strdup(l->block_want);
}

void logind_set_block(Logind *l, const char *why) {
        if (!l || g_strcmp0(why, l->block_want) == 0)
                return;
        g_free(l->block_want);
        l->block_want = g_strdup(why);
        if (!why)
                l->block_warned = false;
        sync_block(l);
}

static void set_present(Logind *l, bool present) {
        if (present == l->present)
                return;
        l->present = present;
        log_info("logind %s the bus", present ? "is on" : "left");
        if (present) {
                take_lock(l);
                sync_block(l);
        } else {
                release_lock(l);
                release_block(l);
        }
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *name, *old_owner, *new_owner;
        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;
        Logind *l = userdata;
        /* A new logind knows nothing of the old one's inhibitors */
        if (*old_owner) {
                release_lock(l);
                release_block(l);
                g_clear_pointer(&l->block_refused, g_free);
        }
        l->present = false;
        set_present(l, *new_owner != 0);
        return 0;
}

static int on_owner_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Logind *l = userdata;
        l->owner_call = sd_bus_slot_unref(l->owner_call);
        set_present(l, !sd_bus_message_is_method_error(reply, NULL));
        return 0;
}

static int on_prepare_for_sleep(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Logind *l = userdata;
        int start;
        if (sd_bus_message_read(m, "b", &start) < 0)
                return 0;
        log_debug("logind: PrepareForSleep(%s)", start ? "true" : "false");
        if (l->on_prepare)
                l->on_prepare(l->userdata, start);
        /* Letting go is what lets logind go on with the sleep */
        if (start)
                release_lock(l);
        else
                take_lock(l);
        return 0;
}

static int on_sleep_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Logind *l = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        l->sleep_call = sd_bus_slot_unref(l->sleep_call);
        if (l->sleep_done)
                l->sleep_done(l->sleep_userdata, e ? -sd_bus_error_get_errno(e) : 0, e ? e->message : NULL);
        return 0;
}

/* sd-login.h's SD_LOGIND_ROOT_CHECK_INHIBITORS (systemd 248): logind lets
 * root through block inhibitors unless asked to check them */
#define LOGIND_ROOT_CHECK_INHIBITORS (UINT64_C(1) << 0)

int logind_sleep(Logind *l, SleepKind kind, bool ignore_inhibitors, LogindSleepDoneFunc done, void *userdata) {
        static const char *const methods[_SLEEP_KIND_MAX] = {
                [SLEEP_SUSPEND] = "SuspendWithFlags", [SLEEP_HIBERNATE] = "HibernateWithFlags",
                [SLEEP_HYBRID] = "HybridSleepWithFlags",
        };
        if (!logind_present(l))
                return -ENXIO;
        if (l->sleep_call)
                return -EBUSY;
        l->sleep_done = done;
        l->sleep_userdata = userdata;
        /* logind answers once the sleep job is queued; the sleep itself
         * shows as PrepareForSleep and the hooks */
        return sd_bus_call_method_async(l->bus, &l->sleep_call, LOGIND_NAME, LOGIND_PATH, LOGIND_INTERFACE,
                                        methods[kind], on_sleep_reply, l, "t",
                                        ignore_inhibitors ? UINT64_C(0) : LOGIND_ROOT_CHECK_INHIBITORS);
}

int logind_new(sd_bus *bus, LogindPrepareFunc on_prepare, void *userdata, Logind **ret) {
        g_autoptr(Logind) l = g_new0(Logind, 1);
        l->bus = sd_bus_ref(bus);
        l->lock_fd = -1;
        l->block_fd = -1;
        l->on_prepare = on_prepare;
        l->userdata = userdata;

        int r = sd_bus_add_match_async(bus, &l->owner_match, BUS_MATCH_NAME_OWNER_CHANGED(LOGIND_NAME),
                                       on_owner_changed, NULL, l);
        if (r >= 0)
                r = sd_bus_match_signal_async(bus, &l->prepare_match, LOGIND_NAME, LOGIND_PATH, LOGIND_INTERFACE,
                                              "PrepareForSleep", on_prepare_for_sleep, NULL, l);
        if (r >= 0)
                r = sd_bus_call_method_async(bus, &l->owner_call, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                             "org.freedesktop.DBus", "GetNameOwner", on_owner_reply, l, "s",
                                             LOGIND_NAME);
        if (r < 0)
                return log_error_errno(r, "Failed to watch logind on the bus: %m");
        *ret = g_steal_pointer(&l);
        return 0;
}

Logind *logind_free(Logind *l) {
        if (!l)
                return NULL;
        release_lock(l);
        release_block(l);
        g_free(l->block_want);
        g_free(l->block_refused);
        sd_bus_slot_unref(l->owner_match);
        sd_bus_slot_unref(l->prepare_match);
        sd_bus_slot_unref(l->owner_call);
        sd_bus_slot_unref(l->sleep_call);
        sd_bus_unref(l->bus);
        g_free(l);
        return NULL;
}
