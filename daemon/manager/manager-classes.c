/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: the plan, and the classes callers set (SetClass) or hold
 * (HoldClass). */
#include "manager-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cgroups.h"
#include "log.h"
#include "classify.h"
#include "detect.h"
#include "overrides.h"
#include "pidref.h"
#include "terminal.h"
#include "ui-roles.h"
#include "util.h"


/* ---- the plan ---- */

/* Everything a plan is made of, the job's own: the build runs on a worker
 * (GetPlan's, a cycle's prepare), which may outlive the manager (abandoned
 * when fridged stops) */
struct PlanJob {
        int cgroup_fd;                  /* -1: no cgroup v2, the plan is empty */
        int proc_fd;
        GHashTable *exempt;             /* cgroup → reason, read on the loop when the job is made */
        GHashTable *ui;                 /* cgroup → reason: the client, then its terminal on the worker */
        PidRef client;                  /* the client that started the cycle, PIDREF_NULL for GetPlan */
        char **roots;
        ClassRules *rules;
        GHashTable *overrides, *holds;  /* ClassChoice tables */
        Plan *plan;                     /* the result */
        GHashTable *private_reasons;    /* reason → PrivateReason */
        bool no_fuse;                   /* no FUSE connection existed when the job was made */
        char *fuse_connections;         /* fusectl's entries then, NULL: unknown */
        DetectCache *cache;             /* the manager's, shared */
};

void manager_plan_job_free(void *p) {
        PlanJob *j = p;
        if (!j)
                return;
        pidref_done(&j->client);
        g_hash_table_unref(j->ui);
        if (j->cgroup_fd >= 0)
                close(j->cgroup_fd);
        if (j->proc_fd >= 0)
                close(j->proc_fd);
        g_hash_table_unref(j->exempt);
        g_strfreev(j->roots);
        class_rules_free(j->rules);
        g_hash_table_unref(j->overrides);
        g_hash_table_unref(j->holds);
        plan_free(j->plan);
        g_hash_table_unref(j->private_reasons);
        g_free(j->fuse_connections);
        detect_cache_unref(j->cache);
        g_free(j);
}

int manager_plan_job_new(Manager *m, const char *client_cgroup, const PidRef *client, char **roots,
                         PlanJob **ret) {
        PlanJob *j = g_new0(PlanJob, 1);
        j->client = PIDREF_NULL;
        j->cgroup_fd = m->cgroup_fd < 0 ? -1 : fcntl(m->cgroup_fd, F_DUPFD_CLOEXEC, 3);
        j->proc_fd = fcntl(m->proc_fd, F_DUPFD_CLOEXEC, 3);
        int dup_errno = errno; /* before anything else can change it */
        /* The pinned processes are checked where they live, on the loop;
         * a cgroup is looked up from its pid every time, since a process
         * may have been moved since (fridged itself, the bus daemon) */
        j->exempt = manager_exempt_cgroups(m);
        j->ui = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        /* The client prints the progress and reads the Esc that cancels */
        if (client_cgroup)
                g_hash_table_replace(j->ui, g_strdup(client_cgroup), g_strdup("the client that started the cycle"));
        int pin = client && client->pid > 0 ? pidref_copy(client, &j->client) : 0;
        if (pin < 0)
                log_debug_errno(pin, "Cannot pin the client pid %d to find its terminal: %m", (int) client->pid);
        j->roots = g_strdupv(roots);
        j->rules = class_rules_copy(m->rules);
        j->overrides = classify_copy_choices(overrides_by_target(m->overrides));
        j->holds = classify_copy_choices(overrides_holds(m->overrides));
        j->private_reasons = detect_private_reasons_new();
        j->fuse_connections = detect_fuse_connections(m->sysfs_fd);
        j->no_fuse = j->fuse_connections && !*j->fuse_connections;
        if (!m->detect_cache)
                m->detect_cache = detect_cache_new();
        j->cache = detect_cache_ref(m->detect_cache);
        if (j->proc_fd < 0 || (m->cgroup_fd >= 0 && j->cgroup_fd < 0)) {
                manager_plan_job_free(j);
                return -(dup_errno ? dup_errno : EBADF);
        }
        *ret = j;
        return 0;
}

