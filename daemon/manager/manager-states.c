/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: what each state of a cycle does when it is entered, and the
 * completions of its work. Each state's work ends by scheduling the step
 * (its DONE event) or by ending the cycle early; where it goes next is
 * cycle_state_next()'s to say, and manager_transition() moves it there. */
#include "manager-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroups.h"
#include "flush.h"
#include "freezer.h"
#include "log.h"
#include "power.h"
#include "progress.h"
#include "time-util.h"
#include "util.h"
#include "worker.h"

/* ---- delaying, preparing ---- */

void manager_prepare_job_free(void *p) {
        PrepareJob *j = p;
        if (j->sysfs_fd >= 0)
                close(j->sysfs_fd);
        manager_plan_job_free(j->plan);
        devices_wakeup_snapshot_free(j->sources);
        g_free(j);
}

int manager_prepare_job_run(void *p) {
        PrepareJob *j = p;
        /* Detection and the caller's terminal read /proc of other
         * processes, which can block: here, not on the loop */
        if (j->plan) {
                int r = manager_plan_job_run(j->plan);
                if (r < 0) {
                        j->plan_error = r;
                        return r;
                }
        }
        if (j->no_handshake)
                return 0;
        /* Read at the start so that any wakeup event during the cycle makes
         * the later write-back fail: the kernel's race-free handshake. The
         * sources' counts then name whoever spoils it. */
        int r = power_read_wakeup_count(j->sysfs_fd, &j->wakeup_count);
        j->sources = devices_wakeup_snapshot(j->sysfs_fd);
        return r;
}

static void log_plan(const Cycle *c) {
        log_info("Cycle %" G_GUINT64_FORMAT ": plan has %u early and %u late cgroups, %u kept running for the user "
                 "interface", c->id, c->plan->n_early, c->plan->n_late, c->plan->n_ui);
        for (guint i = 0; i < c->plan->entries->len; i++) {
                const PlanEntry *e = c->plan->entries->pdata[i];
                if (e->class != CLASS_UI || e->skipped)
                        continue;
                g_autofree char *shown = cgroups_escape(e->cgroup);
                log_info("Cycle %" G_GUINT64_FORMAT ": %s is ui: %s", c->id, shown, e->reason);
        }
        if (c->plan->n_skipped > 0)
                log_warning("Cycle %" G_GUINT64_FORMAT ": %u cgroups could not be read and are not frozen (see "
                            "above)", c->id, c->plan->n_skipped);
}

void manager_prepare_done(int r, void *data, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        PrepareJob *j = data;

        c->worker = NULL;
        if (j->plan_error < 0) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot classify the cgroups: %s",
                                        errno_text(j->plan_error));
                return;
        }
        if (j->plan) {
                plan_free(c->plan);
                c->plan = manager_plan_job_steal(j->plan);
                log_plan(c);
        }
        devices_wakeup_snapshot_free(c->wakeup_sources);
        c->wakeup_sources = g_steal_pointer(&j->sources);
        /* A retry's read stands alone: a stale count from the first would spoil it */
        c->have_wakeup_count = r >= 0 && !j->no_handshake;
        if (c->have_wakeup_count)
                c->wakeup_count = j->wakeup_count;
        else if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Failed to read wakeup_count, sleeping without the wakeup handshake: %m");
        manager_set_progress(m, 1.0, "prepared");
        manager_schedule_step(m);
}

static void prepare_start_work(Manager *m) {
        Cycle *c = m->cycle;
        PrepareJob *j = g_new0(PrepareJob, 1);
        j->sysfs_fd = fcntl(m->sysfs_fd, F_DUPFD_CLOEXEC, 3);
        /* The handshake's reads (the wakeup count, every source's) are
         * for the state write alone: a dry run that skips it needs none */
        j->no_handshake = manager_cycle_facts(m).dry_run;
        /* Detection is re-run every cycle: a FUSE server or a syncing
         * process may have appeared since the last one */
        int r = manager_plan_job_new(m, c->client_cgroup, &c->client, c->settings->freeze_roots, &j->plan);
        if (r < 0) {
                manager_prepare_job_free(j);
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot classify the cgroups: %s",
                                        errno_text(r));
                return;
        }
        manager_set_progress(m, 0.0, "preparing");
        r = worker_start(m->event, manager_prepare_job_run, j, manager_prepare_job_free, manager_prepare_done, m, &m->cycle->worker);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot start the prepare phase: %s",
                                errno_text(r));
}

