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

static void test_swaps(void) {
        g_autoptr(GPtrArray) s = NULL;
        g_assert_cmpint(parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                                    "/dev/vdb                                partition\t1048572\t\t512\t\t-2\n"
                                    "/swap\\040file                            file\t\t2048\t\t0\t\t10\n",
                                    &s), ==, 0);
        g_assert_cmpuint(s->len, ==, 2);
        SwapEntry *a = s->pdata[0], *b = s->pdata[1];
        g_assert_cmpstr(a->path, ==, "/dev/vdb");
        g_assert_true(a->is_partition);
        g_assert_cmpuint(a->size_kib, ==, 1048572);
        g_assert_cmpuint(a->used_kib, ==, 512);
        g_assert_cmpint(a->priority, ==, -2);
        g_assert_cmpstr(b->path, ==, "/swap file");
        g_assert_false(b->is_partition);
        g_assert_cmpint(b->priority, ==, 10);

        g_autoptr(GPtrArray) none = NULL;
        g_assert_cmpint(parse_swaps("Filename Type Size Used Priority\n", &none), ==, 0);
        g_assert_cmpuint(none->len, ==, 0);
}

static void test_swaps_malformed(void) {
        static const char *const bad[] = {
                "",                                                     /* no header */
                "/dev/vdb partition 1 0 -2\n",                          /* no header */
                "Filename\n/dev/vdb partition 1 0\n",                   /* a field short */
                "Filename\n/dev/vdb partition 1 0 -2 extra\n",          /* a field long */
                "Filename\n/dev/vdb disk 1 0 -2\n",                     /* unknown type */
                "Filename\n/dev/vdb partition 1 2 -2\n",                /* used > size */
                "Filename\n/dev/vdb partition -1 0 -2\n",
                "Filename\n/dev/vdb partition 1 0 high\n",
                "Filename\n/dev/vdb partition 1 0 99999999999\n",
        };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                GPtrArray *s = NULL;
                g_assert_cmpint(parse_swaps(bad[i], &s), ==, -EBADMSG);
                g_assert_null(s);
        }
}

static void test_meminfo_kib(void) {
        uint64_t v = 0;
        g_assert_cmpint(parse_meminfo_kib(meminfo_sample, "MemTotal", &v), ==, 0);
        g_assert_cmpuint(v, ==, 16303012);
        g_assert_cmpint(parse_meminfo_kib(meminfo_sample, "Active(anon)", &v), ==, -ENOENT);
        g_assert_cmpint(parse_meminfo_kib("Active(anon): 12 kB\n", "Active(anon)", &v), ==, 0);
        g_assert_cmpuint(v, ==, 12);
        g_assert_cmpint(parse_meminfo_kib("Active(anon): 12\n", "Active(anon)", &v), ==, -EBADMSG);
}

static void test_devnum(void) {
        unsigned ma = 0, mi = 0;
        g_assert_cmpint(parse_devnum("254:16\n", &ma, &mi), ==, 0);
        g_assert_cmpuint(ma, ==, 254);
        g_assert_cmpuint(mi, ==, 16);
        g_assert_cmpint(parse_devnum("0:0", &ma, &mi), ==, 0);
        g_assert_cmpuint(ma, ==, 0);
        static const char *const bad[] = { "", "254", "254:", ":16", "254:16:1", "a:b", "1:-2", "-1:2", "1 :2",
                                           "99999999999:0" };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
                g_assert_cmpint(parse_devnum(bad[i], &ma, &mi), ==, -EBADMSG);
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
        g_test_add_func("/parse/swaps", test_swaps);
        g_test_add_func("/parse/swaps/malformed", test_swaps_malformed);
        g_test_add_func("/parse/meminfo-kib", test_meminfo_kib);
        g_test_add_func("/parse/devnum", test_devnum);
        return g_test_run();
}
