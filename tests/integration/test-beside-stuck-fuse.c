/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unit suite does not depend on the host's mounts: it runs to the end,
 * and passes, while a FUSE mount elsewhere on the machine is stuck with
 * dirty data (slowfs, held: any sync() of the whole machine, or a syncfs()
 * of that mount, waits until it is released). Before, /flush's
 * job-without-mount-table called sync() and hung on such a machine.
 */
#include <glib.h>
#include <stdio.h>
#include <sys/wait.h>

#include "harness.h"

#define UNIT_SUITE_MS (8 * 60 * 1000)        /* within the meson timeout below it */

static void test_unit_suite(void) {
        const char *why = harness_skip_reason();
        const char *build = harness_env("FRIDGE_BUILD_ROOT");
        g_autofree char *meson = g_find_program_in_path("meson");
        if (!why && (!build || !meson))
                why = "FRIDGE_BUILD_ROOT is not set or meson is not in PATH";
        if (!why && !harness_env("SLOWFS"))
                why = "SLOWFS is not set";
        if (why) {
                g_test_skip(why);
                return;
        }
        HarnessOptions o = { .slowfs = true };
        g_autoptr(Harness) h = harness_new(&o);
        /* dirty data held: a sync() of the machine would wait on it */
        if (!harness_slowfs_stall_flushes(h)) {
                g_test_skip("syncfs() of a held slowfs does not wait on this kernel");
                return;
        }
        char *argv[] = { meson, (char *) "test", (char *) "-C", (char *) build, (char *) "--no-rebuild",
                         (char *) "--suite", (char *) "unit", (char *) "--logbase", (char *) "unit-beside-stuck-fuse",
                         (char *) "--num-processes", (char *) "2", NULL };
        g_autofree char *out = NULL;
        int status = harness_run(argv, UNIT_SUITE_MS, &out);
        harness_slowfs_release(h);
        if (status != 0)
                g_test_message("%s", out ? out : "");
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        g_test_add_func("/beside-stuck-fuse/unit-suite", test_unit_suite);
        return g_test_run();
}