static int on_delay_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        g_autofree char *late = inhibit_describe(m->inhibitors, INHIBIT_DELAY, c->delay_before);
        log_warning("Cycle %" G_GUINT64_FORMAT ": delay inhibitors still held after %u ms, going on without "
                    "them: %s", c->id, c->settings->delay_timeout_ms, late);
        manager_cycle_event(m, CYCLE_EVENT_TIMEOUT);
        return 0;
}

/* What the delay waits on, named: a desktop shows it */
void manager_delay_progress(Manager *m) {
        Cycle *c = m->cycle;
        unsigned n = inhibit_count(m->inhibitors, INHIBIT_DELAY, c->delay_before);
        g_autofree char *who = inhibit_describe(m->inhibitors, INHIBIT_DELAY, c->delay_before);
        manager_set_progress(m, 0.0, "waiting for %u delay inhibitor%s: %s", n, n == 1 ? "" : "s", who);
}

/* Delay holders were told (SleepImminent) and get until they close their
 * fds, bounded: only those held at the signal count, so one that takes a
 * new lock on the signal cannot stall the cycle until the timeout. */
static int delay_wait_start(Manager *m) {
        Cycle *c = m->cycle;
        uint32_t ms = c->settings->delay_timeout_ms;
        unsigned n = inhibit_count(m->inhibitors, INHIBIT_DELAY, c->delay_before);
        if (n == 0)
                return 0;
        if (ms == 0) {
                g_autofree char *who = inhibit_describe(m->inhibitors, INHIBIT_DELAY, c->delay_before);
                log_info("Cycle %" G_GUINT64_FORMAT ": not waiting for delay inhibitors ([Delay] TimeoutMs=0): %s",
                         c->id, who);
                return 0;
        }
        int r = sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC,
                                           (uint64_t) ms * USEC_PER_MSEC, 0, on_delay_timeout, m);
        if (r < 0)
                return r;
        c->delay_start = now(CLOCK_MONOTONIC);
        manager_delay_progress(m);
        return 1;
}

static void enter_delaying(Manager *m) {
        Cycle *c = m->cycle;
        /* Before anything is flushed or frozen, so delay holders can still
         * act (lock the screen, save state) and what they write is flushed */
        manager_emit_sleep_imminent(m);
        c->delay_before = inhibit_next_id(m->inhibitors);
        int r = delay_wait_start(m);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot wait for delay inhibitors: %s",
                                errno_text(r));
        else if (r == 0)
                manager_schedule_step(m);
}

/* ---- flush, flush-again ---- */

static void flush_update_progress(Manager *m) {
        Cycle *c = m->cycle;
        uint64_t now_kib;
        char size[32];

        if (flush_read_dirty(m->proc_fd, &now_kib) < 0)
                return; /* progress is a nicety; the flush goes on */
        manager_timeline_flush_sample(m, now_kib);
        manager_set_progress(m, progress_flush_fraction(c->flush_start_kib, now_kib), "%s %s",
                     c->state == CYCLE_STATE_FLUSHING ? "flushing" : "flushing again",
                     progress_format_kib(now_kib, size, sizeof(size)));
}

static int on_flush_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        flush_update_progress(m);
        (void) sd_event_source_set_time(s, usec + FLUSH_TICK_USEC);
        return 0;
}

