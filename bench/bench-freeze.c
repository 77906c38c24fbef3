/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Figures for staged freezing:
 *
 * 1. freeze + thaw through fridged for N = 100 and 500 scratch cgroups (two
 *    sleeping processes each): the wall time of a dry-run cycle (Sleep call
 *    to CycleFinished) with those cgroups under the freeze root, minus the
 *    same cycle with an empty freeze root (the fixed cost: bus round trips,
 *    flush, checks). An extra zz.service classed nofreeze makes the root
 *    mixed, so the plan lists the N cgroups one by one (checked with
 *    GetPlan) instead of reducing them to one write on the root.
 * 2. the same work done by a minimal C loop on the same cgroups: write "1"
 *    to each cgroup.freeze, wait (one inotify fd on every cgroup.events,
 *    poll) until each shows "frozen 1", write "0" to each in reverse order;
 *    and the ratio fridged / minimal (goal: at most 1.25).
 * 3. plan_build() over 100,101 synthetic cgroups in memory (1,000 slices x
 *    100 services, mixed classes; goal: at most 40 ms).
 * 4. resume at N=500: real (not dry-run) suspend cycles on the simulated
 *    kernel, from the state write's return to every cgroup thawed (fridged
 *    logs it: "ms after the resume"), against a minimal loop writing "0"
 *    to the same 500 frozen cgroups (goal: ratio at most 1.25).
 *
 * fridged's --state-dir (the ledger) is on a tmpfs, as /run is where it
 * runs. Medians of 10 cycles (20 for the plan). Runs the real fridged on a private
 * bus and fakesys, through the integration harness; the cgroups are real
 * cgroup v2 scratch cgroups holding only processes this program started,
 * all thawed, killed and removed at exit whatever happens (scratch.c).
 * Needs root and a cgroup v2 mount with the freezer (exit 77 otherwise,
 * after the plan figures, which need neither).
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness.h"
#include "dry-run.h"
#include "figure.h"
#include "median.h"
#include "plan.h"
#include "scratch.h"

#define CYCLES 10
#define PLAN_RUNS 20
#define GOAL_RATIO 1.25
#define GOAL_PLAN_MS 40.0
#define GOAL_FIXED_MS 10.0

static const char classes_conf[] = "[NoFreeze]\nUnits=zz.service\n";

static double ms_since(int64_t t0) {
        return (double) (g_get_monotonic_time() - t0) / 1000.0;
}

/* ---- through fridged ---- */

typedef struct PlanCounts {
        unsigned early, late, nofreeze;
} PlanCounts;

static PlanCounts get_plan_counts(Harness *h) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        PlanCounts c = { 0 };
        if (harness_call(h, FRIDGE_INTERFACE, "GetPlan", &reply, &err, &msg, "") < 0)
                g_error("GetPlan failed: %s: %s", err, msg);
        if (sd_bus_message_enter_container(reply, 'a', "(ssss)") <= 0)
                g_error("GetPlan: unexpected reply");
        const char *cg, *unit, *cls, *reason;
        while (sd_bus_message_read(reply, "(ssss)", &cg, &unit, &cls, &reason) > 0) {
                if (g_str_equal(cls, "early"))
                        c.early++;
                else if (g_str_equal(cls, "late"))
                        c.late++;
                else
                        c.nofreeze++;
        }
        sd_bus_message_unref(reply);
        return c;
}

static Harness *start_fridged(Scratch *s) {
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n", s->root);
        HarnessOptions o = { .config = config, .classes = classes_conf, .real_cgroups = true, .state_on_tmpfs = true };
        return harness_new(&o);
}

/* ---- the minimal loop ---- */

typedef struct Minimal {
        unsigned n;
        char **freeze;   /* absolute paths of cgroup.freeze */
        char **events;   /* absolute paths of cgroup.events */
        int *index_of_wd;
        int n_wd;
        bool *frozen;
} Minimal;

static Minimal *minimal_new(Scratch *s, char *const *cgroups, unsigned n) {
        Minimal *m = g_new0(Minimal, 1);
        m->n = n;
        m->freeze = g_new0(char *, n + 1);
        m->events = g_new0(char *, n + 1);
        m->frozen = g_new0(bool, n);
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *dir = scratch_abs(s, cgroups[i]);
                m->freeze[i] = g_build_filename(dir, "cgroup.freeze", NULL);
                m->events[i] = g_build_filename(dir, "cgroup.events", NULL);
        }
        return m;
}

