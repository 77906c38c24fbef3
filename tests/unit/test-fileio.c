/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The walker that never follows a symlink, read-then-parse, one-read
 * files, sorted keys. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "parse.h"
#include "util.h"

typedef struct Tree {
        char *base;
        int root_fd;
} Tree;

static char *at(const Tree *t, const char *rel) {
        return g_build_filename(t->base, rel, NULL);
}

/* base/root/{a/b/c, file}, base/outside/sub, and symlinks root/link ->
 * ../outside, root/a/up -> .., root/a/abs -> base/outside */
static void tree_set_up(Tree *t, gconstpointer data) {
        t->base = g_dir_make_tmp("test-fileio-XXXXXX", NULL);
        g_assert_nonnull(t->base);
        const char *dirs[] = { "root/a/b/c", "outside/sub" };
        for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
                g_autofree char *p = at(t, dirs[i]);
                g_assert_no_errno(g_mkdir_with_parents(p, 0755));
        }
        g_autofree char *file = at(t, "root/file"), *num = at(t, "root/num");
        g_assert_true(g_file_set_contents(file, "x", -1, NULL));
        g_assert_true(g_file_set_contents(num, "42\n", -1, NULL));
        g_autofree char *link = at(t, "root/link"), *up = at(t, "root/a/up"), *abs = at(t, "root/a/abs");
        g_autofree char *outside = at(t, "outside");
        g_assert_no_errno(symlink("../outside", link));
        g_assert_no_errno(symlink("..", up));
        g_assert_no_errno(symlink(outside, abs));
        g_autofree char *root = at(t, "root");
        t->root_fd = root_open(root);
        g_assert_cmpint(t->root_fd, >=, 0);
}

static void tree_tear_down(Tree *t, gconstpointer data) {
        close(t->root_fd);
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", t->base);
        g_assert_cmpint(system(cmd), ==, 0);
        g_free(t->base);
}