/* One process of the client's terminal chain: its cgroup is ui. Pinned
 * before its cgroup is read, and alive after: a pid reused meanwhile is
 * not the holder. */
static void plan_job_add_hop(PlanJob *j, TerminalHop *hop) {
        g_autofree char *cgroup = NULL;
        _cleanup_(pidref_done) PidRef ref = PIDREF_NULL;
        int r = pidref_set(&ref, j->proc_fd, hop->pid);
        if (r >= 0)
                r = cgroups_of_pid(j->proc_fd, hop->pid, &cgroup);
        if (r >= 0 && !pidref_is_alive(&ref, j->proc_fd))
                r = -ESRCH;
        if (r < 0) {
                log_debug_errno(r, "Cannot read the cgroup of pid %d, of the caller's terminal: %m", (int) hop->pid);
                return;
        }
        /* The client's own reason stands; hops that share a cgroup (a
         * multiplexer's client and the emulator that runs it) are each named */
        const char *had = g_hash_table_lookup(j->ui, cgroup);
        if (!had)
                g_hash_table_replace(j->ui, g_steal_pointer(&cgroup), g_steal_pointer(&hop->reason));
        else if (g_str_has_prefix(had, TERMINAL_REASON_PREFIX) && g_str_has_prefix(hop->reason, TERMINAL_REASON_PREFIX)) {
                const char *rest = hop->reason + strlen(TERMINAL_REASON_PREFIX);
                rest += strspn(rest, ",: ");
                g_hash_table_replace(j->ui, g_steal_pointer(&cgroup), g_strconcat(had, "; ", rest, NULL));
        }
}

/* The chain of processes that draw the client's terminal. Read here, on
 * the worker: another process's /proc can block. */
static void plan_job_find_terminal(PlanJob *j) {
        g_autoptr(GArray) hops = NULL;
        if (j->client.pid <= 0)
                return;
        int r = terminal_find_chain(j->proc_fd, j->client.pid, &hops);
        /* The stat read must have been the client's, not a reuser's */
        if (r <= 0 || !pidref_is_alive(&j->client, j->proc_fd))
                return;
        for (guint i = 0; i < hops->len; i++)
                plan_job_add_hop(j, &g_array_index(hops, TerminalHop, i));
}

Plan *manager_plan_job_steal(PlanJob *j) {
        return g_steal_pointer(&j->plan);
}

/* A WorkerFunc */
int manager_plan_job_run(void *p) {
        PlanJob *j = p;
        if (j->cgroup_fd < 0) {
                j->plan = plan_build(NULL, 0);
                return 0;
        }
        ClassifyInput in = {
                .cgroup_fd = j->cgroup_fd, .proc_fd = j->proc_fd, .roots = j->roots,
                .rules = j->rules, .exempt = j->exempt, .ui = j->ui, .overrides = j->overrides, .holds = j->holds,
                .detect = true, .no_fuse = j->no_fuse, .private_reasons = j->private_reasons,
                .cache = j->cache, .fuse_connections = j->fuse_connections,
        };
        g_autoptr(GPtrArray) trees = NULL;
        plan_job_find_terminal(j);
        int r = classify_tree(&in, &trees);
        if (r < 0)
                return r;
        j->plan = plan_build((PlanNode *const *) trees->pdata, trees->len);
        return 0;
}

static void plan_answer(GArray *waiters, int r, const Plan *plan, GHashTable *private_reasons) {
        for (guint i = 0; waiters && i < waiters->len; i++) {
                const PlanWaiter *w = &g_array_index(waiters, PlanWaiter, i);
                w->done(w->userdata, r, plan, private_reasons);
        }
}

static int plan_start(Manager *m);

