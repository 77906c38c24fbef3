/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "detect.h"
#include "fileio.h"
#include "parse.h"
#include "testdir.h"

static void test_parse_syscall(void) {
        long nr = -42;
        g_assert_cmpint(detect_parse_syscall("74 0x3 0x7ffd1000 0x0 0x0 0x0 0x0 0x7ffc2000 0x7f1234\n", &nr), ==, 0);
        g_assert_cmpint(nr, ==, 74);
        g_assert_cmpint(detect_parse_syscall("0 0x3 0x7f219baa7000 0x20000 0x7f2 0xffff 0x0 0x7fff 0x7f21", &nr), ==, 0);
        g_assert_cmpint(nr, ==, 0);
        g_assert_cmpint(detect_parse_syscall("running\n", &nr), ==, -ENODATA);
        g_assert_cmpint(detect_parse_syscall("-1 0x7ffc3a1b2c30 0x7f0e4d5c6b7a\n", &nr), ==, -ENODATA);
        g_assert_cmpint(detect_parse_syscall("", &nr), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall("\n", &nr), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall("sleeping", &nr), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall("74 xyz", &nr), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall("74 0x", &nr), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall("7x 0x1", &nr), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall("-2 0x1 0x2", &nr), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall("+5 0x1", &nr), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall("99999999999999999999999 0x1", &nr), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall(NULL, &nr), ==, -EBADMSG);
        g_assert_cmpint(nr, ==, 0);
}

static void test_real_syscall_file(void) {
        /* The kernel's own format must parse: our own read is what it shows */
        g_autofree char *text = NULL;
        if (!g_file_get_contents("/proc/self/syscall", &text, NULL, NULL)) {
                g_test_skip("/proc/self/syscall cannot be read here");
                return;
        }
        long nr;
        int r = detect_parse_syscall(text, &nr);
        g_assert_true(r == 0 || r == -ENODATA);
}

static void test_is_sync(void) {
        g_assert_true(detect_syscall_is_sync(SYS_fsync));
        g_assert_true(detect_syscall_is_sync(SYS_fdatasync));
        g_assert_true(detect_syscall_is_sync(SYS_syncfs));
        g_assert_true(detect_syscall_is_sync(SYS_msync));
#ifdef SYS_sync
        g_assert_true(detect_syscall_is_sync(SYS_sync));
#endif
#ifdef SYS_sync_file_range
        g_assert_true(detect_syscall_is_sync(SYS_sync_file_range));
#endif
        g_assert_false(detect_syscall_is_sync(SYS_read));
        g_assert_false(detect_syscall_is_sync(SYS_write));
        g_assert_false(detect_syscall_is_sync(-1));
}

static const char mountinfo[] =
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "80 22 0:50 / /home/me/remote\\040dir rw,nosuid,nodev shared:40 - fuse.sshfs me@host:/srv rw,user_id=1000\n"
        "82 22 0:52 / /mnt/plain rw shared:42 - fuse myfs rw,user_id=0\n"
        "83 22 0:53 / /run/user/1000/doc rw shared:43 - fuse.xdg-document-portal portal rw,user_id=1000\n";

static GPtrArray *parse_mounts(void) {
        GPtrArray *mounts = NULL;
        g_assert_cmpint(parse_mountinfo(mountinfo, &mounts), ==, 0);
        return mounts;
}

static void test_fuse_mount_for(void) {
        g_autoptr(GPtrArray) mounts = parse_mounts();
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "sshfs", NULL), ==, "/home/me/remote dir");
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "myfs", NULL), ==, "/mnt/plain");
        /* the kernel cuts comm to 15 characters */
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "xdg-document-po", NULL), ==, "/run/user/1000/doc");
        g_assert_null(detect_fuse_mount_for(mounts, "xdg-document", NULL));
        g_assert_null(detect_fuse_mount_for(mounts, "ext4", NULL));
        g_assert_null(detect_fuse_mount_for(mounts, "bash", NULL));
        g_assert_null(detect_fuse_mount_for(mounts, "", NULL));
        g_assert_null(detect_fuse_mount_for(NULL, "sshfs", NULL));
}

