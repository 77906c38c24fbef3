/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hibernation pre-flight against the real fridged on fakesys, with the
 * /proc/swaps and /proc/meminfo it sees given by the test. The swap
 * "partitions" are the host's /dev/loop0 and /dev/loop1 (7:0 and 7:1): only
 * their device numbers are looked at.
 */
#include <glib.h>
#include <string.h>
#include <sys/stat.h>

#include "fridge-config.h"
#include "harness.h"

#define ERR(name) "io.fridge.Fridge1.Error." name
#define SWAPS_HEADER "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
#define MEMINFO "MemTotal: 2000000 kB\nDirty: 0 kB\nWriteback: 0 kB\nActive(anon): 20000 kB\nInactive(anon): 1000 kB\n"

typedef HarnessFixture Fixture;

static Harness *start_on(Fixture *f, const char *swaps, const char *config, const char *const *fakesys_args) {
        const char *const files[] = { "swaps", swaps, "meminfo", MEMINFO, NULL };
        HarnessOptions o = { .proc_files = files, .config = config, .fakesys_args = fakesys_args };
        return f->h = harness_new(&o);
}

static Harness *start(Fixture *f, const char *swaps, const char *config) {
        return start_on(f, swaps, config, NULL);
}

static bool have_loop_devices(void) {
        struct stat a, b;
        if (stat("/dev/loop0", &a) == 0 && S_ISBLK(a.st_mode) && stat("/dev/loop1", &b) == 0 && S_ISBLK(b.st_mode))
                return true;
        g_test_skip("needs /dev/loop0 and /dev/loop1 to stand for swap partitions");
        return false;
}

/* Refused before anything happens: no flush, no freeze, no kernel write */
static void expect_not_ready(Harness *h, const char *kind, const char *reason_has) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        int r = harness_sleep(h, kind, &cycle, &err, &msg, NULL);
        if (r == 0)
                g_error("Sleep(%s) was accepted (cycle %" G_GUINT64_FORMAT ")", kind, cycle);
        g_test_message("Sleep(%s) -> %s: %s", kind, err, msg);
        g_assert_cmpstr(err, ==, ERR("HibernateNotReady"));
        if (!strstr(msg, reason_has))
                g_error("the error '%s' does not say '%s'", msg, reason_has);

        g_autofree char *log = harness_fakesys_log(h);
        g_assert_cmpstr(log, ==, "");
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_cmpstr(state, ==, "idle");
        g_assert_cmpint(harness_find_signal(h, "CycleFinished", false, 0), ==, -1);
}

static void expect_can(Harness *h, const char *property, const char *answer, const char *reason_has) {
        g_autofree char *can = harness_get_string(h, property);
        g_autofree char *reason_prop = g_strconcat(property, "Reason", NULL);
        g_autofree char *reason = harness_get_string(h, reason_prop);
        g_test_message("%s=%s (%s)", property, can, reason);
        g_assert_cmpstr(can, ==, answer);
        if (!strstr(reason, reason_has))
                g_error("%s '%s' does not say '%s'", reason_prop, reason, reason_has);
}

static void test_no_swap(Fixture *f, gconstpointer data) {
        Harness *h = start(f, SWAPS_HEADER, NULL);
        expect_can(h, "CanHibernate", "no", "no swap space is active");
        expect_can(h, "CanHybridSleep", "no", "no swap space is active");
        expect_can(h, "CanSuspend", "yes", "");
        expect_not_ready(h, "hibernate", "no swap space is active");
        expect_not_ready(h, "hybrid-sleep", "no swap space is active");
}

static void test_swap_too_small(Fixture *f, gconstpointer data) {
        if (!have_loop_devices())
                return;
        Harness *h = start(f, SWAPS_HEADER "/dev/loop0 partition 8192 0 -2\n", NULL);
        expect_can(h, "CanHibernate", "no", "has 8 MiB free, but the image needs about 21 MiB");
        expect_not_ready(h, "hibernate", "swap /dev/loop0 has 8 MiB free");
}

