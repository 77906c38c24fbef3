/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for fridgectl's pure pieces: the bar, JSON, exit codes, the
 * command line, the sentences, the plan table and the Esc detection. */
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "args.h"
#include "cycle-text.h"
#include "exit-code.h"
#include "json.h"
#include "keys.h"
#include "plan-text.h"
#include "progress-bar.h"

/* ---- progress bar ---- */

static size_t count_char(const char *s, char c) {
        size_t n = 0;

        for (; *s; s++)
                n += *s == c;
        return n;
}

static void test_bar_layout(void) {
        g_autofree char *line = progress_bar_render(0.48, "flush: flushing 212 MiB", 80);

        /* 79 usable columns, 2/5 of them for the bar: 31 cells. */
        g_assert_cmpstr(line, ==, "[###############................]  48%  flush: flushing 212 MiB");
        g_assert_cmpuint(text_columns(line), <=, 79);
}

static void test_bar_width_fits(void) {
        static const unsigned widths[] = { 0, 1, 2, 5, 9, 12, 20, 40, 80, 132, 300 };

        for (size_t i = 0; i < G_N_ELEMENTS(widths); i++) {
                g_autofree char *line = progress_bar_render(0.5, "freeze-early: freezing user@1000.service", widths[i]);

                g_assert_nonnull(line);
                g_assert_cmpuint(text_columns(line), <=, widths[i] > 0 ? widths[i] - 1 : 0);
        }
}

static void test_bar_wide_terminal_caps_bar(void) {
        g_autofree char *line = progress_bar_render(1.0, "done", 300);

        g_assert_cmpuint(count_char(line, '#'), ==, 60);
        g_assert_nonnull(strstr(line, "] 100%  done"));
}

static void test_bar_narrow_drops_bar(void) {
        g_autofree char *line = progress_bar_render(0.3, "flush", 12);

        /* 11 columns: 2/5 is 4 cells, below the minimum, so no bar. */
        g_assert_cmpstr(line, ==, " 30%  flush");
        g_autofree char *tiny = progress_bar_render(0.3, "flush", 3);
        /* Not even "30%" fits in 2 columns: cut like any text. */
        g_assert_cmpstr(tiny, ==, "3\xe2\x80\xa6");
}

static void test_bar_percent_rounding(void) {
        g_assert_cmpuint(progress_percent(0.0), ==, 0);
        g_assert_cmpuint(progress_percent(0.004), ==, 0);
        g_assert_cmpuint(progress_percent(0.006), ==, 1);
        g_assert_cmpuint(progress_percent(0.484), ==, 48);
        g_assert_cmpuint(progress_percent(0.486), ==, 49);
        g_assert_cmpuint(progress_percent(0.994), ==, 99);
        /* Would round to 100 but the cycle is not finished. */
        g_assert_cmpuint(progress_percent(0.996), ==, 99);
        g_assert_cmpuint(progress_percent(1.0), ==, 100);
}

static void test_bar_clamping(void) {
        g_autofree char *neg = progress_bar_render(-0.5, "prepare", 80);
        g_autofree char *big = progress_bar_render(1.7, "thaw", 80);
        g_autofree char *nan = progress_bar_render(NAN, "prepare", 80);

        g_assert_cmpuint(progress_percent(-3.0), ==, 0);
        g_assert_cmpuint(progress_percent(42.0), ==, 100);
        g_assert_cmpuint(progress_percent(NAN), ==, 0);
        g_assert_cmpuint(count_char(neg, '#'), ==, 0);
        g_assert_nonnull(strstr(neg, "]   0%  prepare"));
        g_assert_cmpuint(count_char(big, '.'), ==, 0);
        g_assert_nonnull(strstr(big, "] 100%  thaw"));
        g_assert_cmpuint(count_char(nan, '#'), ==, 0);
}

static void test_bar_long_text_truncated(void) {
        g_autofree char *text = g_strnfill(200, 'x');
        g_autofree char *line = progress_bar_render(0.1, text, 40);

        g_assert_cmpuint(text_columns(line), ==, 39);
        g_assert_true(g_str_has_suffix(line, "x\xe2\x80\xa6"));
}

static void test_bar_utf8_not_split(void) {
        /* 30 two-byte characters; cutting must not leave half of one. */
        g_autoptr(GString) s = g_string_new(NULL);
        for (int i = 0; i < 30; i++)
                g_string_append(s, "\xc3\xa9");
        g_autofree char *line = progress_bar_render(0.5, s->str, 40);

        g_assert_true(g_utf8_validate(line, -1, NULL));
        g_assert_cmpuint(text_columns(line), ==, 39);
}

static void test_bar_control_chars_sanitized(void) {
        g_autofree char *line = progress_bar_render(0.5, "a\033[2Jb\r\n", 80);

        g_assert_null(strchr(line, '\033'));
        g_assert_null(strchr(line, '\r'));
        g_assert_nonnull(strstr(line, "a?[2Jb??"));
}

/* ---- JSON ---- */

static void assert_escape(const char *in, const char *expected) {
        g_autofree char *out = json_escape(in);

        g_assert_cmpstr(out, ==, expected);
}

static void test_json_escape(void) {
        assert_escape("plain", "\"plain\"");
        assert_escape(NULL, "\"\"");
        assert_escape("", "\"\"");
        assert_escape("say \"hi\"", "\"say \\\"hi\\\"\"");
        assert_escape("back\\slash", "\"back\\\\slash\"");
        assert_escape("a\nb\tc\rd", "\"a\\u000ab\\u0009c\\u000dd\"");
        assert_escape("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
        assert_escape("/dev/sda", "\"/dev/sda\"");
        assert_escape("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80\"");
        /* Invalid UTF-8: a stray continuation byte, an overlong '/', a
         * truncated sequence at the end. */
        assert_escape("a\x80z", "\"a\\ufffdz\"");
        assert_escape("\xc0\xaf", "\"\\ufffd\\ufffd\"");
        assert_escape("x\xe2\x80", "\"x\\ufffd\\ufffd\"");
}

static char *write_double(double d) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        json_write_double(f, d);
        fclose(f);
        return buf;
}

