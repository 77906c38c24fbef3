/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to the manager's files: the cycle and the manager's state, and
 * the steps they share. manager.c holds the API and the transition that
 * every change of state goes through; manager-states.c is what each state
 * does when it is entered; manager-retry.c tries the kernel phase again;
 * manager-sleep-path.c is systemd's sleep path (the hook and the logind
 * driver). The manager stays the only sequencer: the files are one
 * module, split for reading. */

#include "manager.h"

#include <stdint.h>
#include <systemd/sd-event.h>

#include "classes.h"
#include "config.h"
#include "cycle-settings.h"
#include "cycle-state.h"
#include "detect-cache.h"
#include "devices.h"
#include "freezer.h"
#include "inhibit.h"
#include "ledger.h"
#include "logind.h"
#include "overrides.h"
#include "pidref.h"
#include "plan.h"
#include "power.h"
#include "power-backend.h"
#include "record.h"
#include "systemd-sleep.h"
#include "timeline.h"
#include "worker.h"
#include "write-queue.h"
#include "writer-verdict.h"

#define FLUSH_TICK_USEC (100 * USEC_PER_MSEC)
/* While a freeze stage waits, its progress says how long until the
 * timeout: anew each second, so that something on screen moves */
#define FREEZE_TICK_USEC USEC_PER_SEC
/* How long a stopping fridged waits for the write queue (SIGTERM) */
#define MANAGER_WRITES_DRAIN_USEC (2 * USEC_PER_SEC)

/* A plan's build (manager-classes.c) */
typedef struct PlanJob PlanJob;

/* A Hook call waiting for its answer */
typedef struct HookWaiter {
        ManagerHookDone done;
        void *userdata;
} HookWaiter;

/* A GetPlan waiting for its build */
typedef struct PlanWaiter {
        ManagerPlanDone done;
        void *userdata;
        uid_t uid;              /* the caller's, for PendingPlansPerUser= */
} PlanWaiter;

typedef struct Cycle {
        uint64_t id;
        SleepKind kind;
        CycleState state;
        CycleState ended_in;            /* the state the result was decided in early, else invalid */
        CycleSettings *settings;        /* resolved at the start; the cycle reads nothing else */
        double progress;
        char *progress_text;

        bool have_wakeup_count;
        uint32_t wakeup_count;
        WakeupSnapshot *wakeup_sources; /* event counts when wakeup_count was read */
        uint64_t flush_start_kib;
        char *set_resume;               /* MAJ:MIN for /sys/power/resume, from the pre-flight */
        bool writes_image;              /* the kernel phase is fridge-image-writer's (WRITING_IMAGE) */

        /* What the current state owns; every transition stops all of it */
        Worker *worker;                 /* the state's blocking work, if any */
        PowerRequest *power_request;    /* borrowed from the worker while it runs */
        sd_event_source *tick;          /* flush progress sampling, a freeze stage's countdown */
        sd_event_source *timer;         /* the state's bound (queue, delay, flush, hook), the retry backoff
                                         * or the kernel watchdog */

        uint64_t delay_before;          /* the delay inhibitors waited for have ids below this */
        uint64_t delay_start;           /* CLOCK_MONOTONIC µs when SleepImminent went out */

        Plan *plan;                     /* made at prepare */
        uint64_t stage_start;           /* CLOCK_MONOTONIC µs when the current freeze stage began */
        unsigned stage_frozen, stage_total; /* its cgroups frozen so far, of all */
        uint64_t resumed_usec;          /* CLOCK_MONOTONIC µs when the state write returned, or 0 */
        unsigned thawed;                /* cgroups thawed so far (the resume thaws before the thaw phase) */
        uint64_t kernel_start;          /* CLOCK_MONOTONIC µs when the kernel phase's worker started */
        bool kernel_stuck;              /* its watchdog fired: the return is logged too */
        unsigned cancel_wait_ticks;     /* writer progress ticks since an unanswered Cancel, or 0 */
        uint64_t slept_usec;            /* for RESUMING: how long the machine slept */
        char *wake_reason;              /* for RESUMING: what woke it */
        PowerImageWrite image;          /* the kernel phase's image write, as its backend tells it */
        Freezer *freezer;               /* borrowed from the manager, NULL without cgroup v2 */
        char *client_cgroup;            /* ui for this cycle */
        PidRef client;                  /* the client that started it: its terminal is ui too */

        uint64_t started_usec;          /* CLOCK_REALTIME, for the cycle record */
        Timeline *timeline;             /* what its picture needs (manager-timeline.c) */
        uid_t owner;                    /* who started it (Sleep's or the hook's caller), (uid_t) -1: unknown */
        bool by_hook;                   /* the sleep hook started it */
        const char *recorded_phase;     /* what the record says now: a state of the same phase writes nothing */
        PowerSaved *before;             /* the kernel knobs before the cycle set the first, NULL until then */
        bool knobs_saved;               /* <state dir>/kernel holds them */
        unsigned attempt;               /* kernel-phase retries done so far ([Sleep] Retries=) */
        char *retry_why;                /* the transient failure the next attempt follows */
        uint32_t retry_ms;              /* its backoff */
        bool joined;                    /* the hook's pre belongs to this cycle (logind driver) */
        bool imminent_sent;             /* SleepImminent went out (once per cycle) */
        HookWaiter pre, post;
        sd_event_source *pre_deadline;  /* from Hook("pre") until frozen: its share of the hook's budget */
        bool post_thaws;                /* the post came before its pre finished: the thaw is its answer */
        PowerKnobs knobs;               /* hook drivers: set for systemd-sleep's state write, put back after */
        char *knob_failure;             /* a knob the kernel refused: the cycle fails with it once resumed */
        char **warnings;                /* what fridge could not do, though the cycle went on; NULL: none */
        uint64_t pre_boottime;          /* CLOCK_BOOTTIME µs at the kernel phase, hook driver */
        uint64_t pre_monotonic;

        CycleResult result;
        FridgeError error;
        char *message;
} Cycle;

