/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridged's configuration as systemd's daemons read theirs: the search
 * path (etc, run, usr/local/lib, usr/lib under --config-root) with
 * drop-ins merged by name and masked, time spans, SIGHUP's reload (all or
 * nothing), fridgectl cat-config, and systemd's sleep.conf Allow*=.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static void write_under(const char *dir, const char *rel, const char *text) {
        g_autofree char *path = g_build_filename(dir, rel, NULL);
        g_autofree char *parent = g_path_get_dirname(path);
        g_assert_cmpint(g_mkdir_with_parents(parent, 0755), ==, 0);
        g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static bool log_has(Harness *h, const char *needle, int timeout_ms) {
        for (int waited = 0;; waited += 20) {
                g_autofree char *log = NULL;
                if (g_file_get_contents(h->fridged_log, &log, NULL, NULL) && strstr(log, needle))
                        return true;
                if (waited >= timeout_ms)
                        return false;
                g_usleep(20000);
        }
}

/* A dry run's "settings:" line, which lists what the cycle obeys */
static void expect_setting(Harness *h, const char *setting) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, "dry-run", "b", 1, NULL), ==, 0);
        g_assert_true(harness_wait_finished(h, cycle, 30000, &result, NULL, NULL));
        g_autofree char *line = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " started", cycle);
        g_assert_true(log_has(h, line, 5000));
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        const char *start = strstr(log, line);
        const char *end = strchr(start, '\n');
        g_autofree char *mine = g_strndup(start, end ? (gsize) (end - start) : strlen(start));
        if (!strstr(mine, setting))
                g_error("cycle %" G_GUINT64_FORMAT " does not run with %s: %s", cycle, setting, mine);
}

/* run/ outranks etc/'s fridge.conf; a drop-in in run/ hides usr/lib's of
 * the same name, an empty one in etc/ masks usr/lib's; time spans */
static void test_dropins(void) {
        HarnessOptions o = { .config = "[Freeze]\nTimeoutMs=3s\n[Flush]\nTimeoutMs=4s\n" };
        g_autoptr(Harness) h = harness_new(&o);
        g_autofree char *root = g_build_filename(h->dir, "config-root", NULL);
        g_autofree char *vendor = g_build_filename(h->dir, "vendor", NULL);
        write_under(vendor, "fridge.conf.d/50-x.conf", "[Freeze]\nTimeoutMs=9s\n");
        write_under(root, "run/fridge/fridge.conf.d/50-x.conf", "[Freeze]\nTimeoutMs=1min 30s\n");
        write_under(vendor, "fridge.conf.d/60-y.conf", "[Flush]\nTimeoutMs=8s\n");
        write_under(h->conf_dir, "fridge.conf.d/60-y.conf", "");
        harness_kill_fridged(h, SIGTERM);
        harness_restart_fridged(h);
        expect_setting(h, "freeze-timeout-ms=90000");
        expect_setting(h, "flush-timeout-ms=4000");
}

/* SIGHUP: the next cycle runs by the new file; a broken one changes
 * nothing and the log names its file:line */
static void test_reload(void) {
        HarnessOptions o = { .config = "[Freeze]\nTimeoutMs=3s\n" };
        g_autoptr(Harness) h = harness_new(&o);
        expect_setting(h, "freeze-timeout-ms=3000");
        write_under(h->conf_dir, "fridge.conf.d/10-new.conf", "[Freeze]\nTimeoutMs=7s\n");
        harness_kill_fridged(h, SIGHUP);
        g_assert_true(log_has(h, "Reloaded the configuration", 10000));
        expect_setting(h, "freeze-timeout-ms=7000");

        write_under(h->conf_dir, "fridge.conf.d/20-bad.conf", "# broken\n[Freeze]\nTimeoutMs=2 fortnights\n");
        harness_kill_fridged(h, SIGHUP);
        g_assert_true(log_has(h, "Reload refused", 10000));
        g_autofree char *where = g_strdup_printf("%s/fridge.conf.d/20-bad.conf:3: [Freeze] TimeoutMs=2 fortnights is "
                                                 "not valid", h->conf_dir);
        g_assert_true(log_has(h, where, 1000));
        expect_setting(h, "freeze-timeout-ms=7000");
}

static uint64_t suspend_done(Harness *h) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL;
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        g_assert_true(harness_wait_finished(h, cycle, 30000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "done");
        return cycle;
}

/* SIGHUP while a cycle is open (held in prepare by a delay inhibitor):
 * that cycle goes on by the file it started with ([Sleep] MemSleep=s2idle,
 * written to the kernel after the wait), the next one by the reloaded
 * file (MemSleep= empty: the kernel's own mode, deep, left alone) */