static void test_resume_ambiguous(Fixture *f, gconstpointer data) {
        if (!have_loop_devices())
                return;
        Harness *h = start(f, SWAPS_HEADER "/dev/loop0 partition 1048572 0 -2\n/dev/loop1 partition 1048572 0 -3\n",
                           NULL);
        expect_can(h, "CanHibernate", "no", "ResumeDevice=");
        expect_not_ready(h, "hibernate", "2 swap partitions to choose from");
}

/* Runs a hibernate to its end, done */
static void hibernate_done(Harness *h) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL;
        if (harness_sleep(h, "hibernate", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep(hibernate): %s: %s", err, msg);
        g_assert_true(harness_wait_finished(h, cycle, 15000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "done");
}

/* Runs a hibernate and returns the fakesys log lines */
static char **hibernate(Harness *h) {
        hibernate_done(h);
        return harness_fakesys_log_lines(h);
}

static int line_index(char **lines, const char *prefix) {
        for (int i = 0; lines[i]; i++)
                if (g_str_has_prefix(lines[i], prefix))
                        return i;
        return -1;
}

/* Unset resume and one swap partition: fridged sets resume to it before
 * the state write, so the next boot finds the image */
static void test_sets_resume(Fixture *f, gconstpointer data) {
        if (!have_loop_devices())
                return;
        Harness *h = start(f, SWAPS_HEADER "/dev/loop0 partition 1048572 0 -2\n", NULL);
        expect_can(h, "CanHibernate", "yes", "");
        g_auto(GStrv) lines = hibernate(h);
        int resume = line_index(lines, "power/resume 7:0 ok"), state = line_index(lines, "power/state disk");
        g_assert_cmpint(resume, >=, 0);
        g_assert_cmpint(state, >, resume);
        g_autofree char *now = harness_read_sys(h, "power/resume");
        g_assert_cmpstr(g_strstrip(now), ==, "7:0");
}

/* The kernel already names the swap: nothing to write */
static void test_keeps_resume(Fixture *f, gconstpointer data) {
        if (!have_loop_devices())
                return;
        Harness *h = start(f, SWAPS_HEADER "/dev/loop0 partition 1048572 0 -2\n/dev/loop1 partition 1048572 0 -3\n",
                           NULL);
        harness_write_sys(h, "power/resume", "7:1");
        expect_can(h, "CanHibernate", "yes", "");
        g_auto(GStrv) lines = hibernate(h);
        g_assert_cmpint(line_index(lines, "power/state disk"), >=, 0);
        g_assert_cmpint(line_index(lines, "power/resume 7:1"), ==, 0); /* the test's own write only */
        g_assert_cmpint(g_strv_length(lines) > 1 ? line_index(lines + 1, "power/resume") : -1, ==, -1);
}

/* ResumeDevice= chooses among several swaps */
static void test_config_names_device(Fixture *f, gconstpointer data) {
        if (!have_loop_devices())
                return;
        Harness *h = start(f, SWAPS_HEADER "/dev/loop0 partition 1048572 0 -2\n/dev/loop1 partition 1048572 0 -3\n",
                           "[Sleep]\nResumeDevice=/dev/loop1\n");
        expect_can(h, "CanHibernate", "yes", "");
        g_auto(GStrv) lines = hibernate(h);
        g_assert_cmpint(line_index(lines, "power/resume 7:1 ok"), >=, 0);
}

static unsigned count_preflights(Harness *h) {
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        unsigned n = 0;
        for (const char *p = log; (p = strstr(p, "Hibernation pre-flight\n")); p++)
                n++;
        return n;
}

/* All the Can* properties and SupportedKinds of one GetAll: one pre-flight */
static unsigned get_all_preflights(Harness *h) {
        unsigned before = count_preflights(h);
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int r = sd_bus_call_method(h->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, "org.freedesktop.DBus.Properties",
                                   "GetAll", &e, &reply, "s", FRIDGE_INTERFACE);
        if (r < 0)
                g_error("GetAll: %s: %s", e.name, e.message);
        sd_bus_message_unref(reply);
        /* the log is written before the reply goes out */
        return count_preflights(h) - before;
}

/* One pre-flight a GetAll, and a swap turned off is seen by the next */
static void test_get_all_one_preflight(Fixture *f, gconstpointer data) {
        if (!have_loop_devices())
                return;
        Harness *h = start(f, SWAPS_HEADER "/dev/loop0 partition 1048572 0 -2\n", NULL);
        g_assert_cmpuint(get_all_preflights(h), ==, 1);
        expect_can(h, "CanHibernate", "yes", "");
        g_autofree char *swaps = g_build_filename(h->dir, "proc", "swaps", NULL);
        g_assert_true(g_file_set_contents(swaps, SWAPS_HEADER, -1, NULL));
        g_assert_cmpuint(get_all_preflights(h), ==, 1);
        expect_can(h, "CanHibernate", "no", "no swap space is active");
}

/* fridgectl history: the past cycles with their warnings (ListCycles) */
static char *history(Harness *h) {
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 60000, &out, "--no-legend", "history", NULL), ==, 0);
        g_test_message("fridgectl history:\n%s", out);
        return g_steal_pointer(&out);
}

