/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The object: Sleep and its options, the properties, the signals and their
 * emission. The other methods are in bus-methods.c. */
#include "bus.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/types.h>
#include <string.h>

#include "bus-internal.h"
#include "bus-options.h"
#include "fridge-config.h"
#include "log.h"
#include "plan.h"
#include "polkit.h"
#include "time-util.h"
#include "util.h"

#define EMIT_INTERVAL_USEC (100 * USEC_PER_MSEC) /* progress at most ~10 Hz */

static const char *const state_property_names[_PROP_MAX] = {
        [PROP_STATE] = "State",
        [PROP_CYCLE_ID] = "CycleId",
        [PROP_KIND] = "Kind",
        [PROP_PHASE] = "Phase",
        [PROP_LAST_RESULT] = "LastResult",
        [PROP_LAST_WAKE_REASON] = "LastWakeReason",
        [PROP_CYCLE_SETTINGS] = "CycleSettings",
        [PROP_CANCELLABLE] = "Cancellable",
        [PROP_STARTED_BY] = "StartedBy",
};

/* ---- Sleep ---- */

/* Sleep's and CanSleep's first argument */
static int read_kind(sd_bus_message *msg, const char **ret_name, SleepKind *ret, sd_bus_error *error) {
        int r = sd_bus_message_read(msg, "s", ret_name);
        if (r < 0)
                return r;
        *ret = sleep_kind_from_string(*ret_name);
        if (*ret < 0)
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS,
                                      "kind '%s' is not one of suspend, hibernate, hybrid-sleep", *ret_name);
        return 0;
}

static int method_sleep(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *kind_name;
        SleepKind kind;
        _cleanup_(cycle_options_clear) CycleOptions opts = {};

        int r = read_kind(msg, &kind_name, &kind, error);
        if (r < 0)
                return r;
        r = bus_options_read(msg, kind_name, &opts, error);
        if (r < 0)
                return r;
        /* A dry run, a pm_test run (the kernel only rehearses) or a freeze
         * held longer than the administrator set freezes other users'
         * services without the machine sleeping */
        bool pm_test = opts.pm_test && strcmp(opts.pm_test, "none") != 0;
        bool manage = opts.dry_run || pm_test || opts.freeze_timeout_ms > manager_freeze_timeout_ms(b->manager);
        const char *actions[4] = { kind == SLEEP_SUSPEND ? POLKIT_ACTION_SLEEP : POLKIT_ACTION_HIBERNATE };
        size_t n = 1;
        if (manage)
                actions[n++] = POLKIT_ACTION_MANAGE;
        if (opts.ignore_inhibitors)
                actions[n++] = POLKIT_ACTION_IGNORE_INHIBITORS;
        AUTHORIZE_ALL(b, msg, actions, error);

        uid_t uid;
        pid_t pid;
        bus_caller_creds(msg, &uid, &pid);
        g_autofree char *ignored = opts.ignore_inhibitors ? manager_block_holders(b->manager) : NULL;
        uint64_t id;
        g_autofree char *why = NULL;
        manager_set_client_pid(b->manager, pid);
        manager_set_client_uid(b->manager, uid);
        r = manager_start(b->manager, kind, &opts, &id, &why);
        if (r != 0)
                return bus_error_set(error, r, why);
        if (ignored && *ignored)
                log_notice("Cycle %" G_GUINT64_FORMAT ": uid %d (pid %d, %s) ignores fridge's block inhibitors, "
                           "held by %s", id, uid == (uid_t) -1 ? -1 : (int) uid, (int) pid,
                           sd_bus_message_get_sender(msg), ignored);
        return sd_bus_reply_method_return(msg, "t", id);
}

/* ---- CanSleep ---- */

/* logind's CanSuspend for fridge, per caller: "na" when the kernel or the
 * configuration does not offer the kind (polkit is not asked then), else
 * what polkit says about the actions Sleep would need, without asking
 * the user; with a block inhibitor held, sleeping also needs leave to
 * ignore it, as logind asks for its ignore-inhibit action */
