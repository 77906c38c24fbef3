/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integration tests of whole sleep cycles: the real fridged on a private
 * bus, the kernel simulated by fakesys (and slowfs for slow writeback).
 * Each case starts a fresh harness; see harness.h.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "fridge-config.h"
#include "harness.h"

#define ERR(name) "io.fridge.Fridge1.Error." name
#define INVALID_ARGS "org.freedesktop.DBus.Error.InvalidArgs"

/* Skips are counted so that a run whose every case skipped exits 77. */
static unsigned n_started, n_skipped;

static void skip(const char *why) {
        n_skipped++;
        g_test_message("SKIP: %s", why);
        g_test_skip(why);
}

typedef struct Fixture {
        Harness *h;
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer data) {
        n_started++;
        f->h = NULL;
}

/* Invariants every case must leave intact: at most one CycleFinished per
 * cycle (late duplicates included), and fridged idle again. */
static void check_after_case(Harness *h) {
        g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);

        harness_process_until(h, 100, NULL, NULL);
        for (guint i = 0; i < h->signals->len; i++) {
                HarnessSignal *s = g_ptr_array_index(h->signals, i);
                uint64_t c = 0;
                if (g_strcmp0(s->member, "CycleFinished") != 0 || g_strcmp0(s->interface, FRIDGE_INTERFACE) != 0)
                        continue;
                sd_bus_message_rewind(s->message, true);
                if (sd_bus_message_read_basic(s->message, 't', &c) <= 0)
                        continue;
                gint64 *key = g_new(gint64, 1);
                *key = (gint64) c;
                if (!g_hash_table_add(seen, key))
                        g_error("more than one CycleFinished for cycle %" G_GUINT64_FORMAT, c);
        }
        if (g_hash_table_size(seen) == 0)
                return;   /* no cycle ran (or it was refused): nothing more to check */
        g_autofree char *state = harness_get_string(h, "State");
        g_autofree char *phase = harness_get_string(h, "Phase");
        if (!g_str_equal(state, "idle") || !g_str_equal(phase, ""))
                g_error("after the last cycle: State='%s' Phase='%s', expected idle and empty", state, phase);
}

static void fixture_teardown(Fixture *f, gconstpointer data) {
        Harness *h = f->h;
        int status;

        if (!h)
                return;
        if (h->bus && !g_test_failed())
                check_after_case(h);
        if (g_test_failed())
                harness_dump_fridged_log(h);   /* while the fakesys log is still readable */
        status = harness_stop(h);
        if (h->fridged_started && status != 0) {
                /* the contract: fridged exits 0 on SIGTERM (and, under ASan, leaks nothing) */
                if (status == -1)
                        g_test_message("fridged did not exit within 10 s of SIGTERM");
                else if (WIFEXITED(status))
                        g_test_message("fridged exited with status %d after SIGTERM", WEXITSTATUS(status));
                else if (WIFSIGNALED(status))
                        g_test_message("fridged was killed by signal %d after SIGTERM", WTERMSIG(status));
                harness_dump_fridged_log(h);
                g_test_fail();
        }
        harness_free(h);
        f->h = NULL;
}

/* ---------------------------------------------------------------- helpers */

static char *log_text(Harness *h) {
        return harness_fakesys_log(h);
}

static int log_index(char **lines, const char *line) {
        for (int i = 0; lines[i]; i++)
                if (g_str_equal(lines[i], line))
                        return i;
        return -1;
}

static int log_first_prefix(char **lines, const char *prefix) {
        for (int i = 0; lines[i]; i++)
                if (g_str_has_prefix(lines[i], prefix))
                        return i;
        return -1;
}

static int log_last_prefix(char **lines, const char *prefix) {
        int last = -1;
        for (int i = 0; lines[i]; i++)
                if (g_str_has_prefix(lines[i], prefix))
                        last = i;
        return last;
}

#define assert_log_line_index(h, lines, line, ret)                                     \
        G_STMT_START {                                                                  \
                ret = log_index(lines, line);                                           \
                if (ret < 0) {                                                          \
                        g_autofree char *_t = log_text(h);                              \
                        g_test_message("fakesys log:\n%s", _t);                         \
                        g_error("fakesys log has no line '%s'", line);                  \
                }                                                                       \
        } G_STMT_END

static void assert_no_state_write(Harness *h) {
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        int i = log_first_prefix(lines, "power/state ");
        if (i >= 0) {
                g_autofree char *t = log_text(h);
                g_error("expected no power/state write, but the log has '%s':\n%s", lines[i], t);
        }
}

static void assert_log_exactly(Harness *h, const char *const *expected) {
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        bool same = g_strv_length(lines) == g_strv_length((char **) expected);

        for (guint i = 0; same && lines[i]; i++)
                same = g_str_equal(lines[i], expected[i]);
        if (!same) {
                g_autofree char *got = g_strjoinv("\n", lines);
                g_autofree char *want = g_strjoinv("\n", (char **) expected);
                g_error("fakesys log differs.\nexpected:\n%s\ngot:\n%s", want, got);
        }
}

