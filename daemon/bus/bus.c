/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include <string.h>

#include "bus-options.h"
#include "fridge-config.h"
#include "log.h"
#include "plan.h"
#include "polkit.h"
#include "util.h"

#define ERROR_PREFIX FRIDGE_INTERFACE ".Error."
#define EMIT_INTERVAL_USEC (100 * USEC_PER_MSEC) /* progress at most ~10 Hz */

/* The state-like properties, sent at once when they change */
typedef enum StateProperty {
        PROP_STATE,
        PROP_CYCLE_ID,
        PROP_KIND,
        PROP_PHASE,
        PROP_LAST_RESULT,
        PROP_LAST_WAKE_REASON,
        _PROP_MAX,
} StateProperty;

static const char *const state_property_names[_PROP_MAX] = {
        [PROP_STATE] = "State",
        [PROP_CYCLE_ID] = "CycleId",
        [PROP_KIND] = "Kind",
        [PROP_PHASE] = "Phase",
        [PROP_LAST_RESULT] = "LastResult",
        [PROP_LAST_WAKE_REASON] = "LastWakeReason",
};

struct Bus {
        Polkit *polkit;
        GHashTable *holders;    /* sender → HolderTrack*: its holds and inhibitors end with its connection */
        sd_bus *bus;
        Manager *manager;
        sd_bus_slot *vtable_slot;
        sd_event_source *throttle;
        uint64_t last_progress_emit;
        bool progress_pending;
        char *sent[_PROP_MAX]; /* what clients were last told, as text */
};

const char *bus_cycle_error_name(CycleError e) {
        static const char *const names[_CYCLE_ERROR_MAX] = {
                [CYCLE_ERROR_NONE] = "",
                [CYCLE_ERROR_CANCELLED] = ERROR_PREFIX "Cancelled",
                [CYCLE_ERROR_WAKEUP_EVENT] = ERROR_PREFIX "WakeupEvent",
                [CYCLE_ERROR_KERNEL] = ERROR_PREFIX "Kernel",
                [CYCLE_ERROR_FLUSH_TIMEOUT] = ERROR_PREFIX "FlushTimeout",
                [CYCLE_ERROR_FREEZE_TIMEOUT] = ERROR_PREFIX "FreezeTimeout",
                [CYCLE_ERROR_NOT_SUPPORTED] = ERROR_PREFIX "NotSupported",
                [CYCLE_ERROR_THAW_FAILED] = ERROR_PREFIX "ThawFailed",
                [CYCLE_ERROR_INTERNAL] = "org.freedesktop.DBus.Error.Failed",
                [CYCLE_ERROR_INHIBITED] = ERROR_PREFIX "Inhibited",
                [CYCLE_ERROR_INTERRUPTED] = ERROR_PREFIX "Interrupted",
        };
        return e < _CYCLE_ERROR_MAX ? names[e] : names[CYCLE_ERROR_INTERNAL];
}

int bus_error_from_errno(sd_bus_error *error, int r, const char *message) {
        const char *name;
        switch (-r) {
        case EBUSY:       name = ERROR_PREFIX "Busy"; break;
        case EOPNOTSUPP:  name = ERROR_PREFIX "NotSupported"; break;
        case ENOMEDIUM:   name = ERROR_PREFIX "HibernateNotReady"; break;
        case ESRCH:       name = ERROR_PREFIX "NoSuchCycle"; break;
        case EINPROGRESS: name = ERROR_PREFIX "TooLate"; break;
        case EAGAIN:      name = ERROR_PREFIX "Inhibited"; break;
        case EDQUOT:
        case ENFILE:      name = SD_BUS_ERROR_LIMITS_EXCEEDED; break;
        case EINVAL:      name = SD_BUS_ERROR_INVALID_ARGS; break;
        case EACCES:
        case EPERM:       name = SD_BUS_ERROR_ACCESS_DENIED; break;
        default:
                return sd_bus_error_set_errnof(error, r, "%s", message ? message : errno_text(r));
        }
        return sd_bus_error_set(error, name, message ? message : errno_text(r));
}

/* ---- methods ---- */

static void caller_creds(sd_bus_message *msg, uid_t *ret_uid, pid_t *ret_pid) {
        sd_bus_creds *creds = NULL;
        *ret_uid = (uid_t) -1;
        *ret_pid = 0;
        if (sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID, &creds) >= 0) {
                (void) sd_bus_creds_get_euid(creds, ret_uid);
                (void) sd_bus_creds_get_pid(creds, ret_pid);
        }
        sd_bus_creds_unref(creds);
}