/* A logind-driven cycle that ends after logind was asked to sleep leaves
 * its pm_test level set: systemd-sleep writes the state whatever the
 * hook's pre answers, and without the level a rehearsal (--pm-test) would
 * be a real sleep. Kept until the next Hook("post"), the hook budget of
 * awake time, or another cycle; a hook cycle of that same sleep adopts it. */
typedef struct PmTestKeep {
        uint64_t cycle;                 /* whose level; 0: nothing kept */
        PowerKnobs knobs;
        PowerSaved *before;             /* owned: what the release puts back */
        bool saved;                     /* <state dir>/kernel holds `before` */
        sd_event_source *timer;
} PmTestKeep;

struct Manager {
        sd_event *event;
        Config *config;
        int sysfs_fd;
        int proc_fd;
        const PowerBackend *const *power_backends; /* NULL: the built-in ones */
        char *image_writer_socket;      /* STATE_DIR/image-writer.sock */
        WriterVerdict *writer_verdict;  /* what the writer there said it can do */
        int cgroup_fd;                  /* -1: no cgroup v2, nothing is frozen */
        char *cgroup_root;
        Ledger *ledger;
        char *sleep_conf_root;          /* systemd-sleep's settings and systemd's units are read under it */
        unsigned systemd_version;       /* the running systemd's, 0: unknown */
        int state_fd;                   /* --state-dir: the saved kernel knobs, -1 when unusable */
        int persistent_fd;              /* --persistent-dir: the cycle record and ids, -1 when unusable */
        History *history;               /* below persistent_fd; NULL when unusable */
        WriteQueue *writes;             /* what goes to the persistent dir off the loop; NULL: on it */
        char *boot_id;                  /* this boot's, NULL: unknown */
        CycleRecord *interrupted;       /* a cycle an earlier fridged did not finish, until reported */
        uint64_t announced_id;          /* the last cycle an earlier fridged announced finished; 0: none */
        bool startup_thaw_failed;       /* the ledger's thaw at start-up left something frozen */
        bool keep_record;               /* the cycle ends unannounced: the next start reports it */
        Freezer *freezer;
        ClassRules *rules;
        char **class_dirs;              /* classes.d, highest priority first: read again by a reload */
        Logind *logind;                 /* borrowed, NULL: no logind driver */
        uint64_t logind_cycle;          /* the cycle that asked logind to sleep */
        uint64_t reserved_id;           /* announced at PrepareForSleep for the hook's coming cycle */
        PmTestKeep pm_keep;             /* a logind-driven cycle's pm_test, past its end */
        GHashTable *exempt_pids;        /* pid → ExemptPid (manager-exempt.c): their cgroups are never frozen */
        Overrides *overrides;           /* SetClass and HoldClass */
        Inhibitors *inhibitors;
        char *next_client_cgroup;
        PidRef next_client;
        uid_t next_client_uid;          /* the next cycle's owner, (uid_t) -1: unknown */
        GQueue *timelines;              /* KeptTimeline: the last finished cycles', oldest first */
        const ManagerOps *ops;
        void *userdata;
        sd_event_source *step;          /* one-shot: run the next phase from the loop */
        sd_event_source *thaw_retry;    /* armed only while a thaw has failed */
        Worker *plan_worker;            /* GetPlan's build, one at a time */
        DetectCache *detect_cache;      /* what the plans' walks found in fd tables */
        GArray *plan_waiters;           /* PlanWaiter: the calls the running build answers */
        GArray *plan_next;              /* PlanWaiter: those asked during it, for the next build */

