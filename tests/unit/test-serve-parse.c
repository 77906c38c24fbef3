/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge-image-writer --serve's parsers: the socket systemd passes
 * (LISTEN_PID/LISTEN_FDS, only when meant for this process), the resume
 * device fridged set (/sys/power/resume's MAJ:MIN, 0:0 none), its offset,
 * and what each /sys/power/disk mode makes of the written image. */
#include <errno.h>
#include <glib.h>

#include "serve-parse.h"

static void test_listen_fds(void) {
        g_assert_cmpint(serve_listen_fds("42", "1", 42), ==, 1);
        g_assert_cmpint(serve_listen_fds("42", "2", 42), ==, 2);
        g_assert_cmpint(serve_listen_fds("42", "1", 43), ==, 0); /* another process's */
        g_assert_cmpint(serve_listen_fds(NULL, "1", 42), ==, 0);
        g_assert_cmpint(serve_listen_fds("42", NULL, 42), ==, 0);
        const char *const bad[][2] = { { "", "1" }, { "42", "" }, { "4x2", "1" }, { "42", "1 " },
                                       { "-42", "1" }, { "42", "-1" }, { "42", "99999" }, { "99999999999", "1" } };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
                g_assert_cmpint(serve_listen_fds(bad[i][0], bad[i][1], 42), ==, -EINVAL);
}

static void test_devnum(void) {
        unsigned maj = 1, min = 1;
        g_assert_cmpint(serve_parse_devnum("8:1\n", &maj, &min), ==, 0);
        g_assert_cmpuint(maj, ==, 8);
        g_assert_cmpuint(min, ==, 1);
        g_assert_cmpint(serve_parse_devnum("259:65536", &maj, &min), ==, 0);
        g_assert_cmpuint(maj, ==, 259);
        g_assert_cmpuint(min, ==, 65536);
        g_assert_cmpint(serve_parse_devnum("0:0\n", &maj, &min), ==, 0);
        g_assert_cmpuint(maj, ==, 0);
        const char *const bad[] = { "", "\n", "8", "8:", ":1", "8:1:2", "8:1\n\n", "a:1", "8:1x", " 8:1",
                                    "4096:1", "8:1048576", "/dev/sda1" };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
                if (serve_parse_devnum(bad[i], &maj, &min) != -EINVAL)
                        g_error("\"%s\" parsed as a device number", bad[i]);
}

static void test_offset(void) {
        uint64_t o = 1;
        g_assert_cmpint(serve_parse_offset("0\n", &o), ==, 0);
        g_assert_cmpuint(o, ==, 0);
        g_assert_cmpint(serve_parse_offset("34816", &o), ==, 0);
        g_assert_cmpuint(o, ==, 34816);
        const char *const bad[] = { "", "x", "1:2", "-1", "1 ", "99999999999999999999999" };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
                if (serve_parse_offset(bad[i], &o) != -EINVAL)
                        g_error("\"%s\" parsed as an offset", bad[i]);
}

static void test_modes(void) {
        ImageAfter a;
        g_assert_cmpint(serve_mode_after("platform", &a), ==, 0);
        g_assert_cmpint(a, ==, IMAGE_AFTER_PLATFORM);
        g_assert_cmpint(serve_mode_after("shutdown", &a), ==, 0);
        g_assert_cmpint(a, ==, IMAGE_AFTER_POWEROFF);
        g_assert_cmpint(serve_mode_after("reboot", &a), ==, 0);
        g_assert_cmpint(a, ==, IMAGE_AFTER_REBOOT);
        g_assert_cmpint(serve_mode_after("suspend", &a), ==, 0);
        g_assert_cmpint(a, ==, IMAGE_AFTER_SUSPEND);
        g_assert_cmpint(serve_mode_after("test_resume", &a), ==, -EOPNOTSUPP);
        g_assert_cmpint(serve_mode_after("disk", &a), ==, -EINVAL);
        g_assert_cmpint(serve_mode_after("", &a), ==, -EINVAL);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/serve-parse/listen-fds", test_listen_fds);
        g_test_add_func("/serve-parse/devnum", test_devnum);
        g_test_add_func("/serve-parse/offset", test_offset);
        g_test_add_func("/serve-parse/modes", test_modes);
        return g_test_run();
}
