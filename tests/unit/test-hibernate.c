/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "hibernate.h"
#include "power.h"
#include "testdir.h"

/* A sysfs root and a proc root in one temp dir. The swap "partitions" are
 * the host's /dev/loop0 and /dev/loop1 (block 7:0 and 7:1; stat only). */
typedef struct Fixture {
        char *dir;
        int sys_fd;
        int proc_fd;
        char *swapfile;
        HibernateCache cache;   /* kept across a case's checks, as fridged keeps it */
} Fixture;

#define HEADER "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
#define MEMINFO(anon_kib) "MemTotal: 2000000 kB\nActive(anon): " #anon_kib " kB\nInactive(anon): 0 kB\nDirty: 0 kB\n"

static void put(Fixture *f, const char *path, const char *text) {
        testdir_put(f->dir, path, text);
}

static void setup(Fixture *f, gconstpointer data) {
        struct stat st;
        if (stat("/dev/loop0", &st) < 0 || !S_ISBLK(st.st_mode) || stat("/dev/loop1", &st) < 0) {
                g_test_skip("needs /dev/loop0 and /dev/loop1 block devices to stand for swap partitions");
                return;
        }
        f->dir = g_dir_make_tmp("fridge-hib-XXXXXX", NULL);
        put(f, "sys/sys/power/resume", "0:0\n");
        put(f, "proc/meminfo", MEMINFO(20000));
        put(f, "proc/swaps", HEADER);
        f->swapfile = g_build_filename(f->dir, "swapfile", NULL);
        put(f, "swapfile", "");
        f->sys_fd = testdir_open(f->dir, "sys");
        f->proc_fd = testdir_open(f->dir, "proc");
}

static void teardown(Fixture *f, gconstpointer data) {
        if (!f->dir)
                return;
        hibernate_cache_clear(&f->cache);
        close(f->sys_fd);
        close(f->proc_fd);
        testdir_remove(f->dir);
        g_free(f->dir);
        g_free(f->swapfile);
}

static void swaps(Fixture *f, const char *lines) {
        g_autofree char *text = g_strconcat(HEADER, lines, NULL);
        put(f, "proc/swaps", text);
}

static HibernateTarget *check_call(Fixture *f, const char *configured, uint64_t call) {
        HibernateTarget *t = hibernate_check(f->sys_fd, f->proc_fd, configured, &f->cache, call);
        g_assert_nonnull(t);
        g_test_message("reason: %s; device %s; set_resume %s", t->reason ? t->reason : "(ready)",
                       t->device ? t->device : "-", t->set_resume ? t->set_resume : "-");
        return t;
}

static HibernateTarget *check(Fixture *f, const char *configured) {
        return check_call(f, configured, 0);
}

static void assert_not_ready(HibernateTarget *t, const char *needle) {
        g_assert_nonnull(t->reason);
        if (!strstr(t->reason, needle))
                g_error("reason '%s' does not mention '%s'", t->reason, needle);
        g_assert_null(t->set_resume);
}

/* Sets what is not NULL (the swap lines, /proc/meminfo, the kernel's
 * resume device), checks with `configured` and asserts that hibernation is
 * refused for a reason that mentions needle */
static void not_ready(Fixture *f, const char *swap_lines, const char *meminfo, const char *resume,
                      const char *configured, const char *needle) {
        if (swap_lines)
                swaps(f, swap_lines);
        if (meminfo)
                put(f, "proc/meminfo", meminfo);
        if (resume)
                put(f, "sys/sys/power/resume", resume);
        g_autoptr(HibernateTarget) t = check(f, configured);
        assert_not_ready(t, needle);
}

#define ONE_SWAP "/dev/loop0 partition 1048572 0 -2\n"
#define TWO_SWAPS ONE_SWAP "/dev/loop1 partition 1048572 0 -3\n"

#define SKIP_UNLESS_READY(f) do { if (!(f)->dir) return; } while (0)

static void test_no_swap(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        not_ready(f, NULL, NULL, NULL, NULL, "no swap space is active");
}

static void test_one_partition_sets_resume(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        swaps(f, ONE_SWAP);
        g_autoptr(HibernateTarget) t = check(f, NULL);
        g_assert_null(t->reason);
        g_assert_cmpstr(t->device, ==, "/dev/loop0");
        g_assert_cmpstr(t->set_resume, ==, "7:0");
        g_assert_cmpuint(t->need_kib, ==, 20000);
        g_assert_cmpuint(t->free_kib, ==, 1048572);
}

