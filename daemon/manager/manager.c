/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "manager-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroups.h"
#include "classify.h"
#include "fileio.h"
#include "flush.h"
#include "freezer.h"
#include "hibernate.h"
#include "ledger.h"
#include "overrides.h"
#include "log.h"
#include "progress.h"
#include "record.h"
#include "tuxonice.h"
#include "util.h"
#include "worker.h"

uint64_t manager_now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

void cycle_options_clear(CycleOptions *o) {
        g_clear_pointer(&o->pm_test, g_free);
        g_clear_pointer(&o->mem_sleep, g_free);
}

static void cycle_stop_work(Cycle *c) {
        if (c->freezer)
                freezer_cancel_stage(c->freezer);
        worker_abandon(TAKE_PTR(c->worker));
        c->power_request = NULL;
        c->tick = sd_event_source_disable_unref(c->tick);
        c->timeout = sd_event_source_disable_unref(c->timeout);
        c->queued = false;
        c->delay_waiting = false;
        c->retry_waiting = false;
        c->hook_timeout = sd_event_source_disable_unref(c->hook_timeout);
}

void manager_hook_waiter_complete(HookWaiter *w, uint64_t id, int r, FridgeError error, const char *message) {
        HookWaiter t = *w;
        *w = (HookWaiter) {};
        if (t.done)
                t.done(t.userdata, id, r, error, message);
}

static void cycle_free(Cycle *c) {
        if (!c)
                return;
        cycle_stop_work(c);
        /* Only when the manager goes away mid-cycle: nobody is left waiting */
        manager_hook_waiter_complete(&c->pre, c->id, -ECANCELED, FRIDGE_ERROR_CANCELLED, "fridged is stopping");
        manager_hook_waiter_complete(&c->post, c->id, -ECANCELED, FRIDGE_ERROR_CANCELLED, "fridged is stopping");
        cycle_options_clear(&c->opts);
        g_free(c->set_resume);
        devices_wakeup_snapshot_free(c->wakeup_sources);
        plan_free(c->plan);
        g_free(c->client_cgroup);
        g_free(c->progress_text);
        g_free(c->message);
        g_free(c);
}

void manager_notify(Manager *m, unsigned what) {
        if (m->ops && m->ops->changed)
                m->ops->changed(m->userdata, what);
}

/* Once per cycle: a sleep logind announced has had it already */
void manager_emit_sleep_imminent(Manager *m) {
        Cycle *c = m->cycle;
        if (c->imminent_sent)
                return;
        c->imminent_sent = true;
        if (m->ops && m->ops->sleep_imminent)
                m->ops->sleep_imminent(m->userdata, c->id, c->kind);
}

void manager_schedule_step(Manager *m) {
        (void) sd_event_source_set_enabled(m->step, SD_EVENT_ONESHOT);
}

void manager_set_progress(Manager *m, double fraction, const char *fmt, ...) {
        Cycle *c = m->cycle;
        va_list ap;
        va_start(ap, fmt);
        g_autofree char *text = g_strdup_vprintf(fmt, ap);
        va_end(ap);

        double p = progress_monotonic(c->progress, progress_overall(c->phase, fraction));
        if (p == c->progress && g_strcmp0(text, c->progress_text) == 0)
                return;
        c->progress = p;
        g_free(c->progress_text);
        c->progress_text = g_steal_pointer(&text);
        manager_notify(m, MANAGER_CHANGED_PROGRESS);
}

/* Decides the cycle's result now and heads for thaw. The first decision wins. */
void manager_end_cycle_early(Manager *m, CycleResult result, FridgeError error, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void manager_end_cycle_early(Manager *m, CycleResult result, FridgeError error, const char *fmt, ...) {
        Cycle *c = m->cycle;
        if (!c || c->ending)
                return;

        va_list ap;
        va_start(ap, fmt);
        c->message = g_strdup_vprintf(fmt, ap);
        va_end(ap);
        c->ending = true;
        c->result = result;
        c->error = error;
        cycle_stop_work(c);
        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " %s %s%s: %s", c->id,
                                               cycle_result_to_string(result),
                                               c->phase == PHASE_NONE ? "before it started" : "in phase ",
                                               phase_to_string(c->phase), c->message);
        if (result == RESULT_FAILED) {
                g_autofree char *phase_field = g_strdup_printf("FRIDGE_PHASE=%s", phase_to_string(c->phase));
                log_struct_event(LOG_WARNING, FRIDGE_MESSAGE_PHASE_FAILED, msg, phase_field, NULL);
        } else
                log_info("%s", msg);
        manager_schedule_step(m);
}

/* ---- the cycle record: what a restarted fridged reports ---- */

static const char *record_phase_name(const Cycle *c) {
        if (c->retry_waiting)
                return "retry";
        return c->phase == PHASE_NONE ? (c->queued ? "queued" : "start") : phase_to_string(c->phase);
}

/* A failed write costs only the report after a crash: the cycle goes on */
void manager_record_update(Manager *m) {
        const Cycle *c = m->cycle;
        if (m->state_fd < 0)
                return;
        CycleRecord rec = { .id = c->id, .kind = (char *) sleep_kind_to_string(c->kind),
                            .phase = (char *) record_phase_name(c), .started_usec = c->started_usec,
                            .pid = getpid() };
        int r = record_write(m->state_fd, &rec);
        if (r < 0)
                log_warning_errno(r, "Failed to record cycle %" G_GUINT64_FORMAT " in the state directory: %m",
                                  c->id);
}

/* The interrupted cycle's id was taken: ids go on after it */
static void manager_load_record(Manager *m, const char *state_dir) {
        if (mkdir(state_dir, 0755) < 0 && errno != EEXIST) {
                log_warning_errno(-errno, "Cannot create %s (%m); interrupted cycles will not be reported",
                                  state_dir);
                return;
        }
        m->state_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (m->state_fd < 0) {
                log_warning_errno(-errno, "Cannot open %s (%m); interrupted cycles will not be reported",
                                  state_dir);
                return;
        }
        int r = record_read_next_id(m->state_fd, &m->next_id);
        if (r < 0)
                log_warning_errno(r, "Cannot read %s/next-cycle-id (%m); cycle ids start at 1", state_dir);
        r = record_read(m->state_fd, &m->interrupted);
        if (r < 0)
                log_warning_errno(r, "Ignoring the unreadable cycle record in %s: %m", state_dir);
        if (m->interrupted && m->interrupted->id >= m->next_id)
                m->next_id = m->interrupted->id + 1;
}

