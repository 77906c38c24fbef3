/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inhibitors: the real fridged on a private bus with fakesys as the
 * kernel. The test process itself holds most inhibitors (Inhibit on the
 * harness's connection, the fd kept here), so closing the fd is the
 * release; other holders are child processes or a second connection.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness.h"
#include "inhibit.h"
#include "polkit.h"

#define ERR(name) FRIDGE_INTERFACE ".Error." name
#define INVALID_ARGS "org.freedesktop.DBus.Error.InvalidArgs"
#define LIMITS_EXCEEDED "org.freedesktop.DBus.Error.LimitsExceeded"

typedef struct Fixture {
        Harness *h;
} Fixture;

typedef struct CaseOptions {
        const char *config;
        const char *polkit_table;       /* also opens the bus to other users */
        unsigned user_cap;              /* what config sets InhibitorsPerUser= to; 0: the default */
} CaseOptions;

static void setup(Fixture *f, gconstpointer data) {
        const char *why = harness_skip_reason();
        if (why) {
                g_test_skip(why);
                return;
        }
        const CaseOptions *co = data;
        HarnessOptions o = { .config = co ? co->config : NULL, .polkit_table = co ? co->polkit_table : NULL,
                             .open_bus = co && co->polkit_table };
        f->h = harness_new(&o);
}

static void teardown(Fixture *f, gconstpointer data) {
        if (f->h && g_test_failed())
                harness_dump_fridged_log(f->h);
        if (f->h && f->h->fridged_started && harness_stop(f->h) != 0) {
                g_test_message("fridged did not exit 0 on SIGTERM");
                harness_dump_fridged_log(f->h);
                g_test_fail();
        }
        harness_free(f->h);
}

#define SKIP_IF_UNSET(f) do { if (!(f)->h) return; } while (0)

/* Inhibit on `bus`; the fd (ours, O_CLOEXEC) or -1 with *ret_error set */
static int inhibit_on(sd_bus *bus, const char *who, const char *why, const char *mode, char **ret_error,
                      char **ret_message) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int fd = -1;
        if (sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "Inhibit", &e, &reply,
                               "sss", who, why, mode) < 0) {
                if (ret_error)
                        *ret_error = g_strdup(e.name);
                if (ret_message)
                        *ret_message = g_strdup(e.message);
                sd_bus_error_free(&e);
                return -1;
        }
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        g_assert_cmpint(fd, >=, 0);
        sd_bus_message_unref(reply);
        return fd;
}

static int inhibit_ok(Harness *h, const char *who, const char *why, const char *mode) {
        g_autofree char *err = NULL, *msg = NULL;
        int fd = inhibit_on(h->bus, who, why, mode, &err, &msg);
        if (fd < 0)
                g_error("Inhibit(%s, %s, %s) failed: %s: %s", who, why, mode, err, msg);
        return fd;
}

typedef struct Row {
        char *who, *why, *mode, *sender;
        uint32_t uid, pid;
} Row;

static void row_free(Row *r) {
        g_free(r->who);
        g_free(r->why);
        g_free(r->mode);
        g_free(r->sender);
        g_free(r);
}

static GPtrArray *list_inhibitors(Harness *h) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(h, FRIDGE_INTERFACE, "ListInhibitors", &reply, &err, &msg, "") < 0)
                g_error("ListInhibitors failed: %s: %s", err, msg);
        GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify) row_free);
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ssssuu)"), >, 0);
        const char *who, *why, *mode, *sender;
        uint32_t uid, pid;
        while (sd_bus_message_read(reply, "(ssssuu)", &who, &why, &mode, &sender, &uid, &pid) > 0) {
                Row *r = g_new0(Row, 1);
                *r = (Row) { g_strdup(who), g_strdup(why), g_strdup(mode), g_strdup(sender), uid, pid };
                g_ptr_array_add(rows, r);
        }
        sd_bus_message_unref(reply);
        return rows;
}