static pid_t caller_pid(sd_bus_message *msg) {
        uid_t uid;
        pid_t pid;
        caller_creds(msg, &uid, &pid);
        return pid;
}

/* After the arguments are checked (a bad call is InvalidArgs for anyone),
 * before anything changes. 0: polkit was asked and the call comes back
 * with the answer; the handler then returns 1 (the reply is still owed). */
#define AUTHORIZE(b, msg, action, error)                                      \
        do {                                                                   \
                int _r = polkit_verify((b)->polkit, (msg), (action), (error)); \
                if (_r <= 0)                                                   \
                        return _r < 0 ? _r : 1;                                \
        } while (0)

static int method_sleep(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *kind_name;
        _cleanup_(cycle_options_clear) CycleOptions opts = {};

        int r = sd_bus_message_read(msg, "s", &kind_name);
        if (r < 0)
                return r;
        SleepKind kind = sleep_kind_from_string(kind_name);
        if (kind < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "kind '%s' is not one of suspend, hibernate, hybrid-sleep", kind_name);
        r = bus_options_read(msg, kind_name, &opts, error);
        if (r < 0)
                return r;
        AUTHORIZE(b, msg, kind == SLEEP_SUSPEND ? POLKIT_ACTION_SLEEP : POLKIT_ACTION_HIBERNATE, error);

        uint64_t id;
        g_autofree char *why = NULL;
        manager_set_client_pid(b->manager, caller_pid(msg));
        r = manager_start(b->manager, kind, &opts, &id, &why);
        if (r < 0)
                return bus_error_from_errno(error, r, why);
        return sd_bus_reply_method_return(msg, "t", id);
}

static int method_cancel(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        uint64_t id;

        int r = sd_bus_message_read(msg, "t", &id);
        if (r < 0)
                return r;
        AUTHORIZE(b, msg, POLKIT_ACTION_SLEEP, error);
        r = manager_cancel(b->manager, id, "cancelled by user");
        if (r == -ESRCH) {
                g_autofree char *why = id == 0 ? g_strdup("no cycle is running")
                                               : g_strdup_printf("cycle %" G_GUINT64_FORMAT " is not running", id);
                return bus_error_from_errno(error, r, why);
        }
        if (r == -EINPROGRESS)
                return bus_error_from_errno(error, r, "the cycle is past the point of no return");
        if (r < 0)
                return bus_error_from_errno(error, r, NULL);
        return sd_bus_reply_method_return(msg, NULL);
}

/* systemd-sleep's words: suspend-then-hibernate starts as a suspend (the
 * hibernation that may follow comes with hooks of its own) */
static SleepKind hook_kind_from_string(const char *s) {
        return g_str_equal(s, "suspend-then-hibernate") ? SLEEP_SUSPEND : sleep_kind_from_string(s);
}

/* The deferred answer to a Hook call; owns the message's reference */
static void on_hook_done(void *userdata, uint64_t cycle, int r, CycleError error, const char *message) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = userdata;
        if (r >= 0)
                r = sd_bus_reply_method_return(msg, "t", cycle);
        else
                r = sd_bus_reply_method_errorf(msg, bus_cycle_error_name(error), "cycle %" G_GUINT64_FORMAT ": %s",
                                               cycle, message);
        if (r < 0)
                log_warning_errno(r, "Failed to answer the sleep hook: %m");
}

static int method_hook(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *when, *kind_name;

        int r = sd_bus_message_read(msg, "ss", &when, &kind_name);
        if (r < 0)
                return r;
        bool pre = g_str_equal(when, "pre");
        if (!pre && !g_str_equal(when, "post"))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "when '%s' is not one of pre, post",
                                         when);
        SleepKind kind = hook_kind_from_string(kind_name);
        if (kind < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "kind '%s' is not one of suspend, hibernate, hybrid-sleep, "
                                         "suspend-then-hibernate", kind_name);
        AUTHORIZE(b, msg, kind == SLEEP_SUSPEND ? POLKIT_ACTION_SLEEP : POLKIT_ACTION_HIBERNATE, error);

        uint64_t id;
        g_autofree char *why = NULL;
        /* The reply comes later, from on_hook_done: it owns this reference */
        sd_bus_message_ref(msg);
        if (pre) {
                manager_set_client_pid(b->manager, caller_pid(msg));
                r = manager_hook_pre(b->manager, kind, on_hook_done, msg, &id, &why);
        } else
                r = manager_hook_post(b->manager, kind, on_hook_done, msg, &id, &why);
        if (r < 0) {
                sd_bus_message_unref(msg);
                return bus_error_from_errno(error, r, why);
        }
        return 1;
}