static void plan_done(int r, void *data, void *userdata) {
        Manager *m = userdata;
        PlanJob *j = data;
        m->plan_worker = NULL;
        g_autoptr(GArray) answered = g_steal_pointer(&m->plan_waiters);
        m->plan_waiters = g_steal_pointer(&m->plan_next);
        m->plan_next = g_array_new(FALSE, FALSE, sizeof(PlanWaiter));
        int k = m->plan_waiters->len > 0 ? plan_start(m) : 0;
        if (k < 0) {
                plan_answer(m->plan_waiters, k, NULL, NULL);
                g_array_set_size(m->plan_waiters, 0);
        }
        /* a build that ran but made no plan is a failure, never a NULL plan */
        plan_answer(answered, r < 0 ? r : j->plan ? 0 : -EIO, j->plan, j->private_reasons);
}

static int plan_start(Manager *m) {
        PlanJob *j;
        int r = manager_plan_job_new(m, NULL, NULL, m->config->freeze_roots, &j);
        if (r < 0)
                return r;
        return worker_start(m->event, manager_plan_job_run, j, manager_plan_job_free, plan_done, m, &m->plan_worker);
}

static unsigned plan_waiting_of(GArray *waiters, uid_t uid) {
        unsigned n = 0;
        for (guint i = 0; waiters && i < waiters->len; i++)
                n += g_array_index(waiters, PlanWaiter, i).uid == uid;
        return n;
}

/* A build can take long or hang (a /proc read can block): without a cap
 * one user's pipelined calls would pile up here and use up fridged's
 * pending replies at the bus. Root is trusted, as for the other caps. */
static int plan_check_cap(const Manager *m, uid_t uid, char **ret_message) {
        if (uid == 0)
                return 0;
        unsigned mine = plan_waiting_of(m->plan_waiters, uid) + plan_waiting_of(m->plan_next, uid);
        if (mine < m->config->pending_plans_per_user)   /* unknown callers share one count */
                return 0;
        *ret_message = g_strdup_printf("uid %d already waits for %u plans, the most a user may "
                                       "(PendingPlansPerUser=%u); try again once they are answered",
                                       uid == (uid_t) -1 ? -1 : (int) uid, mine, m->config->pending_plans_per_user);
        return FRIDGE_ERROR_LIMITS_EXCEEDED;
}

/* One build at a time, however many ask: a call during a build waits for
 * the next one (which starts when that ends), so every answer is newer
 * than its question and callers cannot multiply threads */
int manager_get_plan(Manager *m, uid_t uid, ManagerPlanDone done, void *userdata, char **ret_message) {
        int r = plan_check_cap(m, uid, ret_message);
        if (r != 0)
                return r;
        PlanWaiter w = { .done = done, .userdata = userdata, .uid = uid };
        if (m->plan_worker) {
                g_array_append_val(m->plan_next, w);
                return 0;
        }
        r = plan_start(m);
        if (r < 0)
                return r;
        g_array_append_val(m->plan_waiters, w);
        return 0;
}

void manager_plan_stop(Manager *m) {
        worker_abandon(TAKE_PTR(m->plan_worker));
        plan_answer(m->plan_waiters, -ECANCELED, NULL, NULL);
        plan_answer(m->plan_next, -ECANCELED, NULL, NULL);
        g_clear_pointer(&m->plan_waiters, g_array_unref);
        g_clear_pointer(&m->plan_next, g_array_unref);
        m->detect_cache = detect_cache_unref(m->detect_cache);
}

