/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: the kernel phase tried again ([Sleep] Retries=, RetryDelayMs=):
 * the states RETRY_WAITING and RETRY_PREPARING. */
#include "manager-internal.h"

#include <errno.h>
#include <fcntl.h>

#include "backoff.h"
#include "log.h"
#include "util.h"

/* Whether another attempt is set up: everything is thawed before the wait,
 * so nothing stays frozen longer than one attempt's freeze */
bool manager_retry_kernel(Manager *m, const PowerRequest *req) {
        Cycle *c = m->cycle;
        /* What may pass if tried again a little later: a wakeup event, a busy device */
        const char *why = power_request_transient(req);
        if (!why || c->attempt >= c->settings->retries)
                return false;
        unsigned n = c->freezer ? freezer_thaw_all(c->freezer) : 0;
        if (c->freezer && freezer_n_frozen(c->freezer) > 0)
                return false; /* the thaw state keeps at it; no new freeze on top */

        c->attempt++;
        c->retry_ms = backoff_delay_ms(c->settings->retry_delay_ms, c->attempt, BACKOFF_CAP_MS);
        c->retry_why = g_strdup(why);
        log_notice("Cycle %" G_GUINT64_FORMAT ": attempt %u of %u failed: %s; thawed %u cgroups, trying again "
                   "in %u ms", c->id, c->attempt, c->settings->retries + 1, why, n, c->retry_ms);
        manager_cycle_event(m, CYCLE_EVENT_FAILURE); /* with the retry fact: RETRY_WAITING */
        return true;
}

static int on_retry_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        manager_cycle_event(userdata, CYCLE_EVENT_TIMEOUT);
        return 0;
}

/* Cancel works again while the backoff runs */
void manager_enter_retry_waiting(Manager *m) {
        Cycle *c = m->cycle;
        g_autofree char *why = TAKE_PTR(c->retry_why);
        int r = sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC,
                                           (uint64_t) c->retry_ms * USEC_PER_MSEC, 0, on_retry_timer, m);
        if (r < 0) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot wait to retry: %s",
                                        errno_text(r));
                return;
        }
        manager_set_progress(m, 0.0, "attempt %u of %u in %u ms: %s", c->attempt + 1, c->settings->retries + 1,
                             c->retry_ms, why);
}

/* A new wakeup_count handshake, then freeze-early onwards once more */
void manager_enter_retry_preparing(Manager *m) {
        Cycle *c = m->cycle;
        PrepareJob *j = g_new0(PrepareJob, 1);
        j->sysfs_fd = fcntl(m->sysfs_fd, F_DUPFD_CLOEXEC, 3);
        int r = worker_start(m->event, manager_prepare_job_run, j, manager_prepare_job_free, manager_prepare_done,
                             m, &c->worker);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot retry the kernel phase: %s",
                                        errno_text(r));
}