static void test_resume_already_set(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        swaps(f, TWO_SWAPS);
        put(f, "sys/sys/power/resume", "7:1\n");
        g_autoptr(HibernateTarget) t = check(f, NULL);
        g_assert_null(t->reason);
        g_assert_cmpstr(t->device, ==, "/dev/loop1");
        g_assert_null(t->set_resume);
}

static void test_resume_names_no_swap(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        not_ready(f, ONE_SWAP, NULL, "8:3\n", NULL, "8:3, which is not an active swap device");
}

static void test_two_partitions_need_config(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        swaps(f, TWO_SWAPS);
        g_autoptr(HibernateTarget) t = check(f, NULL);
        assert_not_ready(t, "2 swap partitions to choose from");
        g_assert_nonnull(strstr(t->reason, "ResumeDevice="));
}

static void test_config_names_device(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        swaps(f, TWO_SWAPS);
        g_autoptr(HibernateTarget) by_path = check(f, "/dev/loop1");
        g_assert_null(by_path->reason);
        g_assert_cmpstr(by_path->set_resume, ==, "7:1");
        g_autoptr(HibernateTarget) by_number = check(f, "7:0");
        g_assert_null(by_number->reason);
        g_assert_cmpstr(by_number->set_resume, ==, "7:0");
        /* the configured device wins over what the kernel has */
        put(f, "sys/sys/power/resume", "7:0\n");
        g_autoptr(HibernateTarget) switched = check(f, "/dev/loop1");
        g_assert_cmpstr(switched->set_resume, ==, "7:1");
}

static void test_config_names_bad_device(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        not_ready(f, ONE_SWAP, NULL, NULL, "/dev/loop1",
                  "ResumeDevice=/dev/loop1 is not an active swap partition");
        not_ready(f, NULL, NULL, NULL, f->swapfile, "is not a block device");
        not_ready(f, NULL, NULL, NULL, "/dev/no-such-disk", "ResumeDevice=/dev/no-such-disk");
}

static void test_swap_file(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        g_autofree char *line = g_strdup_printf("%s file 1048572 0 -2\n", f->swapfile);
        swaps(f, line);
        g_autoptr(HibernateTarget) unset = check(f, NULL);
        assert_not_ready(unset, "the only swap is a file");
        g_assert_nonnull(strstr(unset->reason, "resume_offset"));

        /* set at boot (with resume_offset): the file system's device */
        struct stat st;
        g_assert_cmpint(stat(f->swapfile, &st), ==, 0);
        g_autofree char *dev = g_strdup_printf("%u:%u\n", major(st.st_dev), minor(st.st_dev));
        put(f, "sys/sys/power/resume", dev);
        g_autoptr(HibernateTarget) set = check(f, NULL);
        g_assert_null(set->reason);
        g_assert_null(set->set_resume);
}

static void test_too_small(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        not_ready(f, "/dev/loop0 partition 10240 0 -2\n", MEMINFO(30000), NULL, NULL,
                  "swap /dev/loop0 has 10 MiB free, but the image needs about 30 MiB");

        /* what is already swapped out is not free */
        not_ready(f, "/dev/loop0 partition 102400 90000 -2\n", MEMINFO(20000), NULL, NULL, "has 12 MiB free");
}

static void test_bad_inputs(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        not_ready(f, "/dev/loop0 partition lots 0 -2\n", NULL, NULL, NULL, "cannot read /proc/swaps");
        not_ready(f, ONE_SWAP, "MemTotal: 1 kB\n", NULL, NULL, "cannot estimate the image size");
        not_ready(f, NULL, MEMINFO(1), "vdb\n", NULL, "/sys/power/resume is missing or malformed");
}

/* The swap's choice is kept between checks: a swap turned on or off, or
 * another device behind the swap's name, is seen by the next check */