static int method_get_plan(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        g_autoptr(Plan) plan = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

        int r = manager_get_plan(b->manager, &plan);
        if (r < 0)
                return bus_error_from_errno(error, r, "cannot read the cgroup tree");
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssss)");
        if (r < 0)
                return r;
        for (guint i = 0; i < plan->entries->len; i++) {
                const PlanEntry *e = plan->entries->pdata[i];
                r = sd_bus_message_append(reply, "(ssss)", e->cgroup, e->unit, cgroup_class_to_string(e->class),
                                          e->reason);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_set_class(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *target, *class_name;

        int r = sd_bus_message_read(msg, "ss", &target, &class_name);
        if (r < 0)
                return r;
        if (*class_name && cgroup_class_from_string(class_name) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "class '%s' is not one of early, late, nofreeze (or empty to clear)",
                                         class_name);
        AUTHORIZE(b, msg, POLKIT_ACTION_CONFIGURE, error);

        g_autofree char *who = g_strdup_printf("pid %d", (int) caller_pid(msg));
        r = manager_set_class(b->manager, target, *class_name ? class_name : NULL, who);
        if (r == -EINVAL || r == -ENOENT)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "unit_or_cgroup '%s' is neither a unit name nor an existing cgroup path "
                                         "(relative, no .., no symlinks)", target);
        if (r == -EPERM)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "unit_or_cgroup '%s' is outside the freeze roots", target);
        if (r == -EOPNOTSUPP)
                return bus_error_from_errno(error, r, "there is no cgroup v2 hierarchy to freeze");
        if (r < 0)
                return bus_error_from_errno(error, r, NULL);
        return sd_bus_reply_method_return(msg, NULL);
}

/* Each hold keeps a pipe end open in fridged: bounded per caller so no
 * one can use up its fds (which a thaw needs) */
#define HOLDS_PER_CONNECTION_MAX 16

/* One track per connection that holds classes or inhibitors, not one per
 * hold: each track costs a match rule at the bus daemon, which bounds those
 * per connection. When the connection goes, so does all it held. */
typedef struct HolderTrack {
        Bus *bus;
        char *sender;
        GArray *holds;          /* its HoldClass ids (uint64_t); the manager counts its inhibitors */
        sd_bus_track *track;
} HolderTrack;

static void holder_track_free(HolderTrack *t) {
        if (!t)
                return;
        sd_bus_track_unref(t->track);
        g_array_unref(t->holds);
        g_free(t->sender);
        g_free(t);
}

static void holder_drop_if_idle(Bus *b, const char *sender) {
        HolderTrack *t = g_hash_table_lookup(b->holders, sender);
        if (t && t->holds->len == 0 && manager_inhibitors_of(b->manager, sender) == 0)
                g_hash_table_remove(b->holders, sender);
}

static int on_holder_gone(sd_bus_track *track, void *userdata) {
        HolderTrack *t = userdata;
        Bus *b = t->bus;
        /* Each release calls back and the last one frees t: work on copies */
        g_autofree char *sender = g_strdup(t->sender);
        g_autoptr(GArray) holds = g_array_copy(t->holds);
        for (guint i = 0; i < holds->len; i++)
                manager_release_hold(b->manager, g_array_index(holds, uint64_t, i));
        manager_release_inhibitors_of(b->manager, sender);
        g_hash_table_remove(b->holders, sender); /* in case it held nothing */
        return 0;
}

static void on_hold_released(void *userdata, uint64_t id) {
        Bus *b = userdata;
        GHashTableIter i;
        gpointer v;
        g_hash_table_iter_init(&i, b->holders);
        while (g_hash_table_iter_next(&i, NULL, &v)) {
                HolderTrack *t = v;
                for (guint k = 0; k < t->holds->len; k++)
                        if (g_array_index(t->holds, uint64_t, k) == id) {
                                g_array_remove_index_fast(t->holds, k);
                                g_autofree char *sender = g_strdup(t->sender);
                                holder_drop_if_idle(b, sender);
                                return;
                        }
        }
}

static void on_inhibitor_released(void *userdata, const char *sender) {
        holder_drop_if_idle(userdata, sender);
}

/* The track of the caller's connection, made on its first hold; NULL
 * without a sender (a direct connection: the fd alone then ends it) */