/* Releases are seen on fridged's loop: wait (bounded) for the count */
static void wait_inhibitors(Harness *h, guint n) {
        for (int i = 0; i < 500; i++) {
                g_autoptr(GPtrArray) rows = list_inhibitors(h);
                if (rows->len == n)
                        return;
                g_usleep(10000);
        }
        g_autoptr(GPtrArray) rows = list_inhibitors(h);
        g_error("fridged lists %u inhibitors, expected %u", rows->len, n);
}

static uint64_t sleep_queued(Harness *h, unsigned timeout_ms) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        int r = timeout_ms ? harness_sleep(h, "suspend", &cycle, &err, &msg, "queue", "b", 1, "queue-timeout-ms",
                                           "u", timeout_ms, NULL)
                           : harness_sleep(h, "suspend", &cycle, &err, &msg, "queue", "b", 1, NULL);
        if (r < 0)
                g_error("Sleep with queue failed: %s: %s", err, msg);
        return cycle;
}

static uint64_t sleep_ok(Harness *h) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        return cycle;
}

static void expect_finished(Harness *h, uint64_t cycle, int timeout_ms, const char *result, const char *error,
                            const char *message_has) {
        g_autofree char *res = NULL, *err = NULL, *msg = NULL;
        if (!harness_wait_finished(h, cycle, timeout_ms, &res, &err, &msg))
                g_error("cycle %" G_GUINT64_FORMAT " did not finish within %d ms", cycle, timeout_ms);
        if (!g_str_equal(res, result) || !g_str_equal(err, error) || (message_has && !strstr(msg, message_has)))
                g_error("cycle ended (%s, '%s', '%s'); expected (%s, '%s', '%s')", res, err, msg, result, error,
                        message_has ? message_has : "*");
}

static void assert_state(Harness *h, const char *want) {
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_cmpstr(state, ==, want);
}

static void assert_fakesys_log_empty(Harness *h) {
        g_autofree char *log = harness_fakesys_log(h);
        g_assert_cmpstr(log, ==, "");
}

static char *fridged_log(Harness *h) {
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &text, NULL, NULL));
        return g_steal_pointer(&text);
}

/* ---- block ---- */

static void test_block_refuses(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        int fd = inhibit_ok(h, "burner", "writing a disc", "block");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, NULL), <, 0);
        g_assert_cmpstr(err, ==, ERR("Inhibited"));
        g_autofree char *names = g_strdup_printf("blocked by: burner (writing a disc, pid %d, uid 0)",
                                                (int) getpid());
        g_assert_cmpstr(msg, ==, names);
        assert_fakesys_log_empty(h);
        assert_state(h, "idle");
        g_assert_cmpint(harness_find_signal(h, "SleepImminent", false, 0), <, 0);

        /* a delay inhibitor does not refuse; the released block no longer does */
        int delay = inhibit_ok(h, "player", "", "delay");
        close(fd);
        wait_inhibitors(h, 1);
        cycle = sleep_ok(h);
        close(delay);
        expect_finished(h, cycle, 15000, "done", "", NULL);
}

/* A cycle queued behind a block lock "burner" holds (*ret_fd) */
static uint64_t queue_behind_block(Harness *h, const char *why, int *ret_fd) {
        *ret_fd = inhibit_ok(h, "burner", why, "block");
        uint64_t cycle = sleep_queued(h, 0);
        assert_state(h, "queued");
        return cycle;
}

static void test_queue_starts_on_release(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        int fd;
        uint64_t cycle = queue_behind_block(h, "writing a disc", &fd);
        g_autofree char *phase = harness_get_string(h, "Phase");
        g_assert_cmpstr(phase, ==, "");

        uint64_t other = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &other, &err, &msg, NULL), <, 0);
        g_assert_cmpstr(err, ==, ERR("Busy"));
        g_assert_nonnull(strstr(msg, "queued"));

        harness_process_until(h, 300, NULL, NULL);
        assert_state(h, "queued");
        assert_fakesys_log_empty(h);
        close(fd);
        expect_finished(h, cycle, 15000, "done", "", NULL);
        g_assert_true(harness_wait_log_line(h, "power/state mem ok", 1000));
}