void manager_report_interrupted(Manager *m) {
        g_autoptr(CycleRecord) rec = g_steal_pointer(&m->interrupted);
        if (!rec)
                return;
        g_autofree char *message = g_strdup_printf(
                "fridged stopped during phase %s of the previous run (pid %d); %s", rec->phase, (int) rec->pid,
                m->startup_thaw_failed ? "some cgroups it froze could not be thawed yet (see the log)"
                                       : "everything it froze was thawed");
        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " (%s) finished: failed: %s", rec->id,
                                               rec->kind, message);
        g_autofree char *phase_field = g_strdup_printf("FRIDGE_PHASE=%s", rec->phase);
        log_struct_event(LOG_ERR, FRIDGE_MESSAGE_CYCLE_INTERRUPTED, msg, "FRIDGE_RESULT=failed", phase_field, NULL);

        m->last_id = rec->id;
        m->last_kind = sleep_kind_from_string(rec->kind);
        m->last_result = RESULT_FAILED;
        if (m->ops && m->ops->finished)
                m->ops->finished(m->userdata, rec->id, RESULT_FAILED, FRIDGE_ERROR_INTERRUPTED, message);
        manager_notify(m, MANAGER_CHANGED_STATE | MANAGER_CHANGED_LAST);
        /* Removed only now: a crash before the report reports it next time */
        int r = m->cycle ? 0 : record_remove(m->state_fd);
        if (r < 0)
                log_warning_errno(r, "Failed to remove the cycle record: %m");
}

/* ---- the plan ---- */

static int manager_build_plan(Manager *m, const char *client_cgroup, Plan **ret) {
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
                .cgroup_fd = m->cgroup_fd, .proc_fd = m->proc_fd, .roots = m->config->freeze_roots,
                .rules = m->rules, .exempt = exempt, .overrides = overrides_by_target(m->overrides),
                .holds = overrides_holds(m->overrides),
                .detect = true,
        };
        g_autoptr(GPtrArray) roots = NULL;
        int r = classify_tree(&in, &roots);
        if (r < 0)
                return r;
        *ret = plan_build((PlanNode *const *) roots->pdata, roots->len);
        return 0;
}

int manager_get_plan(Manager *m, Plan **ret) {
        return manager_build_plan(m, NULL, ret);
}

/* ---- prepare ---- */

void manager_prepare_job_free(void *p) {
        PrepareJob *j = p;
        if (j->sysfs_fd >= 0)
                close(j->sysfs_fd);
        devices_wakeup_snapshot_free(j->sources);
        g_free(j);
}

int manager_prepare_job_run(void *p) {
        PrepareJob *j = p;
        /* Read at the start so that any wakeup event during the cycle makes
         * the later write-back fail: the kernel's race-free handshake. The
         * sources' counts then name whoever spoils it. */
        int r = power_read_wakeup_count(j->sysfs_fd, &j->wakeup_count);
        j->sources = devices_wakeup_snapshot(j->sysfs_fd);
        return r;
}

void manager_prepare_done(int r, void *data, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        PrepareJob *j = data;

        c->worker = NULL;
        c->wakeup_sources = g_steal_pointer(&j->sources);
        if (r >= 0) {
                c->have_wakeup_count = true;
                c->wakeup_count = j->wakeup_count;
        } else if (r != -ENOENT)
                log_warning_errno(r, "Failed to read wakeup_count, sleeping without the wakeup handshake: %m");
        manager_set_progress(m, 1.0, "prepared");
        manager_schedule_step(m);
}

static void prepare_start_work(Manager *m) {
        Cycle *c = m->cycle;
        /* Detection is re-run every cycle: a FUSE server or a syncing
         * process may have appeared since the last one */
        int r = manager_build_plan(m, c->client_cgroup, &c->plan);
        if (r < 0) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot classify the cgroups: %s",
                                errno_text(r));
                return;
        }
        log_info("Cycle %" G_GUINT64_FORMAT ": plan has %u early and %u late cgroups", c->id, c->plan->n_early,
                 c->plan->n_late);

        PrepareJob *j = g_new0(PrepareJob, 1);
        j->sysfs_fd = fcntl(m->sysfs_fd, F_DUPFD_CLOEXEC, 3);
        manager_set_progress(m, 0.0, "preparing");
        r = worker_start(m->event, manager_prepare_job_run, j, manager_prepare_job_free, manager_prepare_done, m, &m->cycle->worker);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot start the prepare phase: %s",
                                errno_text(r));
}

static void delay_done(Manager *m) {
        Cycle *c = m->cycle;
        c->delay_waiting = false;
        c->timeout = sd_event_source_disable_unref(c->timeout);
        prepare_start_work(m);
}

static int on_delay_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        g_autofree char *late = inhibit_describe(m->inhibitors, INHIBIT_DELAY, c->delay_before);
        log_warning("Cycle %" G_GUINT64_FORMAT ": delay inhibitors still held after %u ms, going on without "
                    "them: %s", c->id, m->config->delay_timeout_ms, late);
        delay_done(m);
        return 0;
}

/* Delay holders were told (SleepImminent) and get until they close their
 * fds, bounded: only those held at the signal count, so one that takes a
 * new lock on the signal cannot stall the cycle until the timeout. */
static int delay_wait_start(Manager *m) {
        Cycle *c = m->cycle;
        uint32_t ms = m->config->delay_timeout_ms;
        unsigned n = inhibit_count(m->inhibitors, INHIBIT_DELAY, c->delay_before);
        if (n == 0)
                return 0;
        if (ms == 0) {
                g_autofree char *who = inhibit_describe(m->inhibitors, INHIBIT_DELAY, c->delay_before);
                log_info("Cycle %" G_GUINT64_FORMAT ": not waiting for delay inhibitors ([Delay] TimeoutMs=0): %s",
                         c->id, who);
                return 0;
        }
        int r = sd_event_add_time_relative(m->event, &c->timeout, CLOCK_MONOTONIC,
                                           (uint64_t) ms * USEC_PER_MSEC, 0, on_delay_timeout, m);
        if (r < 0)
                return r;
        c->delay_waiting = true;
        c->delay_start = manager_now_usec();
        manager_set_progress(m, 0.0, "waiting for %u delay inhibitor%s", n, n == 1 ? "" : "s");
        return 1;
}

