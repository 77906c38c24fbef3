/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The methods besides Sleep, each in one shape: read, check, authorize,
 * call the manager once, reply (errors by bus_error_set); and the tracks
 * that end a connection's holds and inhibitors with it. */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "bus-internal.h"
#include "detect.h"
#include "cgroups.h"
#include "log.h"
#include "plan.h"
#include "util.h"

void bus_caller_creds(sd_bus_message *msg, uid_t *ret_uid, pid_t *ret_pid) {
        sd_bus_creds *creds = NULL;
        *ret_uid = (uid_t) -1;
        *ret_pid = 0;
        if (sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID, &creds) >= 0) {
                (void) sd_bus_creds_get_euid(creds, ret_uid);
                (void) sd_bus_creds_get_pid(creds, ret_pid);
        }
        sd_bus_creds_unref(creds);
}

pid_t bus_caller_pid(sd_bus_message *msg) {
        uid_t uid;
        pid_t pid;
        bus_caller_creds(msg, &uid, &pid);
        return pid;
}

int bus_method_cancel(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        uint64_t id;

        int r = sd_bus_message_read(msg, "t", &id);
        if (r < 0)
                return r;
        AUTHORIZE(b, msg, POLKIT_ACTION_SLEEP, error);
        g_autofree char *why = NULL;
        r = manager_cancel(b->manager, id, "cancelled by user", &why);
        if (r != 0)
                return bus_error_set(error, r, why);
        return sd_bus_reply_method_return(msg, NULL);
}

/* systemd-sleep's words: suspend-then-hibernate starts as a suspend (the
 * hibernation that may follow comes with hooks of its own) */
static SleepKind hook_kind_from_string(const char *s) {
        return g_str_equal(s, "suspend-then-hibernate") ? SLEEP_SUSPEND : sleep_kind_from_string(s);
}

/* A Hook call waiting for its answer; a pre's caller is watched: if it
 * leaves the bus before the answer (killed, or systemd-sleep gave up on
 * it), nobody will ever send the post that thaws */
typedef struct HookCall {
        Bus *bus;
        sd_bus_message *msg;
        sd_bus_track *track;    /* pre only, NULL without a sender */
        uint64_t cycle;
} HookCall;

static void hook_call_free(HookCall *call) {
        sd_bus_track_unref(call->track);
        sd_bus_message_unref(call->msg);
        g_free(call);
}

static int on_hook_caller_gone(sd_bus_track *track, void *userdata) {
        HookCall *call = userdata;
        /* Once: the call itself is answered (and freed) when the cycle ends */
        call->track = sd_bus_track_unref(call->track);
        g_autofree char *who = g_strdup(sd_bus_message_get_sender(call->msg));
        log_notice("The caller of Hook(\"pre\") (%s) left the bus before its answer", who);
        manager_hook_caller_gone(call->bus->manager, call->cycle, who);
        return 0;
}

static int hook_call_track(HookCall *call) {
        if (!sd_bus_message_get_sender(call->msg))
                return 0;
        int r = sd_bus_track_new(call->bus->bus, &call->track, on_hook_caller_gone, call);
        if (r >= 0)
                r = sd_bus_track_add_sender(call->track, call->msg);
        return r;
}

/* The deferred answer to a Hook call */
static void on_hook_done(void *userdata, uint64_t cycle, int r, FridgeError error, const char *message) {
        HookCall *call = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        if (r >= 0)
                r = sd_bus_reply_method_return(call->msg, "t", cycle);
        else {
                (void) bus_error_setf(&e, error, "cycle %" G_GUINT64_FORMAT ": %s", cycle, message);
                r = sd_bus_reply_method_error(call->msg, &e);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to answer the sleep hook: %m");
        hook_call_free(call);
}

int bus_method_hook(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *when, *kind_name;

        /* Only systemd-sleep runs the hook, as root: whatever polkit says,
         * nobody else may freeze everyone's services, skip the block
         * inhibitors or forge a resume */
        uid_t uid;
        pid_t pid;
        bus_caller_creds(msg, &uid, &pid);
        if (uid != 0)
                return bus_error_setf(error, FRIDGE_ERROR_ACCESS_DENIED,
                                      "Hook is the system sleep hook's: only root may call it, not uid %d",
                                      uid == (uid_t) -1 ? -1 : (int) uid);

        int r = sd_bus_message_read(msg, "ss", &when, &kind_name);
        if (r < 0)
                return r;
        bool pre = g_str_equal(when, "pre");
        if (!pre && !g_str_equal(when, "post"))
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS, "when '%s' is not one of pre, post",
                                      when);
        SleepKind kind = hook_kind_from_string(kind_name);
        if (kind < 0)
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS,
                                      "kind '%s' is not one of suspend, hibernate, hybrid-sleep, "
                                      "suspend-then-hibernate", kind_name);

        /* The reply comes later, from on_hook_done: the call owns a reference */
        HookCall *call = g_new0(HookCall, 1);
        call->bus = b;
        call->msg = sd_bus_message_ref(msg);
        if (pre) {
                r = hook_call_track(call);
                if (r < 0) {
                        hook_call_free(call);
                        return bus_error_setf(error, r, "cannot watch the sleep hook's caller: %s", errno_text(r));
                }
        }
        uint64_t id;
        g_autofree char *why = NULL;
        if (pre) {
                manager_set_client_pid(b->manager, pid);
                manager_set_client_uid(b->manager, uid);
                r = manager_hook_pre(b->manager, kind, on_hook_done, call, &id, &why);
        } else
                r = manager_hook_post(b->manager, kind, on_hook_done, call, &id, &why);
        if (r != 0) {
                hook_call_free(call);
                return bus_error_set(error, r, why);
        }
        call->cycle = id;
        return 1;
}