static void test_queue_timeout(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        int fd = inhibit_ok(h, "burner", "writing a disc", "block");
        gint64 start = g_get_monotonic_time();
        uint64_t cycle = sleep_queued(h, 500);
        expect_finished(h, cycle, 10000, "failed", ERR("Inhibited"), "still blocked after 500 ms by: burner");
        g_assert_cmpint(g_get_monotonic_time() - start, >=, 450 * 1000);
        assert_fakesys_log_empty(h);
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "failed");
        close(fd);
}

static void test_cancel_queued(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        int fd;
        uint64_t cycle = queue_behind_block(h, "", &fd);
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_cancel(h, cycle, &err, &msg) < 0)
                g_error("Cancel of a queued cycle failed: %s: %s", err, msg);
        expect_finished(h, cycle, 5000, "aborted", ERR("Cancelled"), NULL);
        assert_fakesys_log_empty(h);
        assert_state(h, "idle");
        close(fd);
}

/* ---- delay ---- */

static bool seen_imminent(Harness *h, void *userdata) {
        return harness_find_signal(h, "SleepImminent", true, *(uint64_t *) userdata) >= 0;
}

static void test_delay_waits(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        int fd = inhibit_ok(h, "locker", "locking the screen", "delay");
        uint64_t cycle = sleep_ok(h);
        g_assert_true(harness_process_until(h, 5000, seen_imminent, &cycle));

        /* held in prepare: nothing flushed, frozen or written */
        harness_process_until(h, 500, NULL, NULL);
        g_autofree char *phase = harness_get_string(h, "Phase");
        g_assert_cmpstr(phase, ==, "prepare");
        assert_fakesys_log_empty(h);
        g_autofree char *text = harness_get_string(h, "ProgressText");
        g_assert_true(g_str_has_prefix(text, "waiting for 1 delay inhibitor: locker (locking the screen, pid "));

        /* closing the fd lets it go on: the closing, not the 10 s bound
         * (which would say so in the log), however slow this machine is */
        gint64 closed = g_get_monotonic_time();
        close(fd);
        g_assert_true(harness_wait_property_signal(h, "Phase", "flush", 15000));
        g_test_message("the cycle went on %.1f ms after the delay fd was closed",
                       (g_get_monotonic_time() - closed) / 1000.0);
        expect_finished(h, cycle, 15000, "done", "", NULL);
        g_autofree char *log = fridged_log(h);
        g_assert_null(strstr(log, "delay inhibitors still held after"));
        int imminent = harness_find_signal(h, "SleepImminent", true, cycle);
        g_assert_cmpint(imminent, <, harness_find_signal(h, "Resumed", true, cycle));
}

static void test_delay_timeout(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        int fd = inhibit_ok(h, "slowpoke", "never done", "delay");
        gint64 start = g_get_monotonic_time();
        uint64_t cycle = sleep_ok(h);
        expect_finished(h, cycle, 15000, "done", "", NULL);
        gint64 took = g_get_monotonic_time() - start;
        g_test_message("the cycle took %.1f ms with a delay inhibitor that never let go", took / 1000.0);
        g_assert_cmpint(took, >=, 950 * 1000);
        g_autofree char *log = fridged_log(h);
        g_autofree char *named = g_strdup_printf("delay inhibitors still held after 1000 ms, going on without "
                                                 "them: slowpoke (never done, pid %d, uid 0)", (int) getpid());
        if (!strstr(log, named))
                g_error("fridged's log does not name the late holder ('%s')", named);
        close(fd);
}

/* ---- holders that go away ---- */

