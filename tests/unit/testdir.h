/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scratch directories of the unit tests: a fake /sys, /proc or cgroup
 * tree built file by file below a g_dir_make_tmp() directory.
 */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>

#include "fileio.h"
#include "power.h"

/* Writes len bytes (NULs too, as /proc/PID/cmdline has) to BASE/REL,
 * making the directories above it. */
static inline void testdir_put_bytes(const char *base, const char *rel, const char *bytes, gssize len) {
        g_autofree char *p = g_build_filename(base, rel, NULL);
        g_autofree char *parent = g_path_get_dirname(p);
        g_assert_cmpint(g_mkdir_with_parents(parent, 0755), ==, 0);
        g_assert_true(g_file_set_contents(p, bytes, len, NULL));
}

/* Writes text to BASE/REL, making the directories above it. */
static inline void testdir_put(const char *base, const char *rel, const char *text) {
        testdir_put_bytes(base, rel, text, -1);
}

/* testdir_put() of each { REL, TEXT } pair of files[n]. */
static inline void testdir_put_all(const char *base, const char *const (*files)[2], size_t n) {
        for (size_t i = 0; i < n; i++)
                testdir_put(base, files[i][0], files[i][1]);
}

/* A kernel that offers everything below BASE (a sysfs root): freeze, mem
 * and disk, s2idle and deep (deep current), the disk modes, every pm_test
 * level, a wakeup_count of 17 and an RTC alarm. */
static inline void testdir_put_power(const char *base) {
        static const char *const files[][2] = {
                { POWER_STATE, "freeze mem disk\n" },
                { POWER_MEM_SLEEP, "s2idle [deep]\n" },
                { POWER_DISK, "[platform] shutdown reboot suspend test_resume\n" },
                { POWER_PM_TEST, "[none] core processors platform devices freezer\n" },
                { POWER_WAKEUP_COUNT, "17\n" },
                { POWER_RTC_ALARM, "" },
        };
        testdir_put_all(base, files, G_N_ELEMENTS(files));
}

/* root_open() of BASE/REL (REL NULL: BASE itself), which must work. */
static inline int testdir_open(const char *base, const char *rel) {
        g_autofree char *p = g_build_filename(base, rel, NULL);
        int fd = root_open(p);
        g_assert_cmpint(fd, >=, 0);
        return fd;
}

/* Removes DIR and everything below it; symbolic links are not followed. */
static inline void testdir_remove(const char *dir) {
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        for (const char *n; d && (n = g_dir_read_name(d));) {
                g_autofree char *p = g_build_filename(dir, n, NULL);
                if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
                        testdir_remove(p);
                else
                        g_unlink(p);
        }
        g_rmdir(dir);
}
