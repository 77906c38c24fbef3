/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fixture and the checks the test-cycle cases share (see cycle.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cycle.h"
#include "fridge-config.h"

/* Skips are counted so that a run whose every case skipped exits 77. */
static unsigned n_started, n_skipped;

void skip(const char *why) {
        n_skipped++;
        g_test_message("SKIP: %s", why);
        g_test_skip(why);
}

bool cycle_every_case_skipped(void) {
        return n_started > 0 && n_skipped == n_started;
}

void fixture_setup(Fixture *f, gconstpointer data) {
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

void fixture_teardown(Fixture *f, gconstpointer data) {
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

char *log_text(Harness *h) {
        return harness_fakesys_log(h);
}

int log_index(char **lines, const char *line) {
        for (int i = 0; lines[i]; i++)
                if (g_str_equal(lines[i], line))
                        return i;
        return -1;
}

int log_first_prefix(char **lines, const char *prefix) {
        for (int i = 0; lines[i]; i++)
                if (g_str_has_prefix(lines[i], prefix))
                        return i;
        return -1;
}

int log_last_prefix(char **lines, const char *prefix) {
        int last = -1;
        for (int i = 0; lines[i]; i++)
                if (g_str_has_prefix(lines[i], prefix))
                        last = i;
        return last;
}

void assert_no_state_write(Harness *h) {
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        int i = log_first_prefix(lines, "power/state ");
        if (i >= 0) {
                g_autofree char *t = log_text(h);
                g_error("expected no power/state write, but the log has '%s':\n%s", lines[i], t);
        }
}

void assert_done_with_log(Harness *h, uint64_t cycle, ...) {
        g_autoptr(GPtrArray) want = g_ptr_array_new();
        va_list ap;

        va_start(ap, cycle);
        for (const char *l; (l = va_arg(ap, const char *));)
                g_ptr_array_add(want, (char *) l);
        va_end(ap);
        g_ptr_array_add(want, NULL);

        assert_finished(h, cycle, 15000, "done", "", NULL);
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        bool same = g_strv_equal((const char *const *) lines, (const char *const *) want->pdata);
        if (!same) {
                g_autofree char *got = g_strjoinv("\n", lines);
                g_autofree char *expected = g_strjoinv("\n", (char **) want->pdata);
                g_error("fakesys log differs.\nexpected:\n%s\ngot:\n%s", expected, got);
        }
}

void assert_finished(Harness *h, uint64_t cycle, int timeout_ms,
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

uint64_t sleep_ok_impl(Harness *h, int r, uint64_t cycle, char *err, char *msg) {
        if (r < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        g_free(err);
        g_free(msg);
        g_assert_cmpuint(cycle, >, 0);
        return cycle;
}


void expect_error(const char *what, int r, const char *err, const char *msg, const char *want) {
        if (r == 0)
                g_error("%s: expected %s, but the call succeeded", what, want);
        if (!g_str_equal(err, want))
                g_error("%s: expected %s, got %s: %s", what, want, err, msg);
}

bool need_slowfs(void) {
        if (!harness_env("SLOWFS")) {
                skip("SLOWFS is not set: slowfs was not built");
                return false;
        }
        return true;
}

bool need_fridgectl(void) {
        if (!harness_env("FRIDGECTL")) {
                skip("FRIDGECTL is not set: fridgectl was not built");
                return false;
        }
        return true;
}

int slowfs_held_count(Harness *h) {
        g_autofree char *stats = harness_slowfs_stats(h);
        const char *p = strstr(stats, "held=");
        return p ? atoi(p + 5) : -1;
}

/* fridged is stuck in the flush: Phase=flush announced and still flush
 * after 300 ms (an unblocked flush of this tiny file takes milliseconds). */
void assert_stuck_in_flush(Harness *h) {
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
void hold_dirty_slowfs(Harness *h) {
        /* The kernel's own writeback may take the data between the write
         * and the hold (a loaded machine): then it is dirtied again */
        for (int tries = 0; tries < 3; tries++) {
                harness_slowfs_make_dirty(h, 1024 * 1024);
                harness_slowfs_hold(h);
                if (harness_slowfs_syncfs_blocks(h, 500))
                        return;
                g_autofree char *stats = harness_slowfs_stats(h);
                g_test_message("syncfs() of a held slowfs returned (.stats: %s): dirtying it again", stats);
                harness_slowfs_release(h);
                harness_slowfs_forget_dirty(h);
        }
        g_error("syncfs() of a held slowfs returned three times, so the flush cannot be held");
}

/* Starts a cycle that gets stuck in the flush phase on a held slowfs. */
uint64_t start_stuck_flush(Harness *h, unsigned flush_timeout_ms) {
        hold_dirty_slowfs(h);
        if (flush_timeout_ms)
                return SLEEP_OK(h, "suspend", "flush-timeout-ms", "u", flush_timeout_ms, NULL);
        return SLEEP_OK(h, "suspend", NULL);
}
