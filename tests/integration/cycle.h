/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What test-cycle.c and its cycle-*.c parts share: the fixture, log and
 * cycle checks (cycle-helpers.c), and the cases the other parts define.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness.h"

#define ERR(name) "io.fridge.Fridge1.Error." name
#define INVALID_ARGS "org.freedesktop.DBus.Error.InvalidArgs"

typedef struct Fixture {
        Harness *h;
} Fixture;

/* Skips the case; cycle_every_case_skipped() tells main() whether all did. */
void skip(const char *why);
bool cycle_every_case_skipped(void);
void fixture_setup(Fixture *f, gconstpointer data);
/* Checks the invariants every case must leave intact, stops the harness and
 * fails the case unless fridged exited 0 on SIGTERM. */
void fixture_teardown(Fixture *f, gconstpointer data);

/* fakesys's log: the text, the index of a line, of the first and last line
 * with a prefix (-1: none) */
char *log_text(Harness *h);
int log_index(char **lines, const char *line);
int log_first_prefix(char **lines, const char *prefix);
int log_last_prefix(char **lines, const char *prefix);
void assert_no_state_write(Harness *h);
/* CycleFinished(done) within 15 s, and fakesys's log is exactly the lines
 * given (NULL-terminated) */
void assert_done_with_log(Harness *h, uint64_t cycle, ...) G_GNUC_NULL_TERMINATED;

/* CycleFinished(result, error) for cycle within timeout_ms, its message
 * containing message_has (unless NULL), and only one */
void assert_finished(Harness *h, uint64_t cycle, int timeout_ms,
                     const char *want_result, const char *want_error, const char *message_has);
uint64_t sleep_ok_impl(Harness *h, int r, uint64_t cycle, char *err, char *msg);
void expect_error(const char *what, int r, const char *err, const char *msg, const char *want);
/* false (and the case skipped) when the program was not built */
bool need_slowfs(void);
bool need_fridgectl(void);

/* slowfs: writes held now, dirty data held, a cycle stuck in the flush */
int slowfs_held_count(Harness *h);
void assert_stuck_in_flush(Harness *h);
void hold_dirty_slowfs(Harness *h);
uint64_t start_stuck_flush(Harness *h, unsigned flush_timeout_ms);

#define assert_log_line_index(h, lines, line, ret)                                     \
        G_STMT_START {                                                                  \
                ret = log_index(lines, line);                                           \
                if (ret < 0) {                                                          \
                        g_autofree char *_t = log_text(h);                              \
                        g_test_message("fakesys log:\n%s", _t);                         \
                        g_error("fakesys log has no line '%s'", line);                  \
                }                                                                       \
        } G_STMT_END

/* Sleep that must succeed; returns the cycle id. */
#define SLEEP_OK(h, kind, ...)                                                                  \
        ({                                                                                      \
                uint64_t _c = 0;                                                                \
                char *_e = NULL, *_m = NULL;                                                    \
                int _r = harness_sleep(h, kind, &_c, &_e, &_m, __VA_ARGS__);                    \
                sleep_ok_impl(h, _r, _c, _e, _m);                                               \
        })

/* cycle-bus.c */
void test_invalid_args(Fixture *f, gconstpointer data);
void test_not_supported(Fixture *f, gconstpointer data);
void test_introspection(Fixture *f, gconstpointer data);
void test_progress(Fixture *f, gconstpointer data);
void test_get_plan_concurrent(Fixture *f, gconstpointer data);

/* cycle-fridgectl.c */
void test_fridgectl_json_dry_run(Fixture *f, gconstpointer data);
void test_fridgectl_failed(Fixture *f, gconstpointer data);
void test_fridgectl_cancelled(Fixture *f, gconstpointer data);
void test_fridgectl_busy(Fixture *f, gconstpointer data);
void test_fridgectl_status_settings(Fixture *f, gconstpointer data);

/* cycle-tuxonice.c */
void test_tuxonice_hibernate(Fixture *f, gconstpointer data);
void test_tuxonice_settings_first(Fixture *f, gconstpointer data);
void test_tuxonice_failures(Fixture *f, gconstpointer data);
void test_tuxonice_every_failure(Fixture *f, gconstpointer data);
void test_tuxonice_notes(Fixture *f, gconstpointer data);
void test_tuxonice_wakeup_event(Fixture *f, gconstpointer data);
void test_tuxonice_pm_test_mainline(Fixture *f, gconstpointer data);