static void enter_prepare(Manager *m) {
        Cycle *c = m->cycle;
        c->timeout = sd_event_source_disable_unref(c->timeout); /* the queue's bound */
        /* Before anything is flushed or frozen, so delay holders can still
         * act (lock the screen, save state) and what they write is flushed */
        manager_emit_sleep_imminent(m);
        c->delay_before = inhibit_next_id(m->inhibitors);
        int r = delay_wait_start(m);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot wait for delay inhibitors: %s",
                                errno_text(r));
        else if (r == 0)
                prepare_start_work(m);
}

/* ---- flush, flush-again ---- */

static void flush_update_progress(Manager *m) {
        Cycle *c = m->cycle;
        uint64_t now_kib;
        char size[32];

        if (flush_read_dirty(m->proc_fd, &now_kib) < 0)
                return; /* progress is a nicety; the flush goes on */
        manager_set_progress(m, progress_flush_fraction(c->flush_start_kib, now_kib), "%s %s",
                     c->phase == PHASE_FLUSH ? "flushing" : "flushing again",
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
        cycle_stop_work(c);
        if (r < 0)
                log_warning_errno(r, "Writeback reported an error; the data concerned may not be on disk: %m");
        manager_set_progress(m, 1.0, "flushed");
        manager_schedule_step(m);
}

static uint32_t flush_timeout_ms(const Manager *m) {
        const Cycle *c = m->cycle;
        return c->opts.flush_timeout_ms ? c->opts.flush_timeout_ms : m->config->flush_timeout_ms;
}

static int on_flush_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        uint64_t kib = 0;
        char size[32] = "an unknown amount";

        if (flush_read_dirty(m->proc_fd, &kib) >= 0)
                progress_format_kib(kib, size, sizeof(size));

        if (m->config->flush_on_timeout == FLUSH_ON_TIMEOUT_CONTINUE) {
                log_warning("Writeback did not finish within %u ms (%s still dirty); going on as configured",
                            flush_timeout_ms(m), size);
                cycle_stop_work(c);
                manager_schedule_step(m);
                return 0;
        }
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_FLUSH_TIMEOUT,
                        "writeback did not finish within %u ms (%s still dirty)", flush_timeout_ms(m), size);
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
        return sd_event_add_time(m->event, &c->timeout, CLOCK_MONOTONIC,
                                 now + (uint64_t) flush_timeout_ms(m) * USEC_PER_MSEC, 0, on_flush_timeout, m);
}

static void enter_flush(Manager *m) {
        Cycle *c = m->cycle;
        char **mounts = NULL;

        int k = flush_read_dirty(m->proc_fd, &c->flush_start_kib);
        if (k < 0) {
                /* the flush itself does not need the figure: it goes on, without progress */
                log_warning_errno(k, "Cannot read Dirty/Writeback from /proc/meminfo, flushing without progress: %m");
                c->flush_start_kib = 0;
        }
        if (flush_list_mounts(m->proc_fd, &mounts) < 0)
                mounts = NULL; /* logged; the job falls back to sync() */
        flush_update_progress(m);

        int r = worker_start(m->event, flush_job_run, flush_job_new(mounts), flush_job_free, flush_done, m,
                             &c->worker);
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

static void on_freeze_progress(Freezer *f, unsigned frozen, unsigned total, void *userdata) {
        Manager *m = userdata;
        manager_set_progress(m, total ? (double) frozen / total : 1.0, "freezing %u/%u (%s)", frozen, total,
                     stage_name(m->cycle->phase));
}

static void on_freeze_done(Freezer *f, int r, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;

        if (r == -ETIMEDOUT) {
                g_autofree char *blockers = freezer_describe_blockers(f);
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_FREEZE_TIMEOUT,
                                "cgroups did not freeze within %u ms: %s", c->opts.freeze_timeout_ms
                                        ? c->opts.freeze_timeout_ms : m->config->freeze_timeout_ms, blockers);
                return;
        }
        if (r < 0) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot freeze the %s stage: %s",
                                stage_name(c->phase), errno_text(r));
                return;
        }
        log_info("Cycle %" G_GUINT64_FORMAT ": %s stage frozen in %.2f ms (%u cgroups frozen so far)", c->id,
                 stage_name(c->phase), (double) (manager_now_usec() - c->stage_start) / USEC_PER_MSEC, freezer_n_frozen(f));
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
        uint32_t ms = c->opts.freeze_timeout_ms ? c->opts.freeze_timeout_ms : m->config->freeze_timeout_ms;
        c->stage_start = manager_now_usec();
        int r = freezer_freeze_stage(c->freezer, cgroups, (uint64_t) ms * USEC_PER_MSEC, on_freeze_progress,
                                     on_freeze_done, m);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot freeze the %s stage: %s",
                                stage_name(p), errno_text(r));
}

/* ---- kernel ---- */

static const char *cycle_mem_sleep(const Manager *m) {
        const Cycle *c = m->cycle;
        if (c->kind != SLEEP_SUSPEND)
                return NULL;
        return c->opts.mem_sleep ? c->opts.mem_sleep : m->config->mem_sleep;
}

static PowerRequest *power_request_for_cycle(Manager *m) {
        Cycle *c = m->cycle;
        PowerRequest *r = g_new0(PowerRequest, 1);

        r->sysfs_fd = fcntl(m->sysfs_fd, F_DUPFD_CLOEXEC, 3);
        r->state = g_strdup(power_state_for_kind(c->kind));
        r->mem_sleep = g_strdup(cycle_mem_sleep(m));
        /* pm_test is the mainline kernel's test mode: such a cycle stays there */
        r->tuxonice = c->kind == SLEEP_HIBERNATE && !c->opts.pm_test && tuxonice_present(m->sysfs_fd);
        if (r->tuxonice)
                config_tuxonice_copy(&r->tuxonice_config, &m->config->tuxonice);
        else if (c->kind == SLEEP_HIBERNATE)
                r->disk_mode = g_strdup(m->config->hibernate_mode);
        else if (c->kind == SLEEP_HYBRID)
                r->disk_mode = g_strdup("suspend");
        r->pm_test = g_strdup(c->opts.pm_test);
        r->resume = g_strdup(c->set_resume);
        r->wake_after_sec = c->opts.wake_after_sec;
        r->write_wakeup_count = c->have_wakeup_count;
        r->wakeup_count = c->wakeup_count;
        r->count_sources = g_steal_pointer(&c->wakeup_sources);
        return r;
}

