/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "process-rules.h"

#include <stdio.h>
#include <string.h>

#include "cgroups.h"
#include "detect.h"
#include "fridge-config.h"

/* A cgroup's processes are bounded by the kernel's pid limit, not here:
 * the rules need each of them to say how many stay running */

char *process_rules_reason(const char *source, CgroupClass class, const char *name, pid_t pid, size_t n_others) {
        bool kept = class == CLASS_UI || class == CLASS_NOFREEZE;
        if (!kept || n_others == 0)
                return g_strdup_printf("config %s: %s (pid %d)", source, name, (int) pid);
        return g_strdup_printf("config %s: %s (pid %d) keeps its cgroup running, and with it %zu other process%s",
                               source, name, (int) pid, n_others, n_others == 1 ? "" : "es");
}

char *process_rules_exe_name(const char *target) {
        if (!target || !*target)
                return NULL;
        const char *slash = strrchr(target, '/');
        g_autofree char *base = g_strdup(slash ? slash + 1 : target);
        if (g_str_has_suffix(base, " (deleted)"))
                base[strlen(base) - strlen(" (deleted)")] = '\0';
        return *base ? g_steal_pointer(&base) : NULL;
}

typedef struct Procs {
        GArray *procs;          /* ClassProcess; comm and exe point into `strings`, args into `argvs` */
        GPtrArray *strings;     /* owned */
        GPtrArray *argvs;       /* owned strvs */
        size_t untrusted;       /* processes left out for their owner */
} Procs;

static void procs_done(Procs *p) {
        g_clear_pointer(&p->procs, g_array_unref);
        g_clear_pointer(&p->strings, g_ptr_array_unref);
        g_clear_pointer(&p->argvs, g_ptr_array_unref);
}

static const char *keep(Procs *p, char *s) {
        if (s)
                g_ptr_array_add(p->strings, s);
        return s;
}

/* Anyone may name a process "dunst" or run Xvfb: a process keeps its
 * cgroup running by name only when it is root's or belongs to a user with
 * an active session on a seat, the one at the screen. Otherwise any user
 * could keep their services unfrozen, past HoldClass's authorization. */
static bool process_owner_trusted(int proc_fd, pid_t pid, uid_t *ret_owner) {
        uid_t owner = *ret_owner = detect_pid_owner(proc_fd, pid);
        if (owner == 0)
                return true;
        return detect_uid_at_seat(owner);
}

/* comm and exe of each pid; a process gone meanwhile has neither and is
 * left out (a vanished one cannot keep the display running), and so is one
 * whose name proves nothing (process_owner_trusted()): it still counts
 * among the others */
static void procs_read(Procs *p, const ClassRules *rules, int proc_fd, const GArray *pids) {
        p->procs = g_array_new(FALSE, FALSE, sizeof(ClassProcess));
        p->strings = g_ptr_array_new_with_free_func(g_free);
        p->argvs = g_ptr_array_new_with_free_func((GDestroyNotify) g_strfreev);
        for (guint i = 0; i < pids->len; i++) {
                pid_t pid = g_array_index(pids, pid_t, i);
                uid_t owner;
                if (!process_owner_trusted(proc_fd, pid, &owner)) {
                        p->untrusted++;
                        continue;
                }
                char path[32];
                snprintf(path, sizeof(path), "%d/exe", (int) pid);
                g_autofree char *target = detect_readlink_at(proc_fd, path);
                char *comm = detect_read_comm(proc_fd, pid);
                if (g_str_equal(comm, "?") && !target) {
                        g_free(comm);
                        continue;
                }
                ClassProcess cp = { .pid = pid, .comm = keep(p, comm),
                                    .exe = keep(p, process_rules_exe_name(target)) };
                /* only where a Commands= rule names it: one more read */
                if (class_rules_want_args(rules, &cp)) {
                        char **argv = detect_read_args(proc_fd, pid);
                        g_ptr_array_add(p->argvs, argv);
                        cp.args = argv[0] ? argv + 1 : argv;
                }
                g_array_append_val(p->procs, cp);
        }
}

int process_rules_match_cgroup(const ClassRules *rules, int cgroup_fd, int proc_fd, const char *cgroup_path,
                               GHashTable *private_reasons, CgroupClass *ret_class, char **ret_reason) {
        g_autoptr(GArray) pids = NULL;
        int r = detect_read_pids(cgroup_fd, cgroup_path, &pids);
        if (r < 0)
                return r;
        if (pids->len == 0)
                return 0;

        Procs p = { 0 };
        procs_read(&p, rules, proc_fd, pids);
        CgroupClass class;
        const char *source;
        size_t index, n_class;
        bool match = class_rules_match_processes(rules, (const ClassProcess *) (void *) p.procs->data, p.procs->len,
                                                 &class, &source, &index, &n_class);
        if (match) {
                const ClassProcess *cp = &g_array_index(p.procs, ClassProcess, index);
                /* anyone's bytes: the reason goes to the log and on D-Bus */
                g_autofree char *name = cgroups_escape(cp->exe ? cp->exe : cp->comm);
                size_t others = p.procs->len + p.untrusted - n_class;
                *ret_reason = process_rules_reason(source, class, name, cp->pid, others);
                detect_add_private(private_reasons, *ret_reason, detect_pid_owner(proc_fd, cp->pid),
                                   process_rules_reason(source, class, FRIDGE_PLAN_HIDDEN, 0, others));
                *ret_class = class;
        }
        procs_done(&p);
        return match;
}