static void test_cache_sees_swap_change(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        swaps(f, ONE_SWAP);
        g_autoptr(HibernateTarget) first = check(f, NULL);
        g_assert_cmpstr(first->device, ==, "/dev/loop0");
        swaps(f, "/dev/loop1 partition 1048572 0 -2\n");
        g_autoptr(HibernateTarget) other = check(f, NULL);
        g_assert_null(other->reason);
        g_assert_cmpstr(other->device, ==, "/dev/loop1");
        g_assert_cmpstr(other->set_resume, ==, "7:1");
        swaps(f, TWO_SWAPS);
        g_autoptr(HibernateTarget) two = check(f, NULL);
        assert_not_ready(two, "2 swap partitions to choose from");
        swaps(f, "");
        g_autoptr(HibernateTarget) none = check(f, NULL);
        assert_not_ready(none, "no swap space is active");
        swaps(f, ONE_SWAP);
        g_autoptr(HibernateTarget) back = check(f, NULL);
        g_assert_cmpstr(back->device, ==, "/dev/loop0");
}

static void test_cache_sees_resume_change(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        swaps(f, TWO_SWAPS);
        g_autoptr(HibernateTarget) unset = check(f, NULL);
        assert_not_ready(unset, "2 swap partitions to choose from");
        put(f, "sys/sys/power/resume", "7:1\n");
        g_autoptr(HibernateTarget) set = check(f, NULL);
        g_assert_null(set->reason);
        g_assert_cmpstr(set->device, ==, "/dev/loop1");
        put(f, "sys/sys/power/resume", "7:0\n");
        g_autoptr(HibernateTarget) moved = check(f, NULL);
        g_assert_cmpstr(moved->device, ==, "/dev/loop0");
        put(f, "sys/sys/power/resume", "8:3\n");
        g_autoptr(HibernateTarget) gone = check(f, NULL);
        assert_not_ready(gone, "8:3, which is not an active swap device");
}

/* The image-size verdict is never kept: memory in use and swap used move */
static void test_cache_size_afresh(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        swaps(f, "/dev/loop0 partition 102400 0 -2\n");
        g_autoptr(HibernateTarget) fits = check(f, NULL);
        g_assert_null(fits->reason);
        put(f, "proc/meminfo", MEMINFO(200000));
        g_autoptr(HibernateTarget) grown = check(f, NULL);
        assert_not_ready(grown, "the image needs about 196 MiB");
        put(f, "proc/meminfo", MEMINFO(20000));
        swaps(f, "/dev/loop0 partition 102400 90000 -2\n");
        g_autoptr(HibernateTarget) used = check(f, NULL);
        assert_not_ready(used, "has 12 MiB free");
}

/* One call (a GetAll) gets one pre-flight; the next call its own */
static void test_cache_one_per_call(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        swaps(f, ONE_SWAP);
        g_autoptr(HibernateTarget) a = check_call(f, NULL, 7);
        g_assert_null(a->reason);
        put(f, "proc/meminfo", MEMINFO(2000000));
        g_autoptr(HibernateTarget) same_call = check_call(f, NULL, 7);
        g_assert_null(same_call->reason);
        g_autoptr(HibernateTarget) next_call = check_call(f, NULL, 8);
        assert_not_ready(next_call, "the image needs about");
}

/* ---- the resume device's encryption, over a scratch sysfs shaped like the
 * kernel's: SYSFS/dev/block/MAJ:MIN links to the device's directory under
 * devices/, a partition's directory lies in its disk's, slaves/ links to
 * what a device-mapper device rests on ---- */

static void crypt_setup(Fixture *f, gconstpointer data) {
        f->dir = g_dir_make_tmp("fridge-crypt-XXXXXX", NULL);
        put(f, "sys/sys/power/resume", "0:0\n");
        put(f, "proc/meminfo", MEMINFO(20000));
        put(f, "proc/swaps", HEADER);
        f->sys_fd = testdir_open(f->dir, "sys");
        f->proc_fd = testdir_open(f->dir, "proc");
}

/* The device directory sys/devices/PATH, named MAJ:MIN in dev/block */
static void block_dev(Fixture *f, const char *path, const char *devnum) {
        g_autofree char *dev = g_strdup_printf("sys/sys/devices/%s/dev", path);
        g_autofree char *text = g_strdup_printf("%s\n", devnum);
        put(f, dev, text);
        g_autofree char *target = g_build_filename(f->dir, "sys/sys/devices", path, NULL);
        g_autofree char *links = g_build_filename(f->dir, "sys/sys/dev/block", NULL);
        g_autofree char *link = g_build_filename(links, devnum, NULL);
        g_assert_cmpint(g_mkdir_with_parents(links, 0755), ==, 0);
        g_assert_cmpint(symlink(target, link), ==, 0);
}

