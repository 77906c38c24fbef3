/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridged as systemd runs it from fridged.service: Type=notify and
 * WatchdogSec=. The harness plays the service manager's part: it gives
 * fridged a NOTIFY_SOCKET and WATCHDOG_USEC and reads what comes back.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "harness-private.h"

/* 400 ms: sd-event pings from the loop every 200 to 300 ms */
#define WATCHDOG_USEC 400000

static void test_watchdog(void) {
        HarnessOptions o = { .watchdog_usec = WATCHDOG_USEC };
        g_autoptr(Harness) h = harness_new(&o);

        /* An idle fridged keeps pinging: several periods, each ping in time
         * (a missed one within a whole period is what systemd kills for) */
        for (int i = 0; i < 5; i++)
                if (!harness_wait_notify(h, "WATCHDOG=1", WATCHDOG_USEC / 1000)) {
                        harness_dump_fridged_log(h);
                        g_error("no WATCHDOG=1 within %d ms (ping %d)", WATCHDOG_USEC / 1000, i + 1);
                }

        /* And while a cycle runs (dry-run: every phase, no state write) */
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, "dry-run", "b", 1, NULL), ==, 0);
        g_assert_true(harness_wait_notify(h, "WATCHDOG=1", WATCHDOG_USEC / 1000));
        g_autofree char *result = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 30000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "dry-run");
        g_assert_true(harness_wait_notify(h, "WATCHDOG=1", WATCHDOG_USEC / 1000));
        g_assert_cmpint(harness_stop(h), ==, 0);
}

/* A dropped bus connection is a failure (Restart=on-failure restarts
 * fridged), said in the log, with nothing left frozen */
static void test_bus_lost(void) {
        g_autoptr(Harness) h = harness_new(NULL);
        g_assert_cmpint(kill(h->dbus_pid, SIGKILL), ==, 0);
        g_assert_cmpint(harness_wait_pid(h->dbus_pid, 5000), !=, -1);
        h->dbus_pid = 0;
        int status = harness_wait_pid(h->fridged_pid, 10000);
        h->fridged_pid = 0;
        if (status == -1)
                g_error("fridged did not exit within 10 s of losing its bus");
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        if (!WIFEXITED(status) || WEXITSTATUS(status) == 0)
                g_error("fridged exited with status 0x%x after losing its bus; log:\n%s", status, log);
        if (!strstr(log, "The bus connection was lost"))
                g_error("fridged's log does not say the bus was lost:\n%s", log);
}

/* PID1 joins the system bus only once the bus runs, and fridged can be
 * there first: SleepFreeze is unknown until systemd comes, then follows
 * its version (python3-dbusmock's systemd template says "v246") */
static char *wait_sleep_freeze_known(Harness *h, int timeout_ms) {
        for (int waited = 0;; waited += 50) {
                char *v = harness_get_string(h, "SleepFreeze");
                if (!g_str_has_prefix(v, "unknown: ") || waited >= timeout_ms)
                        return v;
                g_free(v);
                g_usleep(50 * 1000);
        }
}

static void test_systemd_joins_later(void) {
        g_autofree char *out = NULL;
        char *probe[] = { "/usr/bin/python3", "-c", "import dbusmock", NULL };
        if (harness_run(probe, 30000, &out) != 0) {
                g_test_skip("python3-dbusmock is not installed");
                return;
        }
        g_autoptr(Harness) h = harness_new(NULL);
        g_autofree char *before = harness_get_string(h, "SleepFreeze");
        g_assert_true(g_str_has_prefix(before, "unknown: "));

        g_autofree char *env0 = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", h->bus_address);
        const char *const env[] = { env0, NULL };
        char *argv[] = { "/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "systemd", NULL };
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .extra_fd = -1,
                           .env = env };
        pid_t mock = harness_spawn(&s);
        g_autofree char *after = wait_sleep_freeze_known(h, 20000);
        harness_stop_pid(&mock, 5000);
        g_test_message("SleepFreeze before systemd: %s; after: %s", before, after);
        g_assert_true(g_str_has_prefix(after, "not affected: systemd 246 "));
        g_assert_cmpint(harness_stop(h), ==, 0);
}

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        g_test_add_func("/service/watchdog", test_watchdog);
        g_test_add_func("/service/bus-lost", test_bus_lost);
        g_test_add_func("/service/systemd-joins-later", test_systemd_joins_later);
        return g_test_run();
}