static void flush_done(int r, void *data, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;

        c->worker = NULL;
        manager_cycle_work_done(c);
        manager_timeline_flush_end(m);
        if (r < 0)
                log_warning_errno(r, "Writeback reported an error; the data concerned may not be on disk: %m");
        manager_set_progress(m, 1.0, "flushed");
        manager_schedule_step(m);
}

static int on_flush_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        uint64_t kib = 0;
        char size[32] = "an unknown amount";

        if (flush_read_dirty(m->proc_fd, &kib) >= 0)
                progress_format_kib(kib, size, sizeof(size));

        if (c->settings->flush_on_timeout == FLUSH_ON_TIMEOUT_CONTINUE) {
                log_warning("Writeback did not finish within %u ms (%s still dirty); going on as configured",
                            c->settings->flush_timeout_ms, size);
                manager_cycle_event(m, CYCLE_EVENT_TIMEOUT);
                return 0;
        }
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_FLUSH_TIMEOUT,
                        "writeback did not finish within %u ms (%s still dirty)", c->settings->flush_timeout_ms,
                        size);
        return 0;
}

static int flush_arm_timers(Manager *m) {
        Cycle *c = m->cycle;
        uint64_t now;
        int r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return r;
        r = sd_event_add_time(m->event, &c->tick, CLOCK_MONOTONIC, now + FLUSH_TICK_USEC, 10 * USEC_PER_MSEC,
                              on_flush_tick, m);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(c->tick, SD_EVENT_ON);
        return sd_event_add_time(m->event, &c->timer, CLOCK_MONOTONIC,
                                 now + (uint64_t) c->settings->flush_timeout_ms * USEC_PER_MSEC, 0,
                                 on_flush_timeout, m);
}

/* Earlier flushes left as many threads in syncfs as may be: no more. It
 * counts as a flush that ran out of time, and [Flush] OnTimeout= decides */
static void flush_refuse(Manager *m, unsigned n) {
        Cycle *c = m->cycle;
        g_autofree char *stuck_on = flush_jobs_stuck_on();
        g_autofree char *where = cgroups_escape(stuck_on); /* mount points: anyone's bytes, bound for D-Bus */
        if (c->settings->flush_on_timeout == FLUSH_ON_TIMEOUT_CONTINUE) {
                log_warning("%u writeback threads of earlier flushes are still stuck (in %s); not starting another, "
                            "going on as configured", n, where);
                manager_set_progress(m, 1.0, "not flushed: writeback stuck in %s", where);
                manager_schedule_step(m);
                return;
        }
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_FLUSH_TIMEOUT,
                                "%u writeback threads of earlier flushes are still stuck (in %s); not starting "
                                "another", n, where);
}

static void enter_flush(Manager *m) {
        Cycle *c = m->cycle;
        char **mounts = NULL;

        /* The second flush writes back what the producers dirtied before
         * they froze, while the cleaners still run. With none frozen it
         * would repeat the first for what runs on anyway (a dearer one:
         * the journal commits of the cycle's own record come with it) */
        if (c->state == CYCLE_STATE_FLUSHING_AGAIN && (!c->freezer || freezer_n_frozen(c->freezer) == 0)) {
                log_debug("Cycle %" G_GUINT64_FORMAT ": nothing frozen since the first flush; no second one",
                          c->id);
                manager_set_progress(m, 1.0, "nothing frozen since the first flush");
                manager_schedule_step(m);
                return;
        }

        unsigned running = flush_jobs_running();
        if (running >= FLUSH_JOBS_MAX) {
                flush_refuse(m, running);
                return;
        }

        int k = flush_read_dirty(m->proc_fd, &c->flush_start_kib);
        if (k < 0) {
                /* the flush itself does not need the figure: it goes on, without progress */
                log_warning_errno(k, "Cannot read Dirty/Writeback from /proc/meminfo, flushing without progress: %m");
                c->flush_start_kib = 0;
        }
        if (flush_list_mounts(m->proc_fd, &mounts) < 0)
                mounts = NULL; /* logged; the job falls back to sync() */
        flush_update_progress(m);

        FlushJob *job;
        int r = flush_job_new(mounts, &job);
        if (r >= 0)
                r = worker_start(m->event, flush_job_run, job, flush_job_free, flush_done, m, &c->worker);
        if (r >= 0)
                r = flush_arm_timers(m);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot start writeback: %s",
                                errno_text(r));
}

