/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Figures for scale (issue 15 point 6) on real scratch cgroups:
 *
 * 1. `fridgectl plan` through fridged over 10,100 empty scratch cgroups
 *    (100 slices x 100 services under one freeze root): the walk, the plan
 *    and the bus round trip, against a minimal C walk that opens every
 *    cgroup, reads its cgroup.procs and lists its children; alternated,
 *    medians of 5; goal: ratio at most 1.0 (fridged reads no cgroup.procs
 *    below a cgroup whose cgroup.events says "populated 0").
 * 2. fridged's RssAnon during a dry-run cycle over those cgroups (the
 *    highest of samples every millisecond; goal: at most 8 MiB).
 * 3. Then a process in each of them (issue 34 point 6): `fridgectl plan`
 *    again, and a cycle's prepare phase (its plan) with the client on a
 *    pty against the same client on none: on the pty fridged follows the
 *    terminal chain to its holder, script(1), which has no terminal of its
 *    own, as a desktop's terminal emulator has none (a multiplexer's client
 *    search over every process is made only for a holder that listens on
 *    a unix socket: 1.15 before that gate, with 10,100 processes).
 *    Alternated, medians of 5; goal: ratio at most 1.1.
 *
 * Needs root and a cgroup v2 mount (exit 77 otherwise). Every cgroup is
 * removed at exit (scratch.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dry-run.h"
#include "figure.h"
#include "fridge-config.h"
#include "harness.h"
#include "median.h"
#include "scratch.h"

#define SLICES 100
#define SERVICES 100
#define RUNS 5
#define GOAL_WALK_RATIO 1.0
#define GOAL_CYCLE_RSS_KIB 8192.0
#define GOAL_CHAIN_RATIO 1.1

static double ms_since(int64_t t0) {
        return (double) (g_get_monotonic_time() - t0) / 1000.0;
}

/* The naive floor: every cgroup opened, its cgroup.procs read, its
 * children listed. Returns how many cgroups it saw. */
static unsigned minimal_walk(int dir_fd) {
        unsigned n = 1;
        char buf[4096];
        int procs = openat(dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        if (procs < 0 || read(procs, buf, sizeof(buf)) < 0)
                g_error("cgroup.procs: %s", g_strerror(errno));
        close(procs);
        DIR *d = fdopendir(dir_fd);
        if (!d)
                g_error("fdopendir: %s", g_strerror(errno));
        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        g_error("open %s: %s", de->d_name, g_strerror(errno));
                n += minimal_walk(fd);
        }
        closedir(d);
        return n;
}

static double time_minimal(const char *root, unsigned *ret_n) {
        int64_t t0 = g_get_monotonic_time();
        int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                g_error("open %s: %s", root, g_strerror(errno));
        *ret_n = minimal_walk(fd);
        return ms_since(t0);
}

static double time_fridgectl_plan(Harness *h) {
        g_autofree char *out = NULL;
        int64_t t0 = g_get_monotonic_time();
        int r = harness_fridgectl(h, 120000, &out, "plan", NULL, NULL);
        double ms = ms_since(t0);
        if (r != 0)
                g_error("fridgectl plan exited %d: %s", r, out);
        return ms;
}

static long long rss_anon_kib(pid_t pid) {
        g_autofree char *p = g_strdup_printf("/proc/%d/status", (int) pid);
        g_autofree char *text = NULL;
        if (!g_file_get_contents(p, &text, NULL, NULL))
                return -1;
        const char *line = strstr(text, "RssAnon:");
        return line ? strtoll(line + 8, NULL, 10) : -1;
}

typedef struct Sampler {
        pid_t pid;
        gint stop;
        long long peak;
} Sampler;

static gpointer sample_rss(gpointer data) {
        Sampler *s = data;
        while (!g_atomic_int_get(&s->stop)) {
                long long k = rss_anon_kib(s->pid);
                if (k > s->peak)
                        s->peak = k;
                g_usleep(1000);
        }
        return NULL;
}

static long long cycle_rss_peak(Harness *h) {
        Sampler s = { .pid = h->fridged_pid, .peak = rss_anon_kib(h->fridged_pid) };
        GThread *t = g_thread_new("rss", sample_rss, &s);
        (void) bench_dry_run(h, 120000);
        g_atomic_int_set(&s.stop, 1);
        g_thread_join(t);
        return s.peak;
}

/* The prepare phase of the last cycle, from its timeline */
static double last_prepare_ms(Harness *h) {
        uint64_t cycle = harness_get_u64(h, "CycleId");
        sd_bus_message *m = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(h, FRIDGE_INTERFACE, "GetCycleTimeline", &m, &err, &msg, "t", cycle) < 0)
                g_error("GetCycleTimeline failed: %s: %s", err, msg);
        const char *name;
        uint64_t start, end;
        double ms = -1;
        if (sd_bus_message_skip(m, "a{sv}") < 0 || sd_bus_message_enter_container(m, 'a', "(stt)") <= 0)
                g_error("GetCycleTimeline: unexpected reply");
        while (sd_bus_message_read(m, "(stt)", &name, &start, &end) > 0)
                if (g_str_equal(name, "prepare"))
                        ms = (double) (end - start) / 1000.0;
        sd_bus_message_unref(m);
        if (ms < 0)
                g_error("cycle %" G_GUINT64_FORMAT " has no prepare phase in its timeline", cycle);
        return ms;
}

/* A dry-run cycle that fridgectl starts, on a pty script(1) holds or on no
 * terminal at all (setsid); its prepare phase */
