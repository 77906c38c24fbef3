/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "devices.h"
#include "fileio.h"

static char *root;
static int root_fd;

static void source(const char *entry, const char *name, const char *count, const char *driver) {
        g_autofree char *dir = g_build_filename(root, "sys/class/wakeup", entry, NULL);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_autofree char *n = g_build_filename(dir, "name", NULL);
        g_autofree char *c = g_build_filename(dir, "event_count", NULL);
        if (name)
                g_assert_true(g_file_set_contents(n, name, -1, NULL));
        g_assert_true(g_file_set_contents(c, count, -1, NULL));
        if (driver) {
                g_autofree char *dev = g_build_filename(dir, "device", NULL);
                g_autofree char *drv = g_build_filename(dev, "driver", NULL);
                g_autofree char *target = g_strdup_printf("../../../../bus/drivers/%s", driver);
                g_assert_cmpint(g_mkdir_with_parents(dev, 0755), ==, 0);
                g_assert_cmpint(symlink(target, drv), ==, 0);
        }
}

static void set_count(const char *entry, const char *count) {
        g_autofree char *c = g_build_filename(root, "sys/class/wakeup", entry, "event_count", NULL);
        g_assert_true(g_file_set_contents(c, count, -1, NULL));
}

static void test_reason(void) {
        source("wakeup0", "00:04", "3\n", "rtc_cmos");
        source("wakeup1", "PNP0C0C:00", "1\n", NULL);
        source("wakeup2", "alarmtimer.0.auto", "9\n", NULL);
        source("wakeup3", NULL, "0\n", NULL); /* no name file: the entry names it */

        g_autoptr(WakeupSnapshot) before = devices_wakeup_snapshot(root_fd);
        set_count("wakeup0", "4\n");
        set_count("wakeup3", "3\n");
        g_autoptr(WakeupSnapshot) after = devices_wakeup_snapshot(root_fd);

        g_autofree char *reason = devices_wake_reason(before, after);
        /* the largest increase first; a driver is named after the source */
        g_assert_cmpstr(reason, ==, "wakeup3, 00:04 (rtc_cmos)");

        g_autoptr(WakeupSnapshot) again = devices_wakeup_snapshot(root_fd);
        g_autofree char *none = devices_wake_reason(after, again);
        g_assert_cmpstr(none, ==, "unknown");
}

static void test_no_class(void) {
        g_autofree char *empty = g_dir_make_tmp("fridge-nowakeup-XXXXXX", NULL);
        int fd = root_open(empty);
        g_autoptr(WakeupSnapshot) a = devices_wakeup_snapshot(fd);
        g_autoptr(WakeupSnapshot) b = devices_wakeup_snapshot(fd);
        g_autofree char *reason = devices_wake_reason(a, b);
        g_assert_cmpstr(reason, ==, "unknown");
        close(fd);
        g_rmdir(empty);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        root = g_dir_make_tmp("fridge-wakeup-XXXXXX", NULL);
        root_fd = root_open(root);
        g_test_add_func("/devices/wake-reason", test_reason);
        g_test_add_func("/devices/no-wakeup-class", test_no_class);
        int r = g_test_run();
        close(root_fd);
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", root);
        if (system(cmd) != 0)
                r = 1;
        return r;
}