static void test_holder_gone(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        int p[2];
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                sd_bus *bus = NULL;
                if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, h->bus_address) < 0 ||
                    sd_bus_set_bus_client(bus, 1) < 0 || sd_bus_start(bus) < 0)
                        _exit(81);
                int fd = inhibit_on(bus, "child", "", "block", NULL, NULL);
                (void) !write(p[1], fd >= 0 ? "y" : "n", 1);
                pause();
                _exit(0);
        }
        close(p[1]);
        char c = 0;
        g_assert_cmpint(read(p[0], &c, 1), ==, 1);
        close(p[0]);
        g_assert_cmpint(c, ==, 'y');
        g_autoptr(GPtrArray) rows = list_inhibitors(h);
        g_assert_cmpuint(rows->len, ==, 1);
        g_assert_cmpuint(((Row *) rows->pdata[0])->pid, ==, (uint32_t) pid);
        /* its death ends the lock */
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        g_assert_cmpint(harness_wait_pid(pid, 5000), !=, -1);
        wait_inhibitors(h, 0);

        /* a connection that goes away ends its locks, fd still open or not */
        sd_bus *bus = NULL;
        g_assert_cmpint(sd_bus_new(&bus), >=, 0);
        g_assert_cmpint(sd_bus_set_address(bus, h->bus_address), >=, 0);
        g_assert_cmpint(sd_bus_set_bus_client(bus, 1), >=, 0);
        g_assert_cmpint(sd_bus_start(bus), >=, 0);
        int fd1 = inhibit_on(bus, "second", "", "block", NULL, NULL);
        int fd2 = inhibit_on(bus, "second", "", "delay", NULL, NULL);
        g_assert_cmpint(fd1, >=, 0);
        g_assert_cmpint(fd2, >=, 0);
        wait_inhibitors(h, 2);
        sd_bus_flush_close_unref(bus);
        wait_inhibitors(h, 0);
        uint64_t cycle = sleep_ok(h);
        expect_finished(h, cycle, 15000, "done", "", NULL);
        close(fd1);
        close(fd2);
}

/* ---- ListInhibitors, limits, arguments ---- */

static void test_list(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        g_autoptr(GPtrArray) none = list_inhibitors(h);
        g_assert_cmpuint(none->len, ==, 0);
        int a = inhibit_ok(h, "burner", "writing a disc", "block");
        int b = inhibit_ok(h, "locker", "", "delay");
        g_autoptr(GPtrArray) rows = list_inhibitors(h);
        g_assert_cmpuint(rows->len, ==, 2);
        const char *unique = NULL;
        g_assert_cmpint(sd_bus_get_unique_name(h->bus, &unique), >=, 0);
        const Row *r0 = rows->pdata[0], *r1 = rows->pdata[1];
        g_assert_cmpstr(r0->who, ==, "burner");
        g_assert_cmpstr(r0->why, ==, "writing a disc");
        g_assert_cmpstr(r0->mode, ==, "block");
        g_assert_cmpstr(r0->sender, ==, unique);
        g_assert_cmpuint(r0->uid, ==, geteuid());
        g_assert_cmpuint(r0->pid, ==, (uint32_t) getpid());
        g_assert_cmpstr(r1->who, ==, "locker");
        g_assert_cmpstr(r1->why, ==, "");
        g_assert_cmpstr(r1->mode, ==, "delay");
        close(a);
        wait_inhibitors(h, 1);
        close(b);
        wait_inhibitors(h, 0);
}

static void test_connection_limit(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        int fds[16];
        for (int i = 0; i < 16; i++)
                fds[i] = inhibit_ok(h, "many", "", i % 2 ? "delay" : "block");
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(inhibit_on(h->bus, "many", "", "block", &err, &msg), <, 0);
        g_assert_cmpstr(err, ==, LIMITS_EXCEEDED);
        g_assert_nonnull(strstr(msg, "16"));
        close(fds[0]);
        wait_inhibitors(h, 15);
        fds[0] = inhibit_ok(h, "again", "", "block");
        for (int i = 0; i < 16; i++)
                close(fds[i]);
        wait_inhibitors(h, 0);
}