static void assert_finished(Harness *h, uint64_t cycle, int timeout_ms,
                            const char *want_result, const char *want_error, const char *message_has) {
        g_autofree char *result = NULL, *error = NULL, *message = NULL;

        if (!harness_wait_finished(h, cycle, timeout_ms, &result, &error, &message)) {
                g_autofree char *state = harness_get_string(h, "State");
                g_autofree char *phase = harness_get_string(h, "Phase");
                g_error("cycle %" G_GUINT64_FORMAT ": no CycleFinished within %d ms (State=%s Phase=%s)",
                        cycle, timeout_ms, state, phase);
        }
        if (!g_str_equal(result, want_result) || !g_str_equal(error, want_error) ||
            (message_has && !strstr(message, message_has)))
                g_error("cycle %" G_GUINT64_FORMAT ": expected CycleFinished(%s, '%s'%s%s%s), got (%s, '%s', '%s')",
                        cycle, want_result, want_error,
                        message_has ? ", message containing '" : "", message_has ? message_has : "",
                        message_has ? "'" : "", result, error, message);

        /* exactly one CycleFinished per cycle */
        int n = 0;
        for (guint i = 0; i < h->signals->len; i++) {
                HarnessSignal *s = g_ptr_array_index(h->signals, i);
                if (g_strcmp0(s->member, "CycleFinished") == 0 && g_strcmp0(s->interface, FRIDGE_INTERFACE) == 0) {
                        uint64_t c = 0;
                        sd_bus_message_rewind(s->message, true);
                        if (sd_bus_message_read_basic(s->message, 't', &c) > 0 && c == cycle)
                                n++;
                }
        }
        g_assert_cmpint(n, ==, 1);
}

