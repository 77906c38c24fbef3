/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Figures for the foundation: the wall time of a dry-run cycle with nothing
 * to freeze (median of 20, Sleep call to CycleFinished), fridged's RSS when
 * idle, how often an idle fridged wakes up (context switches of all its
 * threads over an idle window; expected: none), and a GetAll's round trip
 * (median of 50) with a swap partition to hibernate to, so that it runs
 * the whole hibernation pre-flight.
 *
 * Runs the real fridged on a private bus and fakesys, through the
 * integration harness. Usage: bench-cycle [IDLE_SECONDS] (default 30).
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness.h"
#include "dry-run.h"
#include "figure.h"
#include "median.h"

#define CYCLES 20
#define NOTHING_GOAL_MS 5.0
#define RSS_ANON_GOAL_KIB 1024.0

#define GET_ALLS 50
#define GET_ALL_GOAL_MS 2.0

static double one_get_all(Harness *h) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int64_t t0 = g_get_monotonic_time();
        int r = sd_bus_call_method(h->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, "org.freedesktop.DBus.Properties",
                                   "GetAll", &e, &reply, "s", FRIDGE_INTERFACE);
        int64_t t1 = g_get_monotonic_time();
        if (r < 0)
                g_error("GetAll: %s: %s", e.name, e.message);
        sd_bus_message_unref(reply);
        return (double) (t1 - t0) / 1000.0;
}

/* /dev/loop0 stands for a swap partition (stat only), as in test-hibernate */
static void bench_get_all(void) {
        struct stat st;
        bool swap = stat("/dev/loop0", &st) == 0 && S_ISBLK(st.st_mode);
        const char *const files[] = {
                "swaps", "Filename\tType\tSize\tUsed\tPriority\n/dev/loop0 partition 1048572 0 -2\n",
                "meminfo", "MemTotal: 2000000 kB\nDirty: 0 kB\nWriteback: 0 kB\nActive(anon): 20000 kB\n"
                           "Inactive(anon): 1000 kB\n",
                NULL };
        HarnessOptions opts = { .proc_files = swap ? files : NULL };
        g_autoptr(Harness) h = harness_new(&opts);
        double ms[GET_ALLS];
        (void) one_get_all(h);
        for (int i = 0; i < GET_ALLS; i++)
                ms[i] = one_get_all(h);
        double m = median(ms, GET_ALLS);
        printf("GetAll median %.2f ms (min %.2f, max %.2f, n=%d; %s) (goal <= %.0f ms: %s)\n", m, ms[0],
               ms[GET_ALLS - 1], GET_ALLS, swap ? "a swap partition: the whole pre-flight" : "the host's swaps",
               GET_ALL_GOAL_MS, m <= GET_ALL_GOAL_MS ? "met" : "NOT met");
        bench_goal("cycle.get_all_ms", m, "ms", "<=", GET_ALL_GOAL_MS);
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

/* key "VmRSS:" or "RssAnon:" of /proc/PID/status, in KiB */
static long long status_kib(pid_t pid, const char *key) {
        g_autofree char *p = g_strdup_printf("/proc/%d/status", (int) pid);
        g_autofree char *text = NULL;
        if (!g_file_get_contents(p, &text, NULL, NULL))
                return -1;
        const char *line = strstr(text, key);
        return line ? strtoll(line + strlen(key), NULL, 10) : -1;
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

        HarnessOptions opts = { .state_on_tmpfs = true }; /* /run is a tmpfs */
        g_autoptr(Harness) h = harness_new(&opts);

        double ms[CYCLES];
        (void) bench_dry_run(h, 30000); /* warm-up: first-touch page faults, bus name caches */
        g_autofree char *disk = bench_disk_note();
        for (int i = 0; i < CYCLES; i++)
                ms[i] = bench_dry_run(h, 30000);
        qsort(ms, CYCLES, sizeof(ms[0]), bench_compare_double);
        double med = (ms[CYCLES / 2 - 1] + ms[CYCLES / 2]) / 2;
        printf("dry-run cycle, nothing to freeze: median %.2f ms, min %.2f ms, max %.2f ms (n=%d; %s; --state-dir on "
               "tmpfs as /run is, --persistent-dir on disk) (goal <= %.0f "
               "ms: %s)\n",
               med, ms[0], ms[CYCLES - 1], CYCLES, disk, NOTHING_GOAL_MS, med <= NOTHING_GOAL_MS ? "met" : "NOT met");
        bench_goal("cycle.nothing_to_freeze_ms", med, "ms", "<=", NOTHING_GOAL_MS);

        /* Let the last cycle's property throttle and workers settle first */
        sleep(1);
        long long anon = status_kib(h->fridged_pid, "RssAnon:");
        printf("fridged when idle: RssAnon %lld KiB (goal <= %.0f KiB: %s), VmRSS %lld KiB\n", anon, RSS_ANON_GOAL_KIB,
               anon <= RSS_ANON_GOAL_KIB ? "met" : "NOT met", status_kib(h->fridged_pid, "VmRSS:"));
        bench_goal("cycle.rss_anon_idle_kib", (double) anon, "KiB", "<=", RSS_ANON_GOAL_KIB);

        long long before = switches(h->fridged_pid);
        sleep(idle_sec);
        long long after = switches(h->fridged_pid);
        printf("fridged wake-ups over %u idle seconds: %lld context switches (goal 0: %s)\n", idle_sec,
               after - before, after == before ? "met" : "NOT met");
        bench_goal("cycle.idle_wakeups", (double) (after - before), "switches", "<=", 0);
        bench_get_all();
        return 0;
}
