/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "cycle.h"
#include "history.h"
#include "logind.h"
#include "pidref.h"
#include "inhibit.h"
#include "plan.h"
#include "power-backend.h"
#include "sleep-options.h"
#include "timeline.h"

/* The cycle state machine: the only sequencer. It knows nothing of D-Bus;
 * it reports through ManagerOps.
 *
 * Errors, in two tiers: a call that can be refused (manager_start,
 * manager_cancel, manager_set_class, manager_add_hold, manager_inhibit,
 * manager_hook_pre, manager_hook_post) returns
 *   0                  done;
 *   a FridgeError > 0  refused: the caller's answer (fridge-error.h),
 *                      and *ret_message (owned by the caller) says why;
 *   a negative errno   a plain system failure (no message).
 * Test with `r != 0`, never `r < 0`, which misses the refusals. */

/* CycleOptions, what one Sleep asked for, is declared with the table of
 * Sleep options in sleep-options.h */

void cycle_options_clear(CycleOptions *o);

typedef enum ManagerChange {
        MANAGER_CHANGED_STATE = 1 << 0,    /* State, Phase, CycleId, Kind: sent at once */
        MANAGER_CHANGED_PROGRESS = 1 << 1, /* Progress, ProgressText: may be throttled */
        MANAGER_CHANGED_LAST = 1 << 2,     /* LastResult, LastWakeReason */
} ManagerChange;

typedef struct ManagerOps {
        void (*changed)(void *userdata, unsigned what);
        void (*sleep_imminent)(void *userdata, uint64_t cycle, SleepKind kind);
        void (*resumed)(void *userdata, uint64_t cycle, uint64_t slept_usec, const char *wake_reason);
        void (*finished)(void *userdata, uint64_t cycle, CycleResult result, FridgeError error, const char *message);
        void (*hold_released)(void *userdata, uint64_t hold);
        /* an inhibitor of `sender` ended, whatever ended it */
        void (*inhibitor_released)(void *userdata, const char *sender);
} ManagerOps;

typedef struct Manager Manager;

typedef struct ManagerParams {
        sd_event *event;
        const char *sysfs_root;
        const char *proc_root;
        const char *cgroup_root;        /* NULL: the cgroup2 mount from mountinfo */
        const char *state_dir;          /* the ledger's directory, e.g. /run/fridge */
        const char *persistent_dir;     /* the cycle record, ids and history, e.g. /var/lib/fridge;
                                         * NULL: state_dir */
        const char *sleep_conf_root;    /* where systemd-sleep's etc/systemd/sleep.conf is; NULL: / */
        const char *const *class_dirs;  /* classes.d directories, highest priority first */
        Config *config;                 /* taken */
        const PowerBackend *const *power_backends; /* NULL-terminated; NULL: the built-in ones */
} ManagerParams;

int manager_new(const ManagerParams *p, Manager **ret);
Manager *manager_free(Manager *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Manager, manager_free)

void manager_set_ops(Manager *m, const ManagerOps *ops, void *userdata);

/* Puts `config` (taken; config_load() found `config_problems` things wrong
 * in it) and classes.d read again in place, all or nothing: with a problem
 * in either, the configuration in effect stays (logged) and -EINVAL is
 * returned. A running cycle is not changed. */
int manager_reload(Manager *m, Config *config, unsigned config_problems);

/* Starts a cycle; phases run from the event loop, so the caller can reply
 * before any of them reports. Refusals: Busy (one is running or queued);
 * NotSupported (the kernel lacks what was asked for, or Driver=logind
 * without logind); HibernateNotReady (nowhere to hibernate to); Inhibited
 * (a block inhibitor is held and opts->queue is not set; the message names
 * the holders). With opts->queue the cycle waits (State "queued") until
 * the last block inhibitor goes, bounded by opts->queue_timeout_ms. */
int manager_start(Manager *m, SleepKind kind, CycleOptions *opts, uint64_t *ret_id, char **ret_message);

/* The process that starts the next cycle: its cgroup is never frozen, so
 * its progress bar keeps drawing. 0: none. Consumed by manager_start(). */
void manager_set_client_pid(Manager *m, pid_t pid);

/* The uid that starts the next cycle (Sleep's or the hook's caller): who
 * may see its timeline. Consumed by the next cycle's start. */
void manager_set_client_uid(Manager *m, uid_t uid);
#define MANAGER_TIMELINES_KEPT 8
/* Cycle `id`'s timeline (borrowed): the running cycle's, growing, or one
 * of the last MANAGER_TIMELINES_KEPT finished ones; NULL when not kept.
 * *ret_owner: the uid that started it, (uid_t) -1 when unknown. */
const Timeline *manager_timeline(const Manager *m, uint64_t id, uid_t *ret_owner);
/* An older cycle's timeline from the history (owned), NULL when none is kept */
Timeline *manager_timeline_load(const Manager *m, uint64_t id, uid_t *ret_owner);
/* The past cycles (history.h), newest first; borrowed */
const History *manager_history(const Manager *m);