static int method_can_sleep(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *kind_name, *reason;
        SleepKind kind;

        int r = read_kind(msg, &kind_name, &kind, error);
        if (r < 0)
                return r;
        if (!g_str_equal(manager_can(b->manager, kind, 0, &reason), "yes"))
                return sd_bus_reply_method_return(msg, "s", "na");
        g_autofree char *blocks = manager_block_holders(b->manager);
        const char *actions[3] = { kind == SLEEP_SUSPEND ? POLKIT_ACTION_SLEEP : POLKIT_ACTION_HIBERNATE,
                                   *blocks ? POLKIT_ACTION_IGNORE_INHIBITORS : NULL };
        PolkitAnswer answer;
        r = polkit_check_all(b->polkit, msg, actions, &answer, error);
        if (r <= 0)
                return r < 0 ? r : 1;   /* asked: the call comes back with the answer */
        return sd_bus_reply_method_return(msg, "s", polkit_answer_to_string(answer));
}

/* ---- properties ---- */

typedef const char *(*StringGetter)(const Manager *m);

static int get_string(sd_bus_message *reply, StringGetter getter, Bus *b) {
        return sd_bus_message_append(reply, "s", getter(b->manager));
}

#define STRING_PROPERTY(fn, getter)                                                                     \
        static int fn(sd_bus *bus, const char *path, const char *interface, const char *property,      \
                      sd_bus_message *reply, void *userdata, sd_bus_error *error) {                    \
                return get_string(reply, getter, userdata);                                            \
        }

STRING_PROPERTY(property_get_state, manager_state)
STRING_PROPERTY(property_get_kind, manager_kind)
STRING_PROPERTY(property_get_phase, manager_phase)
STRING_PROPERTY(property_get_progress_text, manager_progress_text)
STRING_PROPERTY(property_get_last_result, manager_last_result)
STRING_PROPERTY(property_get_last_wake_reason, manager_last_wake_reason)
STRING_PROPERTY(property_get_started_by, manager_started_by)

static int property_get_cancellable(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        return sd_bus_message_append(reply, "b", manager_cancellable(b->manager));
}

static int property_get_cycle_id(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        return sd_bus_message_append(reply, "t", manager_cycle_id(b->manager));
}

static int property_get_progress(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        return sd_bus_message_append(reply, "d", manager_progress(b->manager));
}

/* The request being answered, for manager_can(): sd-bus dispatches one
 * message per turn of the loop, so the loop's iteration names it (+1: 0
 * means none) */
static uint64_t current_call(Bus *b) {
        uint64_t it = 0;
        return sd_event_get_iteration(sd_bus_get_event(b->bus), &it) < 0 ? 0 : it + 1;
}

/* CanSuspend, CanSuspendReason, CanHibernate… from the property's name */
static int property_get_can(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        SleepKind kind = g_str_has_prefix(property, "CanSuspend") ? SLEEP_SUSPEND
                       : g_str_has_prefix(property, "CanHibernate") ? SLEEP_HIBERNATE : SLEEP_HYBRID;
        const char *reason = "";
        const char *answer = manager_can(b->manager, kind, current_call(b), &reason);
        return sd_bus_message_append(reply, "s", g_str_has_suffix(property, "Reason") ? reason : answer);
}

/* HibernateWriter, HibernateWriterReason */
static int property_get_hibernate_writer(sd_bus *bus, const char *path, const char *interface, const char *property,
                                         sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        g_autofree char *reason = NULL;
        const char *writer = manager_hibernate_writer(b->manager, current_call(b), &reason);
        return sd_bus_message_append(reply, "s", g_str_has_suffix(property, "Reason") ? (reason ? reason : "")
                                                                                         : writer);
}

/* HibernateEncrypted, HibernateWarning */
static int property_get_hibernate_encrypted(sd_bus *bus, const char *path, const char *interface,
                                            const char *property, sd_bus_message *reply, void *userdata,
                                            sd_bus_error *error) {
        Bus *b = userdata;
        g_autofree char *warning = NULL;
        const char *encrypted = manager_hibernate_encrypted(b->manager, current_call(b), &warning);
        return sd_bus_message_append(reply, "s", g_str_equal(property, "HibernateWarning") ? (warning ? warning : "")
                                                                                           : encrypted);
}

