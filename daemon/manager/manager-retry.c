/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: the kernel phase tried again ([Sleep] Retries=, RetryDelayMs=). */
#include "manager-internal.h"

#include <errno.h>
#include <fcntl.h>

#include "backoff.h"
#include "log.h"
#include "util.h"

/* A wakeup event (the wakeup_count handshake spoiled) or EBUSY from the
 * state write (a wakeup event or a busy device): what may pass if tried
 * again a little later */
static const char *kernel_failure_transient(const PowerRequest *r) {
        if (r->failed_step == POWER_STEP_WAKEUP_COUNT)
                return "a wakeup event arrived";
        if (r->failed_step == POWER_STEP_STATE && r->error == -EBUSY)
                return "the kernel was busy (EBUSY)";
        return NULL;
}

static void retry_prepared(int r, void *data, void *userdata) {
        Manager *m = userdata;
        m->cycle->retry_waiting = false;
        manager_prepare_done(r, data, userdata); /* steps on to freeze-early */
}

/* A new wakeup_count handshake, then freeze-early onwards once more */
static int on_retry_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        c->timeout = sd_event_source_disable_unref(c->timeout);
        PrepareJob *j = g_new0(PrepareJob, 1);
        j->sysfs_fd = fcntl(m->sysfs_fd, F_DUPFD_CLOEXEC, 3);
        int r = worker_start(m->event, manager_prepare_job_run, j, manager_prepare_job_free, retry_prepared, m, &c->worker);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot retry the kernel phase: %s",
                                errno_text(r));
        return 0;
}

/* Whether another attempt was set up. Everything is thawed before the
 * wait, so nothing stays frozen longer than one attempt's freeze. */
bool manager_retry_kernel(Manager *m, const PowerRequest *req) {
        Cycle *c = m->cycle;
        const char *why = kernel_failure_transient(req);
        if (!why || c->attempt >= m->config->retries)
                return false;
        unsigned n = c->freezer ? freezer_thaw_all(c->freezer) : 0;
        if (c->freezer && freezer_n_frozen(c->freezer) > 0)
                return false; /* the thaw phase keeps at it; no new freeze on top */

        c->attempt++;
        uint32_t ms = backoff_delay_ms(m->config->retry_delay_ms, c->attempt, BACKOFF_CAP_MS);
        int r = sd_event_add_time_relative(m->event, &c->timeout, CLOCK_MONOTONIC, (uint64_t) ms * USEC_PER_MSEC,
                                           0, on_retry_timer, m);
        if (r < 0)
                return false;
        log_notice("Cycle %" G_GUINT64_FORMAT ": attempt %u of %u failed: %s; thawed %u cgroups, trying again "
                   "in %u ms", c->id, c->attempt, m->config->retries + 1, why, n, ms);
        c->retry_waiting = true;
        c->phase = PHASE_FLUSH; /* the next step is freeze-early; Cancel works again meanwhile */
        manager_record_update(m);
        manager_notify(m, MANAGER_CHANGED_STATE);
        manager_set_progress(m, 0.0, "attempt %u of %u in %u ms: %s", c->attempt + 1, m->config->retries + 1, ms, why);
        return true;
}
