/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Authorization: every method that changes something asks polkit about a
 * caller other than root (tests/polkit/polkit-standin answers from a
 * table on the private bus); read-only calls need nothing. Clients run as
 * uid 65534 through setpriv.
 */
#include <glib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

typedef HarnessFixture Fixture;

static Harness *start(Fixture *f, const char *polkit_table) {
        HarnessOptions o = { .open_bus = true, .polkit_table = polkit_table };
        return f->h = harness_new(&o);
}

/* SetClass has no fridgectl command: busctl, as uid 65534 */
static void expect_set_class_denied(Harness *h) {
        g_autofree char *cmd = g_strdup_printf("exec setpriv --reuid=65534 --regid=65534 --clear-groups -- busctl "
                                               "--address='%s' call io.fridge.Fridge1 /io/fridge/Fridge1 "
                                               "io.fridge.Fridge1 SetClass ss user.slice late 2>&1", h->bus_address);
        char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
        g_autofree char *out = NULL;
        int status = harness_run(sh, 20000, &out);
        g_test_message("SetClass as nobody -> %d: %s", status, out);
        g_assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0);
        g_assert_nonnull(strstr(out, "Access denied")); /* busctl prints errno text, not the message */
}

static char *polkit_log(Harness *h) {
        char *text = NULL;
        g_assert_true(g_file_get_contents(h->polkit_log, &text, NULL, NULL));
        return text;
}

static void assert_nothing_happened(Harness *h) {
        g_autofree char *log = harness_fakesys_log(h);
        g_assert_cmpstr(log, ==, "");
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "");
}

static const char *const suspend_dry[] = { "suspend", "--dry-run", "--no-progress", NULL };

static void test_no_polkit(Fixture *f, gconstpointer data) {
        Harness *h = start(f, NULL);
        harness_expect_denied_as_nobody(h, suspend_dry, "polkit is not running");
        assert_nothing_happened(h);
}

static void test_polkit_says_no(Fixture *f, gconstpointer data) {
        Harness *h = start(f, "* * no\n");
        harness_expect_denied_as_nobody(h, suspend_dry, "uid 65534 is not authorized for io.fridge.sleep");
        const char *const hibernate[] = { "hibernate", "--no-progress", NULL };
        harness_expect_denied_as_nobody(h, hibernate, "io.fridge.hibernate");
        const char *const cancel[] = { "cancel", NULL };
        harness_expect_denied_as_nobody(h, cancel, "io.fridge.sleep");
        const char *const hold[] = { "hold", "early", "--", "true", NULL };
        harness_expect_denied_as_nobody(h, hold, "io.fridge.inhibit");
        const char *const inhibit[] = { "inhibit", "--mode=block", "--why=test", "--", "true", NULL };
        harness_expect_denied_as_nobody(h, inhibit, "io.fridge.inhibit");
        expect_set_class_denied(h);
        assert_nothing_happened(h);

        g_autofree char *log = polkit_log(h);
        g_test_message("polkit was asked:\n%s", log);
        g_assert_nonnull(strstr(log, "io.fridge.sleep 65534 no"));
        g_assert_nonnull(strstr(log, "io.fridge.hibernate 65534 no"));
        g_assert_nonnull(strstr(log, "io.fridge.inhibit 65534 no"));
        g_assert_nonnull(strstr(log, "io.fridge.configure 65534 no"));
}

static void test_challenge(Fixture *f, gconstpointer data) {
        Harness *h = start(f, "* * challenge\n");
        harness_expect_denied_as_nobody(h, suspend_dry, "authentication is required");
}

/* polkit's yes is what lets an ordinary user sleep, and only for what the
 * table names (a dry run also needs io.fridge.manage) */
static void test_polkit_says_yes(Fixture *f, gconstpointer data) {
        Harness *h = start(f, "io.fridge.sleep 65534 yes\nio.fridge.manage 65534 yes\n");
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl_nobody_exit(h, &out, suspend_dry), ==, 0);
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "dry-run");
        const char *const hibernate[] = { "hibernate", "--dry-run", "--no-progress", NULL };
        harness_expect_denied_as_nobody(h, hibernate, "io.fridge.hibernate");
}

/* Reading needs nothing: status and the plan work for anyone, unasked */
static void test_reading_is_free(Fixture *f, gconstpointer data) {
        Harness *h = start(f, "* * no\n");
        g_autofree char *status = NULL, *plan = NULL;
        const char *const st[] = { "status", NULL };
        const char *const pl[] = { "plan", NULL };
        g_assert_cmpint(harness_fridgectl_nobody_exit(h, &status, st), ==, 0);
        g_assert_cmpint(harness_fridgectl_nobody_exit(h, &plan, pl), ==, 0);
        g_autofree char *log = polkit_log(h);
        g_assert_cmpstr(log, ==, "");
}

/* Root is never asked about */
static void test_root_passes(Fixture *f, gconstpointer data) {
        Harness *h = start(f, "* * no\n");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, "dry-run", "b", 1, NULL), ==, 0);
        g_assert_true(harness_wait_finished(h, cycle, 15000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "dry-run");
        g_autofree char *log = polkit_log(h);
        g_assert_cmpstr(log, ==, "");
}

#define ADD(path, fn) g_test_add("/polkit/" path, Fixture, NULL, harness_fixture_setup, fn, harness_fixture_teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        ADD("no-polkit", test_no_polkit);
        ADD("polkit-says-no", test_polkit_says_no);
        ADD("challenge", test_challenge);
        ADD("polkit-says-yes", test_polkit_says_yes);
        ADD("reading-is-free", test_reading_is_free);
        ADD("root-passes", test_root_passes);
        return g_test_run();
}
