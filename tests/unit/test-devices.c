/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wake reasons from a umockdev testbed of wakeup sources. The test runs
 * itself again under umockdev's preload library (see umockdev-preload.h),
 * so libudev in libfridge-core sees the testbed's /sys.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <umockdev.h>
#include <unistd.h>

#include "devices.h"
#include "fileio.h"
#include "umockdev-preload.h"

typedef struct Fixture {
        UMockdevTestbed *tb;
        char *root;             /* the testbed's root: also the sysfs root */
        int root_fd;
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer data) {
        f->tb = umockdev_testbed_new();
        f->root = umockdev_testbed_get_root_dir(f->tb);
        f->root_fd = root_open(f->root);
        g_assert_cmpint(f->root_fd, >=, 0);
}

static void fixture_teardown(Fixture *f, gconstpointer data) {
        close(f->root_fd);
        g_free(f->root);
        g_object_unref(f->tb); /* removes the testbed directory */
}

/* A device that owns wakeup sources, bound to `driver` (NULL: none). */
static char *add_parent(Fixture *f, const char *subsystem, const char *name, const char *driver) {
        char *path = umockdev_testbed_add_device(f->tb, subsystem, name, NULL, NULL, NULL);
        g_assert_nonnull(path);
        if (driver) {
                g_autofree char *target = g_strdup_printf("../../../bus/%s/drivers/%s", subsystem, driver);
                umockdev_testbed_set_attribute_link(f->tb, path, "driver", target);
        }
        return path;
}

/* A wakeup source below `parent` (NULL: a virtual one) named `name` (NULL:
 * no name attribute) with event_count `count`. */
static char *add_source(Fixture *f, const char *entry, const char *parent, const char *name, const char *count) {
        char *path = name ? umockdev_testbed_add_device(f->tb, "wakeup", entry, parent, "name", name,
                                                        "event_count", count, NULL, NULL)
                          : umockdev_testbed_add_device(f->tb, "wakeup", entry, parent,
                                                        "event_count", count, NULL, NULL);
        g_assert_nonnull(path);
        return path;
}

static void set_count(Fixture *f, const char *source, const char *count) {
        umockdev_testbed_set_attribute(f->tb, source, "event_count", count);
}

static char *reason_across(const WakeupSnapshot *before, Fixture *f) {
        g_autoptr(WakeupSnapshot) after = devices_wakeup_snapshot(f->root_fd);
        return devices_wake_reason(before, after);
}

static void test_reason(Fixture *f, gconstpointer data) {
        g_autofree char *rtc = add_parent(f, "platform", "00:04", "rtc_cmos");
        g_autofree char *sleep_button = add_parent(f, "acpi", "PNP0C0C:00", "button");
        g_autofree char *power_button = add_parent(f, "acpi", "LNXPWRBN:00", NULL);
        g_autofree char *w0 = add_source(f, "wakeup0", rtc, "rtc0", "3");
        g_autofree char *w1 = add_source(f, "wakeup1", sleep_button, "PNP0C0C:00", "1");
        g_autofree char *w2 = add_source(f, "wakeup2", power_button, "LNXPWRBN:00", "5");
        g_free(add_source(f, "wakeup3", NULL, "alarmtimer.0.auto", "9"));
        g_autofree char *w4 = add_source(f, "wakeup4", NULL, NULL, "0");

        g_autoptr(WakeupSnapshot) before = devices_wakeup_snapshot(f->root_fd);
        set_count(f, w0, "4");
        set_count(f, w1, "3");
        set_count(f, w4, "1");
        g_autofree char *reason = reason_across(before, f);
        /* the largest increase first, ties by name; the parent is named
         * when the source's name is not already its name, then its driver;
         * a source without a name attribute goes by its sysfs entry */
        g_assert_cmpstr(reason, ==, "PNP0C0C:00 (button), rtc0 on 00:04 (rtc_cmos), wakeup4");

        g_autoptr(WakeupSnapshot) again = devices_wakeup_snapshot(f->root_fd);
        g_autofree char *none = reason_across(again, f);
        g_assert_cmpstr(none, ==, "unknown");

        set_count(f, w2, "6");
        g_autofree char *power = reason_across(again, f);
        g_assert_cmpstr(power, ==, "LNXPWRBN:00");
}