static void minimal_free(Minimal *m) {
        g_strfreev(m->freeze);
        g_strfreev(m->events);
        g_free(m->index_of_wd);
        g_free(m->frozen);
        g_free(m);
}

static void write_attr(const char *path, const char *value) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                g_error("open %s: %s", path, g_strerror(errno));
        if (write(fd, value, strlen(value)) != (ssize_t) strlen(value))
                g_error("write %s: %s", path, g_strerror(errno));
        close(fd);
}

static bool events_frozen(const char *path) {
        char buf[256];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                g_error("open %s: %s", path, g_strerror(errno));
        ssize_t k = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (k < 0)
                g_error("read %s: %s", path, g_strerror(errno));
        buf[k] = '\0';
        return strstr(buf, "frozen 1") != NULL;
}

static double minimal_cycle(Minimal *m) {
        int64_t t0 = g_get_monotonic_time();
        unsigned done = 0;

        int ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (ifd < 0)
                g_error("inotify_init1: %s", g_strerror(errno));
        for (unsigned i = 0; i < m->n; i++) {
                int wd = inotify_add_watch(ifd, m->events[i], IN_MODIFY);
                if (wd < 0)
                        g_error("inotify_add_watch %s: %s", m->events[i], g_strerror(errno));
                if (wd >= m->n_wd) {
                        int grow = MAX(wd + 1, 2 * m->n_wd);
                        m->index_of_wd = g_renew(int, m->index_of_wd, grow);
                        for (int k = m->n_wd; k < grow; k++)
                                m->index_of_wd[k] = -1;
                        m->n_wd = grow;
                }
                m->index_of_wd[wd] = (int) i;
                m->frozen[i] = false;
        }
        for (unsigned i = 0; i < m->n; i++)
                write_attr(m->freeze[i], "1");
        for (unsigned i = 0; i < m->n; i++)
                if (events_frozen(m->events[i])) {
                        m->frozen[i] = true;
                        done++;
                }
        while (done < m->n) {
                struct pollfd p = { .fd = ifd, .events = POLLIN };
                int r = poll(&p, 1, 30000);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        g_error("minimal loop: only %u of %u cgroups frozen after 30 s", done, m->n);
                char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
                ssize_t k;
                while ((k = read(ifd, buf, sizeof(buf))) > 0) {
                        for (char *q = buf; q < buf + k;) {
                                const struct inotify_event *ev = (const struct inotify_event *) q;
                                q += sizeof(*ev) + ev->len;
                                if (ev->wd < 0 || ev->wd >= m->n_wd)
                                        continue;
                                int i = m->index_of_wd[ev->wd];
                                if (i < 0 || m->frozen[i])
                                        continue;
                                if (events_frozen(m->events[i])) {
                                        m->frozen[i] = true;
                                        done++;
                                }
                        }
                }
                if (k < 0 && errno != EAGAIN && errno != EINTR)
                        g_error("read inotify: %s", g_strerror(errno));
        }
        for (unsigned i = m->n; i > 0; i--)
                write_attr(m->freeze[i - 1], "0");
        close(ifd);
        return ms_since(t0);
}

/* ---- resume: the state write's return to every cgroup thawed ---- */

#define RESUMES 10

/* The minimal thaw: the cgroups frozen (untimed), then "0" written to each
 * in reverse order (timed) */
static double minimal_thaw(Minimal *m) {
        for (unsigned i = 0; i < m->n; i++)
                write_attr(m->freeze[i], "1");
        for (unsigned i = 0; i < m->n; i++)
                for (int k = 0; !events_frozen(m->events[i]); k++) {
                        if (k > 30000)
                                g_error("minimal thaw: %s not frozen after 30 s", m->events[i]);
                        g_usleep(1000);
                }
        int64_t t0 = g_get_monotonic_time();
        for (unsigned i = m->n; i > 0; i--)
                write_attr(m->freeze[i - 1], "0");
        return ms_since(t0);
}

