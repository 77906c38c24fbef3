/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
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

static void test_parse_syscall_args(void) {
        long nr = -42;
        uint64_t a[DETECT_SYSCALL_ARGS] = { 0 };
        g_assert_cmpint(detect_parse_syscall_args("257 0xffffffffffffff9c 0x7ffd1000 0x80000 0x0 0x0 0x5 0x7ffc2000 "
                                                  "0x7f1234\n", &nr, a), ==, 0);
        g_assert_cmpint(nr, ==, 257);
        g_assert_cmpuint(a[0], ==, UINT64_C(0xffffffffffffff9c));
        g_assert_cmpuint(a[1], ==, 0x7ffd1000);
        g_assert_cmpuint(a[2], ==, 0x80000);
        g_assert_cmpuint(a[5], ==, 5);
        /* the number alone is enough for the sync test, not for the file */
        g_assert_cmpint(detect_parse_syscall_args("74 0x3\n", &nr, a), ==, -EBADMSG);
        g_assert_cmpint(detect_parse_syscall("74 0x3\n", &nr), ==, 0);
        g_assert_cmpint(detect_parse_syscall_args("running\n", &nr, a), ==, -ENODATA);
        g_assert_cmpint(detect_parse_syscall_args("0 0x3 0x4 0x5 0x6 0x7 0xq 0x1 0x2\n", &nr, a), ==, -EBADMSG);
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
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "sshfs", NULL, NULL), ==, "/home/me/remote dir");
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "myfs", NULL, NULL), ==, "/mnt/plain");
        /* the kernel cuts comm to 15 characters */
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "xdg-document-po", NULL, NULL), ==, "/run/user/1000/doc");
        g_assert_null(detect_fuse_mount_for(mounts, "xdg-document", NULL, NULL));
        g_assert_null(detect_fuse_mount_for(mounts, "ext4", NULL, NULL));
        g_assert_null(detect_fuse_mount_for(mounts, "bash", NULL, NULL));
        g_assert_null(detect_fuse_mount_for(mounts, "", NULL, NULL));
        g_assert_null(detect_fuse_mount_for(NULL, "sshfs", NULL, NULL));
}

static void test_fuse_mount_for_args(void) {
        g_autoptr(GPtrArray) mounts = NULL;
        g_assert_cmpint(parse_mountinfo("80 22 0:50 / /mnt/a rw - fuse.sshfs h:/a rw\n"
                                        "81 22 0:51 / /mnt/b rw - fuse.sshfs h:/b rw\n", &mounts), ==, 0);
        /* two servers of one kind: the mount point on the command line decides */
        char *b_args[] = { (char *) "sshfs", (char *) "h:/b", (char *) "/mnt/b/", NULL };
        char *x_args[] = { (char *) "sshfs", (char *) "h:/x", (char *) "/mnt/x", NULL };
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "sshfs", b_args, NULL), ==, "/mnt/b");
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "sshfs", x_args, NULL), ==, "/mnt/a");
}

static const char plain_mountinfo[] =
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "84 22 0:54 / /home/me/mirror rw - fuse /home/me/src rw,user_id=1000\n"
        "85 22 0:55 / /mnt/a rw - fuse.sshfs h:/a rw\n"
        "86 22 0:56 / /mnt/b rw - fuse /home/me/mirror rw\n";

/* Plain "fuse" mounts whose source is no command (bindfs's is its source
 * directory; a wrapper's server has some other name): the arguments. */