static void test_fuse_mount_for_args(void) {
        g_autoptr(GPtrArray) mounts = NULL;
        g_assert_cmpint(parse_mountinfo("80 22 0:50 / /mnt/a rw - fuse.sshfs h:/a rw\n"
                                        "81 22 0:51 / /mnt/b rw - fuse.sshfs h:/b rw\n", &mounts), ==, 0);
        /* two servers of one kind: the mount point on the command line decides */
        char *b_args[] = { (char *) "sshfs", (char *) "h:/b", (char *) "/mnt/b/", NULL };
        char *x_args[] = { (char *) "sshfs", (char *) "h:/x", (char *) "/mnt/x", NULL };
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "sshfs", b_args), ==, "/mnt/b");
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "sshfs", x_args), ==, "/mnt/a");
}

/* A fake /proc and cgroup mount in one temporary directory. */
typedef struct Fixture {
        char *base;
        int proc_fd;
        int cgroup_fd;
} Fixture;

static void put(const Fixture *f, const char *rel, const char *text) {
        testdir_put(f->base, rel, text);
}

static void put_link(const Fixture *f, const char *rel, const char *target) {
        g_autofree char *p = g_build_filename(f->base, rel, NULL);
        g_autofree char *dir = g_path_get_dirname(p);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(symlink(target, p), ==, 0);
}

static void fixture_set_up(Fixture *f, gconstpointer data) {
        f->base = g_dir_make_tmp("test-detect-XXXXXX", NULL);
        g_assert_nonnull(f->base);

        put_link(f, "proc/123/fd/3", "/dev/fuse");
        put_link(f, "proc/123/fd/0", "/dev/null");
        put(f, "proc/123/comm", "sshfs\n");
        put(f, "proc/123/syscall", "running\n");
        put_link(f, "proc/124/fd/3", "/dev/null");
        put(f, "proc/124/comm", "bash\n");
        put(f, "proc/124/syscall", "-1 0x7ffc3a1b2c30 0x7f0e4d5c6b7a\n");
        put_link(f, "proc/125/fd/1", "/home/me/big.tar");
        put(f, "proc/125/comm", "tar\n");
        g_autofree char *fsync_text = g_strdup_printf("%ld 0x3 0x0 0x0 0x0 0x0 0x0 0x7ffd2000 0x7f9a1000\n",
                                                      (long) SYS_fsync);
        put(f, "proc/125/syscall", fsync_text);

        put(f, "cg/user.slice/sshfs.service/cgroup.procs", "123\n124\n");
        put(f, "cg/user.slice/tar.service/cgroup.procs", "124\n125\n");
        put(f, "cg/user.slice/shell.scope/cgroup.procs", "124\n126\n"); /* 126 is gone */
        put(f, "cg/user.slice/empty.slice/cgroup.procs", "");
        put(f, "cg/user.slice/bad.scope/cgroup.procs", "12x\n");
        put(f, "cg/user.slice/odd\xff.service/cgroup.procs", "126\n"); /* a name that is not UTF-8 */
        put(f, "cg/cgroup.procs", "1\n");

        f->proc_fd = testdir_open(f->base, "proc");
        f->cgroup_fd = testdir_open(f->base, "cg");
}

static void fixture_tear_down(Fixture *f, gconstpointer data) {
        close(f->proc_fd);
        close(f->cgroup_fd);
        testdir_remove(f->base);
        g_free(f->base);
}

static void test_holds_dev_fuse(Fixture *f, gconstpointer data) {
        g_assert_true(detect_holds_dev_fuse(f->proc_fd, 123));
        g_assert_false(detect_holds_dev_fuse(f->proc_fd, 124));
        g_assert_false(detect_holds_dev_fuse(f->proc_fd, 125));
        g_assert_false(detect_holds_dev_fuse(f->proc_fd, 126));
}

