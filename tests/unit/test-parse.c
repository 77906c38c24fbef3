/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib.h>

#include "parse.h"

static void test_word_list_brackets(void) {
        g_auto(GStrv) words = NULL;
        g_autofree char *current = NULL;

        g_assert_cmpint(parse_word_list("s2idle [deep]\n", &words, &current), ==, 0);
        g_assert_cmpstr(current, ==, "deep");
        g_assert_cmpuint(g_strv_length(words), ==, 2);
        g_assert_cmpstr(words[0], ==, "s2idle");
        g_assert_cmpstr(words[1], ==, "deep");
}

static void test_word_list_plain(void) {
        g_auto(GStrv) words = NULL;
        g_autofree char *current = NULL;

        g_assert_cmpint(parse_word_list("freeze mem disk\n", &words, &current), ==, 0);
        g_assert_null(current);
        g_assert_cmpuint(g_strv_length(words), ==, 3);
        g_assert_true(g_strv_contains((const char *const *) words, "disk"));
}

static void test_word_list_empty(void) {
        g_auto(GStrv) words = NULL;
        g_assert_cmpint(parse_word_list("\n", &words, NULL), ==, 0);
        g_assert_cmpuint(g_strv_length(words), ==, 0);
}

static void test_word_list_malformed(void) {
        const char *bad[] = { "[deep", "deep]", "[s2idle] [deep]", "[]", "de$ep", "[de ep]" };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_auto(GStrv) words = NULL;
                g_autofree char *current = NULL;
                g_assert_cmpint(parse_word_list(bad[i], &words, &current), ==, -EBADMSG);
                g_assert_null(words);
        }
}

static void test_uint(void) {
        uint64_t v;
        uint32_t u;
        g_assert_cmpint(parse_uint64("42\n", &v), ==, 0);
        g_assert_cmpuint(v, ==, 42);
        g_assert_cmpint(parse_uint64("18446744073709551615", &v), ==, 0);
        g_assert_cmpint(parse_uint64("18446744073709551616", &v), ==, -ERANGE);
        g_assert_cmpint(parse_uint64("", &v), ==, -EBADMSG);
        g_assert_cmpint(parse_uint64("-1", &v), ==, -EBADMSG);
        g_assert_cmpint(parse_uint64("12abc", &v), ==, -EBADMSG);
        g_assert_cmpint(parse_uint32("4294967296", &u), ==, -ERANGE);
        g_assert_cmpint(parse_uint32(" 7 ", &u), ==, 0);
        g_assert_cmpuint(u, ==, 7);
}

static const char meminfo_sample[] = "MemTotal:       16303012 kB\n"
                                     "MemFree:         1036836 kB\n"
                                     "Dirty:            421888 kB\n"
                                     "Writeback:          2048 kB\n"
                                     "WritebackTmp:        999 kB\n";

static void test_meminfo(void) {
        MeminfoDirty d;
        g_assert_cmpint(parse_meminfo(meminfo_sample, &d), ==, 0);
        g_assert_cmpuint(d.dirty_kib, ==, 421888);
        /* WritebackTmp must not be mistaken for Writeback */
        g_assert_cmpuint(d.writeback_kib, ==, 2048);
}

static void test_meminfo_malformed(void) {
        MeminfoDirty d;
        g_assert_cmpint(parse_meminfo("MemTotal: 1 kB\n", &d), ==, -EBADMSG);
        g_assert_cmpint(parse_meminfo("Dirty: x kB\nWriteback: 0 kB\n", &d), ==, -EBADMSG);
        g_assert_cmpint(parse_meminfo("Dirty: 5\nWriteback: 0 kB\n", &d), ==, -EBADMSG);
}

static const char mountinfo_sample[] =
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
        "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
        "40 22 0:45 / /mnt/my\\040disk rw,relatime - fuse.sshfs me@host:/x rw,user_id=0,group_id=0\n"
        "41 22 8:2 / /boot ro,relatime - ext4 /dev/sda2 ro\n"
        "42 22 8:1 /home /home rw,relatime - ext4 /dev/sda1 rw\n";

static void test_mountinfo(void) {
        g_autoptr(GPtrArray) mounts = NULL;
        g_assert_cmpint(parse_mountinfo(mountinfo_sample, &mounts), ==, 0);
        g_assert_cmpuint(mounts->len, ==, 5);

        const MountEntry *root = mounts->pdata[0];
        g_assert_cmpuint(root->mount_id, ==, 22);
        g_assert_cmpuint(root->major, ==, 8);
        g_assert_cmpuint(root->minor, ==, 1);
        g_assert_cmpstr(root->mount_point, ==, "/");
        g_assert_cmpstr(root->fstype, ==, "ext4");
        g_assert_cmpstr(root->source, ==, "/dev/sda1");

        const MountEntry *sshfs = mounts->pdata[2];
        g_assert_cmpstr(sshfs->mount_point, ==, "/mnt/my disk");
        g_assert_cmpstr(sshfs->fstype, ==, "fuse.sshfs");
        g_assert_cmpstr(sshfs->source, ==, "me@host:/x");
        g_assert_true(mount_options_has(sshfs->mount_options, "rw"));
        g_assert_false(mount_options_has(((MountEntry *) mounts->pdata[3])->mount_options, "rw"));
}

static void test_mountinfo_malformed(void) {
        g_autoptr(GPtrArray) mounts = NULL;
        g_assert_cmpint(parse_mountinfo("22 1 8:1 / /\n", &mounts), ==, -EBADMSG);
        g_assert_cmpint(parse_mountinfo("x 1 8:1 / / rw - ext4 /dev/sda1 rw\n", &mounts), ==, -EBADMSG);
        g_assert_cmpint(parse_mountinfo("22 1 81 / / rw - ext4 /dev/sda1 rw\n", &mounts), ==, -EBADMSG);
        g_assert_null(mounts);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/parse/word-list/brackets", test_word_list_brackets);
        g_test_add_func("/parse/word-list/plain", test_word_list_plain);
        g_test_add_func("/parse/word-list/empty", test_word_list_empty);
        g_test_add_func("/parse/word-list/malformed", test_word_list_malformed);
        g_test_add_func("/parse/uint", test_uint);
        g_test_add_func("/parse/meminfo", test_meminfo);
        g_test_add_func("/parse/meminfo/malformed", test_meminfo_malformed);
        g_test_add_func("/parse/mountinfo", test_mountinfo);
        g_test_add_func("/parse/mountinfo/malformed", test_mountinfo_malformed);
        return g_test_run();
}