/* ---- freeze-early, freeze-late ---- */

static const char *stage_name(Phase p) {
        return p == PHASE_FREEZE_EARLY ? "early" : "late";
}

/* Whole seconds until the stage's timeout, rounded up */
static unsigned freeze_seconds_left(const Cycle *c) {
        uint64_t deadline = c->stage_start + (uint64_t) c->settings->freeze_timeout_ms * USEC_PER_MSEC;
        uint64_t t = now(CLOCK_MONOTONIC);
        return t >= deadline ? 0 : (unsigned) ((deadline - t + USEC_PER_SEC - 1) / USEC_PER_SEC);
}

/* Names a cgroup the stage still waits for (the one a desktop user may
 * recognise: backup.service) and how long it will be waited for */
static void freeze_set_progress(Manager *m) {
        Cycle *c = m->cycle;
        unsigned frozen = c->stage_frozen, total = c->stage_total;
        const char *pending = c->freezer ? freezer_first_pending(c->freezer) : NULL;
        const char *unit = pending ? strrchr(pending, '/') : NULL;
        unit = unit ? unit + 1 : pending;
        unsigned more = total - frozen - (pending ? 1 : 0);
        g_autofree char *more_text = more ? g_strdup_printf(" and %u more", more) : g_strdup("");
        g_autofree char *waiting = unit ? g_strdup_printf(": waiting for %s%s, %u s until the timeout", unit,
                                                          more_text, freeze_seconds_left(c))
                                        : g_strdup("");
        manager_set_progress(m, total ? (double) frozen / total : 1.0, "freezing %u/%u (%s)%s", frozen, total,
                     stage_name(manager_cycle_phase(c)), waiting);
}

static void on_freeze_progress(Freezer *f, unsigned frozen, unsigned total, void *userdata) {
        Manager *m = userdata;
        m->cycle->stage_frozen = frozen;
        m->cycle->stage_total = total;
        freeze_set_progress(m);
}

static int on_freeze_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        freeze_set_progress(userdata);
        (void) sd_event_source_set_time(s, usec + FREEZE_TICK_USEC);
        return 0;
}

static void on_freeze_done(Freezer *f, int r, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        c->tick = sd_event_source_disable_unref(c->tick); /* nothing to count down to any more */

        if (r == -ETIMEDOUT) {
                manager_name_blockers(m);
                return;
        }
        if (r < 0) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot freeze the %s stage: %s",
                                stage_name(manager_cycle_phase(c)), errno_text(r));
                return;
        }
        log_info("Cycle %" G_GUINT64_FORMAT ": %s stage frozen in %.2f ms (%u cgroups frozen so far)", c->id,
                 stage_name(manager_cycle_phase(c)), (double) (now(CLOCK_MONOTONIC) - c->stage_start) / USEC_PER_MSEC, freezer_n_frozen(f));
        manager_schedule_step(m);
}

static char **stage_cgroups(const Plan *plan, CgroupClass class) {
        g_autoptr(GPtrArray) out = g_ptr_array_new();
        for (guint i = 0; plan && i < plan->entries->len; i++) {
                const PlanEntry *e = plan->entries->pdata[i];
                if (e->class == class)
                        g_ptr_array_add(out, e->cgroup);
        }
        g_ptr_array_add(out, NULL);
        return (char **) g_ptr_array_free(g_steal_pointer(&out), FALSE);
}

/* Without the tick the progress only moves when a cgroup freezes: said,
 * not fatal */
