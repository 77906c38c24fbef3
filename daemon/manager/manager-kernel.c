/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: the kernel phase of a direct cycle (SLEEPING, WRITING_IMAGE,
 * SKIPPING_KERNEL) and its way back (RESUMING): the state write on a
 * worker, its watchdog, the image writer's progress, and the thaw that
 * comes first at the resume. */
#include "manager-internal.h"

#include <inttypes.h>

#include "log.h"
#include "power.h"
#include "time-util.h"
#include "util.h"
#include "worker.h"

/* The kernel phase reads the cycle's settings, never the live
 * configuration: `snapshot` borrows them for the backend */
static PowerContext cycle_power_context(const Manager *m, Config *snapshot) {
        const CycleSettings *s = m->cycle->settings;
        *snapshot = (Config) { .mem_sleep = s->mem_sleep, .hibernate_mode = s->hibernate_mode,
                               .hibernate_writer = s->hibernate_writer, .tuxonice = s->tuxonice };
        return manager_power_context(m, snapshot);
}

/* The request takes the wakeup sources */
static PowerCycle cycle_power_cycle(Cycle *c) {
        const CycleSettings *s = c->settings;
        return (PowerCycle) { .kind = c->kind, .pm_test = s->pm_test, .mem_sleep = s->mem_sleep,
                              .wake_after_sec = s->wake_after_sec, .set_resume = c->set_resume,
                              .have_wakeup_count = c->have_wakeup_count, .wakeup_count = c->wakeup_count,
                              .count_sources = g_steal_pointer(&c->wakeup_sources), .before = c->before };
}

/* Both drivers: the machine is back. Resumed and LastWakeReason go out
 * before State leaves "sleeping", so a client that reacts to State reads
 * this wake's reason, not the last one's. */
void manager_report_resumed(Manager *m) {
        Cycle *c = m->cycle;
        const char *reason = c->wake_reason ? c->wake_reason : "unknown";
        uint64_t slept_usec = c->slept_usec;
        g_free(m->last_wake_reason);
        m->last_wake_reason = g_strdup(reason);
        g_autofree char *slept = g_strdup_printf("SLEPT_USEC=%" G_GUINT64_FORMAT, slept_usec);
        g_autofree char *reason_field = g_strdup_printf("FRIDGE_WAKE_REASON=%s", reason);
        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " resumed after %.1f s (wake: %s)",
                                               c->id, (double) slept_usec / USEC_PER_SEC, reason);
        log_struct_event(LOG_INFO, FRIDGE_MESSAGE_RESUMED, msg, slept, reason_field, NULL);
        timeline_kernel(c->timeline, slept_usec, reason);
        if (m->ops && m->ops->resumed)
                m->ops->resumed(m->userdata, c->id, slept_usec, reason);
        manager_notify(m, MANAGER_CHANGED_LAST);
        manager_cycle_event(m, CYCLE_EVENT_DONE);
}

/* Thaw next */
void manager_enter_resuming(Manager *m) {
        manager_set_progress(m, 1.0, "resumed");
        manager_schedule_step(m);
}

/* The write runs on a worker, so the loop and the bus go on whatever the
 * kernel does; one that does not return is said, not waited for in
 * silence. It changes nothing in the cycle: the write cannot be taken back
 * (Cancel answers TooLate) and when it returns the cycle goes on as
 * always. sd_notify's WATCHDOG=1 is the loop's, and the loop is alive: a
 * restart would not bring the write back, and would thaw what the
 * kernel may be suspending. CLOCK_MONOTONIC stands still while the
 * machine sleeps: only awake time counts. */
static int on_kernel_watchdog(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        const PowerRequest *req = c->power_request;
        uint64_t secs = (now(CLOCK_MONOTONIC) - c->kernel_start) / USEC_PER_SEC;

        if (!c->kernel_stuck) {
                c->kernel_stuck = true;
                g_autofree char *msg = g_strdup_printf(
                        "Cycle %" G_GUINT64_FORMAT ": the kernel state write ('%s' to /%s) has not returned after "
                        "%" PRIu64 " s; the bus goes on answering and fridged goes on waiting", c->id,
                        req->entry_value, req->entry_file, secs);
                g_autofree char *file = g_strdup_printf("FRIDGE_WRITE_FILE=/%s", req->entry_file);
                g_autofree char *value = g_strdup_printf("FRIDGE_WRITE_VALUE=%s", req->entry_value);
                log_struct_event(LOG_WARNING, FRIDGE_MESSAGE_KERNEL_STUCK, msg, file, value, NULL);
        }
        manager_set_progress(m, 0.0, "kernel state write stuck for %" PRIu64 " s ('%s' to /%s)", secs,
                             req->entry_value, req->entry_file);
        (void) sd_event_source_set_time_relative(s, USEC_PER_SEC);
        return 0;
}

/* The kernel phase's timer, repeating from `callback`: the watchdog of
 * the kernel's state write or the image writer's progress */
static int kernel_timer_arm(Manager *m, uint64_t usec, sd_event_time_handler_t callback) {
        Cycle *c = m->cycle;
        c->kernel_start = now(CLOCK_MONOTONIC);
        c->kernel_stuck = false;
        int r = sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC, usec, 0, callback, m);
        if (r >= 0)
                (void) sd_event_source_set_enabled(c->timer, SD_EVENT_ON);
        return r;
}

/* A write reported stuck that came back says so, whatever it brought */
static void kernel_watchdog_returned(Manager *m, const PowerRequest *req) {
        Cycle *c = m->cycle;
        c->timer = sd_event_source_disable_unref(c->timer);
        if (c->kernel_stuck)
                log_notice("Cycle %" G_GUINT64_FORMAT ": the kernel state write ('%s' to /%s) returned after %.1f s",
                           c->id, req->entry_value, req->entry_file,
                           (double) (now(CLOCK_MONOTONIC) - c->kernel_start) / USEC_PER_SEC);
}

