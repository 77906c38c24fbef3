/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <math.h>

#include "progress.h"

static void test_flush_fraction(void) {
        g_assert_cmpfloat(progress_flush_fraction(0, 0), ==, 1.0);      /* nothing was dirty */
        g_assert_cmpfloat(progress_flush_fraction(1000, 0), ==, 1.0);
        g_assert_cmpfloat(progress_flush_fraction(1000, 250), ==, 0.75);
        g_assert_cmpfloat(progress_flush_fraction(1000, 1000), ==, 0.0);
        g_assert_cmpfloat(progress_flush_fraction(1000, 5000), ==, 0.0); /* more dirt: no progress, not negative */
}

static void test_overall_bands(void) {
        double prev = -1.0;
        for (Phase p = PHASE_PREPARE; p < _PHASE_MAX; p++) {
                double lo = progress_overall(p, 0.0), hi = progress_overall(p, 1.0);
                g_assert_cmpfloat(lo, >=, prev);
                g_assert_cmpfloat(hi, >=, lo);
                g_assert_cmpfloat(hi, <=, 1.0);
                prev = hi;
        }
        g_assert_cmpfloat(progress_overall(PHASE_THAW, 1.0), ==, 1.0);
        g_assert_cmpfloat(progress_overall(PHASE_PREPARE, 0.0), ==, 0.0);
        /* out-of-range fractions are clamped into the phase's band */
        g_assert_cmpfloat(progress_overall(PHASE_FLUSH, -3.0), ==, progress_overall(PHASE_FLUSH, 0.0));
        g_assert_cmpfloat(progress_overall(PHASE_FLUSH, 7.0), ==, progress_overall(PHASE_FLUSH, 1.0));
        g_assert_cmpfloat(progress_overall(PHASE_FLUSH, NAN), ==, progress_overall(PHASE_FLUSH, 0.0));
}

static void test_monotonic(void) {
        g_assert_cmpfloat(progress_monotonic(0.5, 0.4), ==, 0.5);
        g_assert_cmpfloat(progress_monotonic(0.5, 0.6), ==, 0.6);
        g_assert_cmpfloat(progress_monotonic(0.5, 1.5), ==, 1.0);
        g_assert_cmpfloat(progress_monotonic(0.0, -1.0), ==, 0.0);
}

static void test_format(void) {
        char buf[32];
        g_assert_cmpstr(progress_format_kib(12, buf, sizeof(buf)), ==, "12 KiB");
        g_assert_cmpstr(progress_format_kib(412 * 1024, buf, sizeof(buf)), ==, "412 MiB");
        g_assert_cmpstr(progress_format_kib(1536, buf, sizeof(buf)), ==, "2 MiB");
        g_assert_cmpstr(progress_format_kib(15ULL * 1024 * 1024, buf, sizeof(buf)), ==, "15.0 GiB");
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/progress/flush-fraction", test_flush_fraction);
        g_test_add_func("/progress/overall-bands", test_overall_bands);
        g_test_add_func("/progress/monotonic", test_monotonic);
        g_test_add_func("/progress/format", test_format);
        return g_test_run();
}
