/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The soak (issue 18): many whole cycles of the real fridged on the
 * simulated kernel against a realistic tree, with faults drawn per cycle
 * from a seeded schedule, and invariants checked from outside fridged
 * after every cycle. soak.c runs the cycles and prints the figures,
 * soak-tree.c builds and removes the tree, soak-fault.c injects the
 * faults, soak-check.c checks the invariants and stops the run at the
 * first violation (seed, cycle, faults, fridged's log kept for replay).
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"
#include "scratch.h"

/* polkit says no to nobody's Sleep (the polkit faults hold its answer) */
#define SOAK_POLKIT_TABLE "io.fridge.sleep 65534 no\n"

/* At most one disruption per cycle: each decides how the cycle ends */
typedef enum SoakDisruption {
        SOAK_CALM,              /* the cycle runs to its end */
        SOAK_KILL,              /* SIGKILL of fridged at a random moment, restarted */
        SOAK_HOOK_KILLED,       /* the cycle started by Hook("pre"), its caller killed */
        SOAK_CANCEL,            /* Cancel at a random moment */
        SOAK_BUS_RESTART,       /* the bus daemon restarted mid-cycle */
        _SOAK_DISRUPTION_MAX,
} SoakDisruption;

/* Any number of conditions per cycle: they meet the disruption */
typedef enum SoakCondition {
        SOAK_FUSE_STOPPED,      /* the FUSE server SIGSTOPped past the freeze timeout */
        SOAK_D_STATE,           /* a process stuck in fsync on a held slowfs */
        SOAK_WAKEUP_FLUSH,      /* a wakeup event during the flush */
        SOAK_WAKEUP_EARLY,      /* ... during freeze-early */
        SOAK_WAKEUP_LATE,       /* ... during freeze-late */
        SOAK_EBUSY,             /* the state write fails with EBUSY */
        SOAK_POLKIT_SLOW,       /* a user's Sleep waits on a polkit that answers late */
        SOAK_POLKIT_NEVER,      /* ... that never answers (the caller gives up) */
        SOAK_CGROUP_CHURN,      /* cgroups created and removed during the walk */
        SOAK_DISK_FULL,         /* the state directory's file system full */
        SOAK_BAD_RELOAD,        /* SIGHUP with an invalid config file mid-cycle */
        _SOAK_CONDITION_MAX,
} SoakCondition;

typedef struct SoakFile {
        char *path;
        char *sha256;           /* taken after its fsync() */
} SoakFile;

/* One fridged process's memory over its cycles (restarts start another) */
typedef struct SoakLife {
        pid_t pid;
        unsigned cycles;
        uint64_t rss10_kib, rss_last_kib;   /* at its 10th cycle and its last */
        unsigned fds10, fds_last;
        char *fd_list10, *fd_list_last;     /* their targets, sorted, one a line (owned) */
} SoakLife;

typedef struct Soak {
        /* the schedule */
        guint32 seed;
        GRand *rand;
        unsigned cycles;        /* 0: until minutes run out */
        unsigned minutes;       /* 0: until cycles are run */
        bool sighup_reload;     /* fridged reloads its config on SIGHUP */
        char *keep_dir;         /* where a violation's logs go */

        /* the tree */
        Harness *h;
        Scratch *s;
        GPtrArray *cgroups;     /* relative paths of every scratch cgroup (borrowed) */
        const char *fuse_cg, *writer_cg, *stuck_cg, *agent_cg;
        char *fuse_mnt;
        pid_t fuse_pid;         /* bindfs */
        char *state_dir;        /* a small tmpfs: fridged's --state-dir */
        bool state_mounted;
        char *filler;           /* the file filling the state dir (disk full) */
        GPtrArray *files;       /* SoakFile*, written before a cycle */
        unsigned file_n;
        pid_t session_pid, mock_pid, agent_pid;
        char *session_address;
        GArray *inhibit_fds;    /* our inhibitor client's fds */

        /* this cycle */
        unsigned index;
        SoakDisruption disruption;
        bool conditions[_SOAK_CONDITION_MAX];
        uint64_t cycle_id;
        unsigned moment_ms;     /* when the disruption lands, from the start */
        bool pm_test, s2idle, wake_alarm, inhibit;
        pid_t stuck_pid, polkit_client_pid, hook_pid;
        char *lost_finished;    /* the history's result when the bus lost CycleFinished */
        GThread *churn;
        gint churn_stop;
        char *baseline[4];      /* pm_test, mem_sleep, disk, wakealarm before the cycle */
        GHashTable *finished;   /* cycle id -> CycleFinished count, the whole run */

        /* figures */
        unsigned n_run;
        unsigned n_disruption[_SOAK_DISRUPTION_MAX];
        unsigned n_condition[_SOAK_CONDITION_MAX];
        unsigned n_done, n_cancelled, n_failed, n_interrupted, n_other;
        unsigned frozen_left, files_corrupted;
        unsigned restarts;
        unsigned n_lost_finished;  /* CycleFinished lost with a bus daemon, found in the history */
        int64_t worst_thaw_usec;   /* longest crash to everything thawed */
        uint64_t rss_kib[3];
        unsigned fds[3];
        pid_t sample_pid[3];
        int64_t worst_property_usec;
        SoakLife life, longest;    /* this fridged's, and the longest-lived one's */
} Soak;

extern const char *const soak_disruption_names[_SOAK_DISRUPTION_MAX];
extern const char *const soak_condition_names[_SOAK_CONDITION_MAX];

/* soak-tree.c */
void soak_tree_build(Soak *k, unsigned n_cgroups);
void soak_tree_free(Soak *k);
/* bindfs's mount gone (also from the abort handler: the harness does not know it) */
void soak_tree_unmount_fuse(Soak *k);
/* Files written and fsync()ed now, their checksums kept */
void soak_tree_write_files(Soak *k);
/* Starts (again) what lives on fridged's bus: the agent on its session bus */
void soak_tree_start_agent(Soak *k);
/* Our inhibitor client takes or drops a delay inhibitor */
void soak_tree_inhibit(Soak *k, bool take);
/* Every scratch cgroup that reads "frozen 1" in cgroup.events */
unsigned soak_tree_count_frozen(Soak *k);

/* soak-fault.c */
void soak_fault_draw(Soak *k);
/* Runs one cycle with the drawn faults; fills k->cycle_id; returns the
 * CycleFinished result ("done", ...), error and message (g_free); the
 * faults are counted as they are injected */
void soak_fault_run_cycle(Soak *k, char **ret_result, char **ret_error, char **ret_message);
/* A comma-separated list of this cycle's faults (g_free) */
char *soak_fault_describe(Soak *k);

/* soak-check.c */
/* The invariants after a cycle; stops the run at the first violation */
void soak_check_cycle(Soak *k);
/* Stops the run: says why, where, how to replay, keeps fridged's log */
G_NORETURN void soak_violation(Soak *k, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Handlers that say the same when the harness asserts */
void soak_check_install_handlers(Soak *k);
/* RssAnon (KiB) and open fds of fridged now */
void soak_check_sample(Soak *k, unsigned slot);
void soak_check_memory(pid_t pid, uint64_t *ret_rss_kib, unsigned *ret_fds);
/* What fridged's fds lead to, sorted, one a line (g_free) */
char *soak_check_fd_list(pid_t pid);
/* The baseline of the kernel knobs the cycle must restore */
void soak_check_baseline(Soak *k);
