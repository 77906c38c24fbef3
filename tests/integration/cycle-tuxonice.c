/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whole cycles, part 4: TuxOnIce hibernation on a fakesys --tuxonice
 * kernel (settings order, last_result failures and notes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cycle.h"
#include "fridge-config.h"

/* ---------------------------------------------------------------- TuxOnIce */

static const char *const tuxonice_args[] = { "--tuxonice", NULL };

static Harness *tuxonice_harness(const char *config) {
        HarnessOptions o = { .fakesys_args = tuxonice_args, .config = config };
        return harness_new(&o);
}

/* The kernel offers no disk state at all: hibernation goes through
 * TuxOnIce's do_hibernate, never /sys/power/state or disk */
void test_tuxonice_hibernate(Fixture *f, gconstpointer data) {
        const char *const args[] = { "--tuxonice", "--states=freeze mem", NULL };
        HarnessOptions o = { .fakesys_args = args };
        Harness *h = f->h = harness_new(&o);

        g_autofree char *can = harness_get_string(h, "CanHibernate");
        g_assert_cmpstr(can, ==, "yes");
        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_done_with_log(h, cycle, "power/wakeup_count 0 ok", "power/tuxonice/do_hibernate 1 sleeping",
                                     "power/tuxonice/do_hibernate 1 ok", NULL);
        g_assert_cmpint(harness_find_signal(h, "Resumed", true, cycle), >=, 0);
}

/* The [TuxOnIce] settings reach the kernel before do_hibernate */
void test_tuxonice_settings_first(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness("[TuxOnIce]\nImageSizeLimit=1024\nCompressor=lz4\nEnableEscape=yes\n");

        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_done_with_log(h, cycle, "power/tuxonice/image_size_limit 1024 ok",
                                     "power/tuxonice/compression/algorithm lz4 ok",
                                     "power/tuxonice/compression/enabled 1 ok",
                                     "power/tuxonice/user_interface/enable_escape 1 ok",
                                     "power/wakeup_count 0 ok", "power/tuxonice/do_hibernate 1 sleeping",
                                     "power/tuxonice/do_hibernate 1 ok", NULL);
        g_autofree char *alg = harness_read_sys(h, "power/tuxonice/compression/algorithm");
        g_assert_cmpstr(g_strstrip(alg), ==, "lz4");
}

/* One injected last_result: the cycle ends as expected, with a message
 * naming the failure and the raw value, and never sleeps */
static void expect_tuxonice_failure(Harness *h, uint64_t mask, const char *result, const char *error,
                                    const char *message_has) {
        g_autofree char *cmd = g_strdup_printf("toi-fail-result 0x%" G_GINT64_MODIFIER "x", mask);
        g_autofree char *raw = g_strdup_printf("(last_result 0x%" G_GINT64_MODIFIER "x)", mask);
        g_autofree char *message = NULL;

        harness_control(h, "clear-log");
        harness_control(h, cmd);
        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_finished(h, cycle, 15000, result, error, message_has);
        g_assert_true(harness_wait_finished(h, cycle, 0, NULL, NULL, &message));
        if (!g_str_has_prefix(message, "TuxOnIce aborted the hibernation: ") || !strstr(message, raw))
                g_error("last_result 0x%" G_GINT64_MODIFIER "x: message '%s'", mask, message);
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        int i;
        assert_log_line_index(h, lines, "power/tuxonice/do_hibernate 1 ok", i);
        g_assert_cmpint(log_first_prefix(lines, "power/tuxonice/do_hibernate 1 sleeping"), <, 0);
        assert_no_state_write(h);
}

#define TOI(bit) ((UINT64_C(1) << (bit)) | 1) /* TOI_ABORTED is set with every reason */

void test_tuxonice_failures(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        expect_tuxonice_failure(h, TOI(2), "failed", ERR("Kernel"),
                                "no storage was available for the image (TOI_NOSTORAGE_AVAILABLE)");
        expect_tuxonice_failure(h, TOI(4), "failed", ERR("Kernel"),
                                "freezing tasks or file systems failed (TOI_FREEZING_FAILED)");
        expect_tuxonice_failure(h, TOI(15), "failed", ERR("Kernel"),
                                "I/O errors occurred while writing the image (TOI_FAILED_IO)");
        expect_tuxonice_failure(h, TOI(40), "failed", ERR("Kernel"), "unknown result bits 0x10000000000");
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "failed");
}

/* Every bit TuxOnIce defines is named; Escape at the console is a cancel
 * and a wakeup event an abort, as with the mainline kernel */
void test_tuxonice_every_failure(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        for (unsigned bit = 1; bit <= 32; bit++) {
                bool cancel = bit == 1, wakeup = bit == 29;
                if (bit == 5 || bit == 11)
                        continue; /* a kept image and a raised allowance are notes, below */
                expect_tuxonice_failure(h, TOI(bit), cancel || wakeup ? "aborted" : "failed",
                                        cancel ? ERR("Cancelled") : wakeup ? ERR("WakeupEvent") : ERR("Kernel"),
                                        "(TOI_");
        }
        /* TOI_ABORTED alone names itself */
        expect_tuxonice_failure(h, 1, "failed", ERR("Kernel"), "the hibernation was aborted (TOI_ABORTED)");
}

/* Bits without TOI_ABORTED are notes on a cycle that went on */
void test_tuxonice_notes(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        harness_control(h, "toi-fail-result 0x20");
        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_finished(h, cycle, 15000, "done", "", NULL);
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        g_assert_nonnull(strstr(log, "an existing image was kept (TOI_KEPT_IMAGE)"));
}

/* A wakeup event after wakeup_count was saved: TuxOnIce itself aborts */
void test_tuxonice_wakeup_event(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        harness_control(h, "wakeup-on-write power/wakeup_count");
        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_finished(h, cycle, 15000, "aborted", ERR("WakeupEvent"), "a wakeup event arrived (TOI_WAKEUP_EVENT)");
}

/* pm_test is the mainline kernel's test mode: such a cycle stays there */
void test_tuxonice_pm_test_mainline(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        int i;
        uint64_t cycle = SLEEP_OK(h, "hibernate", "dry-run", "b", 1, "pm-test", "s", "devices", NULL);
        assert_finished(h, cycle, 15000, "dry-run", "", NULL);
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        assert_log_line_index(h, lines, "power/state disk ok", i);
        g_assert_cmpint(log_first_prefix(lines, "power/tuxonice/"), <, 0);
}