/* The array of a reply is complete: close it and send the reply */
static int close_and_send(sd_bus_message *reply) {
        int r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* A GetPlan whose plan is being built; the call's reference keeps the
 * message (and its bus) alive until the answer. A caller that left gets
 * none: the bus daemon drops a reply to a name that is gone. */
typedef struct PlanCall {
        sd_bus_message *msg;
        uid_t uid;              /* what it may read of other users' processes */
} PlanCall;

static int plan_reply(PlanCall *call, const Plan *plan, GHashTable *private_reasons) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r = sd_bus_message_new_method_return(call->msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssss)");
        if (r < 0)
                return r;
        for (guint i = 0; i < plan->entries->len; i++) {
                const PlanEntry *e = plan->entries->pdata[i];
                /* D-Bus strings are UTF-8; cgroup names need not be */
                g_autofree char *cgroup = cgroups_escape(e->cgroup), *unit = cgroups_escape(e->unit),
                                *reason = cgroups_escape(detect_reason_for(private_reasons, e->reason, call->uid));
                r = sd_bus_message_append(reply, "(ssss)", cgroup, unit, plan_entry_class_name(e), reason);
                if (r < 0)
                        return r;
        }
        return close_and_send(reply);
}

static void on_plan_built(void *userdata, int r, const Plan *plan, GHashTable *private_reasons) {
        PlanCall *call = userdata;
        if (r >= 0)
                r = plan_reply(call, plan, private_reasons);
        else {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                (void) bus_error_set(&e, r, r == -ECANCELED ? "fridged is stopping" : "cannot read the cgroup tree");
                r = sd_bus_reply_method_error(call->msg, &e);
        }
        if (r < 0)
                log_debug_errno(r, "Cannot answer GetPlan (its caller may have left): %m");
        sd_bus_message_unref(call->msg);
        g_free(call);
}

/* Anyone may read the plan, unasked; root reads all of it, others what
 * names their own processes and the rest with pid 0 and FRIDGE_PLAN_HIDDEN */
int bus_method_get_plan(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        PlanCall *call = g_new0(PlanCall, 1);
        pid_t pid;
        bus_caller_creds(msg, &call->uid, &pid);
        call->msg = sd_bus_message_ref(msg);
        g_autofree char *message = NULL;
        int r = manager_get_plan(b->manager, call->uid, on_plan_built, call, &message);
        if (r != 0) {
                sd_bus_message_unref(call->msg);
                g_free(call);
                return bus_error_set(error, r, message ? message : "cannot read the cgroup tree");
        }
        return 1;
}

int bus_method_set_class(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *target, *class_name;

        int r = sd_bus_message_read(msg, "ss", &target, &class_name);
        if (r < 0)
                return r;
        if (*class_name && cgroup_class_from_string(class_name) < 0)
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS,
                                      "class '%s' is not one of early, late, nofreeze, ui (or empty to clear)",
                                      class_name);
        AUTHORIZE(b, msg, POLKIT_ACTION_CONFIGURE, error);

        g_autofree char *who = g_strdup_printf("pid %d", (int) bus_caller_pid(msg));
        g_autofree char *refusal = NULL;
        r = manager_set_class(b->manager, target, *class_name ? class_name : NULL, who, &refusal);
        if (r != 0)
                return bus_error_set(error, r, refusal);
        return sd_bus_reply_method_return(msg, NULL);
}

/* Each hold keeps a pipe end open in fridged: bounded per caller so no
 * one can use up its fds (which a thaw needs) */
#define HOLDS_PER_CONNECTION_MAX 16

/* One track per connection that holds classes or inhibitors, not one per
 * hold: each track costs a match rule at the bus daemon, which bounds those
 * per connection. When the connection goes, so does all it held. */
