/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Figures for the foundation: the wall time of a dry-run cycle with nothing
 * to freeze (median of 20, Sleep call to CycleFinished), fridged's RSS when
 * idle, and how often an idle fridged wakes up (context switches of all its
 * threads over an idle window; expected: none).
 *
 * Runs the real fridged on a private bus and fakesys, through the
 * integration harness. Usage: bench-cycle [IDLE_SECONDS] (default 30).
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

#define CYCLES 20

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static double one_dry_run(Harness *h) {
        uint64_t cycle;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL;
        int64_t t0 = g_get_monotonic_time();
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, "dry-run", "b", 1, NULL) < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        if (!harness_wait_finished(h, cycle, 30000, &result, NULL, NULL))
                g_error("cycle %" G_GUINT64_FORMAT " did not finish", cycle);
        int64_t t1 = g_get_monotonic_time();
        if (g_strcmp0(result, "dry-run") != 0)
                g_error("cycle ended %s, not dry-run", result);
        return (double) (t1 - t0) / 1000.0;
}

/* Sum of a "Key:   N" field over every thread of pid */
static long long task_status_sum(pid_t pid, const char *key) {
        g_autofree char *taskdir = g_strdup_printf("/proc/%d/task", (int) pid);
        g_autoptr(GDir) d = g_dir_open(taskdir, 0, NULL);
        long long sum = 0;
        for (const char *t; d && (t = g_dir_read_name(d));) {
                g_autofree char *p = g_strdup_printf("%s/%s/status", taskdir, t);
                g_autofree char *text = NULL;
                if (!g_file_get_contents(p, &text, NULL, NULL))
                        continue;
                const char *line = strstr(text, key);
                if (line)
                        sum += strtoll(line + strlen(key) + 1, NULL, 10);
        }
        return sum;
}

static long long rss_kib(pid_t pid) {
        g_autofree char *p = g_strdup_printf("/proc/%d/status", (int) pid);
        g_autofree char *text = NULL;
        if (!g_file_get_contents(p, &text, NULL, NULL))
                return -1;
        const char *line = strstr(text, "VmRSS:");
        return line ? strtoll(line + 6, NULL, 10) : -1;
}

static long long switches(pid_t pid) {
        return task_status_sum(pid, "voluntary_ctxt_switches:") + task_status_sum(pid, "nonvoluntary_ctxt_switches:");
}

int main(int argc, char *argv[]) {
        unsigned idle_sec = argc > 1 ? (unsigned) atoi(argv[1]) : 30;
        const char *skip = harness_skip_reason();
        if (skip) {
                printf("bench-cycle: skipped: %s\n", skip);
                return 77;
        }

        HarnessOptions opts = { 0 };
        g_autoptr(Harness) h = harness_new(&opts);

        double ms[CYCLES];
        (void) one_dry_run(h); /* warm-up: first-touch page faults, bus name caches */
        for (int i = 0; i < CYCLES; i++)
                ms[i] = one_dry_run(h);
        qsort(ms, CYCLES, sizeof(ms[0]), compare_double);
        printf("dry-run cycle, nothing to freeze: median %.2f ms, min %.2f ms, max %.2f ms (n=%d)\n",
               (ms[CYCLES / 2 - 1] + ms[CYCLES / 2]) / 2, ms[0], ms[CYCLES - 1], CYCLES);

        /* Let the last cycle's property throttle and workers settle first */
        sleep(1);
        printf("fridged RSS when idle: %lld KiB\n", rss_kib(h->fridged_pid));

        long long before = switches(h->fridged_pid);
        sleep(idle_sec);
        long long after = switches(h->fridged_pid);
        printf("fridged wake-ups over %u idle seconds: %lld context switches (expected 0)\n", idle_sec,
               after - before);
        return 0;
}
