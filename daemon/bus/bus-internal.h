/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What bus.c (the object, Sleep, properties, emission) and bus-methods.c
 * (the other methods, and the holds and inhibitors they track) share. */

#include <systemd/sd-bus.h>

#include "bus.h"
#include "bus-error.h"
#include "polkit.h"

/* The state-like properties, sent at once when they change */
typedef enum StateProperty {
        PROP_STATE,
        PROP_CYCLE_ID,
        PROP_KIND,
        PROP_PHASE,
        PROP_LAST_RESULT,
        PROP_LAST_WAKE_REASON,
        PROP_CYCLE_SETTINGS,
        PROP_CANCELLABLE,
        PROP_STARTED_BY,
        _PROP_MAX,
} StateProperty;

struct Bus {
        Polkit *polkit;
        GHashTable *holders;    /* sender → HolderTrack*: its holds and inhibitors end with its connection */
        sd_bus *bus;
        Manager *manager;
        sd_bus_slot *vtable_slot;
        sd_bus_slot *systemd_match;     /* org.freedesktop.systemd1's owner changes: its Version is asked again */
        sd_bus_slot *systemd_call;      /* systemd's Version */
        sd_event_source *throttle;
        uint64_t last_progress_emit;
        bool progress_pending;
        char *sent[_PROP_MAX]; /* what clients were last told, as text */
};

/* bus-systemd.c: systemd's version for SleepFreeze, asked now and
 * whenever systemd (re)joins the bus */
int bus_systemd_watch(Bus *b);
void bus_systemd_unwatch(Bus *b);

typedef struct HolderTrack HolderTrack;
void bus_holder_track_free(HolderTrack *t);

void bus_caller_creds(sd_bus_message *msg, uid_t *ret_uid, pid_t *ret_pid);
pid_t bus_caller_pid(sd_bus_message *msg);

/* After the arguments are checked (a bad call is InvalidArgs for anyone),
 * before anything changes. 0: polkit was asked and the call comes back
 * with the answer; the handler then returns 1 (the reply is still owed). */
#define AUTHORIZE(b, msg, action, error)                                      \
        do {                                                                   \
                int _r = polkit_verify((b)->polkit, (msg), (action), (error)); \
                if (_r <= 0)                                                   \
                        return _r < 0 ? _r : 1;                                \
        } while (0)

/* The same, every action of a NULL-terminated list */
#define AUTHORIZE_ALL(b, msg, actions, error)                                      \
        do {                                                                        \
                int _r = polkit_verify_all((b)->polkit, (msg), (actions), (error)); \
                if (_r <= 0)                                                        \
                        return _r < 0 ? _r : 1;                                     \
        } while (0)

/* Who may see a cycle that `owner` started (bus-timeline.c): 1 yes, 0
 * polkit was asked (the handler returns 1), <0 refused with `error` set */
int bus_cycle_visible(Bus *b, sd_bus_message *msg, uid_t owner, sd_bus_error *error);

/* ManagerOps: a hold or an inhibitor ended */
void bus_on_hold_released(void *userdata, uint64_t id);
void bus_on_inhibitor_released(void *userdata, const char *sender);

/* The handlers of bus-methods.c, for the vtable */
int bus_method_cancel(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int bus_method_hook(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int bus_method_get_plan(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int bus_method_set_class(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int bus_method_hold_class(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int bus_method_hold_role(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int bus_method_inhibit(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int bus_method_get_cycle_timeline(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int bus_method_list_inhibitors(sd_bus_message *msg, void *userdata, sd_bus_error *error);
/* bus-history.c */
int bus_method_list_cycles(sd_bus_message *msg, void *userdata, sd_bus_error *error);