static void freeze_arm_tick(Manager *m) {
        Cycle *c = m->cycle;
        c->tick = sd_event_source_disable_unref(c->tick);
        int r = sd_event_add_time_relative(m->event, &c->tick, CLOCK_MONOTONIC, FREEZE_TICK_USEC,
                                           10 * USEC_PER_MSEC, on_freeze_tick, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(c->tick, SD_EVENT_ON);
        if (r < 0)
                log_warning_errno(r, "Cannot count the freeze stage's timeout down: %m");
}

static void enter_freeze(Manager *m, Phase p) {
        Cycle *c = m->cycle;
        g_autofree char **cgroups = stage_cgroups(c->plan, p == PHASE_FREEZE_EARLY ? CLASS_EARLY : CLASS_LATE);
        unsigned n = g_strv_length(cgroups);

        manager_set_progress(m, 0.0, "freezing 0/%u (%s)", n, stage_name(p));
        if (!c->freezer || n == 0) {
                manager_set_progress(m, 1.0, "freezing 0/0 (%s)", stage_name(p));
                manager_schedule_step(m);
                return;
        }
        uint32_t ms = c->settings->freeze_timeout_ms;
        c->stage_start = now(CLOCK_MONOTONIC);
        c->stage_frozen = 0;
        c->stage_total = n;
        int r = freezer_freeze_stage(c->freezer, cgroups, (uint64_t) ms * USEC_PER_MSEC, on_freeze_progress,
                                     on_freeze_done, m);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot freeze the %s stage: %s",
                                stage_name(p), errno_text(r));
        else if (freezer_first_pending(c->freezer)) {
                on_freeze_progress(c->freezer, 0, n, m);
                freeze_arm_tick(m);
        }
}

/* ---- thaw ---- */

static int on_thaw_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        unsigned n = freezer_thaw_all(m->freezer);
        unsigned left = freezer_n_frozen(m->freezer);
        if (n > 0)
                log_notice("Thawed %u cgroups on retry; %u left", n, left);
        if (left == 0 || m->cycle) /* a new cycle thaws at its own end */
                m->thaw_retry = sd_event_source_disable_unref(m->thaw_retry);
        else
                (void) sd_event_source_set_time_relative(s, USEC_PER_SEC);
        return 0;
}

/* A thaw that failed is retried every second until it works: nothing may
 * stay frozen, and the cycle's result says so meanwhile */
static void thaw_failed(Manager *m, unsigned left) {
        Cycle *c = m->cycle;
        g_free(c->message);
        c->message = g_strdup_printf("%u cgroups could not be thawed yet (see the log); fridged keeps trying "
                                     "every second", left);
        c->result = RESULT_FAILED;
        c->error = FRIDGE_ERROR_THAW_FAILED;
        if (m->thaw_retry)
                return;
        int r = sd_event_add_time_relative(m->event, &m->thaw_retry, CLOCK_MONOTONIC, USEC_PER_SEC, 0,
                                           on_thaw_retry, m);
        if (r < 0)
                log_error_errno(r, "Cannot arm the thaw retry; cgroups stay frozen until the next cycle: %m");
        else
                (void) sd_event_source_set_enabled(m->thaw_retry, SD_EVENT_ON);
}

/* Thaws what the cycle froze: after a resume, before anything else; at
 * the thaw phase, whatever is left */
void manager_thaw_cycle(Manager *m) {
        Cycle *c = m->cycle;
        /* Late first, then early: the reverse of the freeze order */
        uint64_t start = now(CLOCK_MONOTONIC);
        unsigned n = c->freezer ? freezer_thaw_all(c->freezer) : 0;
        /* Everything runs again from the last write on; the ledger's
         * rewrite after it is bookkeeping (logged apart) */
        uint64_t end = n > 0 ? freezer_thawed_usec(c->freezer) : 0, done = now(CLOCK_MONOTONIC);
        /* After a resume, how long the desktop stayed frozen is what users feel */
        if (n > 0 && c->resumed_usec > 0 && end >= c->resumed_usec)
                log_info("Cycle %" G_GUINT64_FORMAT ": thawed %u cgroups in %.2f ms, %.2f ms after the resume "
                         "(then %.2f ms for the ledger)", c->id, n, (double) (end - start) / USEC_PER_MSEC,
                         (double) (end - c->resumed_usec) / USEC_PER_MSEC, (double) (done - end) / USEC_PER_MSEC);
        else if (n > 0)
                log_info("Cycle %" G_GUINT64_FORMAT ": thawed %u cgroups in %.2f ms (then %.2f ms for the ledger)",
                         c->id, n, (double) (end - start) / USEC_PER_MSEC, (double) (done - end) / USEC_PER_MSEC);
        unsigned left = c->freezer ? freezer_n_frozen(c->freezer) : 0;
        if (left > 0)
                thaw_failed(m, left);
        c->thawed += n;
}