/* The request's finish is done: the wake reason is known */
static void kernel_finished(int r, void *data, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        PowerRequest *req = data;

        c->worker = NULL;
        c->power_request = NULL;
        g_autofree char *notes = power_request_notes(req);
        if (notes)
                log_notice("%s", notes);
        /* fridge's writer's figures travel with the result: history, fridgectl, the agent */
        if (notes && c->writes_image && !c->message)
                c->message = g_strdup_printf("slept and resumed; %s", notes);
        c->wake_reason = g_strdup(req->wake_reason);
        manager_report_resumed(m);
}

/* The write returned at the resume: the thaw first, since the desktop is
 * frozen until then; the wake reason, the knobs put back, the Resumed
 * report and the record's next phase follow it. The request stays the
 * cycle's meanwhile, so that a stop puts the knobs back all the same. */
static void kernel_resumed(Manager *m, Worker *w, PowerRequest *req) {
        Cycle *c = m->cycle;
        c->resumed_usec = req->returned_usec;
        c->slept_usec = req->slept_usec;
        manager_thaw_cycle(m);
        req = worker_take_data(w);
        c->power_request = req;
        if (worker_start(m->event, power_request_finish, req, power_request_free_void, kernel_finished, m,
                         &c->worker) < 0) {
                /* Not worth failing the cycle for: the loop does it */
                (void) power_request_finish(req);
                kernel_finished(0, req, m);
                power_request_free(req);
        }
}

static void kernel_done(int r, void *data, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        PowerRequest *req = data;
        Worker *w = TAKE_PTR(c->worker);

        c->power_request = NULL;
        kernel_watchdog_returned(m, req);
        c->image = power_request_image_write(req); /* the last attempt's */
        if (r < 0) {
                if (manager_retry_kernel(m, req))
                        return;
                FridgeError error;
                g_autofree char *message = NULL;
                CycleResult result = power_request_describe_failure(req, &error, &message);
                manager_end_cycle_early(m, result, error, "%s", message);
                if (c->attempt > 0 && c->message) {
                        g_autofree char *first = TAKE_PTR(c->message);
                        c->message = g_strdup_printf("%s (attempt %u of %u)", first, c->attempt + 1,
                                                     c->settings->retries + 1);
                }
                return;
        }
        kernel_resumed(m, w, req);
}

void manager_enter_skipping_kernel(Manager *m) {
        manager_set_progress(m, 1.0, "dry run: not sleeping");
        manager_schedule_step(m);
}

/* While fridge-image-writer writes, its progress is the cycle's; the
 * timer stops with the state (cycle_stop_work) or when enter returns */
#define WRITER_PROGRESS_USEC (250 * USEC_PER_MSEC)

/* Ticks, not the clock: the time user space spent frozen by the writer
 * passes in one tick, so only awake time with the writer silent counts */
static void writer_cancel_wait(Manager *m) {
        Cycle *c = m->cycle;
        uint64_t limit = ((uint64_t) c->settings->writer_cancel_timeout_ms * USEC_PER_MSEC + WRITER_PROGRESS_USEC - 1) /
                         WRITER_PROGRESS_USEC;
        if (c->cancel_wait_ticks == 0 || ++c->cancel_wait_ticks <= limit)
                return;
        c->cancel_wait_ticks = 0;
        log_warning("Cycle %" G_GUINT64_FORMAT ": fridge-image-writer has not answered the Cancel in %u ms of "
                    "awake time; fridged hangs up on it and thaws", c->id, c->settings->writer_cancel_timeout_ms);
        power_request_abandon(c->power_request);
}

static int on_writer_progress(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        double fraction;
        g_autofree char *text = NULL;
        if (m->cycle->power_request && power_request_progress(m->cycle->power_request, &fraction, &text))
                manager_set_progress(m, fraction, "%s", text);
        if (m->cycle->power_request)
                writer_cancel_wait(m);
        (void) sd_event_source_set_time_relative(s, WRITER_PROGRESS_USEC);
        return 0;
}


void manager_enter_sleeping(Manager *m) {
        Cycle *c = m->cycle;
        Config snapshot;
        PowerContext ctx = cycle_power_context(m, &snapshot);
        PowerCycle pc = cycle_power_cycle(c);
        PowerRequest *req = NULL;
        int r = power_request_new(&ctx, &pc, &req);
        devices_wakeup_snapshot_free(pc.count_sources); /* left only when the request was not made */
        if (r >= 0) {
                c->power_request = req;
                g_autofree char *what = power_request_summary(req);
                manager_set_progress(m, 0.0, "sleeping (%s)", what);
                r = worker_start(m->event, power_request_enter, req, power_request_free_void, kernel_done, m,
                                 &c->worker);
                /* The write has started: without the watchdog it goes on, unreported */
                if (r >= 0 && c->state == CYCLE_STATE_WRITING_IMAGE) {
                        if (kernel_timer_arm(m, WRITER_PROGRESS_USEC, on_writer_progress) < 0)
                                log_warning("Cycle %" G_GUINT64_FORMAT ": cannot follow the image writer's "
                                            "progress", c->id);
                } else if (r >= 0 && kernel_timer_arm(m, (uint64_t) c->settings->kernel_watchdog_ms * USEC_PER_MSEC,
                                                     on_kernel_watchdog) < 0)
                        log_warning("Cycle %" G_GUINT64_FORMAT ": cannot arm the kernel watchdog; a stuck state "
                                    "write will not be reported", c->id);
        }
        if (r < 0) {
                c->power_request = NULL;
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot start the kernel phase: %s",
                                errno_text(r));
        }
}