/* fridged's "thawed N cgroups in X ms, Y ms after the resume": the Ys */
static size_t resume_from_log(Harness *h, double *out, size_t max) {
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &text, NULL, NULL));
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        size_t n = 0;
        for (char **l = lines; *l && n < max; l++) {
                const char *after = strstr(*l, " ms after the resume");
                if (!after)
                        continue;
                const char *comma = g_strrstr_len(*l, after - *l, ", ");
                if (comma && sscanf(comma, ", %lf", &out[n]) == 1)
                        n++;
        }
        return n;
}

static void run_resume(Harness *h, Minimal *m, unsigned n) {
        double mi[RESUMES], fr[RESUMES];
        for (int i = 0; i < RESUMES; i++) {
                uint64_t cycle;
                g_autofree char *err = NULL, *msg = NULL, *result = NULL;
                if (harness_sleep(h, "suspend", &cycle, &err, &msg, NULL) < 0)
                        g_error("Sleep failed: %s: %s", err, msg);
                if (!harness_wait_finished(h, cycle, 60000, &result, NULL, NULL) || g_strcmp0(result, "done") != 0)
                        g_error("suspend cycle %" G_GUINT64_FORMAT " ended %s, not done", cycle, result);
                mi[i] = minimal_thaw(m);
        }
        size_t got = resume_from_log(h, fr, RESUMES);
        if (got != RESUMES) {
                printf("N=%u resume: fridged's log held %zu of %d resume timings; not reported\n", n, got, RESUMES);
                return;
        }
        double fmed = median(fr, RESUMES), mmed = median(mi, RESUMES);
        printf("N=%u resume on the simulated kernel: the state write's return to every cgroup thawed, median "
               "%.2f ms (min %.2f, max %.2f); minimal loop writing 0 to the same frozen cgroups median %.2f ms; "
               "ratio %.2f (goal <= %.2f: %s; n=%d each)\n",
               n, fmed, fr[0], fr[RESUMES - 1], mmed, fmed / mmed, GOAL_RATIO,
               fmed / mmed <= GOAL_RATIO ? "met" : "NOT met", RESUMES);
        g_autofree char *key = g_strdup_printf("resume.thaw_ratio_n%u", n);
        bench_goal(key, fmed / mmed, "x", "<=", GOAL_RATIO);
}

/* ---- the figures of one N ---- */

static void assert_none_frozen(Scratch *s) {
        for (guint i = 0; i < s->cgroups->len; i++)
                if (scratch_is_frozen(s, s->cgroups->pdata[i]))
                        g_error("%s is still frozen after the cycle", (char *) s->cgroups->pdata[i]);
}

static double fixed_cost(void) {
        g_autoptr(Scratch) s = scratch_new(); /* the root alone: no cgroups, no processes */
        Harness *h = start_fridged(s);
        PlanCounts c = get_plan_counts(h);
        double ms[CYCLES];
        (void) bench_dry_run(h, 60000); /* warm-up */
        g_autofree char *disk = bench_disk_note();
        for (int i = 0; i < CYCLES; i++)
                ms[i] = bench_dry_run(h, 60000);
        harness_free(h);
        assert_none_frozen(s);
        double med = median(ms, CYCLES);
        printf("fixed cost: dry-run cycle through fridged with an empty freeze root "
               "(plan: %u early, %u late, %u nofreeze): median %.2f ms, min %.2f, max %.2f (n=%d; %s)\n",
               c.early, c.late, c.nofreeze, med, ms[0], ms[CYCLES - 1], CYCLES, disk);
        bench_goal("freeze.fixed_cost_ms", med, "ms", "<=", GOAL_FIXED_MS);
        return med;
}

/* fridged logs how long each freeze stage and each thaw took: the sum per
 * cycle is its freeze+thaw without the classification of every process at
 * prepare (FUSE and sync detection), which the whole-cycle figure holds. */
static size_t freeze_thaw_from_log(Harness *h, double *out, size_t max) {
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &text, NULL, NULL));
        g_autoptr(GHashTable) per_cycle = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                gint64 cycle;
                double ms;
                const char *in = strstr(*l, " in ");
                if (!g_str_has_prefix(*l, "Cycle ") || !in || (!strstr(*l, "stage frozen in") && !strstr(*l, ": thawed ")))
                        continue;
                if (sscanf(*l, "Cycle %" G_GINT64_FORMAT ":", &cycle) != 1 || sscanf(in, " in %lf ms", &ms) != 1)
                        continue;
                double *sum = g_hash_table_lookup(per_cycle, &cycle);
                if (!sum) {
                        sum = g_new0(double, 1);
                        g_hash_table_insert(per_cycle, g_memdup2(&cycle, sizeof(cycle)), sum);
                }
                *sum += ms;
        }
        size_t n = 0;
        for (gint64 c = 2; n < max; c++) { /* cycle 1 was the warm-up */
                double *sum = g_hash_table_lookup(per_cycle, &c);
                if (!sum)
                        break;
                out[n++] = *sum;
        }
        return n;
}