static uint64_t sleep_ok_impl(Harness *h, int r, uint64_t cycle, char *err, char *msg) {
        if (r < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        g_free(err);
        g_free(msg);
        g_assert_cmpuint(cycle, >, 0);
        return cycle;
}

/* Sleep that must succeed; returns the cycle id. */
#define SLEEP_OK(h, kind, ...)                                                                  \
        ({                                                                                      \
                uint64_t _c = 0;                                                                \
                char *_e = NULL, *_m = NULL;                                                    \
                int _r = harness_sleep(h, kind, &_c, &_e, &_m, __VA_ARGS__);                    \
                sleep_ok_impl(h, _r, _c, _e, _m);                                               \
        })

static void expect_error(const char *what, int r, const char *err, const char *msg, const char *want) {
        if (r == 0)
                g_error("%s: expected %s, but the call succeeded", what, want);
        if (!g_str_equal(err, want))
                g_error("%s: expected %s, got %s: %s", what, want, err, msg);
}

static bool need_slowfs(void) {
        if (!harness_env("SLOWFS")) {
                skip("SLOWFS is not set: slowfs was not built");
                return false;
        }
        return true;
}

static bool need_fridgectl(void) {
        if (!harness_env("FRIDGECTL")) {
                skip("FRIDGECTL is not set: fridgectl was not built");
                return false;
        }
        return true;
}

static int slowfs_held_count(Harness *h) {
        g_autofree char *stats = harness_slowfs_stats(h);
        const char *p = strstr(stats, "held=");
        return p ? atoi(p + 5) : -1;
}

/* fridged is stuck in the flush: Phase=flush announced and still flush
 * after 300 ms (an unblocked flush of this tiny file takes milliseconds). */
static void assert_stuck_in_flush(Harness *h) {
        if (!harness_wait_property_signal(h, "Phase", "flush", 10000))
                g_error("no PropertiesChanged Phase=flush within 10 s");
        harness_process_until(h, 300, NULL, NULL);
        g_autofree char *phase = harness_get_string(h, "Phase");
        g_autofree char *state = harness_get_string(h, "State");
        g_autofree char *stats = harness_slowfs_stats(h);
        if (!g_str_equal(phase, "flush") || !g_str_equal(state, "running"))
                g_error("expected fridged stuck in the flush, but State='%s' Phase='%s' (.stats: %s)",
                        state, phase, stats);
        g_test_message("fridged is stuck in the flush (.stats: %s)", stats);
}

/* Dirty data on slowfs, held. slowfs holds the mtime update that syncfs()
 * waits for even on kernels where it no longer waits for FUSE data writes,
 * so a syncfs that returns here means slowfs is broken: a failure. */
static void hold_dirty_slowfs(Harness *h) {
        harness_slowfs_make_dirty(h, 1024 * 1024);
        harness_slowfs_hold(h);
        if (!harness_slowfs_syncfs_blocks(h, 500)) {
                g_autofree char *stats = harness_slowfs_stats(h);
                g_error("syncfs() of a held slowfs returned, so the flush cannot be held (.stats: %s)", stats);
        }
}

/* Starts a cycle that gets stuck in the flush phase on a held slowfs. */
static uint64_t start_stuck_flush(Harness *h, unsigned flush_timeout_ms) {
        hold_dirty_slowfs(h);
        if (flush_timeout_ms)
                return SLEEP_OK(h, "suspend", "flush-timeout-ms", "u", flush_timeout_ms, NULL);
        return SLEEP_OK(h, "suspend", NULL);
}

/* ---------------------------------------------------------------- 1 */

/* A mode asked for one cycle is put back afterwards: the kernel's default
 * (deep here) is not changed for later suspends by logind or anyone */
static void test_mem_sleep_restored(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        uint64_t cycle = SLEEP_OK(h, "suspend", "mem-sleep", "s", "s2idle", NULL);

        assert_finished(h, cycle, 15000, "done", "", NULL);
        const char *const expected[] = {
                "power/mem_sleep s2idle ok",
                "power/wakeup_count 0 ok",
                "power/state mem sleeping",
                "power/state mem ok",
                "power/mem_sleep deep ok",
                NULL,
        };
        assert_log_exactly(h, expected);
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

static void test_suspend_deep(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        uint64_t cycle = SLEEP_OK(h, "suspend", "mem-sleep", "s", "deep", NULL);

        assert_finished(h, cycle, 15000, "done", "", NULL);

        const char *const expected[] = {
                "power/mem_sleep deep ok",
                "power/wakeup_count 0 ok",
                "power/state mem sleeping",
                "power/state mem ok",
                NULL,
        };
        assert_log_exactly(h, expected);

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

/* ---------------------------------------------------------------- 9 */

static void check_invalid(Harness *h, GString *failures, const char *what, int r,
                          char *err, char *msg, const char *names) {
        if (r == 0) {
                g_string_append_printf(failures, "  %s: the call succeeded\n", what);
        } else if (!g_str_equal(err, INVALID_ARGS)) {
                g_string_append_printf(failures, "  %s: expected InvalidArgs, got %s: %s\n", what, err, msg);
        } else if (!strstr(msg, names)) {
                g_string_append_printf(failures, "  %s: the message '%s' does not name '%s'\n", what, msg, names);
        } else {
                g_test_message("%s -> %s: %s", what, err, msg);
        }
        g_free(err);
        g_free(msg);

        g_autofree char *log = log_text(h);
        if (*log)
                g_string_append_printf(failures, "  %s: the fakesys log is not empty:\n%s", what, log);
        g_autofree char *state = harness_get_string(h, "State");
        if (!g_str_equal(state, "idle"))
                g_string_append_printf(failures, "  %s: State is '%s', not idle\n", what, state);
}

#define INVALID(what, names, kind, ...)                                                         \
        G_STMT_START {                                                                          \
                char *_e = NULL, *_m = NULL;                                                    \
                uint64_t _c = 0;                                                                \
                int _r = harness_sleep(h, kind, &_c, &_e, &_m, __VA_ARGS__);                    \
                if (_r == 0) {                                                                  \
                        /* do not leave a cycle running into the next check */                 \
                        harness_wait_finished(h, _c, 15000, NULL, NULL, NULL);                  \
                }                                                                               \
                check_invalid(h, failures, what, _r, _e, _m, names);                            \
        } G_STMT_END

static void test_invalid_args(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_autoptr(GString) failures = g_string_new(NULL);

        INVALID("kind \"nap\"", "kind", "nap", NULL);
        INVALID("unknown option \"bogus\"", "bogus", "suspend", "bogus", "b", 1, NULL);
        INVALID("dry-run as a string", "dry-run", "suspend", "dry-run", "s", "yes", NULL);
        INVALID("wake-after-sec 0", "wake-after-sec", "suspend", "wake-after-sec", "u", 0u, NULL);
        INVALID("wake-after-sec as int32", "wake-after-sec", "suspend", "wake-after-sec", "i", 3, NULL);
        INVALID("flush-timeout-ms 5", "flush-timeout-ms", "suspend", "flush-timeout-ms", "u", 5u, NULL);
        INVALID("flush-timeout-ms 99999999", "flush-timeout-ms", "suspend",
                "flush-timeout-ms", "u", 99999999u, NULL);
        INVALID("mem-sleep \"deeper\"", "mem-sleep", "suspend", "mem-sleep", "s", "deeper", NULL);
        INVALID("pm-test \"all\"", "pm-test", "suspend", "pm-test", "s", "all", NULL);
        INVALID("mem-sleep with hibernate", "mem-sleep", "hibernate", "mem-sleep", "s", "deep", NULL);

        g_assert_cmpuint(harness_get_u64(h, "CycleId"), ==, 0);
        if (failures->len)
                g_error("bad arguments were not refused as the contract says:\n%s", failures->str);
}

static void test_not_supported(Fixture *f, gconstpointer data) {
        const char *const args[] = { "--states=freeze mem", NULL };
        HarnessOptions o = { .fakesys_args = args };
        Harness *h = f->h = harness_new(&o);
        char *err = NULL, *msg = NULL;
        uint64_t cycle = 0;

        int r = harness_sleep(h, "hibernate", &cycle, &err, &msg, NULL);
        if (r == 0)
                harness_wait_finished(h, cycle, 15000, NULL, NULL, NULL);
        expect_error("Sleep hibernate without disk", r, err, msg, ERR("NotSupported"));
        g_test_message("hibernate -> %s: %s", err, msg);
        g_free(err);
        g_free(msg);

        g_autofree char *log = log_text(h);
        g_assert_cmpstr(log, ==, "");
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_cmpstr(state, ==, "idle");
}

/* ---------------------------------------------------------------- 10 */

/* Canonical description of one interface: "method Sleep" -> "in s kind, ...". */
typedef struct IfaceParse {
        const char *want_iface;
        bool in_iface;
        int skip_depth;             /* >0 while inside an element we ignore */
        char *member_key;           /* "method X", "signal X" */
        GString *member_args;
        GHashTable *members;        /* key -> description */
        GPtrArray *dups;
} IfaceParse;

static const char *attr(const char **names, const char **values, const char *name) {
        for (int i = 0; names[i]; i++)
                if (g_str_equal(names[i], name))
                        return values[i];
        return NULL;
}

static void add_member(IfaceParse *p, char *key, char *desc) {
        if (g_hash_table_contains(p->members, key)) {
                g_ptr_array_add(p->dups, g_strdup(key));
                g_free(key);
                g_free(desc);
                return;
        }
        g_hash_table_insert(p->members, key, desc);
}

static void on_start(GMarkupParseContext *ctx, const char *element, const char **names,
                     const char **values, gpointer user_data, GError **error) {
        IfaceParse *p = user_data;

        if (p->skip_depth > 0) {
                p->skip_depth++;
                return;
        }
        if (g_str_equal(element, "interface")) {
                const char *n = attr(names, values, "name");
                if (g_strcmp0(n, p->want_iface) == 0)
                        p->in_iface = true;
                else
                        p->skip_depth = 1;
                return;
        }
        if (!p->in_iface)
                return;
        if (g_str_equal(element, "method") || g_str_equal(element, "signal")) {
                p->member_key = g_strdup_printf("%s %s", element, attr(names, values, "name"));
                p->member_args = g_string_new(NULL);
        } else if (g_str_equal(element, "arg") && p->member_key) {
                const char *type = attr(names, values, "type");
                const char *name = attr(names, values, "name");
                const char *dir = attr(names, values, "direction");
                bool method = g_str_has_prefix(p->member_key, "method ");
                if (p->member_args->len)
                        g_string_append(p->member_args, ", ");
                if (method)
                        g_string_append_printf(p->member_args, "%s ", dir ? dir : "in");
                g_string_append_printf(p->member_args, "%s %s", type ? type : "?", name ? name : "(unnamed)");
        } else if (g_str_equal(element, "property")) {
                add_member(p, g_strdup_printf("property %s", attr(names, values, "name")),
                           g_strdup_printf("type %s, access %s", attr(names, values, "type"),
                                           attr(names, values, "access")));
        }
        /* annotations and anything else: ignored */
}

static void on_end(GMarkupParseContext *ctx, const char *element, gpointer user_data, GError **error) {
        IfaceParse *p = user_data;

        if (p->skip_depth > 0) {
                p->skip_depth--;
                return;
        }
        if (g_str_equal(element, "interface")) {
                p->in_iface = false;
        } else if ((g_str_equal(element, "method") || g_str_equal(element, "signal")) && p->member_key) {
                add_member(p, g_steal_pointer(&p->member_key),
                           g_strdup_printf("(%s)", p->member_args->str));
                g_string_free(p->member_args, TRUE);
                p->member_args = NULL;
        }
}

static GHashTable *parse_interface(const char *xml, const char *what, GString *failures) {
        static const GMarkupParser parser = { .start_element = on_start, .end_element = on_end };
        IfaceParse p = {
                .want_iface = FRIDGE_INTERFACE,
                .members = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                .dups = g_ptr_array_new_with_free_func(g_free),
        };
        g_autoptr(GError) e = NULL;
        GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, &p, NULL);

        if (!g_markup_parse_context_parse(ctx, xml, -1, &e) || !g_markup_parse_context_end_parse(ctx, &e))
                g_error("cannot parse the %s XML: %s", what, e->message);
        g_markup_parse_context_free(ctx);
        for (guint i = 0; i < p.dups->len; i++)
                g_string_append_printf(failures, "  %s: %s is declared twice\n", what,
                                       (char *) g_ptr_array_index(p.dups, i));
        g_ptr_array_unref(p.dups);
        g_free(p.member_key);
        if (p.member_args)
                g_string_free(p.member_args, TRUE);
        if (g_hash_table_size(p.members) == 0)
                g_string_append_printf(failures, "  %s: no interface %s at all\n", what, FRIDGE_INTERFACE);
        return p.members;
}

static void test_introspection(Fixture *f, gconstpointer data) {
        const char *path = harness_env("INTROSPECTION_XML");
        g_autofree char *contract = NULL;
        g_autoptr(GError) e = NULL;
        sd_bus_message *reply = NULL;
        char *err = NULL, *msg = NULL;
        const char *live = NULL;

        if (!path) {
                skip("INTROSPECTION_XML is not set");
                return;
        }
        if (!g_file_get_contents(path, &contract, NULL, &e))
                g_error("read %s: %s", path, e->message);

        Harness *h = f->h = harness_new(NULL);
        if (harness_call(h, "org.freedesktop.DBus.Introspectable", "Introspect", &reply, &err, &msg, NULL) < 0)
                g_error("Introspect: %s: %s", err, msg);
        g_assert_cmpint(sd_bus_message_read(reply, "s", &live), >, 0);

        g_autoptr(GString) failures = g_string_new(NULL);
        g_autoptr(GHashTable) want = parse_interface(contract, "contract", failures);
        g_autoptr(GHashTable) got = parse_interface(live, "live", failures);
        g_autoptr(GList) keys = g_list_sort(g_hash_table_get_keys(want), (GCompareFunc) strcmp);
        for (GList *k = keys; k; k = k->next) {
                const char *w = g_hash_table_lookup(want, k->data);
                const char *g = g_hash_table_lookup(got, k->data);
                if (!g)
                        g_string_append_printf(failures, "  missing in fridged: %s %s\n", (char *) k->data, w);
                else if (!g_str_equal(w, g))
                        g_string_append_printf(failures, "  %s differs:\n    contract: %s\n    fridged:  %s\n",
                                               (char *) k->data, w, g);
        }
        g_autoptr(GList) extra = g_list_sort(g_hash_table_get_keys(got), (GCompareFunc) strcmp);
        for (GList *k = extra; k; k = k->next)
                if (!g_hash_table_contains(want, k->data))
                        g_string_append_printf(failures, "  not in the contract: %s %s\n", (char *) k->data,
                                               (char *) g_hash_table_lookup(got, k->data));

        g_test_message("compared %u members of %s", g_hash_table_size(want), FRIDGE_INTERFACE);
        if (failures->len) {
                g_test_message("live introspection:\n%s", live);
                sd_bus_message_unref(reply);
                g_error("fridged's %s differs from %s:\n%s", FRIDGE_INTERFACE, path, failures->str);
        }
        sd_bus_message_unref(reply);
}

/* ---------------------------------------------------------------- 11 */

static const char *const phase_order[] = {
        "prepare", "flush", "freeze-early", "flush-again", "freeze-late", "kernel", "thaw", NULL,
};

static int phase_rank(const char *phase) {
        for (int i = 0; phase_order[i]; i++)
                if (g_str_equal(phase_order[i], phase))
                        return i;
        return -1;
}

static void test_progress(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .slowfs = true };

        if (!need_slowfs())
                return;
        Harness *h = f->h = harness_new(&o);
        harness_slowfs_make_dirty(h, 4 * 1024 * 1024);
        /* ~1 MiB per FUSE write: 4 writes of 400 ms make a flush of ~1.6 s
         * (where syncfs() waits for FUSE writeback at all) */
        harness_slowfs_control(h, "write-delay-ms 400");

        guint first = h->signals->len;
        uint64_t cycle = SLEEP_OK(h, "suspend", NULL);
        assert_finished(h, cycle, 60000, "done", "", NULL);
        g_autofree char *stats = harness_slowfs_stats(h);
        g_test_message("slowfs stats after the cycle: %s", stats);

        g_autoptr(GString) failures = g_string_new(NULL);
        g_autoptr(GString) phases = g_string_new(NULL);
        g_autoptr(GArray) progress_only = g_array_new(FALSE, FALSE, sizeof(int64_t));
        double last_progress = -1;
        int last_rank = -1, n_progress = 0, n_repeated = 0;
        g_autofree char *last_phase = NULL;
        bool seen[G_N_ELEMENTS(phase_order)] = { false };

        for (guint i = first; i < h->signals->len; i++) {
                HarnessSignal *s = g_ptr_array_index(h->signals, i);
                g_autoptr(GPtrArray) ch = harness_parse_props_changed(s);
                bool only_progress = ch->len > 0;

                for (guint j = 0; j < ch->len; j++) {
                        HarnessPropChange *c = g_ptr_array_index(ch, j);
                        if (!g_str_equal(c->name, "Progress") && !g_str_equal(c->name, "ProgressText"))
                                only_progress = false;
                        if (g_str_equal(c->name, "Progress")) {
                                n_progress++;
                                if (c->type != 'd')
                                        g_string_append_printf(failures, "  Progress has type %c\n", c->type);
                                else if (c->d < 0 || c->d > 1)
                                        g_string_append_printf(failures, "  Progress %g outside 0..1\n", c->d);
                                else if (c->d < last_progress)
                                        g_string_append_printf(failures, "  Progress went down: %g -> %g\n",
                                                               last_progress, c->d);
                                if (c->type == 'd')
                                        last_progress = c->d;
                        } else if (g_str_equal(c->name, "Phase") && c->type == 's' && *c->s) {
                                int rank = phase_rank(c->s);
                                /* fridged sends only what changed: the same value again is a defect */
                                if (g_strcmp0(c->s, last_phase) == 0) {
                                        n_repeated++;
                                        g_string_append_printf(failures, "  Phase '%s' sent again unchanged\n", c->s);
                                        continue;
                                }
                                g_free(last_phase);
                                last_phase = g_strdup(c->s);
                                g_string_append_printf(phases, "%s%s", phases->len ? " " : "", c->s);
                                if (rank < 0)
                                        g_string_append_printf(failures, "  unknown Phase '%s'\n", c->s);
                                else if (seen[rank])
                                        g_string_append_printf(failures, "  Phase '%s' entered twice\n", c->s);
                                else if (rank < last_rank)
                                        g_string_append_printf(failures, "  Phase '%s' after '%s'\n", c->s,
                                                               phase_order[last_rank]);
                                if (rank >= 0) {
                                        seen[rank] = true;
                                        last_rank = MAX(last_rank, rank);
                                }
                        }
                }
                if (only_progress)
                        g_array_append_val(progress_only, s->time_usec);
        }
        for (int i = 0; phase_order[i]; i++)
                if (!seen[i])
                        g_string_append_printf(failures, "  Phase '%s' never announced\n", phase_order[i]);

        /* the most progress-only PropertiesChanged within any 1 s window */
        guint max_in_window = 0;
        for (guint i = 0; i < progress_only->len; i++) {
                int64_t t0 = g_array_index(progress_only, int64_t, i);
                guint n = 0;
                for (guint j = i; j < progress_only->len && g_array_index(progress_only, int64_t, j) < t0 + G_USEC_PER_SEC; j++)
                        n++;
                max_in_window = MAX(max_in_window, n);
        }
        g_test_message("phases: %s (%d repeated Phase values); %d Progress changes, "
                       "%u progress-only signals, at most %u in 1 s",
                       phases->str, n_repeated, n_progress, progress_only->len, max_in_window);
        if (max_in_window > 12)
                g_string_append_printf(failures, "  %u progress-only PropertiesChanged within 1 s (> 12)\n",
                                       max_in_window);
        if (n_progress == 0)
                g_string_append(failures, "  no Progress change at all\n");
        if (failures->len)
                g_error("progress reporting breaks the contract:\n%s", failures->str);
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

/* ---------------------------------------------------------------- 13 */

static char *json_string_field(const char *line, const char *key) {
        g_autofree char *pattern = g_strdup_printf("\"%s\"\\s*:\\s*\"([^\"]*)\"", key);
        g_autoptr(GRegex) re = g_regex_new(pattern, 0, 0, NULL);
        g_autoptr(GMatchInfo) mi = NULL;

        if (!g_regex_match(re, line, 0, &mi))
                return NULL;
        return g_match_info_fetch(mi, 1);
}

static char **fridgectl_argv(Harness *h, const char *const *args) {
        GPtrArray *a = g_ptr_array_new();
        g_ptr_array_add(a, g_strdup(harness_env("FRIDGECTL")));
        g_ptr_array_add(a, g_strdup_printf("--bus-address=%s", h->bus_address));
        for (const char *const *p = args; *p; p++)
                g_ptr_array_add(a, g_strdup(*p));
        g_ptr_array_add(a, NULL);
        return (char **) g_ptr_array_free(a, FALSE);
}

static void assert_exit(const char *what, int status, int want, const char *out) {
        if (status == -1)
                g_error("%s: timed out; stdout:\n%s", what, out ? out : "");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != want)
                g_error("%s: expected exit %d, got %s %d; stdout:\n%s", what, want,
                        WIFEXITED(status) ? "exit" : "signal",
                        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), out ? out : "");
}