static void tuxonice_failed(Manager *m, const PowerRequest *r) {
        FridgeError error;
        CycleResult result = tuxonice_result_outcome(r->tuxonice_result, &error);
        g_autofree char *why = tuxonice_describe_result(r->tuxonice_result);
        manager_end_cycle_early(m, result, error, "TuxOnIce aborted the hibernation: %s (last_result 0x%" PRIx64 ")",
                        why, r->tuxonice_result);
}

static void kernel_failed(Manager *m, const PowerRequest *r) {
        if (r->failed_step == POWER_STEP_TUXONICE_ABORTED) {
                tuxonice_failed(m, r);
                return;
        }
        if (r->failed_step == POWER_STEP_WAKEUP_COUNT) {
                if (r->wake_reason && !g_str_equal(r->wake_reason, "unknown"))
                        manager_end_cycle_early(m, RESULT_ABORTED, FRIDGE_ERROR_WAKEUP_EVENT,
                                        "a wakeup event from %s arrived during the cycle; not sleeping",
                                        r->wake_reason);
                else
                        manager_end_cycle_early(m, RESULT_ABORTED, FRIDGE_ERROR_WAKEUP_EVENT,
                                        "a wakeup event arrived during the cycle (wakeup_count %u is stale); "
                                        "not sleeping", r->wakeup_count);
                return;
        }
        const char *what = r->failed_step == POWER_STEP_STATE ? r->state
                         : r->failed_step == POWER_STEP_MEM_SLEEP ? r->mem_sleep
                         : r->failed_step == POWER_STEP_DISK ? r->disk_mode
                         : r->failed_step == POWER_STEP_RESUME ? r->resume
                         : r->failed_step == POWER_STEP_PM_TEST ? r->pm_test
                         : r->failed_step == POWER_STEP_TUXONICE_SETTINGS ? r->failed_setting
                         : r->failed_step == POWER_STEP_TUXONICE_HIBERNATE ? TUXONICE_DO_HIBERNATE
                         : r->failed_step == POWER_STEP_TUXONICE_LAST_RESULT ? TUXONICE_LAST_RESULT : "";
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_KERNEL, "the kernel refused to %s%s%s: %s",
                        power_step_to_string(r->failed_step), *what ? " " : "", what, errno_text(r->error));
}

/* Both drivers: the machine is back; thaw next */
void manager_report_resumed(Manager *m, uint64_t slept_usec, const char *reason) {
        Cycle *c = m->cycle;
        g_free(m->last_wake_reason);
        m->last_wake_reason = g_strdup(reason);
        char slept[64], reason_field[512];
        g_snprintf(slept, sizeof(slept), "SLEPT_USEC=%" G_GUINT64_FORMAT, slept_usec);
        g_snprintf(reason_field, sizeof(reason_field), "FRIDGE_WAKE_REASON=%s", reason);
        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " resumed after %.1f s (wake: %s)",
                                               c->id, (double) slept_usec / USEC_PER_SEC, reason);
        log_struct_event(LOG_INFO, FRIDGE_MESSAGE_RESUMED, msg, slept, reason_field, NULL);
        if (m->ops && m->ops->resumed)
                m->ops->resumed(m->userdata, c->id, slept_usec, reason);
        manager_notify(m, MANAGER_CHANGED_LAST);
        manager_set_progress(m, 1.0, "resumed");
        manager_schedule_step(m);
}

static void kernel_done(int r, void *data, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        PowerRequest *req = data;

        c->worker = NULL;
        c->power_request = NULL;
        if (r < 0) {
                if (manager_retry_kernel(m, req))
                        return;
                kernel_failed(m, req);
                if (c->attempt > 0 && c->message) {
                        g_autofree char *first = TAKE_PTR(c->message);
                        c->message = g_strdup_printf("%s (attempt %u of %u)", first, c->attempt + 1,
                                                     m->config->retries + 1);
                }
                return;
        }
        if (req->tuxonice_result) {
                g_autofree char *notes = tuxonice_describe_result(req->tuxonice_result);
                log_notice("TuxOnIce hibernated with notes: %s", notes);
        }

        c->resumed_usec = req->returned_usec;
        manager_report_resumed(m, req->slept_usec, req->wake_reason ? req->wake_reason : "unknown");
}

static void enter_kernel(Manager *m) {
        Cycle *c = m->cycle;

        if (c->driver != CYCLE_DRIVER_DIRECT) {
                manager_enter_kernel_hook(m);
                return;
        }
        if (c->opts.dry_run && !c->opts.pm_test) {
                manager_set_progress(m, 1.0, "dry run: not sleeping");
                manager_schedule_step(m);
                return;
        }
        PowerRequest *req = power_request_for_cycle(m);
        c->power_request = req;
        manager_set_progress(m, 0.0, "sleeping (%s%s%s%s)", req->state, req->tuxonice ? " through TuxOnIce" : "",
                     req->pm_test ? ", pm_test " : "", req->pm_test ? req->pm_test : "");
        int r = worker_start(m->event, power_enter, req, (WorkerFreeFunc) power_request_free, kernel_done, m,
                             &c->worker);
        if (r < 0) {
                c->power_request = NULL;
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot start the kernel phase: %s",
                                errno_text(r));
        }
        manager_notify(m, MANAGER_CHANGED_STATE);
}

/* ---- finishing ---- */

static void cycle_finish(Manager *m) {
        Cycle *c = TAKE_PTR(m->cycle);

        if (c->result == RESULT_NONE)
                c->result = c->opts.dry_run ? RESULT_DRY_RUN : RESULT_DONE;
        if (!c->message)
                c->message = g_strdup(c->result == RESULT_DRY_RUN ? "all phases ran; nothing was written to the kernel"
                                                                   : "slept and resumed");

        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " (%s) finished: %s: %s", c->id,
                                               sleep_kind_to_string(c->kind), cycle_result_to_string(c->result),
                                               c->message);
        g_autofree char *result_field = g_strdup_printf("FRIDGE_RESULT=%s", cycle_result_to_string(c->result));
        log_struct_event(c->result == RESULT_FAILED ? LOG_ERR : LOG_INFO, FRIDGE_MESSAGE_CYCLE_FINISH, msg,
                         result_field, NULL);

        m->last_id = c->id;
        m->last_kind = c->kind;
        m->last_result = c->result;
        if (m->ops && m->ops->finished)
                m->ops->finished(m->userdata, c->id, c->result, c->error, c->message);
        /* Only once CycleFinished is out (the bus flushes it): a crash in
         * between reports the cycle again after the restart rather than never */
        int r = m->state_fd >= 0 ? record_remove(m->state_fd) : 0;
        if (r < 0)
                log_warning_errno(r, "Failed to remove the cycle record: %m");
        /* A pre still waiting never reached the kernel phase; a post learns how it ended */
        FridgeError error = c->error != FRIDGE_ERROR_NONE ? c->error : FRIDGE_ERROR_INTERNAL;
        manager_hook_waiter_complete(&c->pre, c->id, -ECANCELED, error, c->message);
        manager_hook_waiter_complete(&c->post, c->id, c->result == RESULT_DONE ? 0 : -EIO, error, c->message);
        cycle_free(c);
        manager_notify(m, MANAGER_CHANGED_STATE | MANAGER_CHANGED_PROGRESS | MANAGER_CHANGED_LAST);
}

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

