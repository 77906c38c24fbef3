/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "record.h"
#include "util.h"

static int temp_dir(char **ret_path) {
        *ret_path = g_dir_make_tmp("fridge-record-XXXXXX", NULL);
        g_assert_nonnull(*ret_path);
        int fd = open(*ret_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        return fd;
}

static void remove_dir(const char *path) {
        const char *const names[] = { "cycle", "next-cycle-id", NULL };
        for (const char *const *n = names; *n; n++) {
                g_autofree char *p = g_build_filename(path, *n, NULL);
                (void) g_unlink(p);
        }
        g_assert_cmpint(g_rmdir(path), ==, 0);
}

static void test_round_trip(void) {
        g_autofree char *dir = NULL;
        _cleanup_close_ int fd = temp_dir(&dir);
        g_autoptr(CycleRecord) none = NULL;
        g_assert_cmpint(record_read(fd, &none), ==, 0);
        g_assert_null(none);

        CycleRecord rec = { .id = 42, .kind = (char *) "suspend", .phase = (char *) "freeze-late",
                            .started_usec = 1700000000123456, .pid = 4321, .starter_uid = (uid_t) -1 };
        g_assert_cmpint(record_write(fd, &rec), ==, 0);
        g_autoptr(CycleRecord) back = NULL;
        g_assert_cmpint(record_read(fd, &back), ==, 0);
        g_assert_cmpuint(back->id, ==, 42);
        g_assert_cmpstr(back->kind, ==, "suspend");
        g_assert_cmpstr(back->phase, ==, "freeze-late");
        g_assert_cmpuint(back->started_usec, ==, 1700000000123456);
        g_assert_cmpint(back->pid, ==, 4321);
        g_assert_null(back->boot_id);
        g_assert_false(back->by_hook);

        /* the boot and who started it: a power cut and who may see it */
        rec.boot_id = (char *) "6f2b1c9e-3a4d-4e5f-8a9b-0c1d2e3f4a5b";
        rec.starter_uid = 1000;
        rec.starter_pid = 77;
        g_assert_cmpint(record_write(fd, &rec), ==, 0);
        g_autoptr(CycleRecord) with_boot = NULL;
        g_assert_cmpint(record_read(fd, &with_boot), ==, 0);
        g_assert_cmpstr(with_boot->boot_id, ==, "6f2b1c9e-3a4d-4e5f-8a9b-0c1d2e3f4a5b");
        g_assert_cmpuint(with_boot->starter_uid, ==, 1000);
        g_assert_cmpint(with_boot->starter_pid, ==, 77);
        rec.by_hook = true;
        rec.starter_uid = (uid_t) -1;
        g_assert_cmpint(record_write(fd, &rec), ==, 0);
        g_autoptr(CycleRecord) hook = NULL;
        g_assert_cmpint(record_read(fd, &hook), ==, 0);
        g_assert_true(hook->by_hook);
        g_assert_cmpuint(hook->starter_uid, ==, (uid_t) -1);

        /* only the finished cycle's own record goes: a newer one stays */
        g_assert_cmpint(record_remove(fd, rec.id + 1), ==, 0);
        g_autoptr(CycleRecord) kept = NULL;
        g_assert_cmpint(record_read(fd, &kept), ==, 0);
        g_assert_nonnull(kept);
        g_assert_cmpint(record_remove(fd, rec.id), ==, 0);
        g_autoptr(CycleRecord) gone = NULL;
        g_assert_cmpint(record_read(fd, &gone), ==, 0);
        g_assert_null(gone);
        g_assert_cmpint(record_remove(fd, rec.id), ==, 0);
        remove_dir(dir);
}

static void test_next_id(void) {
        g_autofree char *dir = NULL;
        _cleanup_close_ int fd = temp_dir(&dir);
        uint64_t next = 0;
        g_assert_cmpint(record_read_next_id(fd, &next), ==, 0);
        g_assert_cmpuint(next, ==, 1);
        g_assert_cmpint(record_write_next_id(fd, 77), ==, 0);
        g_assert_cmpint(record_read_next_id(fd, &next), ==, 0);
        g_assert_cmpuint(next, ==, 77);
        remove_dir(dir);
}

static void test_malformed(void) {
        g_autofree char *dir = NULL;
        _cleanup_close_ int fd = temp_dir(&dir);
        g_autofree char *path = g_build_filename(dir, "cycle", NULL);
        const char *const bad[] = {
                "", "ID=0\nKIND=suspend\nPHASE=flush\nSTARTED_USEC=1\nPID=1\n",
                "ID=x\nKIND=suspend\nPHASE=flush\nSTARTED_USEC=1\nPID=1\n",
                "ID=3\nPHASE=flush\nSTARTED_USEC=1\nPID=1\n",
                "ID=3\nKIND=suspend\nPHASE=flush\nSTARTED_USEC=1\nPID=99999999999\n", NULL,
        };
        for (const char *const *b = bad; *b; b++) {
                g_assert_true(g_file_set_contents(path, *b, -1, NULL));
                g_autoptr(CycleRecord) rec = NULL;
                g_assert_cmpint(record_read(fd, &rec), ==, -EBADMSG);
                g_assert_null(rec);
        }
        g_autofree char *next = g_build_filename(dir, "next-cycle-id", NULL);
        g_assert_true(g_file_set_contents(next, "0\n", -1, NULL));
        uint64_t id = 5;
        g_assert_cmpint(record_read_next_id(fd, &id), ==, -EBADMSG);
        remove_dir(dir);
}

/* An older fridged's record has no boot id: its boot is unknown, which
 * reads as a crash of this boot */
static void test_without_boot(void) {
        g_autofree char *dir = NULL;
        _cleanup_close_ int fd = temp_dir(&dir);
        g_autofree char *path = g_build_filename(dir, "cycle", NULL);
        g_assert_true(g_file_set_contents(path, "ID=3\nKIND=suspend\nPHASE=flush\nSTARTED_USEC=1\nPID=1\n", -1,
                                          NULL));
        g_autoptr(CycleRecord) rec = NULL;
        g_assert_cmpint(record_read(fd, &rec), ==, 0);
        g_assert_null(rec->boot_id);
        g_assert_false(rec->by_hook);
        g_assert_cmpuint(rec->starter_uid, ==, (uid_t) -1);
        g_assert_cmpint(rec->starter_pid, ==, 0);
        remove_dir(dir);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/record/round-trip", test_round_trip);
        g_test_add_func("/record/next-id", test_next_id);
        g_test_add_func("/record/malformed", test_malformed);
        g_test_add_func("/record/without-boot", test_without_boot);
        return g_test_run();
}
