/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "power.h"
#include "testdir.h"
#include "tuxonice.h"

typedef struct Fixture {
        char *dir;
        int fd;
} Fixture;

static void put(Fixture *f, const char *path, const char *text) {
        testdir_put(f->dir, path, text);
}

static char *get(Fixture *f, const char *path) {
        char *text = NULL;
        g_assert_cmpint(read_file_at(f->fd, path, &text), ==, 0);
        return text;
}

static void setup(Fixture *f, gconstpointer data) {
        f->dir = g_dir_make_tmp("fridge-sys-XXXXXX", NULL);
        testdir_put_power(f->dir);
        f->fd = testdir_open(f->dir, NULL);
}

static void teardown(Fixture *f, gconstpointer data) {
        close(f->fd);
        testdir_remove(f->dir);
        g_free(f->dir);
}

static void test_caps(Fixture *f, gconstpointer data) {
        g_autoptr(PowerCaps) c = NULL;
        const char *reason;
        g_assert_cmpint(power_caps_read(f->fd, &c), ==, 0);
        g_assert_cmpstr(c->mem_sleep_current, ==, "deep");
        g_assert_cmpstr(c->disk_current, ==, "platform");
        g_assert_true(c->has_rtc);
        g_assert_cmpint(power_can(c, SLEEP_SUSPEND, "platform", &reason), ==, POWER_ANSWER_YES);
        g_assert_cmpint(power_can(c, SLEEP_HIBERNATE, "platform", &reason), ==, POWER_ANSWER_YES);
        g_assert_cmpint(power_can(c, SLEEP_HYBRID, "platform", &reason), ==, POWER_ANSWER_YES);
        g_assert_cmpint(power_can(c, SLEEP_HIBERNATE, "bogus", &reason), ==, POWER_ANSWER_NO);
        g_assert_nonnull(strstr(reason, "HibernateMode"));
}

static void test_no_disk(Fixture *f, gconstpointer data) {
        g_autoptr(PowerCaps) c = NULL;
        const char *reason;
        put(f, POWER_STATE, "freeze mem\n");
        g_assert_cmpint(power_caps_read(f->fd, &c), ==, 0);
        g_assert_cmpint(power_can(c, SLEEP_HIBERNATE, "platform", &reason), ==, POWER_ANSWER_NA);
        g_assert_nonnull(strstr(reason, "disk"));
        g_assert_cmpint(power_can(c, SLEEP_SUSPEND, "platform", &reason), ==, POWER_ANSWER_YES);
}

static void test_malformed_optional(Fixture *f, gconstpointer data) {
        g_autoptr(PowerCaps) c = NULL;
        const char *reason;
        put(f, POWER_MEM_SLEEP, "[s2idle] [deep]\n");
        put(f, POWER_DISK, "[platform\n");
        g_assert_cmpint(power_caps_read(f->fd, &c), ==, 0);
        g_assert_null(c->mem_sleep);
        g_assert_null(c->disk);
        g_assert_nonnull(c->problem);
        g_assert_nonnull(strstr(c->problem, "mem_sleep"));
        g_assert_cmpint(power_can(c, SLEEP_HIBERNATE, "platform", &reason), ==, POWER_ANSWER_NA);
}

static void test_missing_state(Fixture *f, gconstpointer data) {
        g_autoptr(PowerCaps) c = NULL;
        g_autofree char *p = g_build_filename(f->dir, POWER_STATE, NULL);
        g_assert_cmpint(g_unlink(p), ==, 0);
        g_assert_cmpint(power_caps_read(f->fd, &c), ==, -ENOENT);
        put(f, POWER_STATE, "mem [disk\n");
        g_assert_cmpint(power_caps_read(f->fd, &c), ==, -EBADMSG);
}

/* The mainline answer knows nothing of TuxOnIce: without disk in state
 * it cannot hibernate, whatever else the kernel has (test-power-backend
 * covers the TuxOnIce backend's answer) */
static void test_can_ignores_tuxonice(Fixture *f, gconstpointer data) {
        g_autoptr(PowerCaps) c = NULL;
        const char *reason;
        put(f, POWER_STATE, "freeze mem\n");
        put(f, "sys/power/tuxonice/do_hibernate", "");
        g_assert_cmpint(power_caps_read(f->fd, &c), ==, 0);
        g_assert_cmpint(power_can(c, SLEEP_HIBERNATE, "platform", &reason), ==, POWER_ANSWER_NA);
        g_assert_cmpstr(reason, ==, "the kernel does not offer disk in /" POWER_STATE);
        g_assert_cmpint(power_can(c, SLEEP_HYBRID, "platform", &reason), ==, POWER_ANSWER_NA);
}