static void test_fuse_mount_for_plain(void) {
        g_autoptr(GPtrArray) mounts = NULL;
        g_assert_cmpint(parse_mountinfo(plain_mountinfo, &mounts), ==, 0);
        char *bindfs[] = { (char *) "bindfs", (char *) "-f", (char *) "/home/me/src", (char *) "/home/me/mirror",
                           NULL };
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "bindfs", bindfs, NULL), ==, "/home/me/mirror");
        /* relative to the server's cwd */
        char *relative[] = { (char *) "bindfs", (char *) "src", (char *) "./mirror/", NULL };
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "bindfs", relative, "/home/me"), ==, "/home/me/mirror");
        /* the server moved (bindfs into its source, daemons to "/"): the
         * one mount point ending in the argument */
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "bindfs", relative, "/home/me/src"), ==, "/home/me/mirror");
        g_autoptr(GPtrArray) two = NULL;
        g_assert_cmpint(parse_mountinfo("84 22 0:54 / /home/me/mirror rw - fuse /home/me/src rw\n"
                                        "87 22 0:57 / /home/you/mirror rw - fuse /home/you/src rw\n", &two), ==, 0);
        g_assert_null(detect_fuse_mount_for(two, "bindfs", relative, "/"));
        g_assert_cmpstr(detect_fuse_mount_for(two, "bindfs", relative, "/home/you"), ==, "/home/you/mirror");
        /* a mirror of a FUSE mount: the mount point comes last */
        char *chained[] = { (char *) "bindfs", (char *) "/home/me/mirror", (char *) "/mnt/b", NULL };
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "bindfs", chained, NULL), ==, "/mnt/b");
        /* a server started by a wrapper, under the interpreter's name */
        char *wrapped[] = { (char *) "python3", (char *) "/usr/lib/myfs.py", (char *) "/mnt/b", NULL };
        g_assert_cmpstr(detect_fuse_mount_for(mounts, "python3", wrapped, "/"), ==, "/mnt/b");
        /* a mount whose type names another server is not this one's */
        char *other[] = { (char *) "bindfs", (char *) "/mnt/a", NULL };
        g_assert_null(detect_fuse_mount_for(mounts, "bindfs", other, NULL));
        /* the program itself is no argument */
        char *self[] = { (char *) "/mnt/b", NULL };
        g_assert_null(detect_fuse_mount_for(mounts, "b", self, NULL));
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

static void put_bytes(const Fixture *f, const char *rel, const char *data, size_t n) {
        g_autofree char *p = g_build_filename(f->base, rel, NULL);
        g_autofree char *dir = g_path_get_dirname(p);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_true(g_file_set_contents(p, data, (gssize) n, NULL));
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
        put(f, "proc/123/stat", "123 (sshfs) S 1 123 123 0 -1 4194560 0\n");
        put(f, "proc/124/stat", "124 (bash) S 1 124 124 0 -1 4194560 0\n");
        put(f, "proc/125/stat", "125 (tar) D 1 125 125 0 -1 4194560 0\n");

        put_link(f, "proc/127/fd/5", "/dev/fuse");
        put(f, "proc/127/comm", "bindfs\n");
        put_bytes(f, "proc/127/cmdline", "bindfs\0src\0mirror\0", 18);
        put_link(f, "proc/127/cwd", "/home/me/src"); /* bindfs goes there */
        put(f, "proc/127/mountinfo", plain_mountinfo);

        put(f, "cg/user.slice/sshfs.service/cgroup.procs", "123\n124\n");
        put(f, "cg/user.slice/mirror.service/cgroup.procs", "127\n");
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
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/sshfs.service", mounts, true, NULL, &reason), ==, 1);
        g_assert_cmpstr(reason, ==, "FUSE server sshfs (pid 123) of /home/me/remote dir");

        /* without a mount table the server is still found */
        g_autofree char *bare = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/sshfs.service", NULL, true, NULL, &bare), ==, 1);
        g_assert_cmpstr(bare, ==, "FUSE server sshfs (pid 123)");
}

/* bindfs, relative arguments, its own mount table: the fridged one has no
 * such mount (as in another mount namespace) */
static void test_cgroup_plain_fuse(Fixture *f, gconstpointer data) {
        g_autoptr(GPtrArray) mounts = parse_mounts();
        g_autofree char *reason = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/mirror.service", mounts, true, NULL, &reason), ==, 1);
        g_assert_cmpstr(reason, ==, "FUSE server bindfs (pid 127) of /home/me/mirror");
}

/* ---- the mount of a blocked task's call ---- */

static const char blocked_mountinfo[] =
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "90 22 0:60 / /mnt/slow rw - fuse.slowfs slowfs rw\n"
        "91 22 0:61 / /mnt/mirror rw - fuse /srv/data rw\n"
        "92 91 0:62 / /mnt/mirror/deep rw - fuse.sshfs h:/ rw\n";

#define AT_CWD_ARG UINT64_C(0xffffffffffffff9c)
#define PATH_ADDR 0x1000