static void test_json_numbers(void) {
        g_autofree char *a = write_double(0.05);
        g_autofree char *b = write_double(0.31);
        g_autofree char *c = write_double(1.0);
        g_autofree char *d = write_double(NAN);
        g_autofree char *e = write_double(INFINITY);
        g_autofree char *f = write_double(0.1 + 0.2);

        g_assert_cmpstr(a, ==, "0.05");
        g_assert_cmpstr(b, ==, "0.31");
        g_assert_cmpstr(c, ==, "1");
        g_assert_cmpstr(d, ==, "null");
        g_assert_cmpstr(e, ==, "null");
        g_assert_cmpfloat(g_ascii_strtod(f, NULL), ==, 0.1 + 0.2);
}

static void test_json_object(void) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        JsonObject j;

        json_object_begin(&j, f);
        json_object_add_string(&j, "event", "resumed");
        json_object_add_u64(&j, "cycle", 7);
        json_object_add_u64(&j, "slept_usec", UINT64_MAX);
        json_object_add_double(&j, "progress", 0.5);
        json_object_add_bool(&j, "dry", true);
        json_object_add_string(&j, "wake_reason", "rtc\n");
        json_object_end(&j);
        fclose(f);
        g_assert_cmpstr(buf, ==, "{\"event\":\"resumed\",\"cycle\":7,\"slept_usec\":18446744073709551615,"
                                 "\"progress\":0.5,\"dry\":true,\"wake_reason\":\"rtc\\u000a\"}");
        free(buf);
}

/* ---- exit codes ---- */

static void test_exit_code_results(void) {
        g_assert_cmpint(exit_code_for_result("done"), ==, 0);
        g_assert_cmpint(exit_code_for_result("dry-run"), ==, 0);
        g_assert_cmpint(exit_code_for_result("failed"), ==, 1);
        g_assert_cmpint(exit_code_for_result("aborted"), ==, 3);
        g_assert_cmpint(exit_code_for_result("exploded"), ==, 1);
        g_assert_cmpint(exit_code_for_result(""), ==, 1);
        g_assert_cmpint(exit_code_for_result(NULL), ==, 1);
}

/* CycleFinished: the error's exit code where the table has one for a
 * cycle's end, else the result's */
static void test_exit_code_finished(void) {
        g_assert_cmpint(exit_code_for_finished("done", ""), ==, 0);
        g_assert_cmpint(exit_code_for_finished("dry-run", ""), ==, 0);
        g_assert_cmpint(exit_code_for_finished("aborted", FRIDGE_ERROR_PREFIX "Cancelled"), ==, 3);
        g_assert_cmpint(exit_code_for_finished("aborted", FRIDGE_ERROR_PREFIX "WakeupEvent"), ==, 3);
        g_assert_cmpint(exit_code_for_finished("failed", FRIDGE_ERROR_PREFIX "FreezeTimeout"), ==, 1);
        g_assert_cmpint(exit_code_for_finished("failed", "org.freedesktop.DBus.Error.Failed"), ==, 1);
        /* the error decides where the result is one this fridgectl does not know */
        g_assert_cmpint(exit_code_for_finished("exploded", FRIDGE_ERROR_PREFIX "Cancelled"), ==, 3);
        /* no cycle ends with Busy, nor with a name not in the table: the result decides */
        g_assert_cmpint(exit_code_for_finished("aborted", FRIDGE_ERROR_PREFIX "Busy"), ==, 3);
        g_assert_cmpint(exit_code_for_finished("aborted", "x.y.Unknown"), ==, 3);
        g_assert_cmpint(exit_code_for_finished("failed", ""), ==, 1);
        g_assert_cmpint(exit_code_for_finished(NULL, NULL), ==, 1);
}

static void test_exit_code_errors(void) {
        static const char *const refusals[] = {
                "Busy", "NotSupported", "Inhibited", "HibernateNotReady", "TooLate", "NoSuchCycle",
        };

        for (size_t i = 0; i < G_N_ELEMENTS(refusals); i++) {
                g_autofree char *name = g_strconcat(FRIDGE_ERROR_PREFIX, refusals[i], NULL);
                g_assert_cmpint(exit_code_for_call_error(name), ==, 4);
        }
        g_assert_cmpint(exit_code_for_call_error("org.freedesktop.DBus.Error.AccessDenied"), ==, 4);
        g_assert_cmpint(exit_code_for_call_error("org.freedesktop.DBus.Error.InvalidArgs"), ==, 2);
        g_assert_cmpint(exit_code_for_call_error("org.freedesktop.DBus.Error.ServiceUnknown"), ==, 1);
        g_assert_cmpint(exit_code_for_call_error("org.freedesktop.DBus.Error.NoReply"), ==, 1);
        g_assert_cmpint(exit_code_for_call_error("org.freedesktop.DBus.Error.UnknownMethod"), ==, 1);
        g_assert_cmpint(exit_code_for_call_error("System.Error.ENOENT"), ==, 1);
        /* A name that only starts like ours is not ours. */
        g_assert_cmpint(exit_code_for_call_error("io.fridge.Fridge1.ErrorX"), ==, 1);
        /* By the table; a fridge name it does not hold yet (a newer
         * fridged's) is still a refusal; a Hook answered with its cycle's
         * error is a refusal */
        g_assert_cmpint(exit_code_for_call_error(FRIDGE_ERROR_PREFIX "NoSuchThing"), ==, 4);
        g_assert_cmpint(exit_code_for_call_error(FRIDGE_ERROR_PREFIX "FreezeTimeout"), ==, 4);
        g_assert_cmpint(exit_code_for_call_error(FRIDGE_ERROR_PREFIX "Interrupted"), ==, 4);
        g_assert_cmpint(exit_code_for_call_error("org.freedesktop.DBus.Error.LimitsExceeded"), ==, 1);
        g_assert_cmpint(exit_code_for_call_error("org.freedesktop.DBus.Error.Failed"), ==, 1);
        g_assert_cmpint(exit_code_for_call_error("org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"), ==, 4);

        g_assert_true(fridge_error_name_is_unreachable("org.freedesktop.DBus.Error.ServiceUnknown"));
        g_assert_true(fridge_error_name_is_unreachable("org.freedesktop.DBus.Error.NameHasNoOwner"));
        g_assert_false(fridge_error_name_is_unreachable("io.fridge.Fridge1.Error.Busy"));
        g_assert_false(fridge_error_name_is_unreachable(NULL));

        g_assert_cmpstr(error_short_name("io.fridge.Fridge1.Error.FreezeTimeout"), ==, "FreezeTimeout");
        g_assert_cmpstr(error_short_name("Plain"), ==, "Plain");
        g_assert_cmpstr(error_short_name(NULL), ==, "");
}

