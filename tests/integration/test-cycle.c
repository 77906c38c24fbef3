/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integration tests of whole sleep cycles: the real fridged on a private
 * bus, the kernel simulated by fakesys (and slowfs for slow writeback).
 * Each case starts a fresh harness; see harness.h. This file has the
 * cycles through the kernel and the case table; cycle-bus.c,
 * cycle-fridgectl.c and cycle-tuxonice.c the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cycle.h"
#include "fridge-config.h"

/* ---------------------------------------------------------------- 1 */

/* A mode asked for one cycle is put back afterwards: the kernel's default
 * (deep here) is not changed for later suspends by logind or anyone */
static void test_mem_sleep_restored(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        uint64_t cycle = SLEEP_OK(h, "suspend", "mem-sleep", "s", "s2idle", NULL);

        assert_done_with_log(h, cycle, "power/mem_sleep s2idle ok", "power/wakeup_count 0 ok",
                                     "power/state mem sleeping", "power/state mem ok",
                                     "power/mem_sleep deep ok", NULL);
        g_autofree char *mem_sleep = harness_read_sys(h, "power/mem_sleep");
        g_assert_cmpstr(g_strstrip(mem_sleep), ==, "s2idle [deep]");
}

/* Stopped while the state write is pending: the worker never gets to its
 * clean-up, so fridged puts the RTC alarm back itself before it exits */
static void test_sigterm_in_kernel_restores(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        harness_control(h, "sleep-ms 30000");
        uint64_t cycle = SLEEP_OK(h, "suspend", "wake-after-sec", "u", 60, NULL);
        g_assert_true(harness_wait_log_line(h, "power/state mem sleeping", 10000));

        g_assert_cmpint(kill(h->fridged_pid, SIGTERM), ==, 0);
        g_autofree char *result = NULL, *message = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 10000, &result, NULL, &message));
        g_assert_cmpstr(result, ==, "failed");
        g_assert_nonnull(strstr(message, "stopped during the kernel phase"));
        g_assert_true(harness_wait_log_line(h, "class/rtc/rtc0/wakealarm 0 ok", 10000));
        harness_control(h, "wakeup"); /* let the pending write end so fridged can exit */

        /* it exits cleanly, and the fixture must not look for it on the bus */
        int status = harness_wait_pid(h->fridged_pid, 10000);
        h->fridged_pid = 0;
        h->fridged_status = status;
        h->match_slot = sd_bus_slot_unref(h->match_slot);
        h->bus = sd_bus_flush_close_unref(h->bus);
}

#define PM_TEST_BEFORE "none core processors platform devices [freezer]"

/* The knobs go back as they were before the cycle, not to defaults: an
 * admin's pm_test level stays */
static void test_knobs_as_before(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        harness_control(h, "set power/pm_test " PM_TEST_BEFORE);
        uint64_t cycle = SLEEP_OK(h, "suspend", "pm-test", "s", "devices", "mem-sleep", "s", "s2idle", NULL);
        assert_done_with_log(h, cycle, "power/mem_sleep s2idle ok", "power/pm_test devices ok",
                             "power/wakeup_count 0 ok", "power/state mem ok", "power/pm_test freezer ok",
                             "power/mem_sleep deep ok", NULL);
        harness_assert_sys(h, "power/pm_test", PM_TEST_BEFORE);
        harness_assert_sys(h, "power/mem_sleep", "s2idle [deep]");
}

/* As above when fridged stops while the state write is pending: what the
 * worker would have put back, fridged puts back itself before it exits */
static void test_sigterm_in_kernel_knobs_as_before(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        harness_control(h, "set power/pm_test " PM_TEST_BEFORE);
        harness_control(h, "hold-write power/state");
        uint64_t cycle = SLEEP_OK(h, "suspend", "pm-test", "s", "devices", "mem-sleep", "s", "s2idle",
                                  "wake-after-sec", "u", 60, NULL);
        g_assert_true(harness_wait_log_line(h, "power/wakeup_count 0 ok", 10000)); /* the last step before the state */

        g_assert_cmpint(kill(h->fridged_pid, SIGTERM), ==, 0);
        g_autofree char *result = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 10000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "failed");
        harness_assert_sys(h, "power/pm_test", PM_TEST_BEFORE);
        harness_assert_sys(h, "power/mem_sleep", "s2idle [deep]");
        harness_assert_sys(h, "class/rtc/rtc0/wakealarm", "");
        harness_control(h, "release-write power/state"); /* so fridged can exit */

        int status = harness_wait_pid(h->fridged_pid, 10000);
        h->fridged_pid = 0;
        h->fridged_status = status;
        h->match_slot = sd_bus_slot_unref(h->match_slot);
        h->bus = sd_bus_flush_close_unref(h->bus);
}