/* Task `tid` blocked in call `nr` with `args`, its path argument (if any)
 * at PATH_ADDR of its memory. */
static void put_task(const Fixture *f, const char *tid, long nr, const uint64_t *args, const char *path) {
        g_autofree char *sc = g_strdup_printf("proc/%s/syscall", tid);
        g_autofree char *text = g_strdup_printf("%ld 0x%" G_GINT64_MODIFIER "x 0x%" G_GINT64_MODIFIER
                                                "x 0x%" G_GINT64_MODIFIER "x 0x0 0x0 0x0 0x7ffd2000 0x7f9a1000\n",
                                                nr, args[0], args[1], args[2]);
        put(f, sc, text);
        if (path) {
                g_autofree char *mem = g_strdup_printf("proc/%s/mem", tid);
                g_autofree char *buf = g_malloc0(PATH_ADDR + strlen(path) + 1);
                memcpy(buf + PATH_ADDR, path, strlen(path));
                put_bytes(f, mem, buf, PATH_ADDR + strlen(path) + 1);
        }
}

/* The mount point, g_free'd at the end of the test */
static const char *blocked_on(const Fixture *f, const char *tid) {
        g_autoptr(GPtrArray) mounts = NULL;
        g_assert_cmpint(parse_mountinfo(blocked_mountinfo, &mounts), ==, 0);
        const MountEntry *m = detect_blocked_mount(f->proc_fd, tid, mounts);
        if (!m)
                return NULL;
        char *mp = g_strdup(m->mount_point);
        g_test_queue_free(mp);
        return mp;
}

static void test_blocked_on_fd(Fixture *f, gconstpointer data) {
        /* fdinfo's mnt_id wins over the name the fd shows */
        put_task(f, "300", SYS_read, (uint64_t[]) { 3, 0x5000, 4096 }, NULL);
        put(f, "proc/300/fdinfo/3", "pos:\t0\nflags:\t0100000\nmnt_id:\t91\nino:\t5\n");
        put_link(f, "proc/300/fd/3", "/mnt/slow/renamed");
        g_assert_cmpstr(blocked_on(f, "300"), ==, "/mnt/mirror");
        /* without fdinfo (or a mount id from elsewhere), the fd's path */
        put_task(f, "301", SYS_fsync, (uint64_t[]) { 4, 0, 0 }, NULL);
        put_link(f, "proc/301/fd/4", "/mnt/mirror/deep/x");
        g_assert_cmpstr(blocked_on(f, "301"), ==, "/mnt/mirror/deep");
        put_task(f, "302", SYS_getdents64, (uint64_t[]) { 6, 0, 0 }, NULL);
        put(f, "proc/302/fdinfo/6", "pos:\t0\nflags:\t0100000\nmnt_id:\t999\n");
        put_link(f, "proc/302/fd/6", "/mnt/slow");
        g_assert_cmpstr(blocked_on(f, "302"), ==, "/mnt/slow");
        /* the fd is gone */
        put_task(f, "303", SYS_write, (uint64_t[]) { 9, 0, 0 }, NULL);
        g_assert_null(blocked_on(f, "303"));
}