static double client_cycle_prepare_ms(Harness *h, bool on_pty) {
        g_autofree char *q_ctl = g_shell_quote(getenv("FRIDGECTL")), *q_bus = g_shell_quote(h->bus_address);
        g_autofree char *cmd = g_strdup_printf("%s --bus-address=%s --no-progress suspend --dry-run", q_ctl, q_bus);
        char *pty[] = { (char *) "script", (char *) "-qec", cmd, (char *) "/dev/null", NULL };
        char *none[] = { (char *) "setsid", (char *) "-w", (char *) "sh", (char *) "-c", cmd, NULL };
        char **argv = on_pty ? pty : none;
        g_autofree char *path = g_find_program_in_path(argv[0]);
        if (!path)
                g_error("%s is not installed", argv[0]);
        argv[0] = path;
        g_autofree char *out = NULL;
        int status = harness_run(argv, 120000, &out);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                g_error("fridgectl suspend --dry-run (%s) failed: %d: %s", on_pty ? "on a pty" : "no terminal",
                        status, out);
        return last_prepare_ms(h);
}

static void spawn_everywhere(Scratch *s) {
        int64_t t0 = g_get_monotonic_time();
        guint n = s->cgroups->len;
        for (guint i = 0; i < n; i++)
                scratch_spawn(s, s->cgroups->pdata[i], NULL);
        printf("a process in each of %u cgroups started in %.0f ms\n", n, ms_since(t0));
}

static void chain_figures(Harness *h, Scratch *s) {
        spawn_everywhere(s);
        double plan[RUNS], pty[RUNS], none[RUNS];
        (void) client_cycle_prepare_ms(h, true); /* warm-ups */
        (void) client_cycle_prepare_ms(h, false);
        for (int i = 0; i < RUNS; i++) {
                plan[i] = time_fridgectl_plan(h);
                pty[i] = client_cycle_prepare_ms(h, true);
                none[i] = client_cycle_prepare_ms(h, false);
        }
        double pl = median(plan, RUNS), pm = median(pty, RUNS), nm = median(none, RUNS);
        printf("with a process in each cgroup: fridgectl plan median %.1f ms; a cycle's prepare (its plan) with "
               "the client on a pty (the terminal chain looked up) median %.1f ms, on no terminal %.1f ms; ratio "
               "%.2f (goal <= %.2f: %s; n=%d each)\n", pl, pm, nm, pm / nm, GOAL_CHAIN_RATIO,
               pm / nm <= GOAL_CHAIN_RATIO ? "met" : "NOT met", RUNS);
        bench_goal("scale.plan_chain_10100_procs_ratio", pm / nm, "x", "<=", GOAL_CHAIN_RATIO);
}

int main(void) {
        const char *skip = scratch_skip_reason();
        if (!skip)
                skip = harness_skip_reason();
        if (skip) {
                printf("bench-scale: skipped: %s\n", skip);
                return 77;
        }
        g_autoptr(Scratch) s = scratch_new();
        int64_t t0 = g_get_monotonic_time();
        for (unsigned i = 0; i < SLICES; i++) {
                g_autofree char *name = g_strdup_printf("s%03u.slice", i);
                const char *slice = scratch_add(s, name);
                for (unsigned j = 0; j < SERVICES; j++) {
                        g_autofree char *svc = g_strdup_printf("c%03u.service", j);
                        scratch_add_in(s, slice, svc);
                }
        }
        printf("%u scratch cgroups (%u slices x %u services, no processes) set up in %.0f ms\n",
               SLICES * (SERVICES + 1), SLICES, SERVICES, ms_since(t0));

        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n", s->root);
        HarnessOptions o = { .config = config, .real_cgroups = true, .state_on_tmpfs = true };
        Harness *h = harness_new(&o);
        g_autofree char *root = scratch_abs(s, s->root);
        double fr[RUNS], mi[RUNS];
        unsigned seen = 0;
        (void) time_fridgectl_plan(h); /* warm-ups */
        (void) time_minimal(root, &seen);
        for (int i = 0; i < RUNS; i++) { /* alternate, so drift on the machine hits both alike */
                fr[i] = time_fridgectl_plan(h);
                mi[i] = time_minimal(root, &seen);
        }
        double fmed = median(fr, RUNS), mmed = median(mi, RUNS);
        printf("walk+plan of %u cgroups: fridgectl plan through fridged median %.1f ms (min %.1f, max %.1f); "
               "minimal C walk (open, read cgroup.procs, list children) median %.1f ms (min %.1f, max %.1f); "
               "ratio %.2f (goal <= %.2f: %s; n=%d each)\n",
               seen, fmed, fr[0], fr[RUNS - 1], mmed, mi[0], mi[RUNS - 1], fmed / mmed, GOAL_WALK_RATIO,
               fmed / mmed <= GOAL_WALK_RATIO ? "met" : "NOT met", RUNS);
        bench_goal("scale.walk_plan_10100_ratio", fmed / mmed, "x", "<=", GOAL_WALK_RATIO);

        long long peak = cycle_rss_peak(h);
        printf("fridged RssAnon during a dry-run cycle over %u cgroups: peak %lld KiB (goal <= %.0f KiB: %s)\n",
               seen, peak, GOAL_CYCLE_RSS_KIB, peak <= GOAL_CYCLE_RSS_KIB ? "met" : "NOT met");
        bench_goal("scale.rss_anon_cycle_10100_kib", (double) peak, "KiB", "<=", GOAL_CYCLE_RSS_KIB);
        chain_figures(h, s);
        harness_free(h);
        return 0;
}