static void test_suspend_deep(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        uint64_t cycle = SLEEP_OK(h, "suspend", "mem-sleep", "s", "deep", NULL);

        assert_done_with_log(h, cycle, "power/mem_sleep deep ok", "power/wakeup_count 0 ok",
                                     "power/state mem sleeping", "power/state mem ok", NULL);

        int resumed = harness_find_signal(h, "Resumed", true, cycle);
        int finished = harness_find_signal(h, "CycleFinished", true, cycle);
        if (resumed < 0)
                g_error("no Resumed signal for cycle %" G_GUINT64_FORMAT, cycle);
        g_assert_cmpint(resumed, <, finished);

        /* SleepImminent(cycle, "suspend") announced the cycle, before anything
         * was flushed or written (it goes out at the start of prepare) */
        int imminent = harness_find_signal(h, "SleepImminent", true, cycle);
        if (imminent < 0)
                g_error("no SleepImminent signal for cycle %" G_GUINT64_FORMAT, cycle);
        g_assert_cmpint(imminent, <, resumed);
        {
                HarnessSignal *s = g_ptr_array_index(h->signals, imminent);
                const char *kind = NULL;
                uint64_t c = 0;
                sd_bus_message_rewind(s->message, true);
                g_assert_cmpint(sd_bus_message_read(s->message, "ts", &c, &kind), >, 0);
                g_assert_cmpstr(kind, ==, "suspend");
        }

        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "done");
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_cmpstr(state, ==, "idle");
        g_assert_cmpuint(harness_get_u64(h, "CycleId"), ==, cycle);
}

/* ---------------------------------------------------------------- 2 */

static void test_dry_run(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        uint64_t cycle = SLEEP_OK(h, "suspend", "dry-run", "b", 1, NULL);

        assert_finished(h, cycle, 15000, "dry-run", "", NULL);
        assert_no_state_write(h);
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "dry-run");
}

/* A dry run writes no /sys/power knob, so it saves none for a restart to
 * put back (a directory in the way of the saved file would show a try) */
static void test_dry_run_saves_no_knobs(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_autofree char *blocker = g_build_filename(h->dir, "state", ".kernel.tmp", NULL);
        g_assert_cmpint(g_mkdir_with_parents(blocker, 0700), ==, 0);
        uint64_t cycle = SLEEP_OK(h, "suspend", "dry-run", "b", 1, NULL);
        assert_finished(h, cycle, 15000, "dry-run", "", NULL);
        g_autofree char *flog = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &flog, NULL, NULL));
        g_assert_null(strstr(flog, "Failed to save the kernel settings"));
        g_assert_true(g_file_test(blocker, G_FILE_TEST_IS_DIR));
}

/* Nor does it read the wakeup count (nor every source's count): they are
 * for the state write's handshake alone. One that cannot be read shows a
 * try (fridged warns that it sleeps without the handshake). */
static void test_dry_run_reads_no_wakeup_count(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        harness_control(h, "set power/wakeup_count unreadable");
        uint64_t cycle = SLEEP_OK(h, "suspend", "dry-run", "b", 1, NULL);
        assert_finished(h, cycle, 15000, "dry-run", "", NULL);
        g_autofree char *flog = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &flog, NULL, NULL));
        g_assert_null(strstr(flog, "Failed to read wakeup_count"));
}

/* ---------------------------------------------------------------- 3 */

static void check_pm_test_around_state(Harness *h) {
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        int set, reset, state_first, state_last;

        assert_log_line_index(h, lines, "power/pm_test devices ok", set);
        assert_log_line_index(h, lines, "power/pm_test none ok", reset);
        state_first = log_first_prefix(lines, "power/state ");
        state_last = log_last_prefix(lines, "power/state ");
        if (state_first < 0 || !(set < state_first && state_last < reset)) {
                g_autofree char *t = log_text(h);
                g_error("expected pm_test devices < power/state < pm_test none in:\n%s", t);
        }
        g_autofree char *pm = harness_read_sys(h, "power/pm_test");
        if (!g_str_has_prefix(pm, "[none]"))
                g_error("sys/power/pm_test reads '%s', expected '[none] ...'", pm);
}