static void test_fridgectl_json_dry_run(Fixture *f, gconstpointer data) {
        if (!need_fridgectl())
                return;
        Harness *h = f->h = harness_new(NULL);
        const char *const args[] = { "--json", "suspend", "--dry-run", NULL };
        g_auto(GStrv) argv = fridgectl_argv(h, args);
        g_autofree char *out = NULL;

        int status = harness_run(argv, 30000, &out);
        assert_exit("fridgectl --json suspend --dry-run", status, 0, out);

        g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
        const char *last = NULL;
        for (char **l = lines; *l; l++) {
                g_strstrip(*l);
                if (!**l)
                        continue;
                if (!g_str_has_prefix(*l, "{") || !g_str_has_suffix(*l, "}") || !strstr(*l, "\"event\""))
                        g_error("not a JSON event object: '%s'\nstdout:\n%s", *l, out);
                last = *l;
        }
        g_assert_nonnull(last);
        g_autofree char *event = json_string_field(last, "event");
        g_autofree char *result = json_string_field(last, "result");
        if (g_strcmp0(event, "finished") != 0 || g_strcmp0(result, "dry-run") != 0)
                g_error("the last line is not a finished/dry-run event: '%s'", last);
        assert_no_state_write(h);
}

static void test_fridgectl_failed(Fixture *f, gconstpointer data) {
        if (!need_fridgectl())
                return;
        Harness *h = f->h = harness_new(NULL);
        const char *const args[] = { "suspend", NULL };
        g_auto(GStrv) argv = fridgectl_argv(h, args);
        g_autofree char *out = NULL;

        harness_control(h, "fail-state EBUSY");
        int status = harness_run(argv, 30000, &out);
        assert_exit("fridgectl suspend with fail-state EBUSY", status, 1, out);
}