static void enter_thaw(Manager *m) {
        Cycle *c = m->cycle;
        manager_set_progress(m, 0.0, "thawing");
        /* Late first, then early: the reverse of the freeze order */
        uint64_t start = manager_now_usec();
        unsigned n = c->freezer ? freezer_thaw_all(c->freezer) : 0;
        uint64_t end = manager_now_usec();
        /* After a resume, how long the desktop stayed frozen is what users feel */
        if (n > 0 && c->resumed_usec > 0 && end >= c->resumed_usec)
                log_info("Cycle %" G_GUINT64_FORMAT ": thawed %u cgroups in %.2f ms, %.2f ms after the resume", c->id,
                         n, (double) (end - start) / USEC_PER_MSEC, (double) (end - c->resumed_usec) / USEC_PER_MSEC);
        else if (n > 0)
                log_info("Cycle %" G_GUINT64_FORMAT ": thawed %u cgroups in %.2f ms", c->id, n,
                         (double) (end - start) / USEC_PER_MSEC);
        unsigned left = c->freezer ? freezer_n_frozen(c->freezer) : 0;
        if (left > 0)
                thaw_failed(m, left);
        manager_set_progress(m, 1.0, "thawed %u", n);
        manager_schedule_step(m);
}

static void enter_phase(Manager *m, Phase p) {
        Cycle *c = m->cycle;
        c->phase = p;
        log_debug("Cycle %" G_GUINT64_FORMAT ": phase %s", c->id, phase_to_string(p));
        manager_record_update(m);
        manager_notify(m, MANAGER_CHANGED_STATE);

        switch (p) {
        case PHASE_PREPARE:
                enter_prepare(m);
                break;
        case PHASE_FLUSH:
        case PHASE_FLUSH_AGAIN:
                enter_flush(m);
                break;
        case PHASE_FREEZE_EARLY:
        case PHASE_FREEZE_LATE:
                enter_freeze(m, p);
                break;
        case PHASE_KERNEL:
                enter_kernel(m);
                break;
        case PHASE_THAW:
                enter_thaw(m);
                break;
        default:
                g_assert_not_reached();
        }
}

static int on_queue_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        g_autofree char *who = inhibit_describe(m->inhibitors, INHIBIT_BLOCK, 0);
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INHIBITED, "still blocked after %u ms by: %s",
                        c->opts.queue_timeout_ms, who);
        return 0;
}

static bool cycle_blocked(const Manager *m) {
        return inhibit_count(m->inhibitors, INHIBIT_BLOCK, 0) > 0;
}

/* Waits before prepare while a block inhibitor is held; the bound runs
 * from the first wait, not from each */
static void cycle_queue(Manager *m) {
        Cycle *c = m->cycle;
        g_autofree char *who = inhibit_describe(m->inhibitors, INHIBIT_BLOCK, 0);
        if (!c->timeout) {
                int r = sd_event_add_time_relative(m->event, &c->timeout, CLOCK_MONOTONIC,
                                                   (uint64_t) c->opts.queue_timeout_ms * USEC_PER_MSEC, 0,
                                                   on_queue_timeout, m);
                if (r < 0) {
                        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot queue the cycle: %s",
                                        errno_text(r));
                        return;
                }
        }
        log_info("Cycle %" G_GUINT64_FORMAT " queued (at most %u ms) behind: %s", c->id, c->opts.queue_timeout_ms,
                 who);
        c->queued = true;
        manager_set_progress(m, 0.0, "queued: blocked by %s", who);
        manager_notify(m, MANAGER_CHANGED_STATE);
}

static void manager_advance(Manager *m) {
        Cycle *c = m->cycle;
        if (!c || c->queued)
                return;
        if (c->phase == PHASE_NONE && !c->ending && c->opts.queue && cycle_blocked(m)) {
                cycle_queue(m);
                return;
        }
        if (c->phase == PHASE_THAW) {
                cycle_finish(m);
                return;
        }
        /* Logind's sleep runs the hook, whose pre carries on from here */
        if (c->driver == CYCLE_DRIVER_LOGIND && c->phase == PHASE_FLUSH && !c->joined && !c->ending) {
                manager_hand_over_to_logind(m);
                return;
        }
        enter_phase(m, c->ending ? PHASE_THAW : c->phase + 1);
}

static int on_step(sd_event_source *s, void *userdata) {
        manager_advance(userdata);
        return 0;
}

/* ---- the API ---- */

static int check_word(const PowerCaps *caps, char **offered, const char *word, const char *file,
                      char **ret_message) {
        if (offered && g_strv_contains((const char *const *) offered, word))
                return 0;
        /* absent and malformed are different troubles for whoever reads this */
        if (!offered && caps->problem && strstr(caps->problem, file))
                *ret_message = g_strdup_printf("cannot use %s in /%s: %s", word, file, caps->problem);
        else
                *ret_message = offered ? g_strdup_printf("the kernel does not offer %s in /%s", word, file)
                                       : g_strdup_printf("the kernel has no /%s", file);
        return FRIDGE_ERROR_NOT_SUPPORTED;
}