static void test_appear_disappear(Fixture *f, gconstpointer data) {
        g_autofree char *rtc = add_parent(f, "platform", "00:04", "rtc_cmos");
        g_free(add_source(f, "wakeup0", rtc, "rtc0", "3"));
        g_autofree char *w1 = add_source(f, "wakeup1", NULL, "gone", "7");
        g_autofree char *w2 = add_source(f, "wakeup2", NULL, "old", "4");

        g_autoptr(WakeupSnapshot) before = devices_wakeup_snapshot(f->root_fd);
        /* gone: nothing to compare with, so not a reason */
        umockdev_testbed_remove_device(f->tb, w1);
        /* appeared with events: they all happened since `before` */
        g_free(add_source(f, "wakeup5", NULL, "usb1", "2"));
        /* wakeup2 now another source, fewer events than the old one had */
        umockdev_testbed_remove_device(f->tb, w2);
        g_free(add_source(f, "wakeup2", NULL, "new", "1"));
        g_autofree char *reason = reason_across(before, f);
        g_assert_cmpstr(reason, ==, "usb1, new");
}

static void test_no_wakeup_class(Fixture *f, gconstpointer data) {
        /* an empty testbed: its /sys has no class/wakeup at all */
        g_autoptr(WakeupSnapshot) a = devices_wakeup_snapshot(f->root_fd);
        g_autoptr(WakeupSnapshot) b = devices_wakeup_snapshot(f->root_fd);
        g_autofree char *reason = devices_wake_reason(a, b);
        g_assert_cmpstr(reason, ==, "unknown");

        /* devices, none of them a wakeup source */
        g_free(add_parent(f, "platform", "00:04", "rtc_cmos"));
        g_autofree char *r2 = reason_across(a, f);
        g_assert_cmpstr(r2, ==, "unknown");
}

