/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* One dry-run suspend cycle through fridged, Sleep call to CycleFinished:
 * the benchmarks' common step. timeout_ms bounds the wait for its end (a
 * flush of 1 GiB takes far longer than a cycle with nothing to do). */

#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness.h"

static uint64_t bench_last_cycle; /* the last bench_dry_run()'s, for bench_print_phases() */

static inline double bench_dry_run(Harness *h, int timeout_ms) {
        uint64_t cycle;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL, *ferr = NULL, *fmsg = NULL;
        int64_t t0 = g_get_monotonic_time();
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, "dry-run", "b", 1, NULL) < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        if (!harness_wait_finished(h, cycle, timeout_ms, &result, &ferr, &fmsg))
                g_error("cycle %" G_GUINT64_FORMAT " did not finish", cycle);
        int64_t t1 = g_get_monotonic_time();
        bench_last_cycle = cycle;
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

/* Where the last bench_dry_run()'s time went: its phases as fridged's
 * timeline holds them (GetCycleTimeline), one line, "what: N.NN ms" */
static inline void bench_print_phases(Harness *h, const char *what) {
        sd_bus_message *m = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(h, FRIDGE_INTERFACE, "GetCycleTimeline", &m, &err, &msg, "t", bench_last_cycle) < 0)
                g_error("GetCycleTimeline failed: %s: %s", err, msg);
        g_autoptr(GString) line = g_string_new(what);
        const char *name;
        uint64_t start, end;
        if (sd_bus_message_skip(m, "a{sv}") < 0 || sd_bus_message_enter_container(m, 'a', "(stt)") <= 0)
                g_error("GetCycleTimeline: unexpected reply");
        while (sd_bus_message_read(m, "(stt)", &name, &start, &end) > 0)
                g_string_append_printf(line, " %s %.2f ms", name, (double) (end - start) / 1000.0);
        sd_bus_message_unref(m);
        printf("%s\n", line->str);
}
