/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "fileio.h"
#include "flush.h"
#include "log.h"
#include "testdir.h"

static char *make_proc(const char *mountinfo, const char *meminfo) {
        char *dir = g_dir_make_tmp("fridge-proc-XXXXXX", NULL);
        g_autofree char *self = g_build_filename(dir, "self", NULL);
        g_assert_cmpint(g_mkdir(self, 0755), ==, 0);
        g_autofree char *mi = g_build_filename(self, "mountinfo", NULL);
        g_autofree char *mem = g_build_filename(dir, "meminfo", NULL);
        g_assert_true(g_file_set_contents(mi, mountinfo, -1, NULL));
        if (meminfo)
                g_assert_true(g_file_set_contents(mem, meminfo, -1, NULL));
        return dir;
}

static void test_backing(void) {
        g_assert_true(flush_fstype_has_backing("ext4"));
        g_assert_true(flush_fstype_has_backing("fuse.sshfs"));
        g_assert_true(flush_fstype_has_backing("nfs4"));
        g_assert_false(flush_fstype_has_backing("tmpfs"));
        g_assert_false(flush_fstype_has_backing("proc"));
        g_assert_false(flush_fstype_has_backing("cgroup2"));
        g_assert_false(flush_fstype_has_backing(""));
}

static void test_list_mounts(void) {
        g_autofree char *dir = make_proc(
                "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                "23 22 0:21 / /proc rw,nosuid - proc proc rw\n"
                "24 22 0:22 / /tmp rw - tmpfs tmpfs rw\n"
                "25 22 8:2 / /boot ro,relatime - ext4 /dev/sda2 ro\n"
                "26 22 8:1 /home /home rw,relatime - ext4 /dev/sda1 rw\n"   /* same super block as / */
                "27 22 0:45 / /mnt/my\\040disk rw - fuse.sshfs me@h:/ rw\n"
                "28 22 8:3 / /data rw - xfs /dev/sda3 ro\n"                 /* read-only super block */
                "29 22 8:4 / /srv ro,relatime - ext4 /dev/sda4 rw\n",       /* read-only for us only */
                NULL);
        int fd = root_open(dir);
        g_assert_cmpint(fd, >=, 0);

        g_auto(GStrv) mounts = NULL;
        g_assert_cmpint(flush_list_mounts(fd, &mounts), ==, 0);
        g_assert_cmpuint(g_strv_length(mounts), ==, 3);
        g_assert_cmpstr(mounts[0], ==, "/");
        g_assert_cmpstr(mounts[1], ==, "/mnt/my disk");
        g_assert_cmpstr(mounts[2], ==, "/srv");
        close(fd);
        testdir_remove(dir);
}

/* A host with thousands of mounts: a mount table of 3 MiB (past the cap
 * other kernel files get) is read whole, the last mount included */
static void test_list_mounts_huge(void) {
        g_autoptr(GString) table = g_string_new("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n");
        for (unsigned i = 0; table->len < 3 * 1024 * 1024; i++)
                g_string_append_printf(table, "%u 22 0:%u / /run/many/m%u rw,nosuid - tmpfs tmpfs rw\n", 100 + i,
                                       100 + i, i);
        g_string_append(table, "99999 22 8:9 / /last rw,relatime - ext4 /dev/sdz1 rw\n");
        g_autofree char *dir = make_proc(table->str, NULL);
        int fd = root_open(dir);
        g_assert_cmpint(fd, >=, 0);
        g_autofree char *capped = NULL;
        g_assert_cmpint(read_file_at(fd, "self/mountinfo", &capped), ==, -EFBIG);
        g_auto(GStrv) mounts = NULL;
        g_assert_cmpint(flush_list_mounts(fd, &mounts), ==, 0);
        g_assert_cmpuint(g_strv_length(mounts), ==, 2);
        g_assert_cmpstr(mounts[1], ==, "/last");
        close(fd);
        testdir_remove(dir);
}

static void test_dirty(void) {
        g_autofree char *dir = make_proc("", "Dirty: 100 kB\nWriteback: 28 kB\n");
        int fd = root_open(dir);
        uint64_t kib = 0;
        g_assert_cmpint(flush_read_dirty(fd, &kib), ==, 0);
        g_assert_cmpuint(kib, ==, 128);
        close(fd);
        testdir_remove(dir);
}

static void test_job_runs(void) {
        /* syncfs on a real directory succeeds; a missing one is reported, not fatal */
        g_autofree char *dir = g_dir_make_tmp("fridge-flush-XXXXXX", NULL);
        char **paths = g_new0(char *, 3);
        paths[0] = g_strdup(dir);
        paths[1] = g_strdup("/nonexistent/fridge-mount");
        FlushJob *j = NULL;
        g_assert_cmpint(flush_job_new(paths, &j), ==, 0);
        g_assert_cmpint(flush_job_run(j), ==, -ENOENT);
        flush_job_free(j);
        testdir_remove(dir);
}

static unsigned sync_all_calls;

static void count_sync_all(void) {
        sync_all_calls++;
}

static void test_job_without_mount_table(void) {
        /* an unreadable mountinfo must not crash the flush: it syncs
         * everything (a stand-in here: the host's sync() could wait on any
         * stuck mount of this machine) */
        FlushJob *j = NULL;
        g_assert_cmpint(flush_job_new(NULL, &j), ==, 0);
        flush_job_set_sync_all(j, count_sync_all);
        g_assert_cmpint(flush_job_run(j), ==, 0);
        g_assert_cmpuint(sync_all_calls, ==, 1);
        flush_job_free(j);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        log_set_max_level(LOG_ERR);
        g_test_add_func("/flush/backing", test_backing);
        g_test_add_func("/flush/list-mounts", test_list_mounts);
        g_test_add_func("/flush/list-mounts-huge", test_list_mounts_huge);
        g_test_add_func("/flush/dirty", test_dirty);
        g_test_add_func("/flush/job", test_job_runs);
        g_test_add_func("/flush/job-without-mount-table", test_job_without_mount_table);
        return g_test_run();
}