static void test_fridgectl_cancelled(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .slowfs = true };

        if (!need_fridgectl() || !need_slowfs())
                return;
        Harness *h = f->h = harness_new(&o);
        const char *const susp[] = { "suspend", NULL };
        const char *const cancel[] = { "cancel", NULL };
        g_auto(GStrv) argv_s = fridgectl_argv(h, susp);
        g_auto(GStrv) argv_c = fridgectl_argv(h, cancel);
        g_autofree char *out_c = NULL;
        int out_fd = -1;

        hold_dirty_slowfs(h);
        pid_t pid = harness_spawn_bg(argv_s, &out_fd);
        if (!harness_wait_property_signal(h, "Phase", "flush", 10000)) {
                kill(pid, SIGKILL);
                harness_wait_pid(pid, 5000);
                g_error("fridgectl suspend: no Phase=flush within 10 s");
        }
        assert_stuck_in_flush(h);

        int status = harness_run(argv_c, 30000, &out_c);
        assert_exit("fridgectl cancel", status, 0, out_c);

        status = harness_wait_pid(pid, 10000);
        if (status == -1) {
                kill(pid, SIGKILL);
                harness_wait_pid(pid, 5000);
        }
        g_autofree char *out_s = harness_read_all(out_fd);
        assert_exit("fridgectl suspend, cancelled", status, 3, out_s);
        assert_no_state_write(h);
        harness_slowfs_release(h);
}