/* What the running kernel cannot do is refused before anything starts */
static int manager_check_kernel(Manager *m, SleepKind kind, CycleOptions *o, char **ret_message) {
        g_autoptr(PowerCaps) caps = NULL;
        int r = power_caps_read(m->sysfs_fd, &caps);
        if (r < 0) {
                *ret_message = r == -EBADMSG ? g_strdup("/" POWER_STATE " is malformed: not a list of words")
                                             : g_strdup_printf("cannot read /" POWER_STATE ": %s", errno_text(r));
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }

        const char *reason;
        if (strcmp(power_can(caps, kind, m->config->hibernate_mode, &reason), "yes") != 0) {
                *ret_message = g_strdup(reason);
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        if (o->mem_sleep && (r = check_word(caps, caps->mem_sleep, o->mem_sleep, POWER_MEM_SLEEP, ret_message)) != 0)
                return r;
        if (kind == SLEEP_SUSPEND && !o->mem_sleep && m->config->mem_sleep &&
            !(caps->mem_sleep && g_strv_contains((const char *const *) caps->mem_sleep, m->config->mem_sleep))) {
                *ret_message = g_strdup_printf("the configured MemSleep=%s is not offered in /" POWER_MEM_SLEEP,
                                               m->config->mem_sleep);
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        if (o->pm_test && (r = check_word(caps, caps->pm_test, o->pm_test, POWER_PM_TEST, ret_message)) != 0)
                return r;
        if (o->wake_after_sec > 0 && !caps->has_rtc) {
                *ret_message = g_strdup("no RTC wake alarm (class/rtc/rtc0/wakealarm) to wake the machine with");
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        return 0;
}

/* Whether the mainline kernel writes an image to swap and looks for it
 * through /sys/power/resume. A pm_test run stops before the image is
 * written; TuxOnIce has its own allocator and resume setting. */
static bool kind_writes_image(const Manager *m, SleepKind kind, bool pm_test) {
        if (pm_test || (kind != SLEEP_HIBERNATE && kind != SLEEP_HYBRID))
                return false;
        return kind == SLEEP_HYBRID || !tuxonice_present(m->sysfs_fd);
}

/* HibernateNotReady: nowhere to write the image, or the next boot would
 * not look for it */
static int manager_check_hibernate(Manager *m, SleepKind kind, const CycleOptions *o, char **ret_set_resume,
                                   char **ret_message) {
        if (!kind_writes_image(m, kind, o->pm_test != NULL))
                return 0;
        g_autoptr(HibernateTarget) t = hibernate_check(m->sysfs_fd, m->proc_fd, m->config->resume_device);
        if (t->reason) {
                *ret_message = g_steal_pointer(&t->reason);
                return FRIDGE_ERROR_HIBERNATE_NOT_READY;
        }
        *ret_set_resume = g_steal_pointer(&t->set_resume);
        return 0;
}

/* A hook cycle's kernel phase is systemd-sleep's: it is named for who sleeps */
static const char *const driver_names[] = {
        [CYCLE_DRIVER_DIRECT] = "direct", [CYCLE_DRIVER_HOOK] = "systemd", [CYCLE_DRIVER_LOGIND] = "logind",
};

/* The new running cycle; it starts from the loop */
Cycle *manager_cycle_start(Manager *m, SleepKind kind, CycleDriver driver, CycleOptions *opts) {
        Cycle *c = g_new0(Cycle, 1);
        /* A sleep logind announced before its hook ran keeps the id it was announced with */
        c->imminent_sent = driver == CYCLE_DRIVER_HOOK && m->reserved_id != 0;
        c->id = c->imminent_sent ? TAKE_ID(m->reserved_id) : m->next_id++;
        c->kind = kind;
        c->started_usec = g_get_real_time();
        c->driver = driver;
        c->freezer = m->freezer;
        c->client_cgroup = g_steal_pointer(&m->next_client_cgroup);
        c->opts = *opts;
        *opts = (CycleOptions) {}; /* the cycle owns the strings now */
        m->cycle = c;

        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " started: %s%s (driver %s)", c->id,
                                               sleep_kind_to_string(kind), c->opts.dry_run ? " (dry run)" : "",
                                               driver_names[driver]);
        g_autofree char *kind_field = g_strdup_printf("FRIDGE_KIND=%s", sleep_kind_to_string(kind));
        g_autofree char *driver_field = g_strdup_printf("FRIDGE_DRIVER=%s", driver_names[driver]);
        log_struct_event(LOG_INFO, FRIDGE_MESSAGE_CYCLE_START, msg, kind_field, driver_field, NULL);
        int r = m->state_fd >= 0 ? record_write_next_id(m->state_fd, m->next_id) : 0;
        if (r < 0)
                log_warning_errno(r, "Failed to save the next cycle id: %m");
        return c;
}

/* Options that need the kernel itself keep a cycle direct: logind offers
 * neither a dry run nor pm_test, mem_sleep modes or a wake alarm */
static int manager_pick_driver(Manager *m, const CycleOptions *o, CycleDriver *ret, char **ret_message) {
        bool needs_kernel = o->dry_run || o->pm_test || o->mem_sleep || o->wake_after_sec;
        *ret = CYCLE_DRIVER_DIRECT;
        if (m->config->driver == DRIVER_DIRECT || needs_kernel)
                return 0;
        if (logind_present(m->logind)) {
                *ret = CYCLE_DRIVER_LOGIND;
                return 0;
        }
        if (m->config->driver == DRIVER_AUTO)
                return 0;
        *ret_message = g_strdup("Driver=logind is configured, but org.freedesktop.login1 is not on the bus");
        return FRIDGE_ERROR_NOT_SUPPORTED;
}

int manager_check_idle(Manager *m, char **ret_message) {
        if (!m->cycle)
                return 0;
        *ret_message = g_strdup_printf("cycle %" G_GUINT64_FORMAT " is %s", m->cycle->id,
                                       m->cycle->queued ? "queued" : "running");
        return FRIDGE_ERROR_BUSY;
}

int manager_start(Manager *m, SleepKind kind, CycleOptions *opts, uint64_t *ret_id, char **ret_message) {
        g_autofree char *set_resume = NULL;
        CycleDriver driver;
        int r = manager_check_idle(m, ret_message);
        if (r != 0)
                return r;
        r = manager_check_kernel(m, kind, opts, ret_message);
        if (r != 0)
                return r;
        r = manager_check_hibernate(m, kind, opts, &set_resume, ret_message);
        if (r != 0)
                return r;
        r = manager_pick_driver(m, opts, &driver, ret_message);
        if (r != 0)
                return r;
        if (!opts->queue && cycle_blocked(m)) {
                g_autofree char *who = inhibit_describe(m->inhibitors, INHIBIT_BLOCK, 0);
                *ret_message = g_strdup_printf("blocked by: %s", who);
                return FRIDGE_ERROR_INHIBITED;
        }
        if (opts->queue && opts->queue_timeout_ms == 0)
                opts->queue_timeout_ms = QUEUE_TIMEOUT_DEFAULT_MS;

        Cycle *c = manager_cycle_start(m, kind, driver, opts);
        c->set_resume = g_steal_pointer(&set_resume);
        /* Queued at once, so State reads "queued" as soon as Sleep returns */
        if (c->opts.queue && cycle_blocked(m))
                cycle_queue(m);
        else
                manager_schedule_step(m);
        manager_record_update(m);
        *ret_id = c->id;
        return 0;
}

int manager_cancel(Manager *m, uint64_t id, const char *why, char **ret_message) {
        Cycle *c = m->cycle;
        if (!c || (id != 0 && id != c->id)) {
                *ret_message = id == 0 ? g_strdup("no cycle is running")
                                       : g_strdup_printf("cycle %" G_GUINT64_FORMAT " is not running", id);
                return FRIDGE_ERROR_NO_SUCH_CYCLE;
        }
        if (c->ending)
                return 0;
        if (c->phase >= PHASE_KERNEL || c->handed_over) {
                *ret_message = g_strdup("the cycle is past the point of no return");
                return FRIDGE_ERROR_TOO_LATE;
        }
        manager_end_cycle_early(m, RESULT_ABORTED, FRIDGE_ERROR_CANCELLED, "%s", why);
        return 0;
}

void manager_shutdown(Manager *m) {
        Cycle *c = m->cycle;
        if (!c)
                return;
        if (c->phase < PHASE_KERNEL || c->ending)
                manager_end_cycle_early(m, RESULT_ABORTED, FRIDGE_ERROR_CANCELLED, "fridged is stopping");
        else {
                if (c->power_request)
                        power_restore_after_abort(m->sysfs_fd, c->power_request);
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL,
                                "fridged was stopped during the kernel phase");
        }
        /* The loop is about to end: thaw and report now rather than from it */
        if (m->cycle->phase != PHASE_THAW)
                enter_phase(m, PHASE_THAW);
        (void) sd_event_source_set_enabled(m->step, SD_EVENT_OFF);
        cycle_finish(m);
}

/* Without a cgroup v2 mount or a ledger fridged still sleeps, but freezes
 * nothing: a freeze it could not undo after a crash is worse than none. */
static void manager_setup_freezing(Manager *m, const ManagerParams *p) {
        int r;
        if (p->cgroup_root)
                m->cgroup_root = g_strdup(p->cgroup_root);
        else if ((r = cgroups_find_mount(m->proc_fd, &m->cgroup_root)) < 0) {
                log_warning_errno(r, "No cgroup v2 mount found (%m); nothing will be frozen");
                return;
        }
        m->cgroup_fd = root_open(m->cgroup_root);
        if (m->cgroup_fd < 0) {
                log_warning_errno(m->cgroup_fd, "Cannot open the cgroup root %s (%m); nothing will be frozen",
                                  m->cgroup_root);
                g_clear_pointer(&m->cgroup_root, g_free);
                return;
        }
        r = ledger_open(p->state_dir, &m->ledger);
        if (r < 0) {
                log_error_errno(r, "Cannot open the ledger in %s (%m); nothing will be frozen", p->state_dir);
                return;
        }
        r = ledger_thaw_all(m->ledger, m->cgroup_fd);
        m->startup_thaw_failed = r < 0;
        if (r > 0) {
                g_autofree char *msg = g_strdup_printf("Thawed %d cgroups that an earlier fridged left frozen", r);
                g_autofree char *count = g_strdup_printf("FRIDGE_THAWED=%d", r);
                log_struct_event(LOG_NOTICE, FRIDGE_MESSAGE_LEDGER_THAW, msg, count, NULL);
        }
        r = freezer_new(m->event, m->cgroup_fd, m->proc_fd, m->ledger, &m->freezer);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the freezer (%m); nothing will be frozen");
                return;
        }

}

