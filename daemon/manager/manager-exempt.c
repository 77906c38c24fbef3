/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The processes whose cgroups are never frozen (fridged, the bus daemon, the
 * client that starts a cycle), pinned by pidfd or start time: a pid is
 * reused once its process is reaped, and the new process must not inherit
 * the exemption. */
#include "manager-internal.h"

#include <errno.h>
#include <unistd.h>

#include "cgroups.h"
#include "log.h"
#include "macro.h"
#include "pidref.h"

typedef struct ExemptPid {
        PidRef ref;
        char *reason;
} ExemptPid;

static void exempt_pid_free(ExemptPid *e) {
        pidref_done(&e->ref);
        g_free(e->reason);
        g_free(e);
}

int manager_exempt_process(Manager *m, const PidRef *ref, const char *reason) {
        ExemptPid *e = g_new0(ExemptPid, 1);
        int r = pidref_copy(ref, &e->ref);
        if (r < 0) {
                g_free(e);
                return r;
        }
        e->reason = g_strdup(reason);
        g_hash_table_replace(m->exempt_pids, GINT_TO_POINTER((int) ref->pid), e);
        return 0;
}

void manager_exempt_pid(Manager *m, pid_t pid, const char *reason) {
        _cleanup_(pidref_done) PidRef ref = PIDREF_NULL;
        int r = pidref_set(&ref, m->proc_fd, pid);
        if (r >= 0)
                r = manager_exempt_process(m, &ref, reason);
        if (r < 0)
                log_warning_errno(r, "Cannot pin pid %d (%s) to exempt its cgroup: %m", (int) pid, reason);
}

/* The cgroup of the pinned process: checked after the read, so alive
 * then, the cgroup read was its own. -ESRCH once it exited. */
static int pinned_cgroup(Manager *m, const PidRef *ref, char **ret) {
        g_autofree char *cgroup = NULL;
        int r = cgroups_of_pid(m->proc_fd, ref->pid, &cgroup);
        if (!pidref_is_alive(ref, m->proc_fd))
                return -ESRCH;
        if (r < 0)
                return r;
        *ret = g_steal_pointer(&cgroup);
        return 0;
}

GHashTable *manager_exempt_cgroups(Manager *m) {
        GHashTable *exempt = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        GHashTableIter i;
        gpointer k, v;
        g_hash_table_iter_init(&i, m->exempt_pids);
        while (g_hash_table_iter_next(&i, &k, &v)) {
                ExemptPid *e = v;
                g_autofree char *cgroup = NULL;
                int r = pinned_cgroup(m, &e->ref, &cgroup);
                if (r == -ESRCH) {
                        log_info("Pid %d (%s) exited; a process that reuses the pid is not exempted",
                                 (int) e->ref.pid, e->reason);
                        g_hash_table_iter_remove(&i);
                } else if (r >= 0)
                        g_hash_table_replace(exempt, g_steal_pointer(&cgroup), g_strdup(e->reason));
                else
                        /* No unit name stands in for any of them any more: said */
                        log_warning_errno(r, "Cannot read the cgroup of pid %d (%s): %m; it is not exempt in this plan",
                                          (int) e->ref.pid, e->reason);
        }
        return exempt;
}

void manager_set_client_pid(Manager *m, pid_t pid) {
        g_clear_pointer(&m->next_client_cgroup, g_free);
        pidref_done(&m->next_client);
        if (pid <= 0)
                return;
        _cleanup_(pidref_done) PidRef ref = PIDREF_NULL;
        int r = pidref_set(&ref, m->proc_fd, pid);
        if (r >= 0)
                r = pinned_cgroup(m, &ref, &m->next_client_cgroup);
        /* Its terminal is looked up on the plan's worker, from the pinned process */
        if (r >= 0) {
                m->next_client = ref;
                ref = PIDREF_NULL;
        }
        if (r < 0)
                log_debug_errno(r, "Cannot tell the cgroup of the client pid %d: %m", (int) pid);
}

GHashTable *manager_exempt_pids_new(void) {
        return g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) exempt_pid_free);
}