static void test_pm_test_devices(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        uint64_t cycle = SLEEP_OK(h, "suspend", "pm-test", "s", "devices", NULL);

        assert_finished(h, cycle, 15000, "done", "", NULL);
        check_pm_test_around_state(h);
}

static void test_pm_test_restored_on_failure(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);

        harness_control(h, "fail-state EBUSY");
        uint64_t cycle = SLEEP_OK(h, "suspend", "pm-test", "s", "devices", NULL);
        assert_finished(h, cycle, 15000, "failed", ERR("Kernel"), NULL);
        check_pm_test_around_state(h);
}

/* ---------------------------------------------------------------- 4 */

static void test_cancel_during_flush(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .slowfs = true };
        char *err = NULL, *msg = NULL;
        uint64_t cycle;

        if (!need_slowfs())
                return;
        Harness *h = f->h = harness_new(&o);
        cycle = start_stuck_flush(h, 0);

        assert_stuck_in_flush(h);

        int64_t t0 = g_get_monotonic_time();
        int r = harness_cancel(h, cycle, &err, &msg);
        if (r < 0)
                g_error("Cancel failed: %s: %s", err, msg);
        assert_finished(h, cycle, 3000, "aborted", ERR("Cancelled"), NULL);
        int64_t elapsed = g_get_monotonic_time() - t0;
        g_test_message("Cancel -> CycleFinished took %" G_GINT64_FORMAT " ms", elapsed / 1000);
        g_assert_cmpint(elapsed, <, 2500 * 1000);

        /* the flush was still stuck when the cycle ended */
        g_assert_cmpint(slowfs_held_count(h), >, 0);
        assert_no_state_write(h);
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_cmpstr(state, ==, "idle");

        harness_slowfs_release(h);
}

/* ---------------------------------------------------------------- 5 */

static void test_flush_timeout_fail(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .slowfs = true };
        uint64_t cycle;

        if (!need_slowfs())
                return;
        Harness *h = f->h = harness_new(&o);
        cycle = start_stuck_flush(h, 500);
        assert_finished(h, cycle, 10000, "failed", ERR("FlushTimeout"), NULL);
        assert_no_state_write(h);
        harness_slowfs_release(h);
}

static void test_flush_timeout_continue(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .slowfs = true, .config = "[Flush]\nOnTimeout=continue\n" };
        uint64_t cycle;

        if (!need_slowfs())
                return;
        Harness *h = f->h = harness_new(&o);
        cycle = start_stuck_flush(h, 500);
        assert_finished(h, cycle, 20000, "done", "", NULL);
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        int i;
        assert_log_line_index(h, lines, "power/state mem ok", i);
        harness_slowfs_release(h);
}

static bool fridged_log_has(Harness *h, const char *text) {
        g_autofree char *log = NULL;
        return g_file_get_contents(h->fridged_log, &log, NULL, NULL) && strstr(log, text);
}

/* One line of fridged's log has both */
static bool fridged_log_line_has(Harness *h, const char *a, const char *b) {
        g_autofree char *log = NULL;
        if (!g_file_get_contents(h->fridged_log, &log, NULL, NULL))
                return false;
        g_auto(GStrv) lines = g_strsplit(log, "\n", -1);
        for (char **l = lines; *l; l++)
                if (strstr(*l, a) && strstr(*l, b))
                        return true;
        return false;
}

/* Each flush that times out on a held slowfs leaves its thread in syncfs
 * (usually: a later syncfs may not wait for the held update, so the count
 * is looked for, not the cycle): once four are stuck, a flush starts no
 * fifth, and its failure names where they are; once writeback goes on
 * they finish and cycles flush again */