static void expect_invalid(Harness *h, GString *failures, const char *who, const char *why, const char *mode,
                           const char *names) {
        g_autofree char *err = NULL, *msg = NULL;
        int fd = inhibit_on(h->bus, who, why, mode, &err, &msg);
        g_autofree char *what = g_strdup_printf("Inhibit('%.20s', '%.20s', '%.20s')", who, why, mode);
        if (fd >= 0) {
                close(fd);
                g_string_append_printf(failures, "  %s: succeeded\n", what);
        } else if (!g_str_equal(err, INVALID_ARGS) || !strstr(msg, names))
                g_string_append_printf(failures, "  %s: %s: %s (expected InvalidArgs naming %s)\n", what, err, msg,
                                       names);
}

static void test_invalid_args(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        g_autoptr(GString) failures = g_string_new(NULL);
        g_autofree char *long_who = g_strnfill(257, 'w');
        g_autofree char *long_why = g_strnfill(1025, 'y');
        g_autofree char *huge = g_strnfill(1 << 20, 'x');

        expect_invalid(h, failures, "app", "", "sometimes", "mode");
        expect_invalid(h, failures, "app", "", "", "mode");
        expect_invalid(h, failures, "app", "", "BLOCK", "mode");
        expect_invalid(h, failures, "", "why", "block", "who");
        expect_invalid(h, failures, "a\nforged line", "", "block", "who");
        expect_invalid(h, failures, "app", "tab\there", "delay", "why");
        expect_invalid(h, failures, "app", "esc\x1b[2J", "delay", "why");
        expect_invalid(h, failures, long_who, "", "block", "who");
        expect_invalid(h, failures, "app", long_why, "block", "why");
        expect_invalid(h, failures, huge, huge, "block", "who");

        /* the queue options */
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *err2 = NULL, *msg2 = NULL, *err3 = NULL, *msg3 = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, "queue-timeout-ms", "u", 1000u, NULL), <, 0);
        if (!g_str_equal(err, INVALID_ARGS) || !strstr(msg, "queue-timeout-ms"))
                g_string_append_printf(failures, "  queue-timeout-ms without queue: %s: %s\n", err, msg);
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err2, &msg2, "queue", "b", 1, "queue-timeout-ms", "u",
                                      5u, NULL), <, 0);
        if (!g_str_equal(err2, INVALID_ARGS) || !strstr(msg2, "queue-timeout-ms"))
                g_string_append_printf(failures, "  queue-timeout-ms 5: %s: %s\n", err2, msg2);
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err3, &msg3, "queue", "s", "yes", NULL), <, 0);
        if (!g_str_equal(err3, INVALID_ARGS) || !strstr(msg3, "queue"))
                g_string_append_printf(failures, "  queue as a string: %s: %s\n", err3, msg3);

        g_autoptr(GPtrArray) rows = list_inhibitors(h);
        g_assert_cmpuint(rows->len, ==, 0);
        assert_fakesys_log_empty(h);
        if (failures->len)
                g_error("bad arguments were not refused as the contract says:\n%s", failures->str);
}

/* ---- no fd leak ---- */

static unsigned count_fds(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/fd", (int) pid);
        DIR *d = opendir(path);
        g_assert_nonnull(d);
        unsigned n = 0;
        struct dirent *de;
        while ((de = readdir(d)))
                n += de->d_name[0] != '.';
        closedir(d);
        return n;
}

static void test_thousand_fds(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        /* the least of a few looks: a transient fd of fridged's own (a
         * worker, a file it was reading) must not count as its baseline */
        unsigned baseline = count_fds(h->fridged_pid);
        for (int i = 0; i < 5; i++) {
                g_usleep(10000);
                baseline = MIN(baseline, count_fds(h->fridged_pid));
        }
        unsigned peak = 0;
        int fds[16];
        /* 63 rounds of the 16 one connection may hold: 1,008 in all */
        for (int round = 0; round < 63; round++) {
                for (int i = 0; i < 16; i++)
                        fds[i] = inhibit_ok(h, "load", "", i % 2 ? "delay" : "block");
                if (round == 0)
                        peak = count_fds(h->fridged_pid);
                for (int i = 0; i < 16; i++)
                        close(fds[i]);
                wait_inhibitors(h, 0);
        }
        unsigned now = count_fds(h->fridged_pid);
        for (int i = 0; i < 200 && now != baseline; i++) {
                g_usleep(10000);
                now = count_fds(h->fridged_pid);
        }
        g_test_message("fridged's fds: %u at start, %u with 16 inhibitors, %u after 1,008", baseline, peak, now);
        g_assert_cmpuint(peak, >=, baseline + 16);
        /* a leak of one fd per inhibitor would be a thousand; a transient
         * fd of fridged's own (a worker, a file it was reading) at either
         * count is not one */
        g_assert_cmpuint(now, <=, baseline + 2);
}