static void assert_same_dir(int fd, const Tree *t, const char *rel) {
        struct stat a, b;
        g_autofree char *p = at(t, rel);
        g_assert_no_errno(fstat(fd, &a));
        g_assert_no_errno(stat(p, &b));
        g_assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

static void test_walks_real_dirs(Tree *t, gconstpointer data) {
        int fd = open_dir_beneath(t->root_fd, "a/b/c");
        g_assert_cmpint(fd, >=, 0);
        assert_same_dir(fd, t, "root/a/b/c");
        g_assert_cmpint(fcntl(fd, F_GETFD) & FD_CLOEXEC, !=, 0);
        close(fd);
        fd = open_dir_beneath(t->root_fd, "a");
        g_assert_cmpint(fd, >=, 0);
        assert_same_dir(fd, t, "root/a");
        close(fd);
        g_assert_cmpint(open_dir_beneath(t->root_fd, "a/nothing"), ==, -ENOENT);
}

static void test_refuses_symlinks(Tree *t, gconstpointer data) {
        /* at the end, in the middle, to a parent, and absolute */
        g_assert_cmpint(open_dir_beneath(t->root_fd, "link"), ==, -ENOTDIR);
        g_assert_cmpint(open_dir_beneath(t->root_fd, "link/sub"), ==, -ENOTDIR);
        g_assert_cmpint(open_dir_beneath(t->root_fd, "a/up"), ==, -ENOTDIR);
        g_assert_cmpint(open_dir_beneath(t->root_fd, "a/up/a"), ==, -ENOTDIR);
        g_assert_cmpint(open_dir_beneath(t->root_fd, "a/abs/sub"), ==, -ENOTDIR);
        /* a file is not a directory either, and ".." never leaves the root */
        g_assert_cmpint(open_dir_beneath(t->root_fd, "file"), ==, -ENOTDIR);
        g_assert_cmpint(open_dir_beneath(t->root_fd, ".."), ==, -EINVAL);
        g_assert_cmpint(open_dir_beneath(t->root_fd, "a/../../outside"), ==, -EINVAL);
}

static void test_read_parsed(Tree *t, gconstpointer data) {
        uint32_t v = 0;
        g_assert_cmpint(read_parsed_at(t->root_fd, "num", parse_uint32, &v), ==, 0);
        g_assert_cmpuint(v, ==, 42);
        /* the parser's verdict, then the read's error */
        g_assert_cmpint(read_parsed_at(t->root_fd, "file", parse_uint32, &v), <, 0);
        g_assert_cmpuint(v, ==, 42);
        g_assert_cmpint(read_parsed_at(t->root_fd, "none", parse_uint32, &v), ==, -ENOENT);
        unsigned ma = 0, mi = 0;
        g_autofree char *dev = at(t, "root/dev");
        g_assert_true(g_file_set_contents(dev, "8:3\n", -1, NULL));
        g_assert_cmpint(read_parsed_at(t->root_fd, "dev", parse_devnum, &ma, &mi), ==, 0);
        g_assert_cmpuint(ma, ==, 8);
        g_assert_cmpuint(mi, ==, 3);
}

/* One read for a file the kernel makes in one show: the whole text all the
 * same, the kernel's (/proc/self/stat, meminfo's every line) and one
 * longer than the first read's buffer; by path too; a missing one named */
static void test_read_single(Tree *t, gconstpointer data) {
        int proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(proc_fd, >=, 0);
        g_autofree char *stat = NULL, *by_path = NULL, *meminfo = NULL, *meminfo_whole = NULL, *big = NULL;
        g_assert_cmpint(read_file_at_single(proc_fd, "self/stat", &stat), ==, 0);
        g_assert_true(g_str_has_suffix(stat, "\n"));
        g_assert_nonnull(strchr(stat, ')'));
        g_assert_cmpint(read_path_single("/proc/self/stat", &by_path), ==, 0);
        g_assert_true(g_str_has_suffix(by_path, "\n"));
        g_assert_cmpint(read_file_at_single(proc_fd, "meminfo", &meminfo), ==, 0);
        g_assert_cmpint(read_file_at(proc_fd, "meminfo", &meminfo_whole), ==, 0);
        g_auto(GStrv) lines = g_strsplit(meminfo, "\n", -1), whole = g_strsplit(meminfo_whole, "\n", -1);
        g_assert_cmpuint(g_strv_length(lines), ==, g_strv_length(whole));
        close(proc_fd);

        g_autofree char *text = g_strnfill(10000, 'x');
        g_autofree char *path = at(t, "root/big");
        g_assert_true(g_file_set_contents(path, text, -1, NULL));
        g_assert_cmpint(read_file_at_single(t->root_fd, "big", &big), ==, 0);
        g_assert_cmpstr(big, ==, text);
        g_autofree char *missing = at(t, "root/none");
        char *none = NULL;
        g_assert_cmpint(read_path_single(missing, &none), ==, -ENOENT);
        g_assert_null(none);
}

static void test_sorted_keys(void) {
        g_autoptr(GHashTable) t = g_hash_table_new(g_str_hash, g_str_equal);
        const char *keys[] = { "pear", "apple", "fig", "banana", "apple2" };
        for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
                g_hash_table_insert(t, (gpointer) keys[i], GUINT_TO_POINTER(i));
        g_autoptr(GPtrArray) sorted = hash_table_sorted_keys(t);
        g_assert_cmpuint(sorted->len, ==, 5);
        const char *want[] = { "apple", "apple2", "banana", "fig", "pear" };
        for (guint i = 0; i < sorted->len; i++)
                g_assert_cmpstr(sorted->pdata[i], ==, want[i]);
        g_assert_true(sorted->pdata[0] == keys[1]); /* borrowed, not copied */
        g_hash_table_remove_all(t);
        g_autoptr(GPtrArray) none = hash_table_sorted_keys(t);
        g_assert_cmpuint(none->len, ==, 0);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add("/fileio/beneath/real-dirs", Tree, NULL, tree_set_up, test_walks_real_dirs, tree_tear_down);
        g_test_add("/fileio/beneath/refuses-symlinks", Tree, NULL, tree_set_up, test_refuses_symlinks,
                   tree_tear_down);
        g_test_add("/fileio/read-parsed", Tree, NULL, tree_set_up, test_read_parsed, tree_tear_down);
        g_test_add("/fileio/read-single", Tree, NULL, tree_set_up, test_read_single, tree_tear_down);
        g_test_add_func("/util/sorted-keys", test_sorted_keys);
        return g_test_run();
}
