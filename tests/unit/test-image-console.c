/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The writer's console while user space is frozen: the bar says MiB of
 * the total, MiB/s and time left; Esc, Backspace or Ctrl-H typed there
 * asks for the abort, other keys do not. */
#include <glib.h>
#include <unistd.h>

#include "image-console.h"

static void test_format(void) {
        char line[160];
        image_console_format(line, sizeof(line), 38u << 20, 76u << 20, 2000000);
        g_assert_cmpstr(line, ==, "[##########..........] 38 of 76 MiB, 19.0 MiB/s, 2 s left (Esc aborts)");
        image_console_format(line, sizeof(line), 76u << 20, 76u << 20, 4000000);
        g_assert_cmpstr(line, ==, "[####################] 76 of 76 MiB, 19.0 MiB/s, 0 s left (Esc aborts)");
        image_console_format(line, sizeof(line), 0, 76u << 20, 0);
        g_assert_cmpstr(line, ==, "[....................] 0 of 76 MiB, 0.0 MiB/s, 0 s left (Esc aborts)");
}

static bool typed(const char *keys, size_t len) {
        int p[2];
        g_assert_cmpint(pipe(p), ==, 0);
        g_assert_cmpint(write(p[1], keys, len), ==, (ssize_t) len);
        close(p[1]); /* the reader sees the keys, then the end */
        ImageConsole c = { .fd = p[0] };
        bool r = image_console_abort_typed(&c);
        close(p[0]);
        return r;
}

static void test_keys(void) {
        g_assert_true(typed("\033", 1));
        g_assert_true(typed("ab\177", 3));
        g_assert_true(typed("\b", 1));
        g_assert_false(typed("q\r\n ", 4));
        ImageConsole none = { .fd = -1 };
        g_assert_false(image_console_abort_typed(&none));
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/image-console/format", test_format);
        g_test_add_func("/image-console/keys", test_keys);
        return g_test_run();
}