static void test_fridgectl_busy(Fixture *f, gconstpointer data) {
        if (!need_fridgectl())
                return;
        Harness *h = f->h = harness_new(NULL);
        const char *const susp[] = { "suspend", NULL };
        g_auto(GStrv) argv = fridgectl_argv(h, susp);
        g_autofree char *out2 = NULL;
        int out_fd = -1;

        harness_control(h, "sleep-ms 2000");
        pid_t pid = harness_spawn_bg(argv, &out_fd);
        if (!harness_wait_log_line(h, "power/state mem sleeping", 10000)) {
                kill(pid, SIGKILL);
                harness_wait_pid(pid, 5000);
                g_error("the first fridgectl suspend did not reach the state write within 10 s");
        }
        int status = harness_run(argv, 30000, &out2);
        assert_exit("second fridgectl suspend", status, 4, out2);

        status = harness_wait_pid(pid, 15000);
        if (status == -1) {
                kill(pid, SIGKILL);
                harness_wait_pid(pid, 5000);
        }
        g_autofree char *out1 = harness_read_all(out_fd);
        assert_exit("first fridgectl suspend", status, 0, out1);
}

/* ---------------------------------------------------------------- main */


/* ---------------------------------------------------------------- TuxOnIce */

static const char *const tuxonice_args[] = { "--tuxonice", NULL };