/* ---- fridgectl ---- */

static void test_fridgectl_inhibit(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        const char *fridgectl = harness_env("FRIDGECTL");
        if (!fridgectl) {
                g_test_skip("FRIDGECTL is not set");
                return;
        }
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", h->bus_address);
        char *argv[] = { (char *) fridgectl, addr, (char *) "inhibit", (char *) "--who=e2e",
                         (char *) "--why=end to end", (char *) "--", (char *) "sleep", (char *) "30", NULL };
        int out = -1;
        pid_t pid = harness_spawn_bg(argv, &out);
        wait_inhibitors(h, 1);
        g_autoptr(GPtrArray) rows = list_inhibitors(h);
        const Row *r = rows->pdata[0];
        g_assert_cmpstr(r->who, ==, "e2e");
        g_assert_cmpstr(r->why, ==, "end to end");
        g_assert_cmpstr(r->mode, ==, "block"); /* the default mode */

        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, NULL), <, 0);
        g_assert_cmpstr(err, ==, ERR("Inhibited"));
        g_assert_nonnull(strstr(msg, "e2e (end to end, pid"));

        char *list_argv[] = { (char *) fridgectl, addr, (char *) "inhibitors", NULL };
        g_autofree char *text = NULL;
        g_assert_cmpint(harness_run(list_argv, 10000, &text), ==, 0);
        g_test_message("fridgectl inhibitors:\n%s", text);
        g_assert_nonnull(strstr(text, "e2e"));
        g_assert_nonnull(strstr(text, "end to end"));
        char *json_argv[] = { (char *) fridgectl, addr, (char *) "--json", (char *) "inhibitors", NULL };
        g_autofree char *json = NULL;
        g_assert_cmpint(harness_run(json_argv, 10000, &json), ==, 0);
        g_test_message("fridgectl --json inhibitors: %s", json);
        g_assert_nonnull(strstr(json, "\"who\":\"e2e\""));
        g_assert_nonnull(strstr(json, "\"mode\":\"block\""));

        /* SIGTERM goes to the command; when it ends, so does the lock */
        g_assert_cmpint(kill(pid, SIGTERM), ==, 0);
        int status = harness_wait_pid(pid, 10000);
        close(out);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 128 + SIGTERM);
        wait_inhibitors(h, 0);

        /* --queue: the cycle waits for a delay-free, block-free moment */
        int fd = inhibit_ok(h, "burner", "", "block");
        char *suspend_argv[] = { (char *) fridgectl, addr, (char *) "--no-progress", (char *) "suspend",
                                 (char *) "--queue", NULL };
        int sout = -1;
        pid_t spid = harness_spawn_bg(suspend_argv, &sout);
        g_assert_true(harness_wait_property_signal(h, "State", "queued", 10000));
        close(fd);
        int sstatus = harness_wait_pid(spid, 15000);
        g_autofree char *stext = harness_read_all(sout);
        g_test_message("fridgectl suspend --queue:\n%s", stext);
        g_assert_true(WIFEXITED(sstatus));
        g_assert_cmpint(WEXITSTATUS(sstatus), ==, 0);
}

/* ---- attacks, by other users (setpriv), against a polkit that allows ---- */

static unsigned polkit_questions(Harness *h, const char *action_uid) {
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->polkit_log, &log, NULL, NULL));
        unsigned n = 0;
        for (const char *p = log; (p = strstr(p, action_uid)); p++)
                n++;
        return n;
}