void manager_exempt_pid(Manager *m, pid_t pid, const char *reason) {
        g_hash_table_replace(m->exempt_pids, GINT_TO_POINTER((int) pid), g_strdup(reason));
}

void manager_set_client_pid(Manager *m, pid_t pid) {
        g_clear_pointer(&m->next_client_cgroup, g_free);
        if (pid > 0 && cgroups_of_pid(m->proc_fd, pid, &m->next_client_cgroup) < 0)
                log_debug("Cannot tell the cgroup of the client pid %d", (int) pid);
}

const char *manager_cgroup_root(const Manager *m) {
        return m->cgroup_fd >= 0 ? m->cgroup_root : NULL;
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

static void on_hold_released(uint64_t id, void *userdata) {
        Manager *m = userdata;
        if (m->ops && m->ops->hold_released)
                m->ops->hold_released(m->userdata, id);
}

void manager_release_hold(Manager *m, uint64_t id) {
        if (overrides_release_hold(m->overrides, id))
                on_hold_released(id, m);
}

int manager_add_hold(Manager *m, pid_t pid, CgroupClass class, const char *who, const char *why,
                     int *ret_fd, uint64_t *ret_hold, char **ret_message) {
        g_autofree char *cgroup = NULL;

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
        return overrides_add_hold(m->overrides, cgroup, class, who, why, ret_fd, ret_hold);
}

/* A queued cycle starts once the last block goes; a delay wait ends once
 * the last delay holder it waits for goes */
static void on_inhibitor_released(const Inhibitor *i, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;

        if (c && c->queued && !cycle_blocked(m)) {
                log_info("Cycle %" G_GUINT64_FORMAT ": the last block inhibitor is gone; starting", c->id);
                c->queued = false;
                manager_notify(m, MANAGER_CHANGED_STATE);
                manager_schedule_step(m);
        }
        if (c && c->delay_waiting && inhibit_count(m->inhibitors, INHIBIT_DELAY, c->delay_before) == 0) {
                log_info("Cycle %" G_GUINT64_FORMAT ": delay inhibitors released after %.1f ms", c->id,
                         (double) (manager_now_usec() - c->delay_start) / USEC_PER_MSEC);
                delay_done(m);
        }
        if (m->ops && m->ops->inhibitor_released)
                m->ops->inhibitor_released(m->userdata, i->sender);
}

int manager_inhibit(Manager *m, const Inhibitor *tmpl, int *ret_fd, uint64_t *ret_id, char **ret_message) {
        return inhibit_add(m->inhibitors, tmpl, ret_fd, ret_id, ret_message);
}

void manager_release_inhibitor(Manager *m, uint64_t id) {
        (void) inhibit_release(m->inhibitors, id);
}

void manager_release_inhibitors_of(Manager *m, const char *sender) {
        unsigned n = inhibit_release_sender(m->inhibitors, sender);
        if (n > 0)
                log_info("%s left the bus; its %u inhibitor%s ended", sender, n, n == 1 ? "" : "s");
}

unsigned manager_inhibitors_of(const Manager *m, const char *sender) {
        return inhibit_count_sender(m->inhibitors, sender);
}

GPtrArray *manager_list_inhibitors(const Manager *m) {
        return inhibit_list(m->inhibitors);
}

static void manager_load_rules(Manager *m, const char *const *dirs) {
        unsigned problems = 0;
        if (!dirs || class_rules_load(dirs, &m->rules, &problems) < 0)
                m->rules = class_rules_new();
        if (problems > 0)
                log_warning("%u classes.d files were skipped; see above", problems);
}

int manager_new(const ManagerParams *p, Manager **ret) {
        g_autoptr(Manager) m = g_new0(Manager, 1);
        m->sysfs_fd = m->proc_fd = m->cgroup_fd = m->state_fd = -1;
        m->exempt_pids = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        manager_exempt_pid(m, getpid(), "fridged itself");
        m->event = sd_event_ref(p->event);
        m->overrides = overrides_new(m->event, on_hold_released, m);
        m->inhibitors = inhibit_new(m->event, on_inhibitor_released, m);
        m->config = p->config;
        m->next_id = 1;
        m->last_kind = _SLEEP_KIND_INVALID;

        m->sysfs_fd = root_open(p->sysfs_root);
        if (m->sysfs_fd < 0)
                return log_error_errno(m->sysfs_fd, "Failed to open the sysfs root %s: %m", p->sysfs_root);
        m->proc_fd = root_open(p->proc_root);
        if (m->proc_fd < 0)
                return log_error_errno(m->proc_fd, "Failed to open the proc root %s: %m", p->proc_root);

        manager_load_rules(m, p->class_dirs);
        manager_setup_freezing(m, p);
        manager_load_record(m, p->state_dir);

        int r = sd_event_add_defer(m->event, &m->step, on_step, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add the phase step source: %m");
        (void) sd_event_source_set_enabled(m->step, SD_EVENT_OFF);
        (void) sd_event_source_set_description(m->step, "manager-step");

        *ret = g_steal_pointer(&m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        cycle_free(m->cycle);
        if (m->freezer)
                freezer_thaw_all(m->freezer); /* a last guard: nothing stays frozen */
        freezer_free(m->freezer);
        ledger_free(m->ledger);
        class_rules_free(m->rules);
        g_clear_pointer(&m->exempt_pids, g_hash_table_unref);
        g_clear_pointer(&m->overrides, overrides_free);
        g_clear_pointer(&m->inhibitors, inhibit_free);
        g_free(m->next_client_cgroup);
        g_free(m->cgroup_root);
        sd_event_source_disable_unref(m->step);
        sd_event_source_disable_unref(m->thaw_retry);
        if (m->cgroup_fd >= 0)
                close(m->cgroup_fd);
        if (m->sysfs_fd >= 0)
                close(m->sysfs_fd);
        if (m->proc_fd >= 0)
                close(m->proc_fd);
        if (m->state_fd >= 0)
                close(m->state_fd);
        cycle_record_free(m->interrupted);
        config_free(m->config);
        g_free(m->last_wake_reason);
        for (int k = 0; k < _SLEEP_KIND_MAX; k++)
                g_free(m->can_reason[k]);
        sd_event_unref(m->event);
        g_free(m);
        return NULL;
}

void manager_set_ops(Manager *m, const ManagerOps *ops, void *userdata) {
        m->ops = ops;
        m->userdata = userdata;
}

bool manager_is_busy(const Manager *m) {
        return m->cycle != NULL;
}

const char *manager_state(const Manager *m) {
        const Cycle *c = m->cycle;
        if (!c)
                return "idle";
        if (c->queued)
                return "queued";
        if (c->phase == PHASE_THAW)
                return "thawing";
        if (c->phase == PHASE_KERNEL && (c->power_request || c->waiting_post))
                return "sleeping";
        return "running";
}

uint64_t manager_cycle_id(const Manager *m) {
        return m->cycle ? m->cycle->id : m->last_id;
}

const char *manager_kind(const Manager *m) {
        return sleep_kind_to_string(m->cycle ? m->cycle->kind : m->last_kind);
}

const char *manager_phase(const Manager *m) {
        if (m->cycle && m->cycle->retry_waiting)
                return "retry";
        return m->cycle ? phase_to_string(m->cycle->phase) : "";
}

double manager_progress(const Manager *m) {
        return m->cycle ? m->cycle->progress : 0.0;
}

const char *manager_progress_text(const Manager *m) {
        return m->cycle && m->cycle->progress_text ? m->cycle->progress_text : "";
}

const char *manager_last_result(const Manager *m) {
        return cycle_result_to_string(m->last_result);
}

const char *manager_last_wake_reason(const Manager *m) {
        return m->last_wake_reason ? m->last_wake_reason : "";
}

const char *manager_can(Manager *m, SleepKind kind, const char **ret_reason) {
        g_autoptr(PowerCaps) caps = NULL;
        if (power_caps_read(m->sysfs_fd, &caps) < 0) {
                *ret_reason = "/" POWER_STATE " is missing, unreadable or malformed";
                return "na";
        }
        /* power_can's reasons are static strings: they outlive caps */
        const char *answer = power_can(caps, kind, m->config->hibernate_mode, ret_reason);
        if (strcmp(answer, "yes") != 0 || !kind_writes_image(m, kind, false))
                return answer;
        g_autoptr(HibernateTarget) t = hibernate_check(m->sysfs_fd, m->proc_fd, m->config->resume_device);
        if (!t->reason)
                return answer;
        g_free(m->can_reason[kind]);
        m->can_reason[kind] = g_steal_pointer(&t->reason);
        *ret_reason = m->can_reason[kind];
        return "no";
}

char **manager_supported_kinds(Manager *m) {
        g_autoptr(GPtrArray) kinds = g_ptr_array_new();
        for (int k = 0; k < _SLEEP_KIND_MAX; k++) {
                const char *reason;
                if (strcmp(manager_can(m, (SleepKind) k, &reason), "na") != 0)
                        g_ptr_array_add(kinds, g_strdup(sleep_kind_to_string((SleepKind) k)));
        }
        g_ptr_array_add(kinds, NULL);
        return (char **) g_ptr_array_free(g_steal_pointer(&kinds), FALSE);
}