static Harness *tuxonice_harness(const char *config) {
        HarnessOptions o = { .fakesys_args = tuxonice_args, .config = config };
        return harness_new(&o);
}

/* The kernel offers no disk state at all: hibernation goes through
 * TuxOnIce's do_hibernate, never /sys/power/state or disk */
static void test_tuxonice_hibernate(Fixture *f, gconstpointer data) {
        const char *const args[] = { "--tuxonice", "--states=freeze mem", NULL };
        HarnessOptions o = { .fakesys_args = args };
        Harness *h = f->h = harness_new(&o);

        g_autofree char *can = harness_get_string(h, "CanHibernate");
        g_assert_cmpstr(can, ==, "yes");
        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_finished(h, cycle, 15000, "done", "", NULL);
        const char *const expected[] = {
                "power/wakeup_count 0 ok",
                "power/tuxonice/do_hibernate 1 sleeping",
                "power/tuxonice/do_hibernate 1 ok",
                NULL,
        };
        assert_log_exactly(h, expected);
        g_assert_cmpint(harness_find_signal(h, "Resumed", true, cycle), >=, 0);
}

/* The [TuxOnIce] settings reach the kernel before do_hibernate */
static void test_tuxonice_settings_first(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness("[TuxOnIce]\nImageSizeLimit=1024\nCompressor=lz4\nEnableEscape=yes\n");

        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_finished(h, cycle, 15000, "done", "", NULL);
        const char *const expected[] = {
                "power/tuxonice/image_size_limit 1024 ok",
                "power/tuxonice/compression/algorithm lz4 ok",
                "power/tuxonice/compression/enabled 1 ok",
                "power/tuxonice/user_interface/enable_escape 1 ok",
                "power/wakeup_count 0 ok",
                "power/tuxonice/do_hibernate 1 sleeping",
                "power/tuxonice/do_hibernate 1 ok",
                NULL,
        };
        assert_log_exactly(h, expected);
        g_autofree char *alg = harness_read_sys(h, "power/tuxonice/compression/algorithm");
        g_assert_cmpstr(g_strstrip(alg), ==, "lz4");
}

/* One injected last_result: the cycle ends as expected, with a message
 * naming the failure and the raw value, and never sleeps */
static void expect_tuxonice_failure(Harness *h, uint64_t mask, const char *result, const char *error,
                                    const char *message_has) {
        g_autofree char *cmd = g_strdup_printf("toi-fail-result 0x%" G_GINT64_MODIFIER "x", mask);
        g_autofree char *raw = g_strdup_printf("(last_result 0x%" G_GINT64_MODIFIER "x)", mask);
        g_autofree char *message = NULL;

        harness_control(h, "clear-log");
        harness_control(h, cmd);
        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_finished(h, cycle, 15000, result, error, message_has);
        g_assert_true(harness_wait_finished(h, cycle, 0, NULL, NULL, &message));
        if (!g_str_has_prefix(message, "TuxOnIce aborted the hibernation: ") || !strstr(message, raw))
                g_error("last_result 0x%" G_GINT64_MODIFIER "x: message '%s'", mask, message);
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        int i;
        assert_log_line_index(h, lines, "power/tuxonice/do_hibernate 1 ok", i);
        g_assert_cmpint(log_first_prefix(lines, "power/tuxonice/do_hibernate 1 sleeping"), <, 0);
        assert_no_state_write(h);
}