static void test_blocked_on_path(Fixture *f, gconstpointer data) {
        /* relative to the cwd */
        put_task(f, "310", SYS_openat, (uint64_t[]) { AT_CWD_ARG, PATH_ADDR, 0 }, "data/../f");
        put_link(f, "proc/310/cwd", "/mnt/slow");
        g_assert_cmpstr(blocked_on(f, "310"), ==, "/mnt/slow");
        /* relative to a dirfd */
        put_task(f, "311", SYS_openat, (uint64_t[]) { 5, PATH_ADDR, 0 }, "x");
        put_link(f, "proc/311/fd/5", "/mnt/mirror/deep");
        put_link(f, "proc/311/cwd", "/");
        g_assert_cmpstr(blocked_on(f, "311"), ==, "/mnt/mirror/deep");
        /* absolute, resolved lexically */
        put_task(f, "312", SYS_statx, (uint64_t[]) { AT_CWD_ARG, PATH_ADDR, 0 }, "/mnt/mirror/deep/../a");
        g_assert_cmpstr(blocked_on(f, "312"), ==, "/mnt/mirror");
        /* AT_EMPTY_PATH: the dirfd's own file */
        put_task(f, "313", SYS_statx, (uint64_t[]) { 7, PATH_ADDR, AT_EMPTY_PATH }, "");
        put(f, "proc/313/fdinfo/7", "pos:\t0\nflags:\t0100000\nmnt_id:\t90\n");
        g_assert_cmpstr(blocked_on(f, "313"), ==, "/mnt/slow");
        /* a path on no FUSE mount is on the root */
        put_task(f, "314", SYS_openat, (uint64_t[]) { AT_CWD_ARG, PATH_ADDR, 0 }, "/etc/passwd");
        g_assert_cmpstr(blocked_on(f, "314"), ==, "/");
#ifdef SYS_open
        put_task(f, "315", SYS_open, (uint64_t[]) { PATH_ADDR, 0, 0 }, "/mnt/mirror/deep");
        g_assert_cmpstr(blocked_on(f, "315"), ==, "/mnt/mirror/deep");
#endif
        /* memory not readable (no ptrace access) */
        put_task(f, "316", SYS_openat, (uint64_t[]) { AT_CWD_ARG, PATH_ADDR, 0 }, NULL);
        put_link(f, "proc/316/cwd", "/mnt/slow");
        g_assert_null(blocked_on(f, "316"));
}

static void test_blocked_on_nothing(Fixture *f, gconstpointer data) {
        g_assert_null(blocked_on(f, "123")); /* running */
        g_assert_null(blocked_on(f, "124")); /* not in a system call */
        put_task(f, "320", SYS_nanosleep, (uint64_t[]) { PATH_ADDR, 0, 0 }, "/mnt/slow");
        g_assert_null(blocked_on(f, "320")); /* no file */
        g_assert_null(blocked_on(f, "399")); /* gone */
        put(f, "proc/321/syscall", "0 0x3\n"); /* arguments cut */
        g_assert_null(blocked_on(f, "321"));
}

static void test_cgroup_syncing(Fixture *f, gconstpointer data) {
        g_autofree char *reason = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/tar.service", NULL, true, NULL, &reason), ==, 1);
        g_assert_cmpstr(reason, ==, "syncing: pid 125 (tar) in fsync");
}

/* Only a task in state D has its syscall read: a task stopped in fsync's
 * entry but not waiting (S, R) holds no writeback back */
static void test_cgroup_syncing_needs_state_d(Fixture *f, gconstpointer data) {
        g_autofree char *reason = NULL;
        put(f, "proc/125/stat", "125 (tar) ) S 1 125 125 0 -1 4194560 0\n");
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/tar.service", NULL, true, NULL, &reason), ==, 0);
        put(f, "proc/125/stat", "125 (tar) D) D 1 125 125 0 -1 4194560 0\n");
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/tar.service", NULL, true, NULL, &reason), ==, 1);
        g_assert_cmpstr(reason, ==, "syncing: pid 125 (tar) in fsync");
}

/* With no FUSE connection anywhere, /dev/fuse holders are not looked for;
 * what says so is fusectl's directory, there and empty */