static void test_flush_threads_capped(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .slowfs = true };
        if (!need_slowfs())
                return;
        Harness *h = f->h = harness_new(&o);
        hold_dirty_slowfs(h);
        /* where they are stuck: this test's slowfs (and any other held one
         * on this machine: fridged's sync() waits on every file system) */
        const char *stuck = "4 writeback threads of earlier flushes are still stuck (in ";
        int refused_at = -1;
        uint64_t cycle;
        for (int i = 0; i < 10 && refused_at < 0; i++) {
                g_autofree char *result = NULL, *error = NULL, *message = NULL;
                cycle = SLEEP_OK(h, "suspend", "flush-timeout-ms", "u", 200u, NULL);
                g_assert_true(harness_wait_finished(h, cycle, 15000, &result, &error, &message));
                g_test_message("cycle %d: %s %s: %s", i + 1, result, error, message);
                g_assert_cmpstr(error, ==, ERR("FlushTimeout"));
                if (strstr(message, stuck) && strstr(message, h->slow))
                        refused_at = i;
                else
                        g_assert_nonnull(strstr(message, "did not finish within 200 ms"));
        }
        /* a cycle leaves one thread at the most: four came first */
        g_assert_cmpint(refused_at, >=, 4);
        assert_no_state_write(h);

        harness_slowfs_release(h);
        /* the abandoned threads end on their own time: bounded polling */
        for (int tries = 0;; tries++) {
                g_autofree char *result = NULL, *message = NULL;
                cycle = SLEEP_OK(h, "suspend", "dry-run", "b", 1, NULL);
                g_assert_true(harness_wait_finished(h, cycle, 15000, &result, NULL, &message));
                if (g_str_equal(result, "dry-run"))
                        break;
                g_assert_nonnull(strstr(message, "still stuck"));
                if (tries == 50)
                        g_error("the writeback threads did not end within 10 s of the release");
                g_usleep(200 * 1000);
        }
}

/* The same with [Flush] OnTimeout=continue: a cycle leaves one thread
 * here (nothing is frozen: no flush-again); once four are stuck a cycle starts
 * none, says where they are, and goes on as configured */
static void test_flush_threads_capped_continue(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .slowfs = true, .config = "[Flush]\nOnTimeout=continue\n" };
        if (!need_slowfs())
                return;
        Harness *h = f->h = harness_new(&o);
        hold_dirty_slowfs(h);
        const char *stuck = "4 writeback threads of earlier flushes are still stuck (in ";
        int said_at = -1;
        for (int i = 0; i < 12 && said_at < 0; i++) {
                uint64_t cycle = SLEEP_OK(h, "suspend", "flush-timeout-ms", "u", 200u, NULL);
                assert_finished(h, cycle, 20000, "done", "", NULL);
                if (fridged_log_line_has(h, stuck, h->slow) &&
                    fridged_log_line_has(h, stuck, "; not starting another, going on as configured"))
                        said_at = i;
        }
        g_test_message("cycle %d started no flush thread", said_at + 1);
        g_assert_cmpint(said_at, >=, 2);
        harness_slowfs_release(h);
}

/* Nothing frozen in the early stage, nothing for a second flush to do
 * that the first did not: with writeback held, the first flush runs out
 * of time (and goes on as configured), and flushing-again starts none */
static void test_no_second_flush_when_nothing_frozen(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .slowfs = true, .config = "[Flush]\nOnTimeout=continue\n" };
        if (!need_slowfs())
                return;
        Harness *h = f->h = harness_new(&o);
        hold_dirty_slowfs(h);
        uint64_t cycle = SLEEP_OK(h, "suspend", "flush-timeout-ms", "u", 200u, NULL);
        assert_finished(h, cycle, 20000, "done", "", NULL);
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        g_autofree char *gave_up = g_strdup_printf("Writeback did not finish within 200 ms");
        unsigned n = 0;
        for (const char *p = log; (p = strstr(p, gave_up)); p++)
                n++;
        g_assert_cmpuint(n, ==, 1);
        g_assert_true(fridged_log_has(h, "nothing frozen since the first flush; no second one"));
        harness_slowfs_release(h);
}

/* ---------------------------------------------------------------- 6 */

static void test_wakeup_event(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        int i;

        harness_control(h, "wakeup-on-write power/mem_sleep");
        uint64_t cycle = SLEEP_OK(h, "suspend", "mem-sleep", "s", "deep", NULL);
        assert_finished(h, cycle, 15000, "aborted", ERR("WakeupEvent"), NULL);

        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        assert_log_line_index(h, lines, "power/wakeup_count 0 EINVAL", i);
        assert_no_state_write(h);
}