static void enter_thaw(Manager *m) {
        manager_set_progress(m, 0.0, "thawing");
        manager_thaw_cycle(m);
        manager_set_progress(m, 1.0, "thawed %u", m->cycle->thawed);
        manager_schedule_step(m);
}

static int on_queue_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        g_autofree char *who = inhibit_describe(m->inhibitors, INHIBIT_BLOCK, 0);
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INHIBITED, "still blocked after %u ms by: %s",
                        c->settings->queue_timeout_ms, who);
        return 0;
}

/* Waits before prepare while a block inhibitor is held; the bound runs
 * from the first wait: the state is entered once */
static void enter_queued(Manager *m) {
        Cycle *c = m->cycle;
        g_autofree char *who = inhibit_describe(m->inhibitors, INHIBIT_BLOCK, 0);
        int r = sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC,
                                           (uint64_t) c->settings->queue_timeout_ms * USEC_PER_MSEC, 0,
                                           on_queue_timeout, m);
        if (r < 0) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot queue the cycle: %s",
                                errno_text(r));
                return;
        }
        log_info("Cycle %" G_GUINT64_FORMAT " queued (at most %u ms) behind: %s", c->id,
                 c->settings->queue_timeout_ms, who);
        manager_set_progress(m, 0.0, "queued: blocked by %s", who);
}

static void enter_ending(Manager *m) {
        manager_schedule_step(m);
}

void manager_enter_state(Manager *m, CycleState s) {
        switch (s) {
        case CYCLE_STATE_NEW:
                break;
        case CYCLE_STATE_QUEUED:
                enter_queued(m);
                break;
        case CYCLE_STATE_DELAYING:
                enter_delaying(m);
                break;
        case CYCLE_STATE_PREPARING:
                prepare_start_work(m);
                break;
        case CYCLE_STATE_FLUSHING:
        case CYCLE_STATE_FLUSHING_AGAIN:
                enter_flush(m);
                break;
        case CYCLE_STATE_HANDED_OVER:
                manager_enter_handed_over(m);
                break;
        case CYCLE_STATE_FREEZING_EARLY:
        case CYCLE_STATE_FREEZING_LATE:
                enter_freeze(m, cycle_state_phase(s));
                break;
        case CYCLE_STATE_SLEEPING:
        case CYCLE_STATE_WRITING_IMAGE:
                manager_enter_sleeping(m);
                break;
        case CYCLE_STATE_HOOK_SLEEPING:
                manager_enter_hook_sleeping(m);
                break;
        case CYCLE_STATE_SKIPPING_KERNEL:
                manager_enter_skipping_kernel(m);
                break;
        case CYCLE_STATE_RETRY_WAITING:
                manager_enter_retry_waiting(m);
                break;
        case CYCLE_STATE_RETRY_PREPARING:
                manager_enter_retry_preparing(m);
                break;
        case CYCLE_STATE_RESUMING:
                manager_enter_resuming(m);
                break;
        case CYCLE_STATE_ENDING:
                enter_ending(m);
                break;
        case CYCLE_STATE_THAWING:
                enter_thaw(m);
                break;
        case CYCLE_STATE_FINISHED:
                manager_cycle_finish(m);
                break;
        default:
                g_assert_not_reached();
        }
}
