/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Figures for systemd's sleep path: the time `fridgectl hook pre suspend`
 * adds to a sleep (systemd-sleep waits for it before the state write), and
 * what `hook post` takes before the desktop runs again, with 0 and with 100
 * scratch cgroups (one sleeping process each) under the freeze root, beside
 * a nofreeze one so that each is frozen on its own.
 * Median of 20 each, wall time of the fridgectl process (exec, connect, the
 * Hook call: prepare, flush, freeze-early, flush-again, freeze-late).
 *
 * Then the worst case against the hook's budget (the default [Sleep]
 * HookTimeoutMs): one `fridgectl hook pre` while every stage it reaches runs
 * to its own timeout (a delay inhibitor never released, both flushes held
 * by slowfs with [Flush] OnTimeout=continue: 5 + 30 + 30 s, more than the
 * budget), from its start to its return; "met" when that fits in the
 * budget and nothing is left frozen when it returns. Needs slowfs whose
 * syncfs() waits (skipped otherwise).
 *
 * The real fridged on a private bus and fakesys, through the integration
 * harness; the scratch cgroups hold only processes this program started and
 * are thawed, killed and removed at exit (scratch.c). Needs root and a
 * cgroup v2 mount with the freezer (exit 77 otherwise).
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "fridge-config.h"
#include "fridge-limits.h"

#include "harness.h"
#include "figure.h"
#include "median.h"
#include "scratch.h"

#define RUNS 20
#define CGROUPS 100

/* One fridgectl hook WHEN suspend; its wall time in ms */
static double hook_ms(Harness *h, const char *when) {
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", h->bus_address);
        char *argv[] = { (char *) harness_env("FRIDGECTL"), addr, (char *) "--no-progress", (char *) "hook",
                         (char *) when, (char *) "suspend", NULL };
        int64_t t0 = g_get_monotonic_time();
        int status = harness_run(argv, 60000, NULL);
        double ms = (double) (g_get_monotonic_time() - t0) / 1000.0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                g_error("fridgectl hook %s failed (status %d)", when, status);
        return ms;
}

static void measure(Harness *h, unsigned n_cgroups) {
        double pre[RUNS], post[RUNS];
        for (int i = 0; i < RUNS; i++) {
                pre[i] = hook_ms(h, "pre");
                post[i] = hook_ms(h, "post");
                uint64_t cycle = harness_get_u64(h, "CycleId");
                g_autofree char *result = NULL;
                if (!harness_wait_finished(h, cycle, 30000, &result, NULL, NULL) || g_strcmp0(result, "done") != 0)
                        g_error("cycle %" G_GUINT64_FORMAT " did not finish done", cycle);
        }
        /* median() sorts: min and max are read after it */
        double pre_median = median(pre, RUNS), post_median = median(post, RUNS);
        printf("hook pre  with %3u cgroups: median %7.2f ms (min %.2f, max %.2f)\n", n_cgroups, pre_median, pre[0],
               pre[RUNS - 1]);
        printf("hook post with %3u cgroups: median %7.2f ms (min %.2f, max %.2f)\n", n_cgroups, post_median,
               post[0], post[RUNS - 1]);
        g_autofree char *pre_key = g_strdup_printf("hook.pre_%u_cgroups_ms", n_cgroups);
        g_autofree char *post_key = g_strdup_printf("hook.post_%u_cgroups_ms", n_cgroups);
        bench_figure(pre_key, pre_median, "ms");
        bench_figure(post_key, post_median, "ms");
}

/* A delay inhibitor that is never released, as a client holds one:
 * `fridgectl inhibit --mode=delay -- sleep`, killed by its pid at the end */
static pid_t hold_delay(Harness *h) {
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", h->bus_address);
        char *argv[] = { (char *) harness_env("FRIDGECTL"), addr, (char *) "inhibit", (char *) "--mode=delay",
                         (char *) "--who=bench", (char *) "--why=never done", (char *) "--", (char *) "sleep",
                         (char *) "600", NULL };
        int out = -1;
        pid_t pid = harness_spawn_bg(argv, &out);
        close(out);
        for (int i = 0; i < 500; i++) {
                sd_bus_message *reply = NULL;
                g_autofree char *err = NULL, *msg = NULL;
                if (harness_call(h, FRIDGE_INTERFACE, "ListInhibitors", &reply, &err, &msg, "") == 0) {
                        bool held = sd_bus_message_enter_container(reply, 'a', "(ssssuu)") > 0 &&
                                    sd_bus_message_at_end(reply, false) == 0;
                        sd_bus_message_unref(reply);
                        if (held)
                                return pid;
                }
                g_usleep(10000);
        }
        g_error("the delay inhibitor did not appear");
}