/* A device-mapper device with that dm/uuid resting on the devices `slaves` */
static void dm_dev(Fixture *f, const char *name, const char *devnum, const char *uuid, const char *const *slaves) {
        g_autofree char *path = g_strdup_printf("virtual/block/%s", name);
        block_dev(f, path, devnum);
        g_autofree char *uuid_file = g_strdup_printf("sys/sys/devices/%s/dm/uuid", path);
        g_autofree char *text = g_strdup_printf("%s\n", uuid);
        put(f, uuid_file, text);
        g_autofree char *dir = g_build_filename(f->dir, "sys/sys/devices", path, "slaves", NULL);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        for (const char *const *s = slaves; s && *s; s++) {
                g_autofree char *target = g_build_filename(f->dir, "sys/sys/devices", *s, NULL);
                g_autofree char *link = g_build_filename(dir, strrchr(*s, '/') + 1, NULL);
                g_assert_cmpint(symlink(target, link), ==, 0);
        }
}

/* A disk sda (8:0) with a plain partition sda2 (8:2) and sda3 (8:3) */
static void disk(Fixture *f) {
        block_dev(f, "pci/block/sda", "8:0");
        block_dev(f, "pci/block/sda/sda2", "8:2");
        put(f, "sys/sys/devices/pci/block/sda/sda2/partition", "2\n");
        block_dev(f, "pci/block/sda/sda3", "8:3");
        put(f, "sys/sys/devices/pci/block/sda/sda3/partition", "3\n");
}

static HibernateEncryption encryption(Fixture *f, unsigned major, unsigned minor) {
        HibernateEncryption e = hibernate_device_encryption(f->sys_fd, major, minor);
        g_test_message("%u:%u encrypted: %s", major, minor, hibernate_encryption_to_string(e));
        return e;
}

#define LUKS_UUID "CRYPT-LUKS2-1c2f6b1e0a5d4c6e9f3b8a7d6c5e4f3a-luks-1c2f6b1e"
static const char *const on_sda3[] = { "pci/block/sda/sda3", NULL };
static const char *const on_dm0[] = { "virtual/block/dm-0", NULL };
static const char *const on_sda2[] = { "pci/block/sda/sda2", NULL };

static void test_crypt_plain_partition(Fixture *f, gconstpointer data) {
        disk(f);
        g_assert_cmpint(encryption(f, 8, 2), ==, HIBERNATE_ENCRYPTION_NO);
        g_assert_cmpint(encryption(f, 8, 0), ==, HIBERNATE_ENCRYPTION_NO);
}

static void test_crypt_dm_crypt(Fixture *f, gconstpointer data) {
        disk(f);
        dm_dev(f, "dm-0", "253:0", LUKS_UUID, on_sda3);
        g_assert_cmpint(encryption(f, 253, 0), ==, HIBERNATE_ENCRYPTION_YES);
}

/* LVM on LUKS: the logical volume's slave is the crypt device */
static void test_crypt_lvm_on_luks(Fixture *f, gconstpointer data) {
        disk(f);
        dm_dev(f, "dm-0", "253:0", LUKS_UUID, on_sda3);
        dm_dev(f, "dm-1", "253:1", "LVM-Qd3bq2mVfWkq0e7SxZ1kHq7C3kX1rX0S", on_dm0);
        g_assert_cmpint(encryption(f, 253, 1), ==, HIBERNATE_ENCRYPTION_YES);
        /* a volume on the plain partition, and one spanning both */
        static const char *const both[] = { "virtual/block/dm-0", "pci/block/sda/sda2", NULL };
        dm_dev(f, "dm-2", "253:2", "LVM-plain", on_sda2);
        dm_dev(f, "dm-3", "253:3", "LVM-both", both);
        g_assert_cmpint(encryption(f, 253, 2), ==, HIBERNATE_ENCRYPTION_NO);
        g_assert_cmpint(encryption(f, 253, 3), ==, HIBERNATE_ENCRYPTION_NO);
}

/* A partition is as encrypted as its disk: plain on sda, encrypted on a
 * partitioned crypt device */
static void test_crypt_partition_of_disk(Fixture *f, gconstpointer data) {
        disk(f);
        dm_dev(f, "dm-0", "253:0", LUKS_UUID, on_sda3);
        block_dev(f, "virtual/block/dm-0/dm-0p1", "259:1");
        put(f, "sys/sys/devices/virtual/block/dm-0/dm-0p1/partition", "1\n");
        g_assert_cmpint(encryption(f, 8, 3), ==, HIBERNATE_ENCRYPTION_NO);
        g_assert_cmpint(encryption(f, 259, 1), ==, HIBERNATE_ENCRYPTION_YES);
}