struct HolderTrack {
        Bus *bus;
        char *sender;
        GArray *holds;          /* its HoldClass ids (uint64_t); the manager counts its inhibitors */
        sd_bus_track *track;
};

void bus_holder_track_free(HolderTrack *t) {
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

void bus_on_hold_released(void *userdata, uint64_t id) {
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

void bus_on_inhibitor_released(void *userdata, const char *sender) {
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
                bus_holder_track_free(t);
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
                return bus_error_set(error, FRIDGE_ERROR_INVALID_ARGS,
                                     "who must be 1 to 256 bytes without control characters");
        if (strlen(why) > 1024 || has_control_chars(why))
                return bus_error_set(error, FRIDGE_ERROR_INVALID_ARGS,
                                     "why must be at most 1024 bytes without control characters");
        return 0;
}

static unsigned holds_of(Bus *b, const char *sender) {
        HolderTrack *t = sender ? g_hash_table_lookup(b->holders, sender) : NULL;
        return t ? t->holds->len : 0;
}

/* HoldClass and HoldRole: bounded per connection */
static int check_holds_room(Bus *b, sd_bus_message *msg, sd_bus_error *error) {
        if (holds_of(b, sd_bus_message_get_sender(msg)) >= HOLDS_PER_CONNECTION_MAX)
                return bus_error_setf(error, FRIDGE_ERROR_LIMITS_EXCEEDED,
                                      "this connection already holds %u classes", HOLDS_PER_CONNECTION_MAX);
        return 0;
}

/* The manager's answer to a hold: its fd to the caller, the hold tracked
 * with the caller's connection (and ended if the reply cannot go out) */
static int reply_hold(Bus *b, sd_bus_message *msg, int r, int fd, uint64_t id, const char *refusal,
                      sd_bus_error *error) {
        if (r != 0)
                return bus_error_set(error, r, refusal);
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

int bus_method_hold_class(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *class_name, *who, *why;

        int r = sd_bus_message_read(msg, "sss", &class_name, &who, &why);
        if (r < 0)
                return r;
        CgroupClass class = cgroup_class_from_string(class_name);
        if (class < 0)
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS,
                                      "class '%s' is not one of early, late, nofreeze, ui", class_name);
        r = check_who_why(who, why, error);
        if (r >= 0)
                r = check_holds_room(b, msg, error);
        if (r < 0)
                return r;
        AUTHORIZE(b, msg, POLKIT_ACTION_INHIBIT, error);
        int fd = -1;
        uint64_t id = 0;
        g_autofree char *refusal = NULL;
        uid_t uid;
        pid_t pid;
        bus_caller_creds(msg, &uid, &pid);
        r = manager_add_hold(b->manager, pid, uid, class, who, why, &fd, &id, &refusal);
        return reply_hold(b, msg, r, fd, id, refusal, error);
}

/* fridge-agent's report of who serves a role in its session: held as ui
 * for as long as the returned fd is open, under the trust rule of
 * classes.d's names rather than polkit (a desktop asks no password for
 * its own notification server) */
int bus_method_hold_role(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *role;
        uint32_t pid;

        int r = sd_bus_message_read(msg, "su", &role, &pid);
        if (r < 0)
                return r;
        if (pid == 0 || pid > INT_MAX)
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS, "pid %u is no process", pid);
        r = check_holds_room(b, msg, error);
        if (r < 0)
                return r;
        int fd = -1;
        uint64_t id = 0;
        g_autofree char *refusal = NULL;
        uid_t uid;
        pid_t caller;
        bus_caller_creds(msg, &uid, &caller);
        r = manager_hold_role(b->manager, uid, role, (pid_t) pid, &fd, &id, &refusal);
        return reply_hold(b, msg, r, fd, id, refusal, error);
}

int bus_method_inhibit(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
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
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS, "mode '%s' is not one of block, delay",
                                      mode_name);
        AUTHORIZE(b, msg, POLKIT_ACTION_INHIBIT, error);

        Inhibitor tmpl = { .mode = mode, .who = (char *) who, .why = (char *) why,
                           .sender = (char *) sd_bus_message_get_sender(msg) };
        bus_caller_creds(msg, &tmpl.uid, &tmpl.pid);
        int fd;
        uint64_t id;
        g_autofree char *refusal = NULL;
        r = manager_inhibit(b->manager, &tmpl, &fd, &id, &refusal);
        if (r != 0)
                return bus_error_set(error, r, refusal);
        HolderTrack *t;
        r = track_and_reply(b, msg, fd, &t);
        if (r < 0)
                manager_release_inhibitor(b->manager, id);
        return r;
}

int bus_method_list_inhibitors(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
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
        return close_and_send(reply);
}
