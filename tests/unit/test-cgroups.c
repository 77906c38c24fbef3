/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one cgroup-path validator: what the config's FreezeRoots=, the
 * freezer's ledger and callers of SetClass/HoldClass may name. */
#include <errno.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>

#include "cgroups.h"
#include "fileio.h"

static void test_valid(void) {
        const char *good[] = { "user.slice", "user.slice/user-1000.slice", "user.slice/x..y/.hidden", "a",
                               "system.slice/a\\x2db.service", "bytes/\xff\xfe" };
        for (size_t i = 0; i < G_N_ELEMENTS(good); i++)
                g_assert_true(cgroups_path_is_valid(good[i]));

        const char *bad[] = { "", "/abs", "/user.slice", "../x", "user.slice/../x", "a/../b", "..", "a/..",
                              "a/./b", "./a", ".", "a/.", "a//b", "a/", "/", "x\ny", "x\n" };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_test_message("bad: \"%s\"", bad[i]);
                g_assert_false(cgroups_path_is_valid(bad[i]));
        }
        g_assert_false(cgroups_path_is_valid(NULL));
}

static void test_length(void) {
        g_autofree char *max = g_strnfill(CGROUPS_PATH_MAX, 'a');
        for (size_t i = 200; i < CGROUPS_PATH_MAX; i += 200)
                max[i] = '/';
        g_assert_true(cgroups_path_is_valid(max));
        g_autofree char *over = g_strconcat(max, "b", NULL);
        g_assert_false(cgroups_path_is_valid(over));
}

/* cgroupfs has no symlinks: a plain directory tree stands in for it */
static void test_check_path(void) {
        g_autofree char *base = g_dir_make_tmp("test-cgroups-XXXXXX", NULL);
        g_autofree char *ok = g_build_filename(base, "user.slice/app.scope", NULL);
        g_autofree char *outside = g_build_filename(base, "system.slice", NULL);
        g_autofree char *link = g_build_filename(base, "user.slice/evil", NULL);
        g_assert_no_errno(g_mkdir_with_parents(ok, 0755));
        g_assert_no_errno(g_mkdir_with_parents(outside, 0755));
        g_assert_no_errno(symlink("../system.slice", link));
        int fd = root_open(base);
        g_assert_cmpint(fd, >=, 0);

        char *roots[] = { (char *) "user.slice", NULL };
        g_assert_cmpint(cgroups_check_path(fd, "user.slice/app.scope", roots), ==, 0);
        g_assert_cmpint(cgroups_check_path(fd, "user.slice", roots), ==, 0);
        g_assert_cmpint(cgroups_check_path(fd, "system.slice", roots), ==, -EPERM);
        g_assert_cmpint(cgroups_check_path(fd, "user.slice/evil", roots), ==, -EINVAL);
        g_assert_cmpint(cgroups_check_path(fd, "user.slice/../system.slice", roots), ==, -EINVAL);
        g_assert_cmpint(cgroups_check_path(fd, "user.slice/gone", roots), ==, -ENOENT);
        close(fd);

        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", base);
        g_assert_cmpint(system(cmd), ==, 0);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/cgroups/path/valid", test_valid);
        g_test_add_func("/cgroups/path/length", test_length);
        g_test_add_func("/cgroups/check-path", test_check_path);
        return g_test_run();
}