        Cycle *cycle;
        uint64_t next_id;

        uint64_t last_id;
        SleepKind last_kind;
        CycleResult last_result;
        char *last_wake_reason;
        char *can_reason[_SLEEP_KIND_MAX]; /* owns what manager_can() returned last */
        PowerAnswer can_answer[_SLEEP_KIND_MAX];
        uint64_t can_call[_SLEEP_KIND_MAX]; /* the call they answered, 0: none */
        /* What one call's Can* share (GetAll asks three kinds): sleep.conf
         * and the kernel's offer, read once for call can_shared_call */
        SystemdSleepConf *can_sleep_conf;
        PowerCaps *can_caps;
        uint64_t can_shared_call;
        HibernateCache hibernate;       /* the pre-flight's swap choice, and its answer for one call */
};

/* The prepare phase's blocking part, on a worker (also a retry's) */
typedef struct PrepareJob {
        int sysfs_fd;
        PlanJob *plan;                  /* the cycle's plan (at prepare, not a retry's), made first */
        int plan_error;                 /* its build failed: the cycle fails */
        bool no_handshake;              /* a dry run that skips the kernel: no wakeup_count to write back */
        uint32_t wakeup_count;
        WakeupSnapshot *sources;
} PrepareJob;

#define TAKE_ID(id) ({ uint64_t _id = (id); (id) = 0; _id; })

/* The one way a cycle changes state: checks the move against the table,
 * stops what the old state owned, logs the move, records it, tells the
 * bus layer, and runs what the new state does on entry. */
void manager_transition(Manager *m, CycleState to);
/* An event of the current state, through cycle_state_next() */
void manager_cycle_event(Manager *m, CycleEvent e);
CycleFacts manager_cycle_facts(const Manager *m);
/* What each state does when it is entered (manager-states.c) */
void manager_enter_state(Manager *m, CycleState s);
/* The phase the cycle is in (ENDING keeps the one it ended in) */
Phase manager_cycle_phase(const Cycle *c);
bool manager_cycle_blocked(const Manager *m);
/* A plan's build, for a worker: what it needs is read on the loop here;
 * the client's terminal (client may be NULL) and every cgroup are read by
 * manager_plan_job_run() */
int manager_plan_job_new(Manager *m, const char *client_cgroup, const PidRef *client, char **roots,
                         PlanJob **ret);
int manager_plan_job_run(void *p);
Plan *manager_plan_job_steal(PlanJob *j);
void manager_plan_job_free(void *p);
/* GetPlan's build is abandoned and its callers answered -ECANCELED */
void manager_plan_stop(Manager *m);

/* manager-blockers.c: a stage timed out; names what blocks it on a
 * worker (bounded) and ends the cycle with FreezeTimeout */
void manager_name_blockers(Manager *m);

