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
 * The real fridged on a private bus and fakesys, through the integration
 * harness; the scratch cgroups hold only processes this program started and
 * are thawed, killed and removed at exit (scratch.c). Needs root and a
 * cgroup v2 mount with the freezer (exit 77 otherwise).
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "harness.h"
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
}

int main(void) {
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
        return 0;
}