static void test_no_fuse_connections(Fixture *f, gconstpointer data) {
        g_autoptr(GPtrArray) mounts = parse_mounts();
        g_autofree char *reason = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/sshfs.service", mounts, false, NULL, &reason), ==, 0);

        g_autofree char *sys = g_build_filename(f->base, "sysroot", NULL);
        g_autofree char *conn = g_build_filename(sys, "sys/fs/fuse/connections", NULL);
        g_assert_cmpint(g_mkdir_with_parents(sys, 0755), ==, 0);
        int fd = open(sys, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_false(detect_no_fuse_connections(fd)); /* no fusectl: unknown */
        /* the directory without fusectl on it (fuse loaded, fusectl not
         * mounted): says nothing either */
        g_assert_cmpint(g_mkdir_with_parents(conn, 0755), ==, 0);
        g_assert_false(detect_no_fuse_connections(fd));
        close(fd);
        /* the host's, when fusectl is mounted there: its emptiness counts */
        struct statfs sfs;
        int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(root, >=, 0);
        if (statfs("/sys/fs/fuse/connections", &sfs) == 0 && sfs.f_type == 0x65735543) {
                g_autoptr(GDir) dir = g_dir_open("/sys/fs/fuse/connections", 0, NULL);
                g_assert_nonnull(dir);
                g_assert_cmpint(detect_no_fuse_connections(root), ==, g_dir_read_name(dir) == NULL);
        } else
                g_test_message("fusectl is not mounted on this host's /sys/fs/fuse/connections");
        close(root);
}

/* Another user reads pid 0 and FRIDGE_PLAN_HIDDEN; the owner and root the whole */
static void test_cgroup_private(Fixture *f, gconstpointer data) {
        g_autoptr(GPtrArray) mounts = parse_mounts();
        g_autoptr(GHashTable) priv = detect_private_reasons_new();
        g_autofree char *fuse = NULL, *sync = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/sshfs.service", mounts, true, priv, &fuse), ==, 1);
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/tar.service", NULL, true, priv, &sync), ==, 1);
        g_assert_cmpuint(g_hash_table_size(priv), ==, 2);

        uid_t owner = getuid(), other = owner + 1 == 0 ? 2 : owner + 1;
        g_assert_cmpstr(detect_reason_for(priv, fuse, owner), ==, fuse);
        g_assert_cmpstr(detect_reason_for(priv, fuse, 0), ==, fuse);
        g_assert_cmpstr(detect_reason_for(priv, fuse, other), ==, "FUSE server [hidden] (pid 0) of [hidden]");
        g_assert_cmpstr(detect_reason_for(priv, sync, other), ==, "syncing: pid 0 ([hidden]) in fsync");
        g_assert_cmpstr(detect_reason_for(priv, sync, owner), ==, sync);
        /* what names nobody's details is the same for all */
        g_assert_cmpstr(detect_reason_for(priv, "default", other), ==, "default");
        g_assert_cmpstr(detect_reason_for(NULL, sync, other), ==, sync);
}

static void test_cgroup_none(Fixture *f, gconstpointer data) {
        g_autoptr(GPtrArray) mounts = parse_mounts();
        char *reason = NULL;
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/shell.scope", mounts, true, NULL, &reason), ==, 0);
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/empty.slice", mounts, true, NULL, &reason), ==, 0);
        g_assert_cmpint(detect_cgroup(f->cgroup_fd, f->proc_fd, "user.slice/missing.scope", mounts, true, NULL, &reason), ==,
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
        g_test_add_func("/detect/parse-syscall-args", test_parse_syscall_args);
        g_test_add_func("/detect/real-syscall-file", test_real_syscall_file);
        g_test_add_func("/detect/is-sync", test_is_sync);
        g_test_add_func("/detect/fuse-mount-for-args", test_fuse_mount_for_args);
        g_test_add_func("/detect/fuse-mount-for", test_fuse_mount_for);
        g_test_add_func("/detect/fuse-mount-for-plain", test_fuse_mount_for_plain);
        g_test_add_func("/detect/real-self", test_real_self);
        ADD_FIXTURE("/detect/holds-dev-fuse", test_holds_dev_fuse);
        ADD_FIXTURE("/detect/read-pids", test_read_pids);
        ADD_FIXTURE("/detect/cgroup-fuse", test_cgroup_fuse);
        ADD_FIXTURE("/detect/cgroup-syncing", test_cgroup_syncing);
        ADD_FIXTURE("/detect/cgroup-syncing-needs-state-d", test_cgroup_syncing_needs_state_d);
        ADD_FIXTURE("/detect/no-fuse-connections", test_no_fuse_connections);
        ADD_FIXTURE("/detect/cgroup-plain-fuse", test_cgroup_plain_fuse);
        ADD_FIXTURE("/detect/blocked-on-fd", test_blocked_on_fd);
        ADD_FIXTURE("/detect/blocked-on-path", test_blocked_on_path);
        ADD_FIXTURE("/detect/blocked-on-nothing", test_blocked_on_nothing);
        ADD_FIXTURE("/detect/cgroup-none", test_cgroup_none);
        ADD_FIXTURE("/detect/cgroup-private", test_cgroup_private);
        return g_test_run();
}