static void test_reload_spares_running_cycle(void) {
        HarnessOptions o = { .config = "[Sleep]\nMemSleep=s2idle\n[Delay]\nTimeoutMs=20s\n" };
        g_autoptr(Harness) h = harness_new(&o);
        int fd = harness_inhibit_delay(h, "holds the cycle open across a reload");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL;
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        write_under(h->conf_dir, "fridge.conf.d/10-reload.conf", "[Sleep]\nMemSleep=\n");
        harness_kill_fridged(h, SIGHUP);
        g_assert_true(log_has(h, "Reloaded the configuration; the running cycle keeps the settings it started with",
                              10000));
        g_autofree char *phase = harness_get_string(h, "Phase");
        g_assert_cmpstr(phase, ==, "prepare"); /* still held: nothing written to the kernel yet */
        close(fd);
        g_assert_true(harness_wait_finished(h, cycle, 30000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "done");
        g_autofree char *first = harness_fakesys_log(h);
        if (!strstr(first, "power/mem_sleep s2idle ok"))
                g_error("the running cycle took the reloaded MemSleep=; the kernel saw:\n%s", first);

        harness_control(h, "clear-log");
        suspend_done(h);
        g_autofree char *next = harness_fakesys_log(h);
        if (strstr(next, "power/mem_sleep s2idle"))
                g_error("the cycle after the reload kept the old MemSleep=s2idle; the kernel saw:\n%s", next);
        g_assert_nonnull(strstr(next, "power/state mem ok"));
}

/* cat-config: each file in effect under "# PATH", in order; masked noted */
static void test_cat_config(void) {
        g_autoptr(Harness) h = harness_new(NULL);
        g_autofree char *root = g_build_filename(h->dir, "config-root", NULL);
        write_under(root, "usr/lib/fridge/fridge.conf", "[Sleep]\nRetries=1\n");
        write_under(root, "etc/fridge/fridge.conf.d/10-a.conf", "[Freeze]\nTimeoutMs=30s");
        write_under(root, "usr/lib/fridge/fridge.conf.d/20-b.conf", "[Flush]\nTimeoutMs=5s\n");
        write_under(root, "run/fridge/fridge.conf.d/20-b.conf", "");
        g_autofree char *arg = g_strdup_printf("--root=%s", root);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 10000, &out, "cat-config", arg, NULL), ==, 0);
        g_autofree char *want = g_strdup_printf("# %s/usr/lib/fridge/fridge.conf\n[Sleep]\nRetries=1\n\n"
                                                "# %s/etc/fridge/fridge.conf.d/10-a.conf\n[Freeze]\nTimeoutMs=30s\n\n"
                                                "# %s/run/fridge/fridge.conf.d/20-b.conf (masked: empty or a link to "
                                                "/dev/null)\n", root, root, root);
        g_assert_cmpstr(out, ==, want);
}

/* sleep.conf's AllowSuspend=no: CanSuspend says no, as logind would, and
 * Sleep is refused naming the key and the file */
static void test_allow_suspend(void) {
        HarnessOptions o = { .sleep_conf = "[Sleep]\nAllowSuspend=no\n" };
        g_autoptr(Harness) h = harness_new(&o);
        g_autofree char *can = harness_get_string(h, "CanSuspend");
        g_assert_cmpstr(can, ==, "no");
        g_autofree char *reason = harness_get_string(h, "CanSuspendReason");
        g_assert_nonnull(strstr(reason, "Sleep mode \"suspend\" is disabled by configuration (AllowSuspend=no in "));
        g_autofree char *why_h = harness_get_string(h, "CanHibernateReason"); /* hibernation stays allowed */
        g_assert_null(strstr(why_h, "disabled by configuration"));
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, "dry-run", "b", 1, NULL), <, 0);
        g_assert_nonnull(strstr(err, "NotSupported"));
        g_assert_nonnull(strstr(msg, "AllowSuspend=no in "));
        g_assert_nonnull(strstr(msg, "sleep-root/etc/systemd/sleep.conf:2"));
}

/* Can* read sleep.conf and /sys/power once per call (GetAll's three
 * kinds share them), never from one call to the next: a change between
 * two reads is seen by the second */
static void test_allow_suspend_fresh(void) {
        HarnessOptions o = { .sleep_conf = "[Sleep]\nAllowSuspend=no\n" };
        g_autoptr(Harness) h = harness_new(&o);
        g_autofree char *before = harness_get_string(h, "CanSuspend");
        g_assert_cmpstr(before, ==, "no");
        write_under(h->dir, "sleep-root/etc/systemd/sleep.conf", "[Sleep]\nAllowSuspend=yes\n");
        g_autofree char *after = harness_get_string(h, "CanSuspend");
        g_assert_cmpstr(after, ==, "yes");
}

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        g_test_add_func("/config/dropins", test_dropins);
        g_test_add_func("/config/reload", test_reload);
        g_test_add_func("/config/reload-spares-running-cycle", test_reload_spares_running_cycle);
        g_test_add_func("/config/cat-config", test_cat_config);
        g_test_add_func("/config/allow-suspend", test_allow_suspend);
        g_test_add_func("/config/allow-suspend-fresh", test_allow_suspend_fresh);
        return g_test_run();
}