static void expect_status_has(Harness *h, const char *line) {
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 60000, &out, "status", NULL, NULL), ==, 0);
        if (!strstr(out, line))
                g_error("fridgectl status does not say '%s':\n%s", line, out);
}

#define PLAIN_NOTICE "the resume device /dev/loop0 is not encrypted: a plain copy of memory"

/* The resume swap on a plain device (fakesys's dev/block/7:0 with no
 * dm/uuid): said by the properties, by fridgectl status and in the
 * hibernation's warnings, which goes ahead */
static void test_resume_plain(Fixture *f, gconstpointer data) {
        if (!have_loop_devices())
                return;
        static const char *const plain[] = { "--file=dev/block/7:0/dev=7:0", NULL };
        Harness *h = start_on(f, SWAPS_HEADER "/dev/loop0 partition 1048572 0 -2\n", NULL, plain);
        expect_can(h, "CanHibernate", "yes", "");
        g_autofree char *encrypted = harness_get_string(h, "HibernateEncrypted");
        g_autofree char *warning = harness_get_string(h, "HibernateWarning");
        g_test_message("HibernateEncrypted=%s (%s)", encrypted, warning);
        g_assert_cmpstr(encrypted, ==, "no");
        g_assert_true(g_str_has_prefix(warning, PLAIN_NOTICE));
        expect_status_has(h, "ResumeEncrypted: no (" PLAIN_NOTICE);
        hibernate_done(h);
        g_autofree char *past = history(h);
        g_autofree char *line = g_strdup_printf("warning: %s\n", warning);
        g_assert_nonnull(strstr(past, line));
}

/* On a dm-crypt device: no notice anywhere */
static void test_resume_encrypted(Fixture *f, gconstpointer data) {
        if (!have_loop_devices())
                return;
        static const char *const crypt[] = {
                "--file=dev/block/7:0/dm/uuid=CRYPT-LUKS2-5f0e0c3b8d2a4e71a9c6b1d7e3f40a12-swap", NULL
        };
        Harness *h = start_on(f, SWAPS_HEADER "/dev/loop0 partition 1048572 0 -2\n", NULL, crypt);
        expect_can(h, "CanHibernate", "yes", "");
        g_autofree char *encrypted = harness_get_string(h, "HibernateEncrypted");
        g_autofree char *warning = harness_get_string(h, "HibernateWarning");
        g_assert_cmpstr(encrypted, ==, "yes");
        g_assert_cmpstr(warning, ==, "");
        expect_status_has(h, "ResumeEncrypted: yes\n");
        hibernate_done(h);
        g_autofree char *past = history(h);
        g_assert_null(strstr(past, "warning:"));
}

#define ADD(path, fn) g_test_add("/hibernate/" path, Fixture, NULL, harness_fixture_setup, fn, harness_fixture_teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        ADD("no-swap", test_no_swap);
        ADD("swap-too-small", test_swap_too_small);
        ADD("resume-ambiguous", test_resume_ambiguous);
        ADD("sets-resume", test_sets_resume);
        ADD("keeps-resume", test_keeps_resume);
        ADD("config-names-device", test_config_names_device);
        ADD("get-all-one-preflight", test_get_all_one_preflight);
        ADD("resume-plain", test_resume_plain);
        ADD("resume-encrypted", test_resume_encrypted);
        return g_test_run();
}