static bool unit_name_is_valid(const char *s) {
        static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\@";
        return *s && strlen(s) <= 255 && strspn(s, ok) == strlen(s) && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* The cgroup path's trouble as SetClass's answer */
static int set_class_refusal(int r, const char *target, char **ret_message) {
        if (r == -EPERM) {
                *ret_message = g_strdup_printf("unit_or_cgroup '%s' is outside the freeze roots", target);
                return FRIDGE_ERROR_INVALID_ARGS;
        }
        if (r != -EINVAL && r != -ENOENT)
                return r;
        *ret_message = g_strdup_printf("unit_or_cgroup '%s' is neither a unit name nor an existing cgroup path "
                                       "(relative, no .., no symlinks)", target);
        return FRIDGE_ERROR_INVALID_ARGS;
}

int manager_set_class(Manager *m, const char *target, const char *class_name, const char *who,
                      char **ret_message) {
        if (strchr(target, '/')) {
                if (m->cgroup_fd < 0) {
                        *ret_message = g_strdup("there is no cgroup v2 hierarchy to freeze");
                        return FRIDGE_ERROR_NOT_SUPPORTED;
                }
                int r = cgroups_check_path(m->cgroup_fd, target, m->config->freeze_roots);
                if (r < 0)
                        return set_class_refusal(r, target, ret_message);
        } else if (!unit_name_is_valid(target))
                return set_class_refusal(-EINVAL, target, ret_message);

        CgroupClass c = class_name ? cgroup_class_from_string(class_name) : _CLASS_INVALID;
        if (class_name && c < 0) {
                *ret_message = g_strdup_printf("class '%s' is not one of early, late, nofreeze, ui", class_name);
                return FRIDGE_ERROR_INVALID_ARGS;
        }
        overrides_set(m->overrides, target, c, who);
        return 0;
}

void manager_on_hold_released(uint64_t id, void *userdata) {
        Manager *m = userdata;
        if (m->ops && m->ops->hold_released)
                m->ops->hold_released(m->userdata, id);
}

void manager_release_hold(Manager *m, uint64_t id) {
        if (overrides_release_hold(m->overrides, id))
                manager_on_hold_released(id, m);
}

int manager_hold_role(Manager *m, uid_t uid, const char *role, pid_t pid, int *ret_fd, uint64_t *ret_hold,
                      char **ret_message) {
        if (!g_strv_contains(ui_roles, role)) {
                g_autofree char *roles = g_strjoinv(", ", (char **) ui_roles);
                *ret_message = g_strdup_printf("role '%s' is not one of %s", role, roles);
                return FRIDGE_ERROR_INVALID_ARGS;
        }
        /* Anyone may own a bus name on a session bus of their own: only the
         * screen's user's processes are its interface */
        if (uid != 0 && !detect_uid_at_seat(uid)) {
                *ret_message = g_strdup_printf("uid %u has no active session on a seat: its processes are not the "
                                               "screen's user interface", (unsigned) uid);
                return FRIDGE_ERROR_ACCESS_DENIED;
        }
        if (pid <= 0 || detect_pid_owner(m->proc_fd, pid) != uid) {
                *ret_message = g_strdup_printf("pid %d is not a process of uid %u, the caller's", (int) pid,
                                               (unsigned) uid);
                return FRIDGE_ERROR_ACCESS_DENIED;
        }
        g_autofree char *who = g_strdup_printf("the user interface of uid %u", (unsigned) uid);
        g_autofree char *why = g_str_equal(role, UI_ROLE_COMPOSITOR)
                                       ? g_strdup("its Wayland compositor")
                                       : g_strdup_printf("owns %s on its session bus", role);
        return manager_add_hold(m, pid, uid, CLASS_UI, who, why, ret_fd, ret_hold, ret_message);
}

int manager_add_hold(Manager *m, pid_t pid, uid_t uid, CgroupClass class, const char *who, const char *why,
                     int *ret_fd, uint64_t *ret_hold, char **ret_message) {
        g_autofree char *cgroup = NULL;

        int r = manager_check_lease_caps(m, uid, ret_message);
        if (r != 0)
                return r;
        if (m->cgroup_fd < 0) {
                *ret_message = g_strdup("there is no cgroup v2 hierarchy");
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        /* The caller (the holder) is the implicit argument here: a cgroup
         * that cannot be read is as unholdable as one outside the roots */
        if (pid <= 0 || cgroups_of_pid(m->proc_fd, pid, &cgroup) < 0) {
                *ret_message = g_strdup("cannot tell the caller's cgroup (no pid, or no /proc/PID/cgroup); "
                                        "nothing to hold");
                return FRIDGE_ERROR_INVALID_ARGS;
        }
        if (!cgroups_in_roots(cgroup, m->config->freeze_roots)) {
                *ret_message = g_strdup("the caller's cgroup is outside the freeze roots; nothing to hold");
                return FRIDGE_ERROR_INVALID_ARGS;
        }
        return overrides_add_hold(m->overrides, cgroup, class, uid, who, why, ret_fd, ret_hold);
}

