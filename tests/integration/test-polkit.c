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

#include "fridge-config.h"
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

/* ---- CanSleep: what polkit would say, asked without interaction ---- */

/* A block inhibitor of root's, held until the reply is unref'd */
static sd_bus_message *hold_block(Harness *h) {
        g_autofree char *err = NULL, *msg = NULL;
        sd_bus_message *reply = NULL;
        g_assert_cmpint(harness_call(h, FRIDGE_INTERFACE, "Inhibit", &reply, &err, &msg, "sss", "burner",
                                     "writing a disc", "block"), ==, 0);
        return reply;
}

/* `fridgectl [--json] can-sleep KIND` as uid 65534: its output, one line */
static char *can_sleep_as_nobody(Harness *h, bool json, const char *kind) {
        const char *const plain[] = { "can-sleep", kind, NULL };
        const char *const as_json[] = { "--json", "can-sleep", kind, NULL };
        char *out = NULL;
        g_assert_cmpint(harness_fridgectl_nobody_exit(h, &out, json ? as_json : plain), ==, 0);
        g_strchomp(out);
        return out;
}

static void expect_can_sleep(Harness *h, const char *kind, const char *want) {
        g_autofree char *got = can_sleep_as_nobody(h, false, kind);
        g_assert_cmpstr(got, ==, want);
}

static void test_can_sleep_yes(Fixture *f, gconstpointer data) {
        Harness *h = start(f, "io.fridge.sleep 65534 yes\n");
        expect_can_sleep(h, "suspend", "yes");
        g_autofree char *json = can_sleep_as_nobody(h, true, "suspend");
        g_assert_cmpstr(json, ==, "{\"kind\":\"suspend\",\"answer\":\"yes\"}");
        g_autofree char *log = polkit_log(h);
        g_assert_nonnull(strstr(log, "io.fridge.sleep 65534 yes 0\n")); /* never interactive */
        g_assert_null(strstr(log, "io.fridge.ignore-inhibitors"));

        /* a block inhibitor held: sleeping needs leave to ignore it too */
        sd_bus_message *reply = hold_block(h);
        expect_can_sleep(h, "suspend", "no");
        g_autofree char *log2 = polkit_log(h);
        g_assert_nonnull(strstr(log2, "io.fridge.ignore-inhibitors 65534 no 0\n"));
        sd_bus_message_unref(reply); /* closes our copy of the fd: the block ends */
}

static void test_can_sleep_challenge(Fixture *f, gconstpointer data) {
        Harness *h = start(f, "io.fridge.sleep 65534 challenge\nio.fridge.ignore-inhibitors 65534 no\n");
        expect_can_sleep(h, "suspend", "challenge");
        /* past a challenge the next action is asked too: its "no" wins */
        sd_bus_message *reply = hold_block(h);
        expect_can_sleep(h, "suspend", "no");
        g_autofree char *log = polkit_log(h);
        g_assert_nonnull(strstr(log, "io.fridge.sleep 65534 challenge 0\nio.fridge.ignore-inhibitors 65534 no 0\n"));
        sd_bus_message_unref(reply);
}

static void test_can_sleep_no(Fixture *f, gconstpointer data) {
        Harness *h = start(f, "* * no\n");
        expect_can_sleep(h, "suspend", "no");
        g_autofree char *log = polkit_log(h);
        g_assert_nonnull(strstr(log, "io.fridge.sleep 65534 no 0\n"));
        assert_nothing_happened(h);
}

/* Without polkit nobody but root may: "no", not an error */
static void test_can_sleep_no_polkit(Fixture *f, gconstpointer data) {
        Harness *h = start(f, NULL);
        expect_can_sleep(h, "suspend", "no");
}

/* The kernel first: what it does not offer is "na" for anyone, and polkit
 * is not asked; root is "yes" where available, unasked; a bad kind is
 * InvalidArgs naming it */
static void test_can_sleep_root_na(Fixture *f, gconstpointer data) {
        const char *const args[] = { "--states=freeze mem", NULL };
        HarnessOptions o = { .open_bus = true, .polkit_table = "* * yes\n", .fakesys_args = args };
        Harness *h = f->h = harness_new(&o);
        expect_can_sleep(h, "hibernate", "na");
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 20000, &out, "can-sleep", NULL, NULL), ==, 0);
        g_assert_cmpstr(out, ==, "suspend       yes\nhibernate     na\nhybrid-sleep  na\n");
        g_autofree char *log = polkit_log(h);
        g_assert_cmpstr(log, ==, "");

        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_call(h, FRIDGE_INTERFACE, "CanSleep", NULL, &err, &msg, "s", "nap"), !=, 0);
        g_assert_cmpstr(err, ==, "org.freedesktop.DBus.Error.InvalidArgs");
        g_assert_nonnull(strstr(msg, "kind 'nap' is not one of suspend, hibernate, hybrid-sleep"));
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
        ADD("can-sleep-yes", test_can_sleep_yes);
        ADD("can-sleep-challenge", test_can_sleep_challenge);
        ADD("can-sleep-no", test_can_sleep_no);
        ADD("can-sleep-no-polkit", test_can_sleep_no_polkit);
        ADD("can-sleep-root-na", test_can_sleep_root_na);
        return g_test_run();
}
