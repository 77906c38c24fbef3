/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: a freeze stage that timed out. What blocks it is named off
 * the loop (blockers.c reads /proc), and the cycle ends with the names. */
#include "manager-internal.h"

#include "blockers.h"
#include "log.h"
#include "time-util.h"
#include "util.h"
#include "worker.h"

/* The reads of /proc that name the blockers may wait on a task's mmap lock
 * for as long as the FUSE server it waits on is frozen: the cycle ends
 * with what it knows by then, and thaws */
#define BLOCKERS_WAIT_MS 2000
/* A naming given up on stays in its read, holding fds; past this many
 * such threads (as FLUSH_JOBS_MAX for the flush) no naming starts */
#define BLOCKERS_JOBS_MAX 4

static gint blockers_jobs_alive; /* BlockersJob not yet freed, on any thread */

typedef struct BlockersJob {
        Blockers *blockers;
        char *text;
} BlockersJob;

static int blockers_job_run(void *data) {
        BlockersJob *j = data;
        j->text = blockers_describe(j->blockers);
        return 0;
}

static void blockers_job_free(void *data) {
        BlockersJob *j = data;
        g_atomic_int_dec_and_test(&blockers_jobs_alive);
        blockers_free(j->blockers);
        g_free(j->text);
        g_free(j);
}

static void end_freeze_timeout(Manager *m, const char *blockers) {
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_FREEZE_TIMEOUT, "cgroups did not freeze within %u ms: %s",
                                m->cycle->settings->freeze_timeout_ms, blockers);
}

static void blockers_done(int r, void *data, void *userdata) {
        Manager *m = userdata;
        BlockersJob *j = data;
        m->cycle->worker = NULL;
        end_freeze_timeout(m, j->text);
}

static int on_blockers_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        end_freeze_timeout(userdata, "naming the tasks that block them took longer than "
                                     G_STRINGIFY(BLOCKERS_WAIT_MS) " ms (a read of /proc waited)");
        return 0;
}

void manager_name_blockers(Manager *m) {
        Cycle *c = m->cycle;
        if (g_atomic_int_get(&blockers_jobs_alive) >= BLOCKERS_JOBS_MAX) {
                end_freeze_timeout(m, "the tasks that block them are not named: earlier namings are still stuck "
                                      "reading /proc");
                return;
        }
        g_atomic_int_inc(&blockers_jobs_alive);
        BlockersJob *j = g_new0(BlockersJob, 1);
        int r = freezer_blockers(c->freezer, &j->blockers);
        if (r >= 0)
                r = worker_start(m->event, blockers_job_run, j, blockers_job_free, blockers_done, m, &c->worker);
        else
                blockers_job_free(j);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC,
                                               (uint64_t) BLOCKERS_WAIT_MS * USEC_PER_MSEC, 0, on_blockers_timeout, m);
        if (r < 0) {
                g_autofree char *why = g_strdup_printf("the tasks that block them cannot be named (%s)", errno_text(r));
                end_freeze_timeout(m, why);
        }
}