/* Bounded wait for polkit to have been asked `n` times so; false if not */
static bool wait_questions(Harness *h, const char *action_uid, unsigned n) {
        for (int i = 0; i < 1000; i++) {
                if (polkit_questions(h, action_uid) >= n)
                        return true;
                g_usleep(10000);
        }
        return false;
}

/* One user pipelining calls while polkit holds its answers: its calls
 * beyond its cap are refused at once, and another user's call, asked
 * meanwhile, is answered once polkit is (the bus's quota of fridged's
 * pending replies, 128 here, is never used up) */
static void test_pending_per_uid(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        g_autofree char *hold = g_build_filename(h->dir, "polkit.hold", NULL);
        g_assert_true(g_file_set_contents(hold, "", 0, NULL));

        HarnessFlood attack = harness_flood_start(h, 65534, NULL, "HoldClass", 200, 1, "pipelined");
        g_assert_true(wait_questions(h, "io.fridge.inhibit 65534", POLKIT_PENDING_PER_UID_DEFAULT));
        HarnessFlood victim = harness_flood_start(h, 1, NULL, "Inhibit", 1, 1, "sequential");
        bool asked = wait_questions(h, "io.fridge.inhibit 1 ", 1);
        g_test_message("the victim's question reached polkit: %s", asked ? "yes" : "no");
        g_assert_cmpint(unlink(hold), ==, 0);

        g_autofree char *got = harness_flood_result(&victim, 30000);
        g_autofree char *flooded = harness_flood_result(&attack, 60000);
        g_test_message("victim: %s\nattacker: %s", got, flooded);
        g_assert_cmpuint(harness_flood_count(got, "ok"), ==, 1);
        /* the calls over the cap never reached polkit */
        g_assert_cmpuint(harness_flood_count(flooded, LIMITS_EXCEEDED), >=, 200 - POLKIT_PENDING_PER_UID_DEFAULT);
        g_assert_cmpuint(polkit_questions(h, "io.fridge.inhibit 65534"), <=, POLKIT_PENDING_PER_UID_DEFAULT);
        g_autofree char *log = fridged_log(h);
        g_assert_null(strstr(log, "maximum number of pending replies"));
        g_assert_cmpint(harness_flood_end(&victim), ==, 0);
        g_assert_cmpint(harness_flood_end(&attack), ==, 0);
}

/* One user taking every block inhibitor it can, on as many connections as
 * it likes: it stops at its own cap, another user and root still may, and
 * Sleep's refusal names a few holders and counts the rest */
static void test_per_user_cap(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        const CaseOptions *co = data;
        unsigned cap = co->user_cap ? co->user_cap : INHIBITORS_PER_USER_DEFAULT;
        unsigned conns = INHIBITORS_MAX / INHIBITORS_PER_SENDER_MAX + 1;
        HarnessFlood attack = harness_flood_start(h, 65534, NULL, "Inhibit", INHIBITORS_PER_SENDER_MAX, conns,
                                                  "sequential");
        g_autofree char *flooded = harness_flood_result(&attack, 100000);
        g_test_message("attacker: %s", flooded);

        HarnessFlood other = harness_flood_start(h, 1, NULL, "Inhibit", 1, 1, "sequential");
        g_autofree char *got = harness_flood_result(&other, 30000);
        g_test_message("another user: %s", got);
        g_assert_cmpuint(harness_flood_count(got, "ok"), ==, 1);
        g_assert_cmpuint(harness_flood_count(flooded, "ok"), ==, cap);
        int fd = inhibit_ok(h, "root", "also", "block");
        wait_inhibitors(h, cap + 2);

        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, NULL), <, 0);
        g_assert_cmpstr(err, ==, ERR("Inhibited"));
        g_test_message("Inhibited says (%zu bytes): %s", strlen(msg), msg);
        g_autofree char *more = g_strdup_printf(" and %u more", cap + 2 - INHIBIT_DESCRIBE_MAX);
        g_assert_true(g_str_has_suffix(msg, more));
        g_assert_cmpuint(strlen(msg), <, 512);
        close(fd);
        g_assert_cmpint(harness_flood_end(&other), ==, 0);
        g_assert_cmpint(harness_flood_end(&attack), ==, 0);
        wait_inhibitors(h, 0);
}

