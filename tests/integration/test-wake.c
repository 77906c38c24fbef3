/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wake reasons end to end: fridged on fakesys runs under umockdev's preload
 * library with a testbed of wakeup sources (HarnessOptions.umockdev_dir),
 * which this test builds (under the preload library too, see main()).
 * While fakesys holds the simulated sleep, the test moves a source's
 * event_count in the testbed and ends the sleep; the Resumed signal, the
 * LastWakeReason property and `fridgectl status` must all name the source.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <umockdev.h>

#include "fridge-config.h"
#include "harness.h"
#include "umockdev-preload.h"

typedef struct Fixture {
        UMockdevTestbed *tb;
        char *rtc_source;       /* syspath of the RTC's wakeup source */
        Harness *h;
} Fixture;

static char *add_device(UMockdevTestbed *tb, const char *subsystem, const char *name, const char *driver) {
        char *path = umockdev_testbed_add_device(tb, subsystem, name, NULL, NULL, NULL);
        g_autofree char *target = g_strdup_printf("../../../bus/%s/drivers/%s", subsystem, driver);
        umockdev_testbed_set_attribute_link(tb, path, "driver", target);
        return path;
}

static void fixture_setup(Fixture *f, gconstpointer data) {
        f->tb = umockdev_testbed_new();
        g_autofree char *rtc = add_device(f->tb, "platform", "00:04", "rtc_cmos");
        g_autofree char *button = add_device(f->tb, "acpi", "PNP0C0C:00", "button");
        f->rtc_source = umockdev_testbed_add_device(f->tb, "wakeup", "wakeup0", rtc, "name", "rtc0",
                                                    "event_count", "3", NULL, NULL);
        g_free(umockdev_testbed_add_device(f->tb, "wakeup", "wakeup1", button, "name", "PNP0C0C:00",
                                           "event_count", "1", NULL, NULL));
        g_assert_nonnull(f->rtc_source);

        /* the sleep lasts until the test ends it */
        static const char *const fakesys_args[] = { "--sleep-ms=60000", NULL };
        g_autofree char *root = umockdev_testbed_get_root_dir(f->tb);
        HarnessOptions o = { .fakesys_args = fakesys_args, .umockdev_dir = root };
        f->h = harness_new(&o);
}

static void fixture_teardown(Fixture *f, gconstpointer data) {
        if (g_test_failed())
                harness_dump_fridged_log(f->h);
        int status = harness_stop(f->h);
        if (status != 0) {
                g_test_message("fridged did not exit 0 after SIGTERM (wait status %d)", status);
                harness_dump_fridged_log(f->h);
                g_test_fail();
        }
        harness_free(f->h);
        g_free(f->rtc_source);
        g_object_unref(f->tb);
}

/* One suspend whose sleep `during` moves along (called once fridged is in
 * the state write); returns the wake reason of its Resumed signal. */
static char *cycle_with(Fixture *f, const char *during) {
        Harness *h = f->h;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL;
        uint64_t cycle = 0, id = 0, slept = 0;
        const char *reason = NULL;

        harness_control(h, "clear-log");
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep: %s: %s", err, msg);
        if (!harness_wait_log_line(h, "power/state mem sleeping", 15000))
                g_error("fridged did not reach the state write within 15 s");
        if (g_str_equal(during, "rtc")) {
                umockdev_testbed_set_attribute(f->tb, f->rtc_source, "event_count", "4");
                harness_control(h, "wakeup-irq 8");
        } else {
                harness_control(h, "set power/suspend_stats/last_failed_dev 0000:00:1f.3");
                harness_control(h, "set power/suspend_stats/last_failed_errno -16");
                harness_control(h, "wakeup");
        }
        g_assert_true(harness_wait_finished(h, cycle, 15000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "done");

        int i = harness_find_signal(h, "Resumed", true, cycle);
        g_assert_cmpint(i, >=, 0);
        sd_bus_message *m = ((HarnessSignal *) g_ptr_array_index(h->signals, i))->message;
        sd_bus_message_rewind(m, true);
        g_assert_cmpint(sd_bus_message_read(m, "tts", &id, &slept, &reason), >, 0);
        return g_strdup(reason);
}

/* `fridgectl status` shows the property as it is */
static void assert_status_shows(Harness *h, const char *reason) {
        const char *fridgectl = harness_env("FRIDGECTL");
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", h->bus_address);
        char *argv[] = { (char *) fridgectl, a_bus, (char *) "status", NULL };
        g_autofree char *out = NULL;
        g_autofree char *line = g_strdup_printf("%16s: %s\n", "LastWakeReason", reason);

        g_assert_nonnull(fridgectl);
        int status = harness_run(argv, 10000, &out);
        if (status != 0 || !strstr(out, line))
                g_error("fridgectl status (wait status %d) has no line '%s':\n%s", status, line, out);
}

/* A cycle ended by `during`: its reason in Resumed, LastWakeReason and
 * `fridgectl status` */
static void assert_reason(Fixture *f, const char *during, const char *want) {
        g_autofree char *reason = cycle_with(f, during);
        g_assert_cmpstr(reason, ==, want);
        g_autofree char *prop = harness_get_string(f->h, "LastWakeReason");
        g_assert_cmpstr(prop, ==, want);
        assert_status_shows(f->h, want);
}

static void test_wake_reason(Fixture *f, gconstpointer data) {
        assert_reason(f, "rtc", "rtc0 on 00:04 (rtc_cmos); irq 8");
        /* no source moved and no IRQ, but a device failed on the way */
        assert_reason(f, "failure", "unknown; last failed device: 0000:00:1f.3 (errno -16)");
}

int main(int argc, char **argv) {
        /* umockdev builds a testbed only where its library redirects /sys */
        umockdev_preload_self_or_skip(argv);
        harness_init(&argc, &argv);
        if (!harness_env("FRIDGECTL")) {
                printf("SKIP: FRIDGECTL is not set: fridgectl was not built\n");
                return 77;
        }
        g_test_add("/wake/reason", Fixture, NULL, fixture_setup, test_wake_reason, fixture_teardown);
        return g_test_run();
}