static void test_wakeup_count(Fixture *f, gconstpointer data) {
        uint32_t n = 0;
        g_assert_cmpint(power_read_wakeup_count(f->fd, &n), ==, 0);
        g_assert_cmpuint(n, ==, 17);
        put(f, POWER_WAKEUP_COUNT, "lots\n");
        g_assert_cmpint(power_read_wakeup_count(f->fd, &n), ==, -EBADMSG);
}

static void test_enter_failure_restores(Fixture *f, gconstpointer data) {
        /* `state` is a directory here so its write fails after pm_test was
         * set: pm_test must still be put back as it was */
        g_autofree char *p = g_build_filename(f->dir, POWER_STATE, NULL);
        g_assert_cmpint(g_unlink(p), ==, 0);
        g_assert_cmpint(g_mkdir(p, 0755), ==, 0);

        g_autoptr(PowerSaved) before = power_saved_read(f->fd, true);
        g_assert_cmpstr(before->pm_test, ==, "none");
        PowerSysfsRequest r = { .sysfs_fd = f->fd, .state = (char *) "mem", .pm_test = (char *) "devices",
                                .wake_after_sec = 3, .before = before };
        g_assert_cmpint(power_sysfs_enter(&r, NULL, NULL), <, 0);
        g_assert_cmpint(r.failed_step, ==, POWER_STEP_STATE);
        g_assert_null(r.base.wake_reason); /* nothing woke a sleep that never began */

        g_autofree char *pm = NULL, *alarm = NULL;
        g_assert_cmpint(read_file_at(f->fd, POWER_PM_TEST, &pm), ==, 0);
        /* plain files keep their old tail after a shorter write: compare the start */
        g_assert_true(g_str_has_prefix(pm, "none"));
        g_assert_cmpint(read_file_at(f->fd, POWER_RTC_ALARM, &alarm), ==, 0);
        g_assert_true(g_str_has_prefix(alarm, "0"));
}

static void put_tuxonice(Fixture *f) {
        static const char *const files[][2] = {
                { TUXONICE_DO_HIBERNATE, "" }, { TUXONICE_LAST_RESULT, "0\n" },
                { TUXONICE_IMAGE_SIZE_LIMIT, "XX" }, { TUXONICE_COMPRESSOR, "XXX" },
                { TUXONICE_COMPRESSION, "X" }, { TUXONICE_ENABLE_ESCAPE, "X" },
        };
        testdir_put_all(f->dir, files, G_N_ELEMENTS(files));
}

static void test_tuxonice_present(Fixture *f, gconstpointer data) {
        g_assert_false(tuxonice_present(f->fd));
        put_tuxonice(f);
        g_assert_true(tuxonice_present(f->fd));
        g_autofree char *p = g_build_filename(f->dir, TUXONICE_DO_HIBERNATE, NULL);
        g_assert_cmpint(unlink(p), ==, 0);
        g_assert_false(tuxonice_present(f->fd));
}

static void test_tuxonice_apply(Fixture *f, gconstpointer data) {
        put_tuxonice(f);
        TuxOnIceConfig c = { .image_size_limit = -2, .compressor = (char *) "lz4", .enable_escape = 1 };
        const char *what = NULL;
        g_assert_cmpint(tuxonice_apply(f->fd, &c, &what), ==, 0);
        g_assert_null(what);
        g_autofree char *limit = get(f, TUXONICE_IMAGE_SIZE_LIMIT), *alg = get(f, TUXONICE_COMPRESSOR);
        g_autofree char *on = get(f, TUXONICE_COMPRESSION), *esc = get(f, TUXONICE_ENABLE_ESCAPE);
        g_assert_cmpstr(limit, ==, "-2");
        g_assert_cmpstr(alg, ==, "lz4");
        g_assert_cmpstr(on, ==, "1");
        g_assert_cmpstr(esc, ==, "1");
}