static void test_read_pids(Fixture *f, gconstpointer data) {
        g_autoptr(GArray) pids = NULL;
        g_assert_cmpint(detect_read_pids(f->cgroup_fd, "user.slice/tar.service", &pids), ==, 0);
        g_assert_cmpuint(pids->len, ==, 2);
        g_assert_cmpint(g_array_index(pids, pid_t, 0), ==, 124);
        g_assert_cmpint(g_array_index(pids, pid_t, 1), ==, 125);

        g_autoptr(GArray) root = NULL;
        g_assert_cmpint(detect_read_pids(f->cgroup_fd, "", &root), ==, 0);
        g_assert_cmpuint(root->len, ==, 1);

        /* any bytes a cgroup name can hold: its server is detected like another */
        g_autoptr(GArray) odd = NULL;
        g_assert_cmpint(detect_read_pids(f->cgroup_fd, "user.slice/odd\xff.service", &odd), ==, 0);
        g_assert_cmpuint(odd->len, ==, 1);

        g_autoptr(GArray) none = NULL;
        g_assert_cmpint(detect_read_pids(f->cgroup_fd, "user.slice/empty.slice", &none), ==, 0);
        g_assert_cmpuint(none->len, ==, 0);

        GArray *unset = NULL;
        g_assert_cmpint(detect_read_pids(f->cgroup_fd, "user.slice/bad.scope", &unset), ==, -EBADMSG);
        g_assert_cmpint(detect_read_pids(f->cgroup_fd, "user.slice/missing.scope", &unset), ==, -ENOENT);
        g_assert_cmpint(detect_read_pids(f->cgroup_fd, "user.slice/../../proc/123", &unset), ==, -EINVAL);
        g_assert_cmpint(detect_read_pids(f->cgroup_fd, "/user.slice", &unset), ==, -EINVAL);
        g_assert_null(unset);
}

static void test_cgroup_fuse(Fixture *f, gconstpointer data) {
        g_autoptr(GPtrArray) mounts = parse_mounts();
        g_autofree char *reason = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/sshfs.service", mounts, &reason), ==, 1);
        g_assert_cmpstr(reason, ==, "FUSE server sshfs (pid 123) of /home/me/remote dir");

        /* without a mount table the server is still found */
        g_autofree char *bare = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/sshfs.service", NULL, &bare), ==, 1);
        g_assert_cmpstr(bare, ==, "FUSE server sshfs (pid 123)");
}

static void test_cgroup_syncing(Fixture *f, gconstpointer data) {
        g_autofree char *reason = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/tar.service", NULL, &reason), ==, 1);
        g_assert_cmpstr(reason, ==, "syncing: pid 125 (tar) in fsync");
}

static void test_cgroup_none(Fixture *f, gconstpointer data) {
        g_autoptr(GPtrArray) mounts = parse_mounts();
        char *reason = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/shell.scope", mounts, &reason), ==, 0);
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/empty.slice", mounts, &reason), ==, 0);
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/missing.scope", mounts, &reason), ==,
                        -ENOENT);
        g_assert_null(reason);
}

static void test_real_self(void) {
        /* The real /proc: this test holds no /dev/fuse */
        int proc_fd = root_open("/proc");
        if (proc_fd < 0) {
                g_test_skip("no /proc");
                return;
        }
        g_assert_false(detect_holds_dev_fuse(proc_fd, getpid()));
        close(proc_fd);
}

#define ADD_FIXTURE(path, fn) g_test_add(path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/detect/parse-syscall", test_parse_syscall);
        g_test_add_func("/detect/real-syscall-file", test_real_syscall_file);
        g_test_add_func("/detect/is-sync", test_is_sync);
        g_test_add_func("/detect/fuse-mount-for-args", test_fuse_mount_for_args);
        g_test_add_func("/detect/fuse-mount-for", test_fuse_mount_for);
        g_test_add_func("/detect/real-self", test_real_self);
        ADD_FIXTURE("/detect/holds-dev-fuse", test_holds_dev_fuse);
        ADD_FIXTURE("/detect/read-pids", test_read_pids);
        ADD_FIXTURE("/detect/cgroup-fuse", test_cgroup_fuse);
        ADD_FIXTURE("/detect/cgroup-syncing", test_cgroup_syncing);
        ADD_FIXTURE("/detect/cgroup-none", test_cgroup_none);
        return g_test_run();
}