static int property_get_supported_kinds(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        Bus *b = userdata;
        g_auto(GStrv) kinds = manager_supported_kinds(b->manager, current_call(b));
        return sd_bus_message_append_strv(reply, kinds);
}

static int property_get_cycle_settings(sd_bus *bus, const char *path, const char *interface,
                                      const char *property, sd_bus_message *reply, void *userdata,
                                      sd_bus_error *error) {
        Bus *b = userdata;
        g_auto(GStrv) settings = manager_cycle_settings(b->manager);
        return sd_bus_message_append_strv(reply, settings);
}

static int property_get_hook_budget(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        return sd_bus_message_append(reply, "u", manager_hook_budget_ms(b->manager));
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", FRIDGE_VERSION);
}

static int property_get_sleep_freeze(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        g_autofree char *status = manager_sleep_freeze_status(b->manager);
        return sd_bus_message_append(reply, "s", status);
}

static int property_get_freeze_filesystems(sd_bus *bus, const char *path, const char *interface,
                                           const char *property, sd_bus_message *reply, void *userdata,
                                           sd_bus_error *error) {
        Bus *b = userdata;
        return sd_bus_message_append(reply, "s", manager_freeze_filesystems(b->manager));
}

const sd_bus_vtable fridge_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Sleep", SD_BUS_ARGS("s", kind, "a{sv}", options), SD_BUS_RESULT("t", cycle),
                                method_sleep, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Cancel", SD_BUS_ARGS("t", cycle), SD_BUS_NO_RESULT, bus_method_cancel,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Hook", SD_BUS_ARGS("s", when, "s", kind), SD_BUS_RESULT("t", cycle), bus_method_hook,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetPlan", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ssss)", plan), bus_method_get_plan,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetClass", SD_BUS_ARGS("s", unit_or_cgroup, "s", class), SD_BUS_NO_RESULT,
                                bus_method_set_class, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("HoldClass", SD_BUS_ARGS("s", class, "s", who, "s", why), SD_BUS_RESULT("h", fd),
                                bus_method_hold_class, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("HoldRole", SD_BUS_ARGS("s", role, "u", pid), SD_BUS_RESULT("h", fd),
                                bus_method_hold_role, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Inhibit", SD_BUS_ARGS("s", who, "s", why, "s", mode), SD_BUS_RESULT("h", fd),
                                bus_method_inhibit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListInhibitors", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(ssssuu)", inhibitors), bus_method_list_inhibitors,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetCycleTimeline", SD_BUS_ARGS("t", cycle),
                                SD_BUS_RESULT("a{sv}", info, "a(stt)", phases, "a(ssttt)", cgroups, "a(tt)", flush),
                                bus_method_get_cycle_timeline, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CanSleep", SD_BUS_ARGS("s", kind), SD_BUS_RESULT("s", answer), method_can_sleep,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListCycles", SD_BUS_ARGS("u", max), SD_BUS_RESULT("aa{sv}", cycles),
                                bus_method_list_cycles, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("SleepImminent", SD_BUS_ARGS("t", cycle, "s", kind), 0),
        SD_BUS_SIGNAL_WITH_ARGS("Resumed", SD_BUS_ARGS("t", cycle, "t", slept_usec, "s", wake_reason), 0),
        SD_BUS_SIGNAL_WITH_ARGS("CycleFinished",
                                SD_BUS_ARGS("t", cycle, "s", result, "s", error, "s", message), 0),
        SD_BUS_PROPERTY("State", "s", property_get_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("CycleId", "t", property_get_cycle_id, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Kind", "s", property_get_kind, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Phase", "s", property_get_phase, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Progress", "d", property_get_progress, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ProgressText", "s", property_get_progress_text, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("CycleSettings", "as", property_get_cycle_settings, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Cancellable", "b", property_get_cancellable, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("StartedBy", "s", property_get_started_by, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("CanSuspend", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanSuspendReason", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanHibernate", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanHibernateReason", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanHybridSleep", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanHybridSleepReason", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("HibernateWriter", "s", property_get_hibernate_writer, 0, 0),
        SD_BUS_PROPERTY("HibernateWriterReason", "s", property_get_hibernate_writer, 0, 0),
        SD_BUS_PROPERTY("HibernateEncrypted", "s", property_get_hibernate_encrypted, 0, 0),
        SD_BUS_PROPERTY("HibernateWarning", "s", property_get_hibernate_encrypted, 0, 0),
        SD_BUS_PROPERTY("SupportedKinds", "as", property_get_supported_kinds, 0, 0),
        SD_BUS_PROPERTY("LastResult", "s", property_get_last_result, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LastWakeReason", "s", property_get_last_wake_reason, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("HookBudgetMs", "u", property_get_hook_budget, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("SleepFreeze", "s", property_get_sleep_freeze, 0, 0),
        SD_BUS_PROPERTY("FreezeFilesystems", "s", property_get_freeze_filesystems, 0, 0),
        SD_BUS_VTABLE_END,
};

/* ---- emission ---- */

/* The clock, not sd_event_now(): the loop's cached time can be a whole
 * long iteration old (a freeze stage over hundreds of cgroups), and a
 * stale stamp would let the next emission through too early */
static void emit_progress(Bus *b) {
        b->last_progress_emit = now(CLOCK_MONOTONIC);
        b->progress_pending = false;
        (void) sd_event_source_set_enabled(b->throttle, SD_EVENT_OFF);
        int r = sd_bus_emit_properties_changed(b->bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "Progress",
                                               "ProgressText", NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to emit progress: %m");
}

static int on_throttle(sd_event_source *s, uint64_t usec, void *userdata) {
        emit_progress(userdata);
        return 0;
}

static char *state_property_text(const Manager *m, StateProperty p) {
        switch (p) {
        case PROP_STATE:            return g_strdup(manager_state(m));
        case PROP_CYCLE_ID:         return g_strdup_printf("%" G_GUINT64_FORMAT, manager_cycle_id(m));
        case PROP_KIND:             return g_strdup(manager_kind(m));
        case PROP_PHASE:            return g_strdup(manager_phase(m));
        case PROP_LAST_RESULT:      return g_strdup(manager_last_result(m));
        case PROP_LAST_WAKE_REASON: return g_strdup(manager_last_wake_reason(m));
        case PROP_CANCELLABLE:      return g_strdup(manager_cancellable(m) ? "true" : "false");
        case PROP_STARTED_BY:       return g_strdup(manager_started_by(m));
        case PROP_CYCLE_SETTINGS: {
                g_auto(GStrv) l = manager_cycle_settings(m);
                return g_strjoinv("\n", l);
        }
        default:                    g_assert_not_reached();
        }
}

/* Phase changes are few per cycle and each matters to a client drawing the
 * phases: they are sent at once, never coalesced away; only what changed. */
static void emit_state(Bus *b) {
        const char *changed[_PROP_MAX + 1] = {};
        size_t n = 0;

        for (StateProperty p = 0; p < _PROP_MAX; p++) {
                g_autofree char *now = state_property_text(b->manager, p);
                if (g_strcmp0(now, b->sent[p]) == 0)
                        continue;
                g_free(b->sent[p]);
                b->sent[p] = g_steal_pointer(&now);
                changed[n++] = state_property_names[p];
        }
        if (n == 0)
                return;
        int r = sd_bus_emit_properties_changed_strv(b->bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                                    (char **) changed);
        if (r < 0)
                log_warning_errno(r, "Failed to emit state: %m");
}

static void on_changed(void *userdata, unsigned what) {
        Bus *b = userdata;

        if (what & (MANAGER_CHANGED_STATE | MANAGER_CHANGED_LAST)) {
                emit_state(b);
                what |= MANAGER_CHANGED_PROGRESS;
        }
        if (!(what & MANAGER_CHANGED_PROGRESS))
                return;

        uint64_t t = now(CLOCK_MONOTONIC);
        if (t >= b->last_progress_emit + EMIT_INTERVAL_USEC || b->last_progress_emit == 0) {
                emit_progress(b);
                return;
        }
        if (!b->progress_pending) {
                b->progress_pending = true;
                (void) sd_event_source_set_time(b->throttle, b->last_progress_emit + EMIT_INTERVAL_USEC);
                (void) sd_event_source_set_enabled(b->throttle, SD_EVENT_ONESHOT);
        }
}

static void on_sleep_imminent(void *userdata, uint64_t cycle, SleepKind kind) {
        Bus *b = userdata;
        int r = sd_bus_emit_signal(b->bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "SleepImminent", "ts", cycle,
                                   sleep_kind_to_string(kind));
        if (r < 0)
                log_warning_errno(r, "Failed to emit SleepImminent: %m");
        /* The machine may sleep in the next instant: get the signal out first */
        (void) sd_bus_flush(b->bus);
}

static void on_resumed(void *userdata, uint64_t cycle, uint64_t slept_usec, const char *wake_reason) {
        Bus *b = userdata;
        int r = sd_bus_emit_signal(b->bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "Resumed", "tts", cycle,
                                   slept_usec, wake_reason);
        if (r < 0)
                log_warning_errno(r, "Failed to emit Resumed: %m");
}

static void on_finished(void *userdata, uint64_t cycle, CycleResult result, FridgeError error,
                        const char *message) {
        Bus *b = userdata;
        int r = sd_bus_emit_signal(b->bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "CycleFinished", "tsss", cycle,
                                   cycle_result_to_string(result), fridge_error_name(error), message);
        if (r < 0)
                log_warning_errno(r, "Failed to emit CycleFinished: %m");
        /* On the socket before the manager forgets the cycle's record */
        (void) sd_bus_flush(b->bus);
}

static const ManagerOps bus_manager_ops = {
        .changed = on_changed,
        .sleep_imminent = on_sleep_imminent,
        .resumed = on_resumed,
        .finished = on_finished,
        .hold_released = bus_on_hold_released,
        .inhibitor_released = bus_on_inhibitor_released,
};

int bus_new(sd_bus *bus, Manager *m, Bus **ret) {
        Bus *b = g_new0(Bus, 1);
        b->holders = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify) bus_holder_track_free);
        b->bus = sd_bus_ref(bus);
        b->manager = m;

        int r = polkit_new(bus, manager_pending_authorizations_per_user(m), &b->polkit);
        if (r < 0)
                goto fail;
        r = sd_bus_add_object_vtable(bus, &b->vtable_slot, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                         fridge_vtable, b);
        if (r < 0)
                goto fail;
        r = sd_event_add_time(sd_bus_get_event(bus), &b->throttle, CLOCK_MONOTONIC, 0, 10 * USEC_PER_MSEC,
                              on_throttle, b);
        if (r < 0)
                goto fail;
        (void) sd_event_source_set_enabled(b->throttle, SD_EVENT_OFF);
        (void) sd_event_source_set_description(b->throttle, "progress-throttle");

        for (StateProperty p = 0; p < _PROP_MAX; p++)
                b->sent[p] = state_property_text(m, p);
        manager_set_ops(m, &bus_manager_ops, b);
        r = bus_systemd_watch(b);
        if (r < 0) {
                log_warning_errno(r, "Cannot watch systemd on the bus: %m");
                manager_set_systemd_version(m, 0);
        }
        *ret = b;
        return 0;
fail:
        bus_free(b);
        return log_error_errno(r, "Failed to set up the D-Bus object: %m");
}

Bus *bus_free(Bus *b) {
        if (!b)
                return NULL;
        if (b->manager)
                manager_set_ops(b->manager, NULL, NULL);
        g_clear_pointer(&b->holders, g_hash_table_unref);
        g_clear_pointer(&b->polkit, polkit_free);
        sd_event_source_disable_unref(b->throttle);
        bus_systemd_unwatch(b);
        sd_bus_slot_unref(b->vtable_slot);
        sd_bus_unref(b->bus);
        for (StateProperty p = 0; p < _PROP_MAX; p++)
                g_free(b->sent[p]);
        g_free(b);
        return NULL;
}
