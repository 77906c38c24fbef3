/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* One dry-run suspend cycle through fridged, Sleep call to CycleFinished:
 * the benchmarks' common step. timeout_ms bounds the wait for its end (a
 * flush of 1 GiB takes far longer than a cycle with nothing to do). */

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static inline double bench_dry_run(Harness *h, int timeout_ms) {
        uint64_t cycle;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL, *ferr = NULL, *fmsg = NULL;
        int64_t t0 = g_get_monotonic_time();
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, "dry-run", "b", 1, NULL) < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        if (!harness_wait_finished(h, cycle, timeout_ms, &result, &ferr, &fmsg))
                g_error("cycle %" G_GUINT64_FORMAT " did not finish", cycle);
        int64_t t1 = g_get_monotonic_time();
        if (g_strcmp0(result, "dry-run") != 0)
                g_error("cycle ended %s (%s: %s), not dry-run", result, ferr, fmsg);
        return (double) (t1 - t0) / 1000.0;
}

/* Dirty + Writeback of /proc/meminfo in KiB; -1 when unreadable */
static inline long long bench_dirty_kib(void) {
        g_autofree char *text = NULL;
        if (!g_file_get_contents("/proc/meminfo", &text, NULL, NULL))
                return -1;
        long long sum = 0;
        for (const char *key = "Dirty:"; key; key = g_str_equal(key, "Dirty:") ? "Writeback:" : NULL) {
                const char *line = strstr(text, key);
                if (!line)
                        return -1;
                sum += strtoll(line + strlen(key), NULL, 10);
        }
        return sum;
}

/* What the disk adds to a cycle's figure, said beside it: the dirty data
 * before the runs and what a plain sync(2) of it took (fridged's flush
 * writes the same back) */
static inline char *bench_disk_note(void) {
        long long kib = bench_dirty_kib();
        int64_t t0 = g_get_monotonic_time();
        sync();
        double ms = (double) (g_get_monotonic_time() - t0) / 1000.0;
        return g_strdup_printf("Dirty+Writeback %lld KiB before, a plain sync() of it %.2f ms", kib, ms);
}
