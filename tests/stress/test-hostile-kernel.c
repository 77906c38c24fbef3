/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hostile kernel: garbage in /sys/power/state and mem_sleep, garbage in
 * /proc/meminfo, no wakeup_count, and a state write that blocks. fridged
 * gives clear errors, does not crash, leaves nothing frozen (scratch
 * cgroups with processes in every case), and keeps answering on the bus
 * while the kernel holds it. Prints FIGURE lines.
 */
#include <glib.h>
#include <string.h>

#include "harness.h"
#include "scratch.h"

#define ERR(name) "io.fridge.Fridge1.Error." name

typedef struct Fixture {
        Scratch *s;
        Harness *h;
} Fixture;

typedef struct Case {
        const char *const *fakesys_args;
        const char *const *proc_files;
} Case;

static void setup(Fixture *f, gconstpointer data) {
        const Case *c = data;
        const char *why = scratch_skip_reason();
        if (why) {
                g_test_skip(why);
                return;
        }
        f->s = scratch_new();
        for (int i = 0; i < 4; i++) {
                g_autofree char *name = g_strdup_printf("app%d.service", i);
                scratch_spawn(f->s, scratch_add(f->s, name), NULL);
        }
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n", f->s->root);
        HarnessOptions o = { .config = config, .real_cgroups = true, .fakesys_args = c ? c->fakesys_args : NULL,
                             .proc_files = c ? c->proc_files : NULL };
        f->h = harness_new(&o);
}

static void teardown(Fixture *f, gconstpointer data) {
        if (f->h && g_test_failed())
                harness_dump_fridged_log(f->h);
        harness_free(f->h);
        scratch_free(f->s);
}

static void assert_none_frozen(Fixture *f) {
        for (guint i = 0; i < f->s->cgroups->len; i++)
                if (scratch_is_frozen(f->s, f->s->cgroups->pdata[i]))
                        g_error("%s is still frozen", (char *) f->s->cgroups->pdata[i]);
}

/* fridged is still there and answering */
static void assert_alive(Harness *h) {
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_nonnull(state);
}

/* Sleep refused up front, with a message that names the file */
static void expect_refused(Fixture *f, const char *kind, const char *error, const char *says) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        int r = harness_sleep(f->h, kind, &cycle, &err, &msg, NULL);
        if (r == 0)
                g_error("Sleep(%s) was accepted", kind);
        g_print("FIGURE: hostile-kernel: %s -> %s: %s\n", kind, err, msg);
        g_assert_cmpstr(err, ==, error);
        if (!strstr(msg, says))
                g_error("'%s' does not say '%s'", msg, says);
        assert_none_frozen(f);
        assert_alive(f->h);
}

static char *run_cycle(Fixture *f, const char *kind, char **ret_message) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        char *result = NULL;
        if (harness_sleep(f->h, kind, &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep: %s: %s", err, msg);
        g_assert_true(harness_wait_finished(f->h, cycle, 30000, &result, NULL, ret_message));
        assert_none_frozen(f);
        assert_alive(f->h);
        return result;
}

static void test_garbage_state(Fixture *f, gconstpointer data) {
        if (!f->h)
                return;
        harness_control(f->h, "set power/state fr\001eeze m[em");
        g_autofree char *can = harness_get_string(f->h, "CanSuspend");
        g_autofree char *reason = harness_get_string(f->h, "CanSuspendReason");
        g_print("FIGURE: hostile-kernel: garbage in state: CanSuspend=%s (%s)\n", can, reason);
        g_assert_cmpstr(can, ==, "na");
        expect_refused(f, "suspend", ERR("NotSupported"), "/sys/power/state");
}

static void test_garbage_mem_sleep(Fixture *f, gconstpointer data) {
        if (!f->h)
                return;
        harness_control(f->h, "set power/mem_sleep s2idle [[deep");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, "mem-sleep", "s", "deep", NULL), <, 0);
        g_print("FIGURE: hostile-kernel: garbage in mem_sleep, Sleep(mem-sleep=deep) -> %s: %s\n", err, msg);
        g_assert_cmpstr(err, ==, ERR("NotSupported"));
        g_assert_nonnull(strstr(msg, "mem_sleep"));
        /* without asking for a mode the kernel's own is used: the cycle runs */
        g_autofree char *message = NULL;
        g_autofree char *result = run_cycle(f, "suspend", &message);
        g_assert_cmpstr(result, ==, "done");
}

static void test_garbage_meminfo(Fixture *f, gconstpointer data) {
        if (!f->h)
                return;
        g_autofree char *message = NULL;
        g_autofree char *result = run_cycle(f, "suspend", &message);
        g_print("FIGURE: hostile-kernel: garbage in /proc/meminfo: cycle %s (%s)\n", result, message);
        /* progress cannot be measured, but the flush itself does not need it */
        g_assert_cmpstr(result, ==, "done");
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &log, NULL, NULL));
        g_assert_nonnull(strstr(log, "meminfo"));
}

static void test_no_wakeup_count(Fixture *f, gconstpointer data) {
        if (!f->h)
                return;
        g_autofree char *message = NULL;
        g_autofree char *result = run_cycle(f, "suspend", &message);
        g_print("FIGURE: hostile-kernel: no wakeup_count: cycle %s (%s)\n", result, message);
        g_assert_cmpstr(result, ==, "done");
        g_auto(GStrv) lines = harness_fakesys_log_lines(f->h);
        for (char **l = lines; *l; l++)
                g_assert_false(g_str_has_prefix(*l, "power/wakeup_count"));
}

/* The state write blocks (a stuck driver): the loop keeps answering, State
 * says sleeping, and the cycle ends when the write returns */
static void test_blocking_state_write(Fixture *f, gconstpointer data) {
        if (!f->h)
                return;
        harness_control(f->h, "hold-write power/state");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, NULL), ==, 0);
        int64_t end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC, worst = 0;
        unsigned reads = 0, sleeping = 0;
        while (g_get_monotonic_time() < end) {
                int64_t t0 = g_get_monotonic_time();
                g_autofree char *state = harness_get_string(f->h, "State");
                worst = MAX(worst, g_get_monotonic_time() - t0);
                reads++;
                sleeping += g_str_equal(state, "sleeping");
                g_usleep(50 * 1000);
        }
        g_print("FIGURE: hostile-kernel: state write held 5 s: %u State reads answered, %u of them 'sleeping', "
                "slowest %.1f ms\n", reads, sleeping, (double) worst / 1000);
        g_assert_cmpuint(sleeping, >, reads / 2);
        g_assert_cmpint(worst, <, G_USEC_PER_SEC);
        harness_control(f->h, "release-write power/state");
        g_autofree char *result = NULL;
        g_assert_true(harness_wait_finished(f->h, cycle, 30000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "done");
        assert_none_frozen(f);
}

static const char *const no_wakeup_count[] = { "--no-wakeup-count", NULL };
static const char *const bad_meminfo[] = { "meminfo", "Dirty: lots\nWriteback: \xff\xfe kB\n", NULL };

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        static const Case wc = { .fakesys_args = no_wakeup_count }, mi = { .proc_files = bad_meminfo };
#define ADD(path, c, fn) g_test_add("/hostile-kernel/" path, Fixture, c, setup, fn, teardown)
        ADD("garbage-state", NULL, test_garbage_state);
        ADD("garbage-mem-sleep", NULL, test_garbage_mem_sleep);
        ADD("garbage-meminfo", &mi, test_garbage_meminfo);
        ADD("no-wakeup-count", &wc, test_no_wakeup_count);
        ADD("blocking-state-write", NULL, test_blocking_state_write);
        return g_test_run();
}