static int track_holder(Bus *b, sd_bus_message *msg, HolderTrack **ret) {
        const char *sender = sd_bus_message_get_sender(msg);
        HolderTrack *t = sender ? g_hash_table_lookup(b->holders, sender) : NULL;
        *ret = t;
        if (!sender || t)
                return 0;
        t = g_new0(HolderTrack, 1);
        t->bus = b;
        t->sender = g_strdup(sender);
        t->holds = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        int r = sd_bus_track_new(b->bus, &t->track, on_holder_gone, t);
        if (r >= 0)
                r = sd_bus_track_add_sender(t->track, msg);
        if (r < 0) {
                holder_track_free(t);
                return r;
        }
        g_hash_table_replace(b->holders, t->sender, t);
        *ret = t;
        return 0;
}

/* Watches the caller's connection and hands it `fd` (ours is closed: the
 * reply holds its own copy) */
static int track_and_reply(Bus *b, sd_bus_message *msg, int fd, HolderTrack **ret) {
        int r = track_holder(b, msg, ret);
        if (r >= 0)
                r = sd_bus_reply_method_return(msg, "h", fd);
        close(fd);
        return r;
}

/* Such strings end up in the journal and in GetPlan: no forged lines */
static bool has_control_chars(const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        return true;
        return false;
}

/* HoldClass and Inhibit name their holder alike */
static int check_who_why(const char *who, const char *why, sd_bus_error *error) {
        if (!*who || strlen(who) > 256 || has_control_chars(who))
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "who must be 1 to 256 bytes without control characters");
        if (strlen(why) > 1024 || has_control_chars(why))
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "why must be at most 1024 bytes without control characters");
        return 0;
}

static unsigned holds_of(Bus *b, const char *sender) {
        HolderTrack *t = sender ? g_hash_table_lookup(b->holders, sender) : NULL;
        return t ? t->holds->len : 0;
}

static int method_hold_class(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *class_name, *who, *why;

        int r = sd_bus_message_read(msg, "sss", &class_name, &who, &why);
        if (r < 0)
                return r;
        CgroupClass class = cgroup_class_from_string(class_name);
        if (class < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "class '%s' is not one of early, late, nofreeze", class_name);
        r = check_who_why(who, why, error);
        if (r < 0)
                return r;

        if (holds_of(b, sd_bus_message_get_sender(msg)) >= HOLDS_PER_CONNECTION_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "this connection already holds %u classes", HOLDS_PER_CONNECTION_MAX);
        AUTHORIZE(b, msg, POLKIT_ACTION_INHIBIT, error);
        int fd;
        uint64_t id;
        r = manager_add_hold(b->manager, caller_pid(msg), class, who, why, &fd, &id);
        /* The caller (the holder) is the implicit argument here: a cgroup
         * that cannot be read is as unholdable as one outside the roots */
        if (r == -EPERM)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "the caller's cgroup is outside the freeze roots; nothing to hold");
        if (r == -ESRCH)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "cannot tell the caller's cgroup (no pid, or no /proc/PID/cgroup); "
                                        "nothing to hold");
        if (r < 0)
                return bus_error_from_errno(error, r, r == -EOPNOTSUPP ? "there is no cgroup v2 hierarchy" : NULL);

        HolderTrack *t;
        r = track_and_reply(b, msg, fd, &t);
        if (r < 0) {
                manager_release_hold(b->manager, id);
                return r;
        }
        if (t)
                g_array_append_val(t->holds, id);
        return r;
}

static int inhibit_error(sd_bus_error *error, int r) {
        if (r == -EDQUOT)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "this connection already holds %u inhibitors", INHIBITORS_PER_SENDER_MAX);
        if (r == -ENFILE)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "fridged already keeps %u inhibitors", INHIBITORS_MAX);
        return bus_error_from_errno(error, r, NULL);
}

static int method_inhibit(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *who, *why, *mode_name;

        int r = sd_bus_message_read(msg, "sss", &who, &why, &mode_name);
        if (r < 0)
                return r;
        r = check_who_why(who, why, error);
        if (r < 0)
                return r;
        InhibitMode mode = inhibit_mode_from_string(mode_name);
        if (mode < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "mode '%s' is not one of block, delay",
                                         mode_name);
        AUTHORIZE(b, msg, POLKIT_ACTION_INHIBIT, error);

        Inhibitor tmpl = { .mode = mode, .who = (char *) who, .why = (char *) why,
                           .sender = (char *) sd_bus_message_get_sender(msg) };
        caller_creds(msg, &tmpl.uid, &tmpl.pid);
        int fd;
        uint64_t id;
        r = manager_inhibit(b->manager, &tmpl, &fd, &id);
        if (r < 0)
                return inhibit_error(error, r);
        HolderTrack *t;
        r = track_and_reply(b, msg, fd, &t);
        if (r < 0)
                manager_release_inhibitor(b->manager, id);
        return r;
}

