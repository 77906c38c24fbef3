/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib.h>
#include <string.h>

#include "log.h"
#include "tuxonice.h"

#define BIT(b) (UINT64_C(1) << (b))

/* The numbers of TuxOnIce's kernel/power/tuxonice.h, pinned: a renumbering
 * here would misreport every failure of a real kernel */
static void test_bit_numbers(void) {
        g_assert_cmpint(TOI_ABORTED, ==, 0);
        g_assert_cmpint(TOI_NOSTORAGE_AVAILABLE, ==, 2);
        g_assert_cmpint(TOI_FREEZING_FAILED, ==, 4);
        g_assert_cmpint(TOI_KEPT_IMAGE, ==, 5);
        g_assert_cmpint(TOI_SYSDEV_REFUSED, ==, 10);
        g_assert_cmpint(TOI_FAILED_IO, ==, 15);
        g_assert_cmpint(TOI_ARCH_PREPARE_FAILED, ==, 20);
        g_assert_cmpint(TOI_CANT_SUSPEND, ==, 22);
        g_assert_cmpint(TOI_WAKEUP_EVENT, ==, 29);
        g_assert_cmpint(TOI_DPM_SUSPEND_FAILED, ==, 32);
        g_assert_cmpint(_TOI_RESULT_BIT_MAX, ==, 33);
}

static void test_zero_is_success(void) {
        g_autofree char *text = tuxonice_describe_result(0);
        g_assert_cmpstr(text, ==, "");
        g_assert_false(tuxonice_result_failed(0));
}

/* Every documented bit, set as TuxOnIce sets it (with TOI_ABORTED), gives
 * its own name and words, and nothing about the other bits */
static void test_every_bit_named(void) {
        for (unsigned b = 1; b < _TOI_RESULT_BIT_MAX; b++) {
                const char *name = tuxonice_result_bit_name(b);
                g_assert_nonnull(name);
                g_assert_true(g_str_has_prefix(name, "TOI_"));
                g_autofree char *text = tuxonice_describe_result(BIT(TOI_ABORTED) | BIT(b));
                g_autofree char *want = g_strdup_printf("(%s)", name);
                g_assert_true(g_str_has_suffix(text, want));
                g_assert_null(strstr(text, "TOI_ABORTED"));
                g_assert_null(strstr(text, "unknown"));
                g_assert_cmpuint(strlen(text), >, strlen(want) + 10); /* words, not only the name */
                g_assert_true(tuxonice_result_failed(BIT(TOI_ABORTED) | BIT(b)));
        }
        g_assert_null(tuxonice_result_bit_name(_TOI_RESULT_BIT_MAX));
}

static void test_words(void) {
        g_autofree char *storage = tuxonice_describe_result(0x5);
        g_assert_cmpstr(storage, ==, "no storage was available for the image (TOI_NOSTORAGE_AVAILABLE)");
        g_autofree char *aborted = tuxonice_describe_result(0x1);
        g_assert_cmpstr(aborted, ==, "the hibernation was aborted (TOI_ABORTED)");
        g_autofree char *two = tuxonice_describe_result(BIT(TOI_ABORTED) | BIT(TOI_FREEZING_FAILED) | BIT(TOI_FAILED_IO));
        g_assert_cmpstr(two, ==, "freezing tasks or file systems failed (TOI_FREEZING_FAILED); "
                                 "I/O errors occurred while writing the image (TOI_FAILED_IO)");
}

static void test_unknown_bits_in_hex(void) {
        g_autofree char *only = tuxonice_describe_result(BIT(40) | BIT(33));
        g_assert_cmpstr(only, ==, "unknown result bits 0x10200000000");
        g_autofree char *mixed = tuxonice_describe_result(BIT(TOI_ABORTED) | BIT(TOI_OUT_OF_MEMORY) | BIT(63));
        g_assert_cmpstr(mixed, ==, "TuxOnIce ran out of memory (TOI_OUT_OF_MEMORY); "
                                   "unknown result bits 0x8000000000000000");
}

/* Notes without TOI_ABORTED: the cycle went on */
static void test_notes_are_not_failures(void) {
        g_assert_false(tuxonice_result_failed(BIT(TOI_KEPT_IMAGE)));
        g_assert_false(tuxonice_result_failed(BIT(TOI_EXTRA_PAGES_ALLOW_TOO_SMALL)));
        g_autofree char *text = tuxonice_describe_result(BIT(TOI_KEPT_IMAGE));
        g_assert_cmpstr(text, ==, "an existing image was kept (TOI_KEPT_IMAGE)");
}

static void test_outcome(void) {
        FridgeError e;
        g_assert_cmpint(tuxonice_result_outcome(BIT(TOI_ABORTED) | BIT(TOI_NOSTORAGE_AVAILABLE), &e), ==, RESULT_FAILED);
        g_assert_cmpint(e, ==, FRIDGE_ERROR_KERNEL);
        g_assert_cmpint(tuxonice_result_outcome(BIT(TOI_ABORTED) | BIT(TOI_ABORT_REQUESTED), &e), ==, RESULT_ABORTED);
        g_assert_cmpint(e, ==, FRIDGE_ERROR_CANCELLED);
        g_assert_cmpint(tuxonice_result_outcome(BIT(TOI_ABORTED) | BIT(TOI_WAKEUP_EVENT), &e), ==, RESULT_ABORTED);
        g_assert_cmpint(e, ==, FRIDGE_ERROR_WAKEUP_EVENT);
}

static void test_parse(void) {
        uint64_t v = 0;
        g_assert_cmpint(tuxonice_parse_result("5\n", &v), ==, 0);
        g_assert_cmpuint(v, ==, 5);
        g_assert_cmpint(tuxonice_parse_result("4294967301\n", &v), ==, 0); /* bit 32 on a 64-bit long */
        g_assert_cmpuint(v, ==, BIT(32) | 5);
        g_assert_cmpint(tuxonice_parse_result("0x5\n", &v), ==, -EBADMSG); /* the kernel prints %lu */
        g_assert_cmpint(tuxonice_parse_result("", &v), ==, -EBADMSG);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        log_set_max_level(LOG_EMERG);
        g_test_add_func("/tuxonice/bit-numbers", test_bit_numbers);
        g_test_add_func("/tuxonice/zero-is-success", test_zero_is_success);
        g_test_add_func("/tuxonice/every-bit-named", test_every_bit_named);
        g_test_add_func("/tuxonice/words", test_words);
        g_test_add_func("/tuxonice/unknown-bits-in-hex", test_unknown_bits_in_hex);
        g_test_add_func("/tuxonice/notes-are-not-failures", test_notes_are_not_failures);
        g_test_add_func("/tuxonice/outcome", test_outcome);
        g_test_add_func("/tuxonice/parse", test_parse);
        return g_test_run();
}