/* A GTest case: the harness takes a failed test for a skip */
static void worst_case(gconstpointer data) {
        Scratch *s = (Scratch *) data;
        if (!harness_env("SLOWFS")) {
                printf("SKIP worst case: SLOWFS is not set\n");
                return;
        }
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n[Flush]\nOnTimeout=continue\n", s->root);
        HarnessOptions o = { .config = config, .classes = "[NoFreeze]\nUnits=zz.service\n", .real_cgroups = true,
                             .slowfs = true };
        g_autoptr(Harness) h = harness_new(&o);
        harness_slowfs_make_dirty(h, 1024 * 1024);
        harness_slowfs_hold(h);
        if (!harness_slowfs_syncfs_blocks(h, 500)) {
                printf("SKIP worst case: syncfs() does not wait for held slowfs on this kernel\n");
                harness_slowfs_release(h);
                return;
        }
        pid_t delay = hold_delay(h);
        unsigned budget = HOOK_TIMEOUT_DEFAULT_MS;
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", h->bus_address);
        char *argv[] = { (char *) harness_env("FRIDGECTL"), addr, (char *) "--no-progress", (char *) "hook",
                         (char *) "pre", (char *) "suspend", NULL };
        int64_t t0 = g_get_monotonic_time();
        int status = harness_run(argv, 120000, NULL);
        double ms = (double) (g_get_monotonic_time() - t0) / 1000.0;
        bool frozen = false;
        for (guint i = 0; i < s->cgroups->len; i++)
                frozen = frozen || scratch_is_frozen(s, s->cgroups->pdata[i]);
        uint64_t cycle = harness_get_u64(h, "CycleId");
        g_autofree char *result = NULL, *error = NULL;
        (void) harness_wait_finished(h, cycle, 10000, &result, &error, NULL);
        bool met = ms <= budget && !frozen && WIFEXITED(status);
        printf("hook pre worst case (delay, flush and flush-again each to its timeout): budget %u ms "
               "([Sleep] HookTimeoutMs default; fridged waits %u ms, fridgectl's call %u ms, its own deadline "
               "%u ms; systemd-sleep's own 90000 ms): Hook(\"pre\") to its return %.0f ms, cycle %s (%s), "
               "%s at return: %s\n",
               budget, hook_pre_wait_ms(budget), hook_call_timeout_ms(budget),
               hook_deadline_ms(budget, HOOK_QUERY_MS), ms, result ? result : "?", error ? error : "?",
               frozen ? "still frozen" : "thawed", met ? "met" : "NOT met");
        bench_goal("hook.pre_worst_case_ms", met ? ms : (double) budget + 1, "ms", "<=", budget);
        (void) kill(delay, SIGKILL);
        (void) harness_wait_pid(delay, 5000);
        harness_slowfs_release(h);
}

int main(int argc, char **argv) {
        const char *why = harness_skip_reason();
        if (!why)
                why = scratch_skip_reason();
        if (!why && !harness_env("FRIDGECTL"))
                why = "FRIDGECTL is not set";
        if (why) {
                printf("SKIP: %s\n", why);
                return 77;
        }
        g_autoptr(Scratch) s = scratch_new();
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n", s->root);
        /* A nofreeze sibling keeps the root mixed: each cgroup is written
         * one by one, the worst case, as in bench-freeze */
        scratch_spawn(s, scratch_add(s, "zz.service"), NULL);
        HarnessOptions o = { .config = config, .classes = "[NoFreeze]\nUnits=zz.service\n", .real_cgroups = true };
        g_autoptr(Harness) h = harness_new(&o);

        printf("fridgectl hook on fakesys, median of %d (the pre time is what the hook adds to a sleep)\n", RUNS);
        measure(h, 0);
        for (unsigned i = 0; i < CGROUPS; i++) {
                g_autofree char *name = g_strdup_printf("s%03u.service", i);
                scratch_spawn(s, scratch_add(s, name), NULL);
        }
        measure(h, CGROUPS);
        g_clear_pointer(&h, harness_free); /* before the scratch cgroups go */
        g_test_init(&argc, &argv, NULL);
        g_test_add_data_func("/bench-hook/worst-case", s, worst_case);
        return g_test_run();
}