static int method_list_inhibitors(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        g_autoptr(GPtrArray) all = manager_list_inhibitors(b->manager);

        int r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssssuu)");
        if (r < 0)
                return r;
        for (guint i = 0; i < all->len; i++) {
                const Inhibitor *in = all->pdata[i];
                r = sd_bus_message_append(reply, "(ssssuu)", in->who, in->why, inhibit_mode_to_string(in->mode),
                                          in->sender, (uint32_t) in->uid, (uint32_t) in->pid);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
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

/* CanSuspend, CanSuspendReason, CanHibernate… from the property's name */
static int property_get_can(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        SleepKind kind = g_str_has_prefix(property, "CanSuspend") ? SLEEP_SUSPEND
                       : g_str_has_prefix(property, "CanHibernate") ? SLEEP_HIBERNATE : SLEEP_HYBRID;
        const char *reason = "";
        const char *answer = manager_can(b->manager, kind, &reason);
        return sd_bus_message_append(reply, "s", g_str_has_suffix(property, "Reason") ? reason : answer);
}

static int property_get_supported_kinds(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        Bus *b = userdata;
        g_auto(GStrv) kinds = manager_supported_kinds(b->manager);
        return sd_bus_message_append_strv(reply, kinds);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", FRIDGE_VERSION);
}

const sd_bus_vtable fridge_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("Sleep", SD_BUS_ARGS("s", kind, "a{sv}", options), SD_BUS_RESULT("t", cycle),
                                method_sleep, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Cancel", SD_BUS_ARGS("t", cycle), SD_BUS_NO_RESULT, method_cancel,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Hook", SD_BUS_ARGS("s", when, "s", kind), SD_BUS_RESULT("t", cycle), method_hook,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetPlan", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ssss)", plan), method_get_plan,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetClass", SD_BUS_ARGS("s", unit_or_cgroup, "s", class), SD_BUS_NO_RESULT,
                                method_set_class, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("HoldClass", SD_BUS_ARGS("s", class, "s", who, "s", why), SD_BUS_RESULT("h", fd),
                                method_hold_class, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Inhibit", SD_BUS_ARGS("s", who, "s", why, "s", mode), SD_BUS_RESULT("h", fd),
                                method_inhibit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListInhibitors", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(ssssuu)", inhibitors), method_list_inhibitors,
                                SD_BUS_VTABLE_UNPRIVILEGED),
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
        SD_BUS_PROPERTY("CanSuspend", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanSuspendReason", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanHibernate", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanHibernateReason", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanHybridSleep", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("CanHybridSleepReason", "s", property_get_can, 0, 0),
        SD_BUS_PROPERTY("SupportedKinds", "as", property_get_supported_kinds, 0, 0),
        SD_BUS_PROPERTY("LastResult", "s", property_get_last_result, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LastWakeReason", "s", property_get_last_wake_reason, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END,
};

/* ---- emission ---- */

/* The clock, not sd_event_now(): the loop's cached time can be a whole
 * long iteration old (a freeze stage over hundreds of cgroups), and a
 * stale stamp would let the next emission through too early */
static uint64_t monotonic_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static void emit_progress(Bus *b) {
        b->last_progress_emit = monotonic_usec();
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

        uint64_t now = monotonic_usec();
        if (now >= b->last_progress_emit + EMIT_INTERVAL_USEC || b->last_progress_emit == 0) {
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

static void on_finished(void *userdata, uint64_t cycle, CycleResult result, CycleError error,
                        const char *message) {
        Bus *b = userdata;
        int r = sd_bus_emit_signal(b->bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "CycleFinished", "tsss", cycle,
                                   cycle_result_to_string(result), bus_cycle_error_name(error), message);
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
        .hold_released = on_hold_released,
        .inhibitor_released = on_inhibitor_released,
};

int bus_new(sd_bus *bus, Manager *m, Bus **ret) {
        Bus *b = g_new0(Bus, 1);
        b->holders = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify) holder_track_free);
        b->polkit = polkit_new();
        b->bus = sd_bus_ref(bus);
        b->manager = m;

        int r = sd_bus_add_object_vtable(bus, &b->vtable_slot, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
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
        sd_bus_slot_unref(b->vtable_slot);
        sd_bus_unref(b->bus);
        for (StateProperty p = 0; p < _PROP_MAX; p++)
                g_free(b->sent[p]);
        g_free(b);
        return NULL;
}