/* The cgroup of `pid` is never frozen (the bus daemon's), for `reason`;
 * looked up at every plan, so it follows the process if it moves. */
void manager_exempt_pid(Manager *m, pid_t pid, const char *reason);
/* The same for a process pinned already (a copy is kept): once it exits,
 * whatever process gets its pid is not exempted. 0 or <0. */
int manager_exempt_process(Manager *m, const PidRef *ref, const char *reason);
/* The cgroups of the exempted processes now (cgroup → reason, both owned);
 * drops the processes that exited. */
GHashTable *manager_exempt_cgroups(Manager *m);

/* GetPlan's answer: the plan and who may read what each detection names
 * (detect.h: reason → PrivateReason); both borrowed for the call, NULL
 * when r < 0 */
typedef void (*ManagerPlanDone)(void *userdata, int r, const Plan *plan, GHashTable *private_reasons);
/* The plan as it would be now (no client exemption), built on a worker
 * thread (it reads /proc of every process): `done` is called from the
 * loop, exactly once, unless this fails. Refusal: LimitsExceeded when
 * `uid` (not root) already has PendingPlansPerUser= calls waiting. */
int manager_get_plan(Manager *m, uid_t uid, ManagerPlanDone done, void *userdata, char **ret_message);

/* SetClass: `target` is a unit name or a cgroup path below a freeze root;
 * class NULL removes the override. Refusals: InvalidArgs (bad target or
 * class, or outside the roots), NotSupported (a path without cgroup v2). */
int manager_set_class(Manager *m, const char *target, const char *class_name, const char *who,
                      char **ret_message);

/* HoldClass: the cgroup of `pid` (of user `uid`) keeps `class` while the
 * returned fd (the caller's end of a pipe) stays open. Refusals:
 * NotSupported without cgroup v2; InvalidArgs when the caller's cgroup
 * cannot be told or is outside the freeze roots; LimitsExceeded by
 * manager_check_lease_caps(). */
int manager_add_hold(Manager *m, pid_t pid, uid_t uid, CgroupClass class, const char *who, const char *why,
                     int *ret_fd, uint64_t *ret_hold, char **ret_message);
/* HoldRole: the cgroup of `pid`, which serves `role` (ui-roles.h) in the
 * session of user `uid`, is ui while the returned fd stays open. Trusted
 * as classes.d's Processes= are: the caller is root or has an active
 * session on a seat, and `pid` is its own. Refusals: InvalidArgs for
 * another role, AccessDenied for the trust rule, and manager_add_hold()'s. */
int manager_hold_role(Manager *m, uid_t uid, const char *role, pid_t pid, int *ret_fd, uint64_t *ret_hold,
                      char **ret_message);
/* LimitsExceeded when fridged keeps INHIBITORS_MAX inhibitors and class
 * holds in all, or `uid` (not root) [Limits] InhibitorsPerUser= of them. */
int manager_check_lease_caps(const Manager *m, uid_t uid, char **ret_message);
/* Ends a hold (its connection went away); no-op when already gone. */
void manager_release_hold(Manager *m, uint64_t hold);

/* Inhibit: `tmpl` says who, why, mode, and the holder's bus name, uid and
 * pid; *ret_fd is the holder's end. Refusal: LimitsExceeded (the sender or
 * its user holds the most it may, or fridged holds the most it will). */
int manager_inhibit(Manager *m, const Inhibitor *tmpl, int *ret_fd, uint64_t *ret_id, char **ret_message);
/* Ends one inhibitor; no-op when already gone. */
void manager_release_inhibitor(Manager *m, uint64_t id);
/* Ends every inhibitor of `sender` (its connection went away). */
void manager_release_inhibitors_of(Manager *m, const char *sender);
unsigned manager_inhibitors_of(const Manager *m, const char *sender);
/* The block inhibitors' holders, the first few and a count; "" when none */
char *manager_block_holders(const Manager *m);
/* Every inhibitor, oldest first; borrowed (Inhibitor*), free the array. */
GPtrArray *manager_list_inhibitors(const Manager *m);

/* The cgroup v2 mount, or NULL when there is none (nothing is frozen). */
const char *manager_cgroup_root(const Manager *m);

/* Cancels cycle `id` (0: the running one). Refusals: NoSuchCycle (no such
 * cycle running), TooLate (past the point of no return). */
int manager_cancel(Manager *m, uint64_t id, const char *why, char **ret_message);

/* Once the bus name is owned: a cycle that an earlier fridged left
 * unfinished (its record in the state directory; what it froze was thawed
 * at start-up) ends now with CycleFinished "failed", error Interrupted. */
void manager_report_interrupted(Manager *m);

/* systemd's sleep path. The hook's `pre` joins the cycle a logind-driven
 * Sleep handed over to logind, else starts a new cycle; it is done when the
 * cycle is frozen and waits in phase kernel while systemd-sleep writes the
 * state. The hook's `post` thaws and finishes that cycle. `done` is called
 * exactly once for each call that returned 0: r >= 0 when that point was
 * reached (post: the cycle finished done), else with the cycle's error and
 * message. Refusals: Busy (pre: another cycle runs), NoSuchCycle (post: no
 * cycle waits for it: neither frozen by its pre nor with that pre still
 * running). */