static double run_n(unsigned n, double fixed_ms) {
        g_autoptr(Scratch) s = scratch_new();
        g_autoptr(GPtrArray) cgroups = g_ptr_array_new();
        int64_t t0 = g_get_monotonic_time();
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *name = g_strdup_printf("c%04u.service", i);
                const char *cg = scratch_add(s, name);
                scratch_spawn(s, cg, NULL);
                scratch_spawn(s, cg, NULL);
                g_ptr_array_add(cgroups, (gpointer) cg);
        }
        scratch_spawn(s, scratch_add(s, "zz.service"), NULL);
        g_ptr_array_add(cgroups, NULL);
        double setup_ms = ms_since(t0);

        Harness *h = start_fridged(s);
        PlanCounts c = get_plan_counts(h);
        printf("N=%u: %u scratch cgroups x 2 sleeping processes + zz.service (nofreeze, 1 process), set up in "
               "%.0f ms; GetPlan: %u early, %u late, %u nofreeze\n",
               n, n, setup_ms, c.early, c.late, c.nofreeze);
        if (c.early != n)
                g_error("N=%u: the plan lists %u early cgroups, not %u: it did not split the root", n, c.early, n);

        Minimal *m = minimal_new(s, (char *const *) cgroups->pdata, n);
        double fr[CYCLES], mi[CYCLES];
        (void) bench_dry_run(h, 60000); /* warm-ups */
        (void) minimal_cycle(m);
        assert_none_frozen(s);
        /* alternate, so drift on the machine hits both alike */
        for (int i = 0; i < CYCLES; i++) {
                fr[i] = bench_dry_run(h, 60000);
                mi[i] = minimal_cycle(m);
        }
        g_autofree char *what = g_strdup_printf("N=%u: the last cycle's phases:", n);
        bench_print_phases(h, what);
        assert_none_frozen(s);
        double inside[CYCLES];
        size_t n_inside = freeze_thaw_from_log(h, inside, CYCLES); /* before the resume cycles log theirs */
        if (n == 500) {
                run_resume(h, m, n);
                assert_none_frozen(s);
        }
        minimal_free(m);
        harness_free(h); /* before the scratch cgroups go: fridged must hold nothing frozen */
        assert_none_frozen(s);

        double fmed = median(fr, CYCLES), mmed = median(mi, CYCLES);
        double net = fmed - fixed_ms;
        double ratio = net / mmed;
        printf("N=%u: fridged dry-run cycle median %.2f ms (min %.2f, max %.2f); freeze+thaw = %.2f - %.2f "
               "(fixed cost) = %.2f ms\n",
               n, fmed, fr[0], fr[CYCLES - 1], fmed, fixed_ms, net);
        printf("N=%u: minimal C loop (write 1, inotify+poll until frozen 1, write 0 in reverse) median %.2f ms "
               "(min %.2f, max %.2f)\n",
               n, mmed, mi[0], mi[CYCLES - 1]);
        printf("N=%u: ratio fridged/minimal = %.2f (goal <= %.2f: %s; fridged's figure includes its bus round "
               "trips, ledger and plan, with the empty-root cycle subtracted; n=%d each)\n",
               n, ratio, GOAL_RATIO, ratio <= GOAL_RATIO ? "met" : "NOT met", CYCLES);
        g_autofree char *key = g_strdup_printf("freeze.cycle_ratio_n%u", n);
        bench_goal(key, ratio, "x", "<=", GOAL_RATIO);
        if (n_inside == CYCLES) {
                double imed = median(inside, CYCLES);
                printf("N=%u: freeze+thaw as fridged times it (both stages + the thaw, with ledger writes; "
                       "not the classification at prepare) median %.2f ms: ratio to the minimal loop %.2f "
                       "(goal <= %.2f: %s)\n",
                       n, imed, imed / mmed, GOAL_RATIO, imed / mmed <= GOAL_RATIO ? "met" : "NOT met");
        } else
                printf("N=%u: fridged's log held stage timings for %zu of %d cycles; not reported\n", n, n_inside,
                       CYCLES);
        fflush(stdout);
        return ratio;
}