void manager_end_cycle_early(Manager *m, CycleResult result, FridgeError error, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void manager_record_update(Manager *m);
/* Before the cycle sets its first kernel knob: c->before, and on disk */
void manager_knobs_save(Manager *m, Cycle *c);
/* On disk while the knobs may be off c->before, removed after */
void manager_record_knobs(Manager *m, Cycle *c);
void manager_load_record(Manager *m, const char *state_dir, const char *persistent_dir);
/* Cycle `id`'s record goes, after every write queued before (its history file) */
void manager_record_remove(Manager *m, uint64_t id);
/* Just before the cycle's CycleFinished: a restart does not announce it again */
void manager_record_announced(Manager *m, const Cycle *c);
void manager_record_next_id(Manager *m);
/* manager-history.c: the history below the persistent directory */
void manager_history_open(Manager *m, const char *persistent_dir);
/* A finished cycle's entry */
void manager_history_add_cycle(Manager *m, const Cycle *c);
/* The entry of an interrupted cycle, reported at start-up; the caller has
 * checked that the history does not hold it yet */
void manager_history_add_interrupted(Manager *m, const CycleRecord *rec, const char *message);
/* manager-sleep-path.c: at the move to ENDING, instead of putting the
 * knobs back; true when the keep took them */
bool manager_pm_keep_take(Manager *m, Cycle *c, CycleState from);
/* Puts the kept level back (nothing kept: nothing done) */
void manager_pm_keep_release(Manager *m, const char *why);
/* At the hook's pre: a freeze root frozen already (systemd-sleep froze
 * user.slice itself) is logged and kept in the cycle's warnings */
void manager_check_sleep_frozen(Manager *m);
/* Appends to the cycle's warnings (takes `warning`) */
void cycle_add_warning(Cycle *c, char *warning);
/* A hook cycle of the sleep the kept level was for: it owns it now */
void manager_pm_keep_adopt(Manager *m, Cycle *c);
void manager_on_hold_released(uint64_t id, void *userdata);
void manager_on_inhibitor_released(const Inhibitor *i, void *userdata);
/* logind's block inhibitor made to match fridge's (manager-inhibitors.c):
 * after every change of the inhibitors or of the cycle's state */
void manager_sync_logind_block(Manager *m);
/* FINISHED: CycleFinished goes out and the cycle is freed */
void manager_cycle_finish(Manager *m);
Cycle *manager_cycle_start(Manager *m, SleepKind kind, CycleDriver driver, CycleOptions *opts);
void manager_emit_sleep_imminent(Manager *m);
void manager_hook_waiter_complete(HookWaiter *w, uint64_t id, int r, FridgeError error, const char *message);
int manager_check_idle(Manager *m, char **ret_message);
/* manager-power.c: what the machine can do, the driver, the image's device */
PowerContext manager_power_context(const Manager *m, const Config *config);
PowerCycle manager_power_cycle(SleepKind kind, const CycleOptions *o);
int manager_pick_driver(Manager *m, const CycleOptions *o, CycleDriver *ret, char **ret_message);
/* A hibernation to a plain device: the pre-flight's notice becomes a cycle warning */
void manager_note_image_device(Manager *m, Cycle *c);
/* manager-config.c */
void manager_load_rules(Manager *m);
int manager_check_sleep_allowed(Manager *m, SleepKind kind, char **ret_message);
int manager_check_systemd_sleep(Manager *m, SleepKind kind, const CycleOptions *o, char **ret_message);
void manager_notify(Manager *m, unsigned what);
void manager_prepare_done(int r, void *data, void *userdata);
void manager_prepare_job_free(void *p);
int manager_prepare_job_run(void *p);
void manager_schedule_step(Manager *m);
/* The state's work is over before its step runs: its timer and tick must
 * not fire in between (a flush done, a hook's pre come, the delay holders
 * gone) */
void manager_cycle_work_done(Cycle *c);
/* manager-kernel.c: the kernel phase of a direct cycle */
void manager_enter_sleeping(Manager *m);
void manager_enter_skipping_kernel(Manager *m);
void manager_enter_resuming(Manager *m);
/* Resumed and LastWakeReason, then on to RESUMING */
void manager_report_resumed(Manager *m);
/* manager-states.c: thaws what the cycle froze (after a resume, at the thaw phase) */
void manager_thaw_cycle(Manager *m);
void manager_enter_hook_sleeping(Manager *m);
/* ProgressText while delay inhibitors hold the cycle: how many, and whose */
void manager_delay_progress(Manager *m);
void manager_enter_handed_over(Manager *m);
/* The kernel phase failed: whether another attempt was set up (RETRY_WAITING) */
bool manager_retry_kernel(Manager *m, const PowerRequest *req);
void manager_enter_retry_waiting(Manager *m);
void manager_enter_retry_preparing(Manager *m);
void manager_set_progress(Manager *m, double fraction, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* manager-timeline.c: the cycle's timeline, fed by the transition, the
 * freezer, the flush tick and the resume; kept when it finishes */
void manager_timeline_start(Manager *m, Cycle *c);
void manager_timeline_transition(Manager *m, CycleState to);
void manager_timeline_flush_sample(Manager *m, uint64_t kib);
void manager_timeline_flush_end(Manager *m);
void manager_timeline_keep(Manager *m, Cycle *c);
void manager_timelines_free(Manager *m);

/* manager-exempt.c: an empty table of pinned exempt processes, by pid */
GHashTable *manager_exempt_pids_new(void);