static void set_power_file(Fixture *f, const char *rel, const char *text) {
        g_autofree char *path = g_build_filename(f->root, "sys/power", rel, NULL);
        g_autofree char *dir = g_path_get_dirname(path);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void test_power_stats(Fixture *f, gconstpointer data) {
        g_autofree char *rtc = add_parent(f, "platform", "00:04", "rtc_cmos");
        g_autofree char *w0 = add_source(f, "wakeup0", rtc, "rtc0", "3");

        /* absent files add nothing */
        g_autoptr(WakeupSnapshot) before = devices_wakeup_snapshot(f->root_fd);
        set_count(f, w0, "4");
        g_autofree char *plain = reason_across(before, f);
        g_assert_cmpstr(plain, ==, "rtc0 on 00:04 (rtc_cmos)");

        /* an old failure, from before the sleep, is no news */
        set_power_file(f, "suspend_stats/last_failed_dev", "old\n");
        set_power_file(f, "suspend_stats/last_failed_errno", "-5\n");
        set_power_file(f, "pm_wakeup_irq", "\n"); /* the kernel's "no IRQ" is ENODATA */
        g_autoptr(WakeupSnapshot) before2 = devices_wakeup_snapshot(f->root_fd);
        set_count(f, w0, "5");
        g_autofree char *old = reason_across(before2, f);
        g_assert_cmpstr(old, ==, "rtc0 on 00:04 (rtc_cmos)");

        /* both during the sleep */
        set_count(f, w0, "6");
        set_power_file(f, "pm_wakeup_irq", "8\n");
        set_power_file(f, "suspend_stats/last_failed_dev", "foo\n");
        set_power_file(f, "suspend_stats/last_failed_errno", "-16\n");
        g_autofree char *full = reason_across(before2, f);
        g_assert_cmpstr(full, ==, "rtc0 on 00:04 (rtc_cmos); irq 8; last failed device: foo (errno -16)");

        /* an IRQ without a source that moved; a failure without a name */
        g_autoptr(WakeupSnapshot) before3 = devices_wakeup_snapshot(f->root_fd);
        set_power_file(f, "suspend_stats/last_failed_dev", "\n");
        set_power_file(f, "suspend_stats/last_failed_errno", "-110\n");
        g_autofree char *irq_only = reason_across(before3, f);
        g_assert_cmpstr(irq_only, ==, "unknown; irq 8; last failure: errno -110");

        /* garbage is ignored, not shown */
        set_power_file(f, "pm_wakeup_irq", "eight\n");
        set_power_file(f, "suspend_stats/last_failed_errno", "busy\n");
        g_autofree char *garbage = reason_across(before3, f);
        g_assert_cmpstr(garbage, ==, "unknown");
}

/* Snapshots keep what libudev found between them: whatever changes on the
 * way (another device behind the same wakeupN, a new name, another
 * driver) is seen by the next snapshot all the same */
static void test_cache_fresh(Fixture *f, gconstpointer data) {
        g_autofree char *rtc = add_parent(f, "platform", "00:04", "rtc_cmos");
        g_autofree char *w0 = add_source(f, "wakeup0", rtc, "rtc0", "3");
        g_autoptr(WakeupSnapshot) s0 = devices_wakeup_snapshot(f->root_fd);

        /* the same entry, now a virtual source's: its old syspath is gone */
        umockdev_testbed_remove_device(f->tb, w0);
        g_autofree char *v0 = add_source(f, "wakeup0", NULL, "usb1", "5");
        g_autoptr(WakeupSnapshot) s1 = devices_wakeup_snapshot(f->root_fd);
        g_autofree char *r1 = devices_wake_reason(s0, s1);
        g_assert_cmpstr(r1, ==, "usb1");

        /* the same syspath, another source behind it (fewer events) */
        umockdev_testbed_remove_device(f->tb, v0);
        g_free(add_source(f, "wakeup0", NULL, "kbd", "1"));
        g_autofree char *r2 = reason_across(s1, f);
        g_assert_cmpstr(r2, ==, "kbd");

        /* the parent bound to another driver */
        g_autofree char *w1 = add_source(f, "wakeup1", rtc, "rtc0", "3");
        g_autoptr(WakeupSnapshot) s2 = devices_wakeup_snapshot(f->root_fd);
        g_autofree char *link = g_build_filename(f->root, rtc, "driver", NULL);
        g_assert_cmpint(g_unlink(link), ==, 0);
        umockdev_testbed_set_attribute_link(f->tb, rtc, "driver", "../../../bus/platform/drivers/rtc_other");
        set_count(f, w1, "4");
        g_autofree char *r3 = reason_across(s2, f);
        g_assert_cmpstr(r3, ==, "rtc0 on 00:04 (rtc_other)");
}

/* A sysfs root of its own (the simulated kernel's): its class directory
 * is read without libudev, and cached the same way */
typedef struct Root {
        char *dir;
        int fd;
} Root;

static void root_put(Root *r, const char *rel, const char *text) {
        g_autofree char *path = g_build_filename(r->dir, rel, NULL);
        g_autofree char *parent = g_path_get_dirname(path);
        g_assert_cmpint(g_mkdir_with_parents(parent, 0755), ==, 0);
        g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

/* rel a symlink to target (made again when it is there) */
static void root_link(Root *r, const char *rel, const char *target) {
        g_autofree char *path = g_build_filename(r->dir, rel, NULL);
        g_autofree char *parent = g_path_get_dirname(path);
        g_assert_cmpint(g_mkdir_with_parents(parent, 0755), ==, 0);
        (void) g_unlink(path);
        g_assert_cmpint(symlink(target, path), ==, 0);
}

/* wakeup0 named `name` with `count` events, on device `dev` bound to `driver` */
static void root_source(Root *r, const char *name, const char *count, const char *dev, const char *driver) {
        g_autofree char *dev_dir = g_strdup_printf("sys/devices/%s", dev);
        g_autofree char *driver_link = g_strdup_printf("%s/driver", dev_dir);
        g_autofree char *driver_target = g_strdup_printf("../../bus/drivers/%s", driver);
        g_autofree char *dev_target = g_strdup_printf("../../../devices/%s", dev);
        root_put(r, "sys/class/wakeup/wakeup0/name", name);
        root_put(r, "sys/class/wakeup/wakeup0/event_count", count);
        root_link(r, driver_link, driver_target);
        root_link(r, "sys/class/wakeup/wakeup0/device", dev_target);
}

static char *root_reason(Root *r, const WakeupSnapshot *before) {
        g_autoptr(WakeupSnapshot) after = devices_wakeup_snapshot(r->fd);
        return devices_wake_reason(before, after);
}

/* As cache-fresh, for the class directory of a sysfs root of its own:
 * what the label comes from (the device link, its driver link, the name)
 * changes between snapshots, and the next one names it as it is now */
static void test_root_cache_fresh(Fixture *f, gconstpointer data) {
        Root r = { .dir = g_dir_make_tmp("fridge-devices-XXXXXX", NULL) };
        g_assert_nonnull(r.dir);
        root_source(&r, "rtc0\n", "3\n", "00:04", "rtc_cmos");
        r.fd = root_open(r.dir);
        g_assert_cmpint(r.fd, >=, 0);
        g_autoptr(WakeupSnapshot) s0 = devices_wakeup_snapshot(r.fd);
        root_put(&r, "sys/class/wakeup/wakeup0/event_count", "4\n");
        g_autofree char *r0 = root_reason(&r, s0);
        g_assert_cmpstr(r0, ==, "rtc0 on 00:04 (rtc_cmos)");

        g_autoptr(WakeupSnapshot) s1 = devices_wakeup_snapshot(r.fd);
        root_source(&r, "rtc0\n", "5\n", "00:04", "rtc_other"); /* bound to another driver */
        g_autofree char *r1 = root_reason(&r, s1);
        g_assert_cmpstr(r1, ==, "rtc0 on 00:04 (rtc_other)");

        g_autoptr(WakeupSnapshot) s2 = devices_wakeup_snapshot(r.fd);
        root_source(&r, "rtc0\n", "6\n", "00:05", "rtc_other"); /* another device behind wakeup0 */
        g_autofree char *r2 = root_reason(&r, s2);
        g_assert_cmpstr(r2, ==, "rtc0 on 00:05 (rtc_other)");

        g_autoptr(WakeupSnapshot) s3 = devices_wakeup_snapshot(r.fd);
        root_source(&r, "kbd\n", "1\n", "00:05", "rtc_other"); /* another source, fewer events */
        g_autofree char *r3 = root_reason(&r, s3);
        g_assert_cmpstr(r3, ==, "kbd on 00:05 (rtc_other)");

        close(r.fd);
        g_autofree char *rm = g_strdup_printf("rm -rf '%s'", r.dir);
        g_assert_cmpint(system(rm), ==, 0);
        g_free(r.dir);
}

#define ADD(path, fn) g_test_add("/devices/" path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int main(int argc, char *argv[]) {
        umockdev_preload_self_or_skip(argv);
        g_test_init(&argc, &argv, NULL);
        ADD("wake-reason", test_reason);
        ADD("appear-disappear", test_appear_disappear);
        ADD("no-wakeup-class", test_no_wakeup_class);
        ADD("power-stats", test_power_stats);
        ADD("cache-fresh", test_cache_fresh);
        ADD("root-cache-fresh", test_root_cache_fresh);
        return g_test_run();
}