/* Overriding fridge's block inhibitors: root may, nobody without
 * io.fridge.ignore-inhibitors may not, and the journal names who did */
static void test_ignore_inhibitors(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        Harness *h = f->h;
        int fd = inhibit_ok(h, "burner", "writing a disc", "block");

        const char *const dry_i[] = { "suspend", "--dry-run", "-i", NULL };
        harness_expect_denied_as_nobody(h, dry_i, "io.fridge.ignore-inhibitors");
        g_assert_cmpuint(polkit_questions(h, "io.fridge.ignore-inhibitors 65534 no"), ==, 1);
        const char *const dry_long[] = { "suspend", "--dry-run", "--ignore-inhibitors", NULL };
        harness_expect_denied_as_nobody(h, dry_long, "io.fridge.ignore-inhibitors");
        /* without the option, the block stands for them */
        const char *const dry[] = { "suspend", "--dry-run", NULL };
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl_nobody_exit(h, &out, dry), ==, 4);
        g_assert_nonnull(strstr(out, "Inhibited"));

        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, "dry-run", "b", 1, "ignore-inhibitors", "b", 1, NULL) < 0)
                g_error("root's Sleep with ignore-inhibitors failed: %s: %s", err, msg);
        expect_finished(h, cycle, 15000, "dry-run", "", NULL);
        g_autofree char *log = fridged_log(h);
        g_autofree char *who = g_strdup_printf("Cycle %" G_GUINT64_FORMAT ": uid 0 (pid %d, ", cycle, (int) getpid());
        const char *at = strstr(log, who);
        if (!at)
                g_error("fridged's log does not say who ignored the inhibitors ('%s')", who);
        g_assert_nonnull(strstr(at, "ignores fridge's block inhibitors, held by burner (writing a disc"));
        close(fd);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
#define ADD(name, fn, data) g_test_add("/inhibit/" name, Fixture, data, setup, fn, teardown)
        static const CaseOptions long_delay = { .config = "[Delay]\nTimeoutMs=10000\n" };
        static const CaseOptions short_delay = { .config = "[Delay]\nTimeoutMs=1000\n" };
        ADD("block-refuses", test_block_refuses, NULL);
        ADD("queue-starts-on-release", test_queue_starts_on_release, NULL);
        ADD("queue-timeout", test_queue_timeout, NULL);
        ADD("cancel-queued", test_cancel_queued, NULL);
        ADD("delay-waits", test_delay_waits, &long_delay);
        ADD("delay-timeout", test_delay_timeout, &short_delay);
        ADD("holder-gone", test_holder_gone, NULL);
        ADD("list", test_list, NULL);
        ADD("connection-limit", test_connection_limit, NULL);
        ADD("invalid-args", test_invalid_args, NULL);
        ADD("thousand-fds", test_thousand_fds, NULL);
        ADD("fridgectl-inhibit", test_fridgectl_inhibit, NULL);
        static const CaseOptions inhibit_allowed = { .polkit_table = "io.fridge.inhibit * yes\n" };
        static const CaseOptions sleep_allowed = {
                .polkit_table = "io.fridge.sleep * yes\nio.fridge.manage * yes\nio.fridge.inhibit * yes\n" };
        ADD("pending-per-uid", test_pending_per_uid, &inhibit_allowed);
        ADD("per-user-cap", test_per_user_cap, &inhibit_allowed);
        static const CaseOptions cap_of_8 = { .config = "[Limits]\nInhibitorsPerUser=8\n",
                                              .polkit_table = "io.fridge.inhibit * yes\n", .user_cap = 8 };
        ADD("per-user-cap-configured", test_per_user_cap, &cap_of_8);
        ADD("ignore-inhibitors", test_ignore_inhibitors, &sleep_allowed);
        return g_test_run();
}