typedef void (*ManagerHookDone)(void *userdata, uint64_t cycle, int r, FridgeError error, const char *message);
int manager_hook_pre(Manager *m, SleepKind kind, ManagerHookDone done, void *userdata, uint64_t *ret_id,
                     char **ret_message);
int manager_hook_post(Manager *m, SleepKind kind, ManagerHookDone done, void *userdata, uint64_t *ret_id,
                      char **ret_message);
/* The hook's bounds (fridge-limits.h): a pre not frozen within its share of
 * the budget, a pre whose caller left the bus (`who` names it) before it
 * was frozen, a post that comes while the pre still runs, and no post
 * within the budget of awake time: each ends the cycle HookAbandoned and
 * thaws. A post that came early is answered once everything is thawed. */
void manager_hook_caller_gone(Manager *m, uint64_t cycle, const char *who);
/* [Freeze] TimeoutMs: the default of the Sleep option freeze-timeout-ms */
uint32_t manager_freeze_timeout_ms(const Manager *m);
/* [Limits] PendingAuthorizationsPerUser= */
uint32_t manager_pending_authorizations_per_user(const Manager *m);
/* [Sleep] HookTimeoutMs, the budget the hook asks for (HookBudgetMs) */
uint32_t manager_hook_budget_ms(const Manager *m);

/* The logind driver (borrowed; NULL: none). Sleep uses it with Driver=logind,
 * or Driver=auto while logind is on the bus. While a block inhibitor is
 * held the manager keeps one logind block inhibitor that mirrors them
 * (logind_set_block), let go while its own logind-driven cycle runs. */
void manager_set_logind(Manager *m, Logind *l);
/* The running systemd's version (0: unknown), from the bus: from 256 its
 * systemd-sleep freezes user.slice before fridge's hook unless told not
 * to; what it would do is logged now (a MESSAGE_ID'd warning when it
 * would freeze) */
void manager_set_systemd_version(Manager *m, unsigned version);
/* The SleepFreeze property: sleep_freeze_status() for that version */
char *manager_sleep_freeze_status(const Manager *m);
/* power_freeze_filesystems() of fridged's sysfs */
const char *manager_freeze_filesystems(const Manager *m);
/* logind's PrepareForSleep(start): a LogindPrepareFunc taking the Manager. */
void manager_on_prepare_for_sleep(void *manager, bool start);

/* SIGTERM: ends a running cycle as aborted (failed once the state write was
 * issued: the machine may have slept), thawing everything. `unannounced`
 * (the bus is gone, so CycleFinished cannot reach anyone): its record stays,
 * and the next fridged reports it as Interrupted. */
void manager_shutdown(Manager *m, bool unannounced);

/* Properties */
const char *manager_state(const Manager *m);
/* The running cycle's state machine state (cycle-state.h's names), "" when idle */
const char *manager_cycle_state(const Manager *m);
/* The running cycle's settings, "name=value" each (free with g_strfreev);
 * empty when idle */
char **manager_cycle_settings(const Manager *m);
uint64_t manager_cycle_id(const Manager *m);
const char *manager_kind(const Manager *m);
const char *manager_phase(const Manager *m);
double manager_progress(const Manager *m);
const char *manager_progress_text(const Manager *m);
/* Whether Cancel would still stop the machine from sleeping: false past
 * the point of no return, after the hand-over to logind, and for a cycle
 * the sleep hook started (systemd-sleep sleeps anyway) */
bool manager_cancellable(const Manager *m);
/* Who started the running cycle: "bus" (Sleep), "hook" (systemd-sleep's
 * hook, a sleep the system started); "" when idle */
const char *manager_started_by(const Manager *m);
const char *manager_last_result(const Manager *m);
const char *manager_last_wake_reason(const Manager *m);
/* "yes"|"no"|"na" and why, read from the kernel now. `call` (nonzero)
 * names the caller's request: the answers, and the one hibernation
 * pre-flight behind them, are worked out once for all the properties a
 * GetAll reads; 0: afresh. */
const char *manager_can(Manager *m, SleepKind kind, uint64_t call, const char **ret_reason);
/* Who writes the image of a hibernation asked now: "fridge", "kernel" or
 * "tuxonice" (call as manager_can()'s); *ret_reason (owned) says why not
 * fridge's writer when the configuration asks for it, else NULL. */
const char *manager_hibernate_writer(Manager *m, uint64_t call, char **ret_reason);
/* Whether the hibernation pre-flight's device is encrypted: "yes", "no",
 * "unknown", or "" when it chose none; *ret_warning (owned) is the notice
 * for a plain one, else NULL. `call` as for manager_can(). */
const char *manager_hibernate_encrypted(Manager *m, uint64_t call, char **ret_warning);
/* The kinds with manager_can() "yes" or "no" (offered by this kernel). */
char **manager_supported_kinds(Manager *m, uint64_t call);
bool manager_is_busy(const Manager *m);