static void test_tuxonice_apply_leaves_unset(Fixture *f, gconstpointer data) {
        put_tuxonice(f);
        TuxOnIceConfig c = { .image_size_limit = TUXONICE_IMAGE_SIZE_LIMIT_UNSET, .enable_escape = -1 };
        const char *what = NULL;
        g_assert_cmpint(tuxonice_apply(f->fd, &c, &what), ==, 0);
        g_autofree char *limit = get(f, TUXONICE_IMAGE_SIZE_LIMIT), *alg = get(f, TUXONICE_COMPRESSOR);
        g_autofree char *on = get(f, TUXONICE_COMPRESSION), *esc = get(f, TUXONICE_ENABLE_ESCAPE);
        g_assert_cmpstr(limit, ==, "XX");
        g_assert_cmpstr(alg, ==, "XXX");
        g_assert_cmpstr(on, ==, "X");
        g_assert_cmpstr(esc, ==, "X");

        /* none: compression off, the algorithm left alone */
        c.compressor = (char *) "none";
        g_assert_cmpint(tuxonice_apply(f->fd, &c, &what), ==, 0);
        g_autofree char *alg2 = get(f, TUXONICE_COMPRESSOR), *off = get(f, TUXONICE_COMPRESSION);
        g_assert_cmpstr(alg2, ==, "XXX");
        g_assert_cmpstr(off, ==, "0");
}

static void test_tuxonice_apply_names_the_failed_file(Fixture *f, gconstpointer data) {
        put_tuxonice(f);
        g_autofree char *p = g_build_filename(f->dir, TUXONICE_ENABLE_ESCAPE, NULL);
        g_assert_cmpint(unlink(p), ==, 0);
        TuxOnIceConfig c = { .image_size_limit = 100, .enable_escape = 0 };
        const char *what = NULL;
        g_assert_cmpint(tuxonice_apply(f->fd, &c, &what), ==, -ENOENT);
        g_assert_cmpstr(what, ==, TUXONICE_ENABLE_ESCAPE);
}

/* Time asleep: the suspended time where the monotonic clock stopped, else
 * how long the write blocked (s2idle, pm_test, the simulated kernel) */
static void test_slept_usec(void) {
        const uint64_t b0 = 50 * USEC_PER_SEC, m0 = 40 * USEC_PER_SEC;
        /* suspended 3 s: BOOTTIME ran on 3.2 s, MONOTONIC 0.2 s */
        g_assert_cmpuint(power_slept_usec(b0, m0, b0 + 3200000, m0 + 200000), ==, 3000000);
        /* the kernel counted nothing: both ran 3 s, the write blocked 3 s */
        g_assert_cmpuint(power_slept_usec(b0, m0, b0 + 3000000, m0 + 3000000), ==, 3000000);
        /* the jitter of reading two clocks is no suspend */
        g_assert_cmpuint(power_slept_usec(b0, m0, b0 + 100005, m0 + 100000), ==, 100000);
        g_assert_cmpuint(power_slept_usec(b0, m0, b0 + 99990, m0 + 100000), ==, 100000);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        log_set_max_level(LOG_EMERG);
        g_test_add("/power/caps", Fixture, NULL, setup, test_caps, teardown);
        g_test_add_func("/power/slept-usec", test_slept_usec);
        g_test_add("/power/no-disk", Fixture, NULL, setup, test_no_disk, teardown);
        g_test_add("/power/malformed-optional", Fixture, NULL, setup, test_malformed_optional, teardown);
        g_test_add("/power/missing-state", Fixture, NULL, setup, test_missing_state, teardown);
        g_test_add("/power/can-ignores-tuxonice", Fixture, NULL, setup, test_can_ignores_tuxonice, teardown);
        g_test_add("/power/wakeup-count", Fixture, NULL, setup, test_wakeup_count, teardown);
        g_test_add("/power/enter-failure-restores", Fixture, NULL, setup, test_enter_failure_restores, teardown);
        g_test_add("/power/tuxonice-present", Fixture, NULL, setup, test_tuxonice_present, teardown);
        g_test_add("/power/tuxonice-apply", Fixture, NULL, setup, test_tuxonice_apply, teardown);
        g_test_add("/power/tuxonice-apply-leaves-unset", Fixture, NULL, setup, test_tuxonice_apply_leaves_unset,
                   teardown);
        g_test_add("/power/tuxonice-apply-names-the-failed-file", Fixture, NULL, setup,
                   test_tuxonice_apply_names_the_failed_file, teardown);
        return g_test_run();
}