/* What sysfs does not say is not claimed either way */
static void test_crypt_unknown(Fixture *f, gconstpointer data) {
        disk(f);
        block_dev(f, "virtual/block/dm-4", "253:4");
        g_autofree char *dir = g_build_filename(f->dir, "sys/sys/devices/virtual/block/dm-4/dm/uuid", NULL);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0); /* a read fails (EISDIR), even for root */
        g_assert_cmpint(encryption(f, 253, 4), ==, HIBERNATE_ENCRYPTION_UNKNOWN);
        static const char *const on_dm4[] = { "virtual/block/dm-4", NULL };
        dm_dev(f, "dm-5", "253:5", "LVM-x", on_dm4);
        g_assert_cmpint(encryption(f, 253, 5), ==, HIBERNATE_ENCRYPTION_UNKNOWN);
        g_assert_cmpint(encryption(f, 8, 9), ==, HIBERNATE_ENCRYPTION_UNKNOWN); /* no such device */
}

/* The pre-flight says it: a warning for a plain resume device, none for
 * an encrypted one, and the answer is kept with the swap's choice */
static void test_crypt_preflight(Fixture *f, gconstpointer data) {
        SKIP_UNLESS_READY(f);
        swaps(f, ONE_SWAP);
        block_dev(f, "virtual/block/loop0", "7:0");
        g_autoptr(HibernateTarget) plain = check(f, NULL);
        g_assert_null(plain->reason);
        g_assert_cmpint(plain->encrypted, ==, HIBERNATE_ENCRYPTION_NO);
        g_assert_cmpstr(plain->warning, ==, "the resume device /dev/loop0 is not encrypted: a plain copy of memory "
                        "(keys, passwords, open documents) will be written to it");

        /* kept while the swaps and resume stay */
        put(f, "sys/sys/devices/virtual/block/loop0/dm/uuid", LUKS_UUID "\n");
        g_autoptr(HibernateTarget) kept = check(f, NULL);
        g_assert_cmpint(kept->encrypted, ==, HIBERNATE_ENCRYPTION_NO);

        /* chosen afresh when they move */
        put(f, "sys/sys/power/resume", "7:0\n");
        g_autoptr(HibernateTarget) crypt = check(f, NULL);
        g_assert_null(crypt->reason);
        g_assert_cmpint(crypt->encrypted, ==, HIBERNATE_ENCRYPTION_YES);
        g_assert_null(crypt->warning);

        /* loop1 is not in the scratch sysfs */
        swaps(f, "/dev/loop1 partition 1048572 0 -2\n");
        put(f, "sys/sys/power/resume", "0:0\n");
        g_autoptr(HibernateTarget) unknown = check(f, NULL);
        g_assert_cmpint(unknown->encrypted, ==, HIBERNATE_ENCRYPTION_UNKNOWN);
        g_assert_null(unknown->warning);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
#define T(name, fn) g_test_add("/hibernate/" name, Fixture, NULL, setup, fn, teardown)
        T("no-swap", test_no_swap);
        T("one-partition-sets-resume", test_one_partition_sets_resume);
        T("resume-already-set", test_resume_already_set);
        T("resume-names-no-swap", test_resume_names_no_swap);
        T("two-partitions-need-config", test_two_partitions_need_config);
        T("config-names-device", test_config_names_device);
        T("config-names-bad-device", test_config_names_bad_device);
        T("swap-file", test_swap_file);
        T("too-small", test_too_small);
        T("bad-inputs", test_bad_inputs);
        T("cache-sees-swap-change", test_cache_sees_swap_change);
        T("cache-sees-resume-change", test_cache_sees_resume_change);
        T("cache-size-afresh", test_cache_size_afresh);
        T("cache-one-per-call", test_cache_one_per_call);
        T("crypt-preflight", test_crypt_preflight);
#define C(name, fn) g_test_add("/hibernate/crypt/" name, Fixture, NULL, crypt_setup, fn, teardown)
        C("plain-partition", test_crypt_plain_partition);
        C("dm-crypt", test_crypt_dm_crypt);
        C("lvm-on-luks", test_crypt_lvm_on_luks);
        C("partition-of-disk", test_crypt_partition_of_disk);
        C("unknown", test_crypt_unknown);
        return g_test_run();
}