/* ---------------------------------------------------------------- 7 */

static void test_kernel_ebusy(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);

        harness_control(h, "fail-state EBUSY");
        uint64_t cycle = SLEEP_OK(h, "suspend", NULL);
        assert_finished(h, cycle, 15000, "failed", ERR("Kernel"), "Device or resource busy");
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "failed");
}

/* ---------------------------------------------------------------- 8 */

static void test_busy_too_late_no_such_cycle(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        char *err = NULL, *msg = NULL;
        uint64_t other = 0;
        int r;

        harness_control(h, "sleep-ms 2000");
        uint64_t cycle = SLEEP_OK(h, "suspend", NULL);
        if (!harness_wait_log_line(h, "power/state mem sleeping", 10000))
                g_error("the state write did not begin within 10 s");

        r = harness_sleep(h, "suspend", &other, &err, &msg, NULL);
        expect_error("second Sleep", r, err, msg, ERR("Busy"));
        g_clear_pointer(&err, g_free);
        g_clear_pointer(&msg, g_free);

        r = harness_cancel(h, cycle, &err, &msg);
        expect_error("Cancel while sleeping", r, err, msg, ERR("TooLate"));
        g_clear_pointer(&err, g_free);
        g_clear_pointer(&msg, g_free);

        r = harness_cancel(h, 12345, &err, &msg);
        expect_error("Cancel(12345)", r, err, msg, ERR("NoSuchCycle"));
        g_clear_pointer(&err, g_free);
        g_clear_pointer(&msg, g_free);

        assert_finished(h, cycle, 15000, "done", "", NULL);

        /* and after the cycle, Cancel of it is NoSuchCycle too */
        r = harness_cancel(h, cycle, &err, &msg);
        expect_error("Cancel of a finished cycle", r, err, msg, ERR("NoSuchCycle"));
        g_free(err);
        g_free(msg);
}

/* A PropertiesChanged has set ProgressText to something starting with `prefix` */
static bool progress_text_seen(Harness *h, void *prefix) {
        for (guint i = 0; i < h->signals->len; i++) {
                g_autoptr(GPtrArray) props = harness_parse_props_changed(g_ptr_array_index(h->signals, i));
                for (guint k = 0; k < props->len; k++) {
                        const HarnessPropChange *c = props->pdata[k];
                        if (g_str_equal(c->name, "ProgressText") && c->s && g_str_has_prefix(c->s, prefix))
                                return true;
                }
        }
        return false;
}

/* A state write that does not return ([Sleep] KernelWatchdogMs=1000): it
 * is reported stuck, naming the write, while the bus goes on answering;
 * when it returns the cycle ends as always */
static void test_kernel_watchdog(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .config = "[Sleep]\nKernelWatchdogMs=1000\n" };
        Harness *h = f->h = harness_new(&o);
        char *err = NULL, *msg = NULL;
        uint64_t other = 0;

        harness_control(h, "hold-write power/state");
        uint64_t cycle = SLEEP_OK(h, "suspend", NULL);
        if (!harness_process_until(h, 15000, progress_text_seen, (void *) "kernel state write stuck for "))
                g_error("no ProgressText 'kernel state write stuck for ...' within 15 s");
        g_assert_true(fridged_log_has(h, "the kernel state write ('mem' to /sys/power/state) has not returned"));

        /* the bus answers: GetAll, a second Sleep (Busy), Cancel (TooLate) */
        sd_bus_message *all = NULL;
        g_assert_cmpint(harness_call(h, "org.freedesktop.DBus.Properties", "GetAll", &all, &err, &msg, "s",
                                     FRIDGE_INTERFACE), ==, 0);
        sd_bus_message_unref(all);
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_cmpstr(state, ==, "sleeping");
        g_autofree char *text = harness_get_string(h, "ProgressText");
        g_assert_true(g_str_has_prefix(text, "kernel state write stuck for "));
        int r = harness_sleep(h, "suspend", &other, &err, &msg, NULL);
        expect_error("Sleep while the state write is stuck", r, err, msg, ERR("Busy"));
        g_clear_pointer(&err, g_free);
        g_clear_pointer(&msg, g_free);
        r = harness_cancel(h, cycle, &err, &msg);
        expect_error("Cancel while the state write is stuck", r, err, msg, ERR("TooLate"));
        g_clear_pointer(&err, g_free);
        g_clear_pointer(&msg, g_free);
        assert_no_state_write(h); /* still held: nothing reached the kernel */

        harness_control(h, "release-write power/state");
        assert_finished(h, cycle, 15000, "done", "", NULL);
        g_assert_true(fridged_log_has(h, "the kernel state write ('mem' to /sys/power/state) returned after"));
}