/* ---- argument parsing ---- */

static int parse(Args *a, char *err, ...) {
        char *argv[32] = { (char *) "fridgectl" };
        int argc = 1;
        va_list ap;

        va_start(ap, err);
        for (char *s; (s = va_arg(ap, char *)); )
                argv[argc++] = s;
        va_end(ap);
        return args_parse(argc, argv, a, err, 256);
}

#define PARSE(a, err, ...) parse(a, err, __VA_ARGS__, (char *) NULL)

static void test_args_good(void) {
        char err[256];
        Args a;

        g_assert_cmpint(PARSE(&a, err, "status"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_STATUS);
        g_assert_cmpint(a.bus, ==, BUS_KIND_SYSTEM);
        g_assert_false(a.json);

        /* Options before and after the command; both value spellings. */
        g_assert_cmpint(PARSE(&a, err, "--bus=session", "suspend", "--dry-run", "--pm-test", "devices",
                              "--mem-sleep=deep", "--wake-after", "30", "--flush-timeout=5000",
                              "--freeze-timeout", "100", "--json", "--no-progress"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_SUSPEND);
        g_assert_cmpint(a.bus, ==, BUS_KIND_SESSION);
        g_assert_true(a.sleep.dry_run && a.json && a.no_progress);
        g_assert_cmpstr(a.sleep.pm_test, ==, "devices");
        g_assert_cmpstr(a.sleep.mem_sleep, ==, "deep");
        g_assert_cmpuint(a.sleep.wake_after_sec, ==, 30);
        g_assert_cmpuint(a.sleep.flush_timeout_ms, ==, 5000);
        g_assert_cmpuint(a.sleep.freeze_timeout_ms, ==, 100);
        g_assert_false(a.sleep.queue);
        g_assert_cmpuint(a.sleep.queue_timeout_ms, ==, 0);
        g_assert_cmpstr(command_sleep_kind(a.command), ==, "suspend");

        /* Time spans as systemd writes them; a bare number keeps its unit */
        g_assert_cmpint(PARSE(&a, err, "suspend", "--wake-after=2min", "--flush-timeout=1min 30s",
                              "--freeze-timeout", "1.5s", "--queue", "--queue-timeout=500ms"), ==, 0);
        g_assert_cmpuint(a.sleep.wake_after_sec, ==, 120);
        g_assert_cmpuint(a.sleep.flush_timeout_ms, ==, 90000);
        g_assert_cmpuint(a.sleep.freeze_timeout_ms, ==, 1500);
        g_assert_cmpuint(a.sleep.queue_timeout_ms, ==, 500);

        g_assert_cmpint(PARSE(&a, err, "hybrid-sleep", "--bus-address", "unix:path=/tmp/x"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_HYBRID_SLEEP);
        g_assert_cmpstr(a.bus_address, ==, "unix:path=/tmp/x");
        g_assert_cmpuint(a.sleep.wake_after_sec, ==, 0); /* not given */

        g_assert_cmpint(PARSE(&a, err, "cancel"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_CANCEL);
        g_assert_cmpuint(a.cycle, ==, 0);
        g_assert_cmpint(PARSE(&a, err, "cancel", "18446744073709551615"), ==, 0);
        g_assert_cmpuint(a.cycle, ==, UINT64_MAX);

        g_assert_cmpint(PARSE(&a, err, "plot"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_PLOT);
        g_assert_cmpuint(a.cycle, ==, 0);
        g_assert_cmpint(PARSE(&a, err, "plot", "12"), ==, 0);
        g_assert_cmpuint(a.cycle, ==, 12);

        g_assert_cmpint(PARSE(&a, err, "--json", "monitor"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_MONITOR);
        g_assert_cmpint(PARSE(&a, err, "hibernate", "--", "--x"), <, 0);     /* "--x" positional */

        g_assert_cmpint(PARSE(&a, err, "plan"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_PLAN);
        g_assert_false(a.json);
        g_assert_cmpint(PARSE(&a, err, "plan", "--json"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_PLAN);
        g_assert_true(a.json);
        g_assert_cmpint(PARSE(&a, err, "--json", "plan", "--bus=session"), ==, 0);
        g_assert_true(a.json);

        /* --help and --version need no command. */
        g_assert_cmpint(PARSE(&a, err, "-h"), ==, 0);
        g_assert_true(a.help);
        g_assert_cmpint(PARSE(&a, err, "--version"), ==, 0);
        g_assert_true(a.version);
}

static void test_args_hold(void) {
        char err[256];
        Args a;

        g_assert_cmpint(PARSE(&a, err, "hold", "early", "--", "/usr/bin/backup", "--json", "-x", "--"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_HOLD);
        g_assert_cmpstr(a.hold_class, ==, "early");
        /* Everything after "--" is CMD's, options and later "--" too. */
        g_assert_false(a.json);
        g_assert_cmpstr(a.exec_argv[0], ==, "/usr/bin/backup");
        g_assert_cmpstr(a.exec_argv[1], ==, "--json");
        g_assert_cmpstr(a.exec_argv[2], ==, "-x");
        g_assert_cmpstr(a.exec_argv[3], ==, "--");
        g_assert_null(a.exec_argv[4]);
        g_assert_null(a.who);
        g_assert_null(a.why);
        g_assert_cmpstr(args_hold_who(&a), ==, "backup");
        g_assert_cmpstr(args_hold_why(&a), ==, "fridgectl hold");

        g_assert_cmpint(PARSE(&a, err, "--who=nightly", "hold", "--why", "copying to the NAS", "nofreeze",
                              "--bus-address=unix:path=/x", "--", "rsync"), ==, 0);
        g_assert_cmpstr(a.hold_class, ==, "nofreeze");
        g_assert_cmpstr(args_hold_who(&a), ==, "nightly");
        g_assert_cmpstr(args_hold_why(&a), ==, "copying to the NAS");
        g_assert_cmpstr(a.bus_address, ==, "unix:path=/x");
        g_assert_cmpstr(a.exec_argv[0], ==, "rsync");
        g_assert_null(a.exec_argv[1]);

        g_assert_cmpint(PARSE(&a, err, "hold", "late", "--", "sleep", "1"), ==, 0);
        g_assert_cmpstr(a.hold_class, ==, "late");
        g_assert_cmpstr(args_hold_who(&a), ==, "sleep");
        g_assert_cmpint(PARSE(&a, err, "hold", "late", "--", "./dir/"), ==, 0);
        g_assert_cmpstr(args_hold_who(&a), ==, "./dir/");
        g_assert_cmpint(PARSE(&a, err, "hold", "--help"), ==, 0);
        g_assert_true(a.help);

        g_assert_true(class_is_valid("early"));
        g_assert_true(class_is_valid("late"));
        g_assert_true(class_is_valid("nofreeze"));
        g_assert_true(class_is_valid("ui"));
        g_assert_false(class_is_valid("Early"));
        g_assert_false(class_is_valid(""));
        g_assert_false(class_is_valid(NULL));
}

static void assert_usage_error(const char *expect_in_message, ...) {
        char *argv[32] = { (char *) "fridgectl" };
        char err[256];
        int argc = 1;
        va_list ap;
        Args a;

        va_start(ap, expect_in_message);
        for (char *s; (s = va_arg(ap, char *)); )
                argv[argc++] = s;
        va_end(ap);
        g_assert_cmpint(args_parse(argc, argv, &a, err, sizeof(err)), ==, -EINVAL);
        if (!strstr(err, expect_in_message))
                g_error("error \"%s\" does not mention \"%s\"", err, expect_in_message);
}

#define BAD(msg, ...) assert_usage_error(msg, __VA_ARGS__, (char *) NULL)

static void test_args_inhibit(void) {
        char err[256];
        Args a;

        g_assert_cmpint(PARSE(&a, err, "inhibit", "--", "/usr/bin/burn", "--mode=delay"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_INHIBIT);
        g_assert_cmpstr(args_inhibit_mode(&a), ==, "block");
        g_assert_cmpstr(args_hold_who(&a), ==, "burn");
        g_assert_cmpstr(args_hold_why(&a), ==, "fridgectl inhibit");
        g_assert_cmpstr(a.exec_argv[1], ==, "--mode=delay"); /* CMD's, not ours */
        g_assert_cmpint(PARSE(&a, err, "--mode", "delay", "inhibit", "--who=locker", "--why=lock first", "--",
                              "sleep", "1"), ==, 0);
        g_assert_cmpstr(args_inhibit_mode(&a), ==, "delay");
        g_assert_cmpstr(args_hold_who(&a), ==, "locker");
        g_assert_cmpstr(args_hold_why(&a), ==, "lock first");
        g_assert_cmpint(PARSE(&a, err, "inhibitors"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_INHIBITORS);
        g_assert_cmpint(PARSE(&a, err, "--json", "inhibitors"), ==, 0);
        g_assert_true(a.json);
        g_assert_cmpint(PARSE(&a, err, "suspend", "--queue"), ==, 0);
        g_assert_true(a.sleep.queue);
        BAD("--mode: expected \"block\" or \"delay\"", "inhibit", "--mode=sometimes", "--", "true");
        BAD("--mode only applies to inhibit", "hold", "late", "--mode=block", "--", "true");
        BAD("--queue only applies to suspend", "inhibit", "--queue", "--", "true");
        BAD("inhibit: missing \"--\"", "inhibit");
        BAD("inhibit: no command given after \"--\"", "inhibit", "--");
        BAD("--who only applies to hold and inhibit", "inhibitors", "--who=me");
}

static void test_args_can_sleep(void) {
        Args a;
        char err[256];
        g_assert_cmpint(PARSE(&a, err, "can-sleep"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_CAN_SLEEP);
        g_assert_null(a.sleep_kind);
        g_assert_cmpint(PARSE(&a, err, "--json", "can-sleep", "hybrid-sleep"), ==, 0);
        g_assert_cmpstr(a.sleep_kind, ==, "hybrid-sleep");
        BAD("can-sleep: unknown kind \"nap\"", "can-sleep", "nap");
        BAD("unexpected argument \"hibernate\"", "can-sleep", "suspend", "hibernate");
        BAD("--dry-run only applies to suspend", "can-sleep", "--dry-run");
}

static void test_args_history(void) {
        char err[256];
        Args a;

        g_assert_cmpint(PARSE(&a, err, "history"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_HISTORY);
        g_assert_cmpuint(a.history_max, ==, 0);
        g_assert_cmpint(PARSE(&a, err, "history", "-n", "5"), ==, 0);
        g_assert_cmpuint(a.history_max, ==, 5);
        g_assert_cmpint(PARSE(&a, err, "--json", "history", "--lines=12"), ==, 0);
        g_assert_cmpuint(a.history_max, ==, 12);
        g_assert_true(a.json);
        BAD("--lines: expected a number of cycles from 1 to", "history", "-n", "0");
        BAD("--lines: expected a number of cycles from 1 to", "history", "-n", "-3");
        BAD("--lines: expected a number of cycles from 1 to", "history", "--lines=many");
        BAD("--lines needs a value", "history", "-n");
        BAD("--lines only applies to history", "inhibitors", "-n", "3");
        BAD("unexpected argument \"7\"", "history", "7");
}

/* Every Sleep option of the table is a flag that lands in its own field,
 * with the table's range and words checked as fridged checks them */
static void test_args_sleep_table(void) {
        char err[256];
        Args a;

        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                g_autofree char *good = NULL, *bad = NULL, *want = NULL;
                switch (s->type) {
                case SLEEP_OPTION_BOOL:
                        good = g_strdup_printf("--%s", s->flag);
                        bad = g_strdup_printf("--%s=yes", s->flag);
                        want = g_strdup_printf("--%s takes no value", s->flag);
                        break;
                case SLEEP_OPTION_UINT:
                        good = g_strdup_printf("--%s=%u", s->flag, s->max);
                        bad = g_strdup_printf("--%s=%u", s->flag, s->min - 1);
                        want = g_strdup_printf("--%s is %u; it must be from %u to %u", s->flag, s->min - 1, s->min,
                                               s->max);
                        break;
                case SLEEP_OPTION_STRING: {
                        char words[256];
                        good = g_strdup_printf("--%s=%s", s->flag, s->words[0]);
                        bad = g_strdup_printf("--%s=bogus", s->flag);
                        want = g_strdup_printf("--%s is 'bogus'; it must be one of %s", s->flag,
                                               sleep_option_words(s, ", ", words, sizeof(words)));
                        break;
                }
                }
                /* what the option requires comes along */
                g_autofree char *with = s->requires
                                                ? g_strdup_printf("--%s", sleep_option_by_name(s->requires)->flag)
                                                : g_strdup("--no-progress");
                g_assert_cmpint(PARSE(&a, err, "suspend", good, with), ==, 0);
                g_assert_true(sleep_option_is_set(&a.sleep, s));
                for (size_t j = 0; j < sleep_options_count; j++)
                        if (j != i && !(s->requires && g_str_equal(sleep_options[j].name, s->requires)))
                                g_assert_false(sleep_option_is_set(&a.sleep, &sleep_options[j]));
                g_assert_cmpint(PARSE(&a, err, "suspend", bad), ==, -EINVAL);
                g_assert_cmpstr(err, ==, want);
        }
        g_assert_cmpint(PARSE(&a, err, "suspend", "--queue", "--queue-timeout", "250"), ==, 0);
        g_assert_cmpuint(a.sleep.queue_timeout_ms, ==, 250);
        BAD("--wake-after is 0; it must be from 1 to 31536000", "suspend", "--wake-after=0");
        BAD("--freeze-timeout is 0; it must be from 100 to 600000", "suspend", "--freeze-timeout", "0");
        BAD("--mem-sleep is 'deeper'; it must be one of s2idle, shallow, deep", "suspend", "--mem-sleep=deeper");
        BAD("--mem-sleep only applies to suspend, not hibernate", "hibernate", "--mem-sleep=deep");
        BAD("--queue-timeout only applies with --queue", "suspend", "--queue-timeout=500");
        BAD("--queue-timeout only applies to suspend, hibernate and hybrid-sleep", "status", "--queue-timeout=500");
}

/* --help's lines for the Sleep options come from the table: each flag,
 * its help, its range or words, what it applies to and its default */
static void test_help_sleep_options(void) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        args_print_sleep_options(f);
        g_assert_cmpint(fclose(f), ==, 0);
        g_autoptr(GRegex) spaces = g_regex_new("\\s+", 0, 0, NULL);
        g_autofree char *flat = g_regex_replace_literal(spaces, text, -1, 0, " ", 0, NULL);
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++)
                g_assert_cmpuint(strlen(*l), <=, 79);
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                char words[256];
                g_autofree char *flag = g_strdup_printf(" --%s%s%s ", s->flag, s->metavar ? "=" : "",
                                                        s->metavar ? s->metavar : "");
                g_autofree char *limits = s->type == SLEEP_OPTION_UINT ? g_strdup_printf("(%u..%u", s->min, s->max)
                                          : s->words ? g_strdup_printf("(%s", sleep_option_words(s, "|", words,
                                                                                                   sizeof(words)))
                                                     : g_strdup("");
                g_autofree char *kind = s->only_kind ? g_strdup_printf("%s only", s->only_kind) : g_strdup("");
                g_autofree char *fallback = s->fallback ? g_strdup_printf("default %s", s->fallback) : g_strdup("");
                if (!strstr(flat, flag) || !strstr(flat, s->help) || !strstr(flat, limits) || !strstr(flat, kind) ||
                    !strstr(flat, fallback))
                        g_error("--help on --%s lacks what the table says:\n%s", s->flag, text);
        }
        free(text);
}

static void test_args_bad(void) {
        char *argv[] = { (char *) "fridgectl" };
        char err[256];
        Args a;

        /* No command is status, as for systemctl */
        g_assert_cmpint(args_parse(1, argv, &a, err, sizeof(err)), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_STATUS);

        BAD("unknown option", "status", "--frobnicate");
        BAD("unknown option", "-x", "status");
        BAD("unknown command", "sleep");
        BAD("needs a value", "suspend", "--wake-after");
        BAD("needs a value", "--bus");
        BAD("it must be a number of seconds, or a time span such as 500ms", "suspend", "--wake-after=soon");
        BAD("--wake-after is \"-5\"; it must be a number of seconds", "suspend", "--wake-after", "-5");
        BAD("must be a number of seconds", "suspend", "--wake-after=1500ms"); /* the RTC counts seconds */
        BAD("it must be a number of milliseconds, or a time span", "suspend", "--flush-timeout=");
        BAD("is 5; it must be from 100", "suspend", "--flush-timeout= 5");
        BAD("it must be a number of milliseconds", "suspend", "--freeze-timeout=0x10");
        BAD("it must be a number of milliseconds", "suspend", "--freeze-timeout=+1");
        BAD("it must be a number of milliseconds", "suspend", "--freeze-timeout=30 parsecs");
        BAD("is 3600001; it must be from 100 to 3600000", "suspend", "--flush-timeout=1h 1ms");
        BAD("too large", "suspend", "--wake-after=4294967296");
        BAD("\"system\" or \"session\"", "--bus=starship", "status");
        BAD("--json: expected \"pretty\", \"short\" or \"off\", got \"yes\"", "--json=yes", "status");
        BAD("takes no value", "--no-pager=yes", "status");
        BAD("only applies to", "status", "--dry-run");
        BAD("only applies to", "--pm-test=core", "cancel");
        BAD("not a cycle id", "cancel", "seven");
        BAD("not a cycle id", "cancel", "18446744073709551616");
        BAD("unexpected argument", "cancel", "1", "2");
        BAD("plot: \"0\" is not a cycle id", "plot", "0");
        BAD("plot: \"last\" is not a cycle id", "plot", "last");
        BAD("unexpected argument", "plot", "1", "2");
        BAD("only applies to", "plot", "--dry-run");
        BAD("unexpected argument", "status", "now");

        BAD("unexpected argument", "plan", "all");
        BAD("only applies to suspend", "plan", "--dry-run");
        BAD("--who only applies to hold", "plan", "--who=me");
        BAD("--why only applies to hold", "--why=x", "suspend");
        BAD("only applies to suspend", "hold", "early", "--wake-after=5", "--", "true");
        BAD("no class given", "hold");
        BAD("no class given", "hold", "--", "true");
        BAD("unknown class \"frozen\"", "hold", "frozen", "--", "true");
        BAD("unknown class \"\"", "hold", "", "--", "true");
        BAD("missing \"--\"", "hold", "early");
        BAD("put the command to run after \"--\"", "hold", "early", "true");
        BAD("no command given after \"--\"", "hold", "late", "--");
        BAD("needs a value", "hold", "early", "--who");
}

static void test_parse_numbers(void) {
        uint32_t u;
        uint64_t t;

        g_assert_cmpint(parse_u32("4294967295", &u), ==, 0);
        g_assert_cmpuint(u, ==, UINT32_MAX);
        g_assert_cmpint(parse_u32("4294967296", &u), ==, -ERANGE);
        g_assert_cmpint(parse_u32("007", &u), ==, 0);
        g_assert_cmpuint(u, ==, 7);
        g_assert_cmpint(parse_u32("", &u), ==, -EINVAL);
        g_assert_cmpint(parse_u32(NULL, &u), ==, -EINVAL);
        g_assert_cmpint(parse_u32("1e3", &u), ==, -EINVAL);
        g_assert_cmpint(parse_u64("18446744073709551615", &t), ==, 0);
        g_assert_cmpint(parse_u64("99999999999999999999", &t), ==, -ERANGE);
}

/* ---- sentences ---- */

static void assert_final(const CycleOutcome *o, const char *expected) {
        g_autofree char *line = cycle_final_line(o);

        g_assert_cmpstr(line, ==, expected);
}

static void test_final_lines(void) {
        assert_final(&(CycleOutcome) { .result = "done", .resumed = true, .slept_usec = 3200000,
                                       .wake_reason = "rtc" },
                     "done: resumed after 3.2 s (wake: rtc)");
        assert_final(&(CycleOutcome) { .result = "done", .resumed = true, .slept_usec = 125000000 },
                     "done: resumed after 2 min 5 s (wake: unknown)");
        assert_final(&(CycleOutcome) { .result = "done", .message = "resumed" }, "done: resumed");
        assert_final(&(CycleOutcome) { .result = "dry-run", .error = "" },
                     "dry-run: all phases ran; nothing was written to the kernel");
        assert_final(&(CycleOutcome) { .result = "dry-run", .pm_test = "devices" },
                     "dry-run: all phases ran; the kernel ran its pm_test \"devices\" mode");
        assert_final(&(CycleOutcome) { .result = "aborted", .error = "io.fridge.Fridge1.Error.Cancelled",
                                       .message = "cancelled by user", .cancel_requested = true },
                     "aborted: cancelled by user; all services thawed");
        /* Cancelled by somebody else: fridged's words. */
        assert_final(&(CycleOutcome) { .result = "aborted", .error = "io.fridge.Fridge1.Error.Cancelled",
                                       .message = "cancelled by uid 1000" },
                     "aborted: cancelled by uid 1000");
        assert_final(&(CycleOutcome) { .result = "aborted", .error = "io.fridge.Fridge1.Error.WakeupEvent",
                                       .message = "a wakeup event arrived", .cancel_requested = true },
                     "aborted: a wakeup event arrived");
        assert_final(&(CycleOutcome) { .result = "failed", .error = "io.fridge.Fridge1.Error.FreezeTimeout",
                                       .message = "user@1000.service did not freeze" },
                     "failed: FreezeTimeout: user@1000.service did not freeze");
        assert_final(&(CycleOutcome) { .result = "failed", .error = "io.fridge.Fridge1.Error.Kernel" },
                     "failed: Kernel");
}

static void test_freeze_timeout_lines(void) {
        static const char message[] =
                "cgroups did not freeze within 1500 ms: "
                "user.slice/user-1000.slice/app.scope: pid 4242 (cp) state D wchan fuse_wait_answer "
                "on FUSE mount /run/user/1000/gvfs; "
                "system.slice/backup.service: pid 77 (rsync) state D wchan nfs_wait_bit_killable";

        assert_final(&(CycleOutcome) { .result = "failed", .error = "io.fridge.Fridge1.Error.FreezeTimeout",
                                       .message = message },
                     "failed: FreezeTimeout: cgroups did not freeze within 1500 ms\n"
                     "  user.slice/user-1000.slice/app.scope: pid 4242 (cp) state D wchan fuse_wait_answer "
                     "on FUSE mount /run/user/1000/gvfs\n"
                     "  system.slice/backup.service: pid 77 (rsync) state D wchan nfs_wait_bit_killable");
        /* One blocker; an empty item (a stray "; ") is skipped. */
        assert_final(&(CycleOutcome) { .result = "failed", .error = "io.fridge.Fridge1.Error.FreezeTimeout",
                                       .message = "cgroups did not freeze within 100 ms: a.scope: pid 1 (x) "
                                                  "state D wchan y; " },
                     "failed: FreezeTimeout: cgroups did not freeze within 100 ms\n"
                     "  a.scope: pid 1 (x) state D wchan y");
        /* Not the form: the one-line sentence as before. */
        assert_final(&(CycleOutcome) { .result = "failed", .error = "io.fridge.Fridge1.Error.FreezeTimeout",
                                       .message = "a.scope: pid 1 (x) state D; b.scope: pid 2" },
                     "failed: FreezeTimeout: a.scope: pid 1 (x) state D; b.scope: pid 2");
        assert_final(&(CycleOutcome) { .result = "failed", .error = "io.fridge.Fridge1.Error.FreezeTimeout",
                                       .message = "did not freeze within soon ms: a; b" },
                     "failed: FreezeTimeout: did not freeze within soon ms: a; b");
        /* Only FreezeTimeout is split. */
        assert_final(&(CycleOutcome) { .result = "failed", .error = "io.fridge.Fridge1.Error.Kernel",
                                       .message = "cgroups did not freeze within 100 ms: a; b" },
                     "failed: Kernel: cgroups did not freeze within 100 ms: a; b");

        g_assert_null(freeze_timeout_text(NULL));
        g_assert_null(freeze_timeout_text("within 5 ms"));
        g_autofree char *bare = freeze_timeout_text("cgroups did not freeze within 5 ms: ");
        g_assert_cmpstr(bare, ==, "cgroups did not freeze within 5 ms");
}

/* ---- plan ---- */

static const PlanEntry sample_plan[] = {
        { "user.slice/user-1000.slice/app-firefox.scope", "app-firefox.scope", "early", "user session" },
        { "system.slice/backup.service", "backup.service", "late", "[Classes] Late=backup.service" },
        { "system.slice/sshd.service", "sshd.service", "late", "default" },
        { "system.slice/fridged.service", "fridged.service", "nofreeze", "fridged itself" },
        { "machine.slice/x", "", "nofreeze", "" },
};

static void test_plan_table(void) {
        g_autofree char *t = plan_format_table(sample_plan, G_N_ELEMENTS(sample_plan), true);

        /* CGROUP is 44 wide (the firefox scope), UNIT 17, CLASS 8 (nofreeze). */
        g_assert_cmpstr(t, ==,
                "CGROUP                                        UNIT               CLASS     REASON\n"
                "user.slice/user-1000.slice/app-firefox.scope  app-firefox.scope  early     user session\n"
                "system.slice/backup.service                   backup.service     late      "
                        "[Classes] Late=backup.service\n"
                "system.slice/sshd.service                     sshd.service       late      default\n"
                "system.slice/fridged.service                  fridged.service    nofreeze  fridged itself\n"
                "machine.slice/x                               -                  nofreeze  -\n"
                "1 early, 2 late, 2 never frozen\n");
}

static void test_plan_table_empty(void) {
        g_autofree char *t = plan_format_table(NULL, 0, true);

        /* Headers alone set the widths. */
        g_assert_cmpstr(t, ==, "CGROUP  UNIT  CLASS  REASON\n0 early, 0 late, 0 never frozen\n");
}

static void test_plan_cgroup_truncation(void) {
        g_autofree char *sixty = g_strnfill(PLAN_CGROUP_MAX_COLUMNS, 'a');
        g_autofree char *long_path = g_strconcat("user.slice/user-1000.slice/user@1000.service/app.slice/",
                                                 "app-org.gnome.Terminal.slice/vte-spawn-1234.scope", NULL);
        g_autofree char *a = plan_cgroup_cell(sixty);
        g_autofree char *b = plan_cgroup_cell(long_path);
        g_autofree char *c = plan_cgroup_cell("a\033[2Jb");
        g_autofree char *d = plan_cgroup_cell("");

        /* Exactly 60 stays whole. */
        g_assert_cmpstr(a, ==, sixty);
        /* Longer: "…" and the last 59 columns. */
        g_assert_cmpuint(text_columns(b), ==, PLAN_CGROUP_MAX_COLUMNS);
        g_assert_true(g_str_has_prefix(b, "\xe2\x80\xa6"));
        g_assert_true(g_str_has_suffix(long_path, b + 3));
        g_assert_cmpuint(strlen(b + 3), ==, PLAN_CGROUP_MAX_COLUMNS - 1);
        g_assert_cmpstr(c, ==, "a?[2Jb");
        g_assert_cmpstr(d, ==, "-");

        /* Multi-byte text is cut by columns, never inside a character. */
        g_autoptr(GString) s = g_string_new(NULL);
        for (int i = 0; i < 70; i++)
                g_string_append(s, "\xc3\xa9");
        g_autofree char *e = plan_cgroup_cell(s->str);
        g_assert_true(g_utf8_validate(e, -1, NULL));
        g_assert_cmpuint(text_columns(e), ==, PLAN_CGROUP_MAX_COLUMNS);

        /* In the table the column is then 60 wide, and REASON is never cut. */
        g_autofree char *reason = g_strnfill(300, 'r');
        PlanEntry entries[] = { { long_path, "vte-spawn-1234.scope", "early", reason } };
        g_autofree char *t = plan_format_table(entries, 1, true);
        g_auto(GStrv) lines = g_strsplit(t, "\n", -1);
        g_assert_cmpuint(g_strv_length(lines), ==, 4);  /* header, row, summary, "" */
        g_assert_cmpuint(strlen(lines[0]), ==, 60 + 2 + 20 + 2 + 5 + 2 + 6);
        g_assert_true(g_str_has_prefix(lines[1], b));
        g_assert_true(g_str_has_suffix(lines[1], reason));
        g_assert_cmpstr(lines[2], ==, "1 early, 0 late, 0 never frozen");
}

/* Another user's process, hidden by fridged, is said so under the table */
static void test_plan_hidden(void) {
        PlanEntry entries[] = { { "user.slice/x.service", "x.service", "late", "FUSE server [hidden] (pid 0) of [hidden]" } };
        g_autofree char *t = plan_format_table(entries, 1, true);
        g_auto(GStrv) lines = g_strsplit(t, "\n", -1);
        g_assert_cmpuint(g_strv_length(lines), ==, 5);  /* header, row, summary, note, "" */
        g_assert_cmpstr(lines[3], ==, "[hidden] and pid 0: another user's process, which only root may see");
        g_assert_false(plan_has_hidden(sample_plan, G_N_ELEMENTS(sample_plan)));
}

static void test_plan_counts(void) {
        g_autofree char *all = plan_summary_line(sample_plan, G_N_ELEMENTS(sample_plan));
        PlanEntry odd[] = { { "a", "", "early", "" }, { "b", "", "sometimes", "" }, { "c", "", NULL, "" } };
        PlanCounts c = plan_count(odd, G_N_ELEMENTS(odd));
        g_autofree char *some = plan_summary_line(odd, G_N_ELEMENTS(odd));

        g_assert_cmpstr(all, ==, "1 early, 2 late, 2 never frozen");
        g_assert_cmpuint(c.early, ==, 1);
        g_assert_cmpuint(c.late, ==, 0);
        g_assert_cmpuint(c.nofreeze, ==, 0);
        g_assert_cmpstr(some, ==, "1 early, 0 late, 0 never frozen");

        /* a cgroup fridged could not read is counted apart, and only then said */
        PlanEntry skipped[] = { { "a", "", "early", "" }, { "b", "", "skipped", "cannot open it" } };
        g_autofree char *with_skipped = plan_summary_line(skipped, G_N_ELEMENTS(skipped));
        g_assert_cmpuint(plan_count(skipped, G_N_ELEMENTS(skipped)).skipped, ==, 1);
        g_assert_cmpstr(with_skipped, ==, "1 early, 0 late, 0 never frozen, 1 skipped (cannot be read)");

        /* ui cgroups are counted apart, and said only when there are some */
        PlanEntry ui[] = { { "a", "", "early", "" }, { "s", "", "ui", "config d.conf:3: Xorg (pid 400)" },
                           { "t", "", "ui", "the client that started the cycle" }, { "b", "", "skipped", "" } };
        g_autofree char *with_ui = plan_summary_line(ui, G_N_ELEMENTS(ui));
        g_assert_cmpuint(plan_count(ui, G_N_ELEMENTS(ui)).ui, ==, 2);
        g_assert_cmpstr(with_ui, ==, "1 early, 0 late, 0 never frozen, 2 ui (kept running for the user interface), "
                                     "1 skipped (cannot be read)");
}

static void test_plan_json(void) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        PlanEntry entries[] = {
                { "system.slice/a.service", "a.service", "early", "say \"hi\"" },
                { "machine.slice/x", "", "nofreeze", "" },
        };

        plan_write_json(f, entries, G_N_ELEMENTS(entries));
        plan_write_json(f, NULL, 0);
        fclose(f);
        g_assert_cmpstr(buf, ==,
                "[{\"cgroup\":\"system.slice/a.service\",\"unit\":\"a.service\",\"class\":\"early\","
                "\"reason\":\"say \\\"hi\\\"\"},"
                "{\"cgroup\":\"machine.slice/x\",\"unit\":\"\",\"class\":\"nofreeze\",\"reason\":\"\"}]"
                "[]");
        free(buf);
}

static void test_labels_and_durations(void) {
        g_autofree char *a = cycle_label("flush", "flushing 212 MiB");
        g_autofree char *b = cycle_label("flush", "");
        g_autofree char *c = cycle_label(NULL, "text");
        g_autofree char *d = format_duration(0);
        g_autofree char *e = format_duration(59949999);
        g_autofree char *f = format_duration(7620ULL * 1000000);
        g_autofree char *g = cycle_resumed_line(1500000, "rtc");

        g_assert_cmpstr(a, ==, "flush: flushing 212 MiB");
        g_assert_cmpstr(b, ==, "flush");
        g_assert_cmpstr(c, ==, "text");
        g_assert_cmpstr(d, ==, "0.0 s");
        g_assert_cmpstr(e, ==, "59.9 s");
        g_assert_cmpstr(f, ==, "2 h 7 min");
        g_assert_cmpstr(g, ==, "resumed after 1.5 s (wake: rtc)");
}

/* A hibernation's image write, one line: done, stopped, the kernel's, none */
static void test_image_write_line(void) {
        ImageWrite done = { .writer = "fridge", .raw_bytes = 78 * 1048576ULL, .written_bytes = 14365491,
                            .usec = 1200000 };
        ImageWrite stopped = { .writer = "fridge", .done_bytes = 2 * 1048576, .total_bytes = 4 * 1048576 };
        ImageWrite kernel = { .writer = "kernel" }, none = {}, early = { .writer = "fridge" };
        g_autofree char *a = image_write_line(&done), *b = image_write_line(&stopped),
                        *c = image_write_line(&kernel), *d = image_write_line(&none), *e = image_write_line(&early);
        g_assert_cmpstr(a, ==, "image: 78.0 MiB written as 13.7 MiB (5.7x) in 1.2 s, 65 MiB/s");
        g_assert_cmpstr(b, ==, "image: the write stopped at 2 of 4 MiB");
        g_assert_cmpstr(c, ==, "image: written by the kernel");
        g_assert_null(d);
        g_assert_null(e);
}

/* ---- keys ---- */

static void test_lone_escape(void) {
        g_assert_true(keys_have_lone_escape("\x1b", 1));
        g_assert_true(keys_have_lone_escape("ab\x1b", 3));
        g_assert_true(keys_have_lone_escape("\x1b\x1b", 2));
        g_assert_false(keys_have_lone_escape("\x1b[A", 3));    /* arrow up */
        g_assert_false(keys_have_lone_escape("\x1bOP", 3));    /* F1 */
        g_assert_false(keys_have_lone_escape("q", 1));
        g_assert_false(keys_have_lone_escape("", 0));
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);

        g_test_add_func("/bar/layout", test_bar_layout);
        g_test_add_func("/bar/width-fits", test_bar_width_fits);
        g_test_add_func("/bar/wide-terminal", test_bar_wide_terminal_caps_bar);
        g_test_add_func("/bar/narrow-terminal", test_bar_narrow_drops_bar);
        g_test_add_func("/bar/percent-rounding", test_bar_percent_rounding);
        g_test_add_func("/bar/clamping", test_bar_clamping);
        g_test_add_func("/bar/long-text", test_bar_long_text_truncated);
        g_test_add_func("/bar/utf8", test_bar_utf8_not_split);
        g_test_add_func("/bar/control-chars", test_bar_control_chars_sanitized);
        g_test_add_func("/json/escape", test_json_escape);
        g_test_add_func("/json/numbers", test_json_numbers);
        g_test_add_func("/json/object", test_json_object);
        g_test_add_func("/exit-code/results", test_exit_code_results);
        g_test_add_func("/exit-code/errors", test_exit_code_errors);
        g_test_add_func("/exit-code/finished", test_exit_code_finished);
        g_test_add_func("/args/good", test_args_good);
        g_test_add_func("/args/bad", test_args_bad);
        g_test_add_func("/args/sleep-table", test_args_sleep_table);
        g_test_add_func("/args/help-sleep-options", test_help_sleep_options);
        g_test_add_func("/args/hold", test_args_hold);
        g_test_add_func("/args/inhibit", test_args_inhibit);
        g_test_add_func("/args/can-sleep", test_args_can_sleep);
        g_test_add_func("/args/numbers", test_parse_numbers);
        g_test_add_func("/text/final-lines", test_final_lines);
        g_test_add_func("/text/freeze-timeout", test_freeze_timeout_lines);
        g_test_add_func("/text/labels-durations", test_labels_and_durations);
        g_test_add_func("/plan/table", test_plan_table);
        g_test_add_func("/plan/table-empty", test_plan_table_empty);
        g_test_add_func("/plan/cgroup-truncation", test_plan_cgroup_truncation);
        g_test_add_func("/plan/counts", test_plan_counts);
        g_test_add_func("/plan/hidden", test_plan_hidden);
        g_test_add_func("/plan/json", test_plan_json);
        g_test_add_func("/keys/lone-escape", test_lone_escape);
        g_test_add_func("/args/history", test_args_history);
        g_test_add_func("/text/image-write", test_image_write_line);

        return g_test_run();
}
