/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>

#include "backoff.h"

static void test_doubling(void) {
        g_assert_cmpuint(backoff_delay_ms(1000, 1, BACKOFF_CAP_MS), ==, 1000);
        g_assert_cmpuint(backoff_delay_ms(1000, 2, BACKOFF_CAP_MS), ==, 2000);
        g_assert_cmpuint(backoff_delay_ms(1000, 3, BACKOFF_CAP_MS), ==, 4000);
        g_assert_cmpuint(backoff_delay_ms(1000, 5, BACKOFF_CAP_MS), ==, 16000);
}

static void test_cap(void) {
        g_assert_cmpuint(backoff_delay_ms(1000, 6, BACKOFF_CAP_MS), ==, BACKOFF_CAP_MS);
        g_assert_cmpuint(backoff_delay_ms(1000, 1000000, BACKOFF_CAP_MS), ==, BACKOFF_CAP_MS);
        g_assert_cmpuint(backoff_delay_ms(UINT32_MAX, 40, UINT32_MAX), ==, UINT32_MAX);
        /* a base above the cap is taken as it is: the admin asked for it */
        g_assert_cmpuint(backoff_delay_ms(60000, 3, BACKOFF_CAP_MS), ==, 60000);
}

static void test_edges(void) {
        g_assert_cmpuint(backoff_delay_ms(0, 1, BACKOFF_CAP_MS), ==, 0);
        g_assert_cmpuint(backoff_delay_ms(0, 9, BACKOFF_CAP_MS), ==, 0);
        g_assert_cmpuint(backoff_delay_ms(10, 0, BACKOFF_CAP_MS), ==, 10);
        g_assert_cmpuint(backoff_delay_ms(3, 4, 20), ==, 20);
        g_assert_cmpuint(backoff_delay_ms(3, 3, 20), ==, 12);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/backoff/doubling", test_doubling);
        g_test_add_func("/backoff/cap", test_cap);
        g_test_add_func("/backoff/edges", test_edges);
        return g_test_run();
}