#define TOI(bit) ((UINT64_C(1) << (bit)) | 1) /* TOI_ABORTED is set with every reason */

static void test_tuxonice_failures(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        expect_tuxonice_failure(h, TOI(2), "failed", ERR("Kernel"),
                                "no storage was available for the image (TOI_NOSTORAGE_AVAILABLE)");
        expect_tuxonice_failure(h, TOI(4), "failed", ERR("Kernel"),
                                "freezing tasks or file systems failed (TOI_FREEZING_FAILED)");
        expect_tuxonice_failure(h, TOI(15), "failed", ERR("Kernel"),
                                "I/O errors occurred while writing the image (TOI_FAILED_IO)");
        expect_tuxonice_failure(h, TOI(40), "failed", ERR("Kernel"), "unknown result bits 0x10000000000");
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "failed");
}

/* Every bit TuxOnIce defines is named; Escape at the console is a cancel
 * and a wakeup event an abort, as with the mainline kernel */
static void test_tuxonice_every_failure(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        for (unsigned bit = 1; bit <= 32; bit++) {
                bool cancel = bit == 1, wakeup = bit == 29;
                if (bit == 5 || bit == 11)
                        continue; /* a kept image and a raised allowance are notes, below */
                expect_tuxonice_failure(h, TOI(bit), cancel || wakeup ? "aborted" : "failed",
                                        cancel ? ERR("Cancelled") : wakeup ? ERR("WakeupEvent") : ERR("Kernel"),
                                        "(TOI_");
        }
        /* TOI_ABORTED alone names itself */
        expect_tuxonice_failure(h, 1, "failed", ERR("Kernel"), "the hibernation was aborted (TOI_ABORTED)");
}

/* Bits without TOI_ABORTED are notes on a cycle that went on */
static void test_tuxonice_notes(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        harness_control(h, "toi-fail-result 0x20");
        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_finished(h, cycle, 15000, "done", "", NULL);
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        g_assert_nonnull(strstr(log, "an existing image was kept (TOI_KEPT_IMAGE)"));
}

/* A wakeup event after wakeup_count was saved: TuxOnIce itself aborts */
static void test_tuxonice_wakeup_event(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        harness_control(h, "wakeup-on-write power/wakeup_count");
        uint64_t cycle = SLEEP_OK(h, "hibernate", NULL);
        assert_finished(h, cycle, 15000, "aborted", ERR("WakeupEvent"), "a wakeup event arrived (TOI_WAKEUP_EVENT)");
}

/* pm_test is the mainline kernel's test mode: such a cycle stays there */
static void test_tuxonice_pm_test_mainline(Fixture *f, gconstpointer data) {
        Harness *h = f->h = tuxonice_harness(NULL);
        int i;
        uint64_t cycle = SLEEP_OK(h, "hibernate", "dry-run", "b", 1, "pm-test", "s", "devices", NULL);
        assert_finished(h, cycle, 15000, "dry-run", "", NULL);
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        assert_log_line_index(h, lines, "power/state disk ok", i);
        g_assert_cmpint(log_first_prefix(lines, "power/tuxonice/"), <, 0);
}

#define ADD(path, fn) g_test_add("/cycle/" path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        ADD("suspend-deep", test_suspend_deep);
        ADD("mem-sleep-restored", test_mem_sleep_restored);
        ADD("sigterm-in-kernel-restores", test_sigterm_in_kernel_restores);
        ADD("dry-run", test_dry_run);
        ADD("pm-test-devices", test_pm_test_devices);
        ADD("pm-test-restored-on-failure", test_pm_test_restored_on_failure);
        ADD("cancel-during-flush", test_cancel_during_flush);
        ADD("flush-timeout-fail", test_flush_timeout_fail);
        ADD("flush-timeout-continue", test_flush_timeout_continue);
        ADD("wakeup-event", test_wakeup_event);
        ADD("kernel-ebusy", test_kernel_ebusy);
        ADD("busy-too-late-no-such-cycle", test_busy_too_late_no_such_cycle);
        ADD("invalid-args", test_invalid_args);
        ADD("not-supported", test_not_supported);
        ADD("introspection", test_introspection);
        ADD("progress", test_progress);
        ADD("wake-alarm", test_wake_alarm);
        ADD("fridgectl-json-dry-run", test_fridgectl_json_dry_run);
        ADD("fridgectl-failed", test_fridgectl_failed);
        ADD("fridgectl-cancelled", test_fridgectl_cancelled);
        ADD("fridgectl-busy", test_fridgectl_busy);
        ADD("tuxonice-hibernate", test_tuxonice_hibernate);
        ADD("tuxonice-settings-first", test_tuxonice_settings_first);
        ADD("tuxonice-failures", test_tuxonice_failures);
        ADD("tuxonice-every-failure", test_tuxonice_every_failure);
        ADD("tuxonice-notes", test_tuxonice_notes);
        ADD("tuxonice-wakeup-event", test_tuxonice_wakeup_event);
        ADD("tuxonice-pm-test-mainline", test_tuxonice_pm_test_mainline);

        int r = g_test_run();
        if (r == 0 && n_started > 0 && n_skipped == n_started)
                return 77;
        return r;
}