/* ---------------------------------------------------------------- 12 */

static void test_wake_alarm(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        int arm, disarm;

        uint64_t cycle = SLEEP_OK(h, "suspend", "wake-after-sec", "u", 3u, NULL);
        assert_finished(h, cycle, 15000, "done", "", NULL);

        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        assert_log_line_index(h, lines, "class/rtc/rtc0/wakealarm +3 ok", arm);
        assert_log_line_index(h, lines, "class/rtc/rtc0/wakealarm 0 ok", disarm);
        int first = log_first_prefix(lines, "power/state ");
        int last = log_last_prefix(lines, "power/state ");
        if (first < 0 || !(arm < first && last < disarm)) {
                g_autofree char *t = log_text(h);
                g_error("expected wakealarm +3 < power/state < wakealarm 0 in:\n%s", t);
        }
}

#define ADD(path, fn) g_test_add("/cycle/" path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        ADD("suspend-deep", test_suspend_deep);
        ADD("mem-sleep-restored", test_mem_sleep_restored);
        ADD("sigterm-in-kernel-restores", test_sigterm_in_kernel_restores);
        ADD("knobs-as-before", test_knobs_as_before);
        ADD("sigterm-in-kernel-knobs-as-before", test_sigterm_in_kernel_knobs_as_before);
        ADD("dry-run", test_dry_run);
        ADD("dry-run-saves-no-knobs", test_dry_run_saves_no_knobs);
        ADD("dry-run-reads-no-wakeup-count", test_dry_run_reads_no_wakeup_count);
        ADD("pm-test-devices", test_pm_test_devices);
        ADD("pm-test-restored-on-failure", test_pm_test_restored_on_failure);
        ADD("cancel-during-flush", test_cancel_during_flush);
        ADD("flush-timeout-fail", test_flush_timeout_fail);
        ADD("flush-timeout-continue", test_flush_timeout_continue);
        ADD("flush-threads-capped", test_flush_threads_capped);
        ADD("flush-threads-capped-continue", test_flush_threads_capped_continue);
        ADD("no-second-flush-when-nothing-frozen", test_no_second_flush_when_nothing_frozen);
        ADD("wakeup-event", test_wakeup_event);
        ADD("kernel-ebusy", test_kernel_ebusy);
        ADD("busy-too-late-no-such-cycle", test_busy_too_late_no_such_cycle);
        ADD("kernel-watchdog", test_kernel_watchdog);
        ADD("invalid-args", test_invalid_args);
        ADD("not-supported", test_not_supported);
        ADD("introspection", test_introspection);
        ADD("progress", test_progress);
        ADD("get-plan-concurrent", test_get_plan_concurrent);
        ADD("wake-alarm", test_wake_alarm);
        ADD("fridgectl-json-dry-run", test_fridgectl_json_dry_run);
        ADD("fridgectl-failed", test_fridgectl_failed);
        ADD("fridgectl-cancelled", test_fridgectl_cancelled);
        ADD("fridgectl-busy", test_fridgectl_busy);
        ADD("fridgectl-status-settings", test_fridgectl_status_settings);
        ADD("tuxonice-hibernate", test_tuxonice_hibernate);
        ADD("tuxonice-settings-first", test_tuxonice_settings_first);
        ADD("tuxonice-failures", test_tuxonice_failures);
        ADD("tuxonice-every-failure", test_tuxonice_every_failure);
        ADD("tuxonice-notes", test_tuxonice_notes);
        ADD("tuxonice-wakeup-event", test_tuxonice_wakeup_event);
        ADD("tuxonice-pm-test-mainline", test_tuxonice_pm_test_mainline);

        int r = g_test_run();
        if (r == 0 && cycle_every_case_skipped())
                return 77;
        return r;
}