/* ---- plan_build over a synthetic tree ---- */

#define SLICES 1000
#define SERVICES 100

/* plan_node_new() as an expression */
static PlanNode *node(const char *path, CgroupClass class, const char *reason, bool procs) {
        PlanNode *n = NULL;
        g_assert_cmpint(plan_node_new(path, class, reason, procs, &n), ==, 0);
        return n;
}

/* Four kinds of slice, in turn: all early (one entry), all late (one entry),
 * mixed early/late/nofreeze (split), mixed with processes in the slice itself
 * (split, the slice listed as nofreeze) */
static PlanNode *synthetic_tree(void) {
        PlanNode *root = node("bench.slice", CLASS_EARLY, "default", false);
        for (unsigned i = 0; i < SLICES; i++) {
                g_autofree char *sp = g_strdup_printf("bench.slice/s%04u.slice", i);
                unsigned kind = i % 4;
                PlanNode *slice = plan_node_add_child(root, node(sp, CLASS_EARLY, "default", kind == 3));
                for (unsigned j = 0; j < SERVICES; j++) {
                        g_autofree char *p = g_strdup_printf("%s/svc%03u.service", sp, j);
                        CgroupClass c = CLASS_EARLY;
                        const char *reason = "default";
                        if (kind == 1 || (kind >= 2 && j % 10 == 0)) {
                                c = CLASS_LATE;
                                reason = "config /etc/fridge/classes.d/bench.conf:2";
                        } else if (kind >= 2 && j % 10 == 1) {
                                c = CLASS_NOFREEZE;
                                reason = "config /etc/fridge/classes.d/bench.conf:4";
                        }
                        plan_node_add_child(slice, node(p, c, reason, true));
                }
        }
        return root;
}

static void run_plan(void) {
        g_autoptr(PlanNode) root = synthetic_tree();
        PlanNode *roots[] = { root };
        double ms[PLAN_RUNS];
        unsigned early = 0, late = 0, total = 0;

        plan_free(plan_build(roots, 1)); /* warm-up */
        for (int i = 0; i < PLAN_RUNS; i++) {
                int64_t t0 = g_get_monotonic_time();
                Plan *p = plan_build(roots, 1);
                ms[i] = ms_since(t0);
                early = p->n_early;
                late = p->n_late;
                total = p->entries->len;
                plan_free(p);
        }
        double med = median(ms, PLAN_RUNS);
        printf("plan_build over %u synthetic cgroups (%u slices x %u services, mixed classes): median %.2f ms "
               "(min %.2f, max %.2f, n=%d; goal <= %.0f ms: %s); plan: %u early, %u late, %u nofreeze entries\n",
               1 + SLICES + SLICES * SERVICES, SLICES, SERVICES, med, ms[0], ms[PLAN_RUNS - 1], PLAN_RUNS,
               GOAL_PLAN_MS, med <= GOAL_PLAN_MS ? "met" : "NOT met", early, late, total - early - late);
        bench_goal("freeze.plan_100k_ms", med, "ms", "<=", GOAL_PLAN_MS);
}

/* Whether the command line asks for part `what` (none named: every part) */
static bool wanted(int argc, char *argv[], const char *what) {
        for (int i = 1; i < argc; i++)
                if (g_str_equal(argv[i], what))
                        return true;
        return argc < 2;
}

/* Usage: bench-freeze [100] [500] [plan] (default: all; 100 and 500 take
 * the fixed cost first) */
int main(int argc, char *argv[]) {
        const char *skip = scratch_skip_reason();
        if (!skip)
                skip = harness_skip_reason();
        if (skip) {
                if (wanted(argc, argv, "plan"))
                        run_plan();
                printf("bench-freeze: freeze figures skipped: %s\n", skip);
                return 77;
        }

        double fixed = wanted(argc, argv, "100") || wanted(argc, argv, "500") ? fixed_cost() : 0;
        if (wanted(argc, argv, "100"))
                (void) run_n(100, fixed);
        if (wanted(argc, argv, "500"))
                (void) run_n(500, fixed);
        if (wanted(argc, argv, "plan"))
                run_plan();
        return 0;
}
