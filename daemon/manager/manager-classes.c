/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: the plan, and the classes callers set (SetClass) or hold
 * (HoldClass). */
#include "manager-internal.h"

#include <string.h>

#include "cgroups.h"
#include "classify.h"
#include "overrides.h"

/* ---- the plan ---- */

int manager_build_plan(Manager *m, const char *client_cgroup, char **roots, Plan **ret) {
        if (m->cgroup_fd < 0) {
                *ret = plan_build(NULL, 0);
                return 0;
        }
        /* Cgroups are looked up from pids every time: a process may have
         * been moved since (fridged itself, the bus daemon) */
        g_autoptr(GHashTable) exempt = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        GHashTableIter i;
        gpointer k, v;
        g_hash_table_iter_init(&i, m->exempt_pids);
        while (g_hash_table_iter_next(&i, &k, &v)) {
                char *cgroup = NULL;
                if (cgroups_of_pid(m->proc_fd, GPOINTER_TO_INT(k), &cgroup) >= 0)
                        g_hash_table_replace(exempt, cgroup, v);
        }
        if (client_cgroup)
                g_hash_table_replace(exempt, g_strdup(client_cgroup), "the client that started the cycle");

        ClassifyInput in = {
                .cgroup_fd = m->cgroup_fd, .proc_fd = m->proc_fd, .roots = roots,
                .rules = m->rules, .exempt = exempt, .overrides = overrides_by_target(m->overrides),
                .holds = overrides_holds(m->overrides),
                .detect = true,
        };
        g_autoptr(GPtrArray) trees = NULL;
        int r = classify_tree(&in, &trees);
        if (r < 0)
                return r;
        *ret = plan_build((PlanNode *const *) trees->pdata, trees->len);
        return 0;
}

int manager_get_plan(Manager *m, Plan **ret) {
        return manager_build_plan(m, NULL, m->config->freeze_roots, ret);
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
                *ret_message = g_strdup_printf("class '%s' is not one of early, late, nofreeze", class_name);
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

