/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridgectl's command line as systemd's tools read theirs: getopt_long
 * over the one option table, no command = status, --json=MODE, the
 * output switches, --help made from the tables, and JSON made pretty. */
#include <errno.h>
#include <getopt.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "json.h"

static int parse_v(Args *a, char *err, va_list ap) {
        /* static: exec_argv points into it after the return */
        static char *argv[32] = { (char *) "fridgectl" };
        int argc = 1;

        for (char *s; (s = va_arg(ap, char *)); )
                argv[argc++] = s;
        argv[argc] = NULL;
        return args_parse(argc, argv, a, err, 256);
}

static int parse(Args *a, char *err, ...) {
        va_list ap;
        va_start(ap, err);
        int r = parse_v(a, err, ap);
        va_end(ap);
        return r;
}

#define PARSE(a, err, ...) parse(a, err, __VA_ARGS__, (char *) NULL)

static void bad(const char *want, ...) {
        char err[256];
        Args a;
        va_list ap;

        va_start(ap, want);
        int r = parse_v(&a, err, ap);
        va_end(ap);
        g_assert_cmpint(r, ==, -EINVAL);
        if (!strstr(err, want))
                g_error("error \"%s\" does not say \"%s\"", err, want);
}

#define BAD(want, ...) bad(want, __VA_ARGS__, (char *) NULL)

static void test_no_command_is_status(void) {
        char *argv[] = { (char *) "fridgectl", NULL };
        char err[256];
        Args a;

        g_assert_cmpint(args_parse(1, argv, &a, err, sizeof(err)), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_STATUS);
        g_assert_cmpint(PARSE(&a, err, "--json", "--bus=session"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_STATUS);
        g_assert_true(a.json);
        /* status takes no Sleep option, given or not */
        BAD("--dry-run only applies to suspend, hibernate and hybrid-sleep", "--dry-run");
}

static void test_json_modes(void) {
        char err[256];
        Args a;

        g_assert_cmpint(PARSE(&a, err, "status"), ==, 0);
        g_assert_cmpint(a.json_format, ==, JSON_FORMAT_OFF);
        g_assert_false(a.json);
        g_assert_cmpint(PARSE(&a, err, "--json", "status"), ==, 0);
        g_assert_cmpint(a.json_format, ==, JSON_FORMAT_SHORT);
        g_assert_true(a.json);
        g_assert_cmpint(PARSE(&a, err, "monitor", "--json=short"), ==, 0);
        g_assert_cmpint(a.json_format, ==, JSON_FORMAT_SHORT);
        g_assert_cmpint(PARSE(&a, err, "suspend", "--json=pretty"), ==, 0);
        g_assert_cmpint(a.json_format, ==, JSON_FORMAT_PRETTY);
        g_assert_true(a.json);
        /* the last one counts: off undoes an earlier --json */
        g_assert_cmpint(PARSE(&a, err, "--json", "history", "--json=off"), ==, 0);
        g_assert_cmpint(a.json_format, ==, JSON_FORMAT_OFF);
        g_assert_false(a.json);
        BAD("--json: expected \"pretty\", \"short\" or \"off\", got \"yes\"", "--json=yes");
        BAD("--json: expected \"pretty\", \"short\" or \"off\", got \"\"", "--json=");
        /* as for systemd's tools, the mode is only ever --json=MODE */
        BAD("unknown command \"pretty\"", "--json", "pretty");
}

static void test_output_switches(void) {
        char err[256];
        Args a;

        g_assert_cmpint(PARSE(&a, err, "history"), ==, 0);
        g_assert_false(a.quiet || a.no_legend || a.no_pager || a.no_ask_password || a.sleep.ignore_inhibitors);
        g_assert_cmpint(PARSE(&a, err, "-q", "suspend", "--no-ask-password", "-i"), ==, 0);
        g_assert_true(a.quiet && a.no_ask_password && a.sleep.ignore_inhibitors);
        g_assert_cmpint(PARSE(&a, err, "inhibitors", "--quiet", "--no-legend", "--no-pager"), ==, 0);
        g_assert_true(a.quiet && a.no_legend && a.no_pager);
        g_assert_cmpint(PARSE(&a, err, "hibernate", "--ignore-inhibitors"), ==, 0);
        g_assert_true(a.sleep.ignore_inhibitors);
        /* short options bundle, and a short option's value may follow it */
        g_assert_cmpint(PARSE(&a, err, "history", "-qn3"), ==, 0);
        g_assert_true(a.quiet);
        g_assert_cmpuint(a.history_max, ==, 3);
        g_assert_cmpint(PARSE(&a, err, "-qn", "7", "history"), ==, 0);
        g_assert_cmpuint(a.history_max, ==, 7);
        /* a unique prefix is the option, as getopt_long has it */
        g_assert_cmpint(PARSE(&a, err, "--no-leg", "plan"), ==, 0);
        g_assert_true(a.no_legend);
        BAD("unknown option \"--no-\"", "--no-", "plan");
        BAD("--ignore-inhibitors only applies to suspend, hibernate and hybrid-sleep", "status", "-i");
        BAD("--quiet takes no value", "--quiet=yes");
        BAD("unknown option \"-z\"", "-qz");
}

/* Every option of the table is getopt's: by its name, its short name,
 * with its value, and refused outside its scope */
static void test_table_drives_getopt(void) {
        static const struct {
                ArgsScope scope;
                const char *command[4];
        } in_scope[] = {
                { ARGS_SCOPE_ANY,     { "status" } },
                { ARGS_SCOPE_SLEEP,   { "suspend" } },
                { ARGS_SCOPE_HOLDER,  { "inhibit", "--", "true" } },
                { ARGS_SCOPE_INHIBIT, { "inhibit", "--", "true" } },
                { ARGS_SCOPE_HISTORY, { "history" } },
                { ARGS_SCOPE_CAT_CONFIG, { "cat-config" } },
        };
        char err[256];
        Args a;

        g_assert_cmpuint(G_N_ELEMENTS(in_scope), ==, _ARGS_SCOPE_MAX);
        for (size_t i = 0; i < args_options_count; i++) {
                const ArgsOption *o = &args_options[i];
                g_assert_cmpint(o->scope, ==, in_scope[o->scope].scope);
                const char *value = g_str_equal(o->name, "bus") ? "session"
                                    : g_str_equal(o->name, "mode") ? "delay"
                                    : g_str_equal(o->name, "lines") ? "2"
                                    : g_str_equal(o->name, "json") ? "pretty" : "x";
                g_autofree char *long_form = o->has_arg == no_argument ? g_strdup_printf("--%s", o->name)
                                                                       : g_strdup_printf("--%s=%s", o->name, value);
                g_autofree char *short_form = o->short_name ? g_strdup_printf("-%c", o->short_name) : NULL;
                char *argv[16] = { (char *) "fridgectl" };
                int argc = 1;
                argv[argc++] = long_form;
                for (size_t k = 0; k < G_N_ELEMENTS(in_scope[0].command) && in_scope[o->scope].command[k]; k++)
                        argv[argc++] = (char *) in_scope[o->scope].command[k];
                if (args_parse(argc, argv, &a, err, sizeof(err)) < 0)
                        g_error("%s is refused: %s", long_form, err);
                if (short_form) {
                        argv[1] = short_form;
                        if (o->has_arg == required_argument) {
                                memmove(argv + 3, argv + 2, sizeof(char *) * (size_t) (argc - 2));
                                argv[2] = (char *) value;
                                argc++;
                        }
                        if (args_parse(argc, argv, &a, err, sizeof(err)) < 0)
                                g_error("%s is refused: %s", short_form, err);
                }
                if (o->scope == ARGS_SCOPE_ANY)
                        continue;
                g_autofree char *want = g_strdup_printf("--%s only applies to %s", o->name,
                                                        args_scope_commands(o->scope));
                BAD(want, "plan", long_form);
        }
}

/* hold's and inhibit's "--" ends fridgectl's options where it stands;
 * another command's "--" makes the rest words */
static void test_dashdash(void) {
        char err[256];
        Args a;

        g_assert_cmpint(PARSE(&a, err, "-q", "hold", "--who=me", "late", "--", "cmd", "-q", "--who=x"), ==, 0);
        g_assert_cmpstr(a.who, ==, "me");
        g_assert_cmpstr(a.exec_argv[0], ==, "cmd");
        g_assert_cmpstr(a.exec_argv[2], ==, "--who=x");
        g_assert_cmpint(PARSE(&a, err, "--", "hold", "early", "--", "cmd"), ==, 0);
        g_assert_cmpint(a.command, ==, COMMAND_HOLD);
        g_assert_cmpstr(a.exec_argv[0], ==, "cmd");
        g_assert_cmpint(PARSE(&a, err, "cancel", "--", "5"), ==, 0);
        g_assert_cmpuint(a.cycle, ==, 5);
        /* a value that reads "--" is the option's value */
        g_assert_cmpint(PARSE(&a, err, "inhibit", "--why", "--", "--", "cmd"), ==, 0);
        g_assert_cmpstr(a.why, ==, "--");
        g_assert_cmpstr(a.exec_argv[0], ==, "cmd");
        BAD("unexpected argument \"-q\"", "status", "--", "-q");
}

static char *help_text(void) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        args_print_help(f);
        g_assert_cmpint(fclose(f), ==, 0);
        return text;
}

/* --help lists every command but hook, and every option, from the tables */
static void test_help_from_tables(void) {
        g_autofree char *text = help_text();
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

        for (char **l = lines; *l; l++) {
                g_assert_cmpuint(strlen(*l), <=, 79);
                if (g_str_has_suffix(*l, " "))
                        g_error("--help line ends in a space: '%s'", *l);
        }
        for (size_t i = 0; i < args_commands_count; i++) {
                const ArgsCommand *c = &args_commands[i];
                g_autofree char *line = g_strdup_printf("\n  %s%s%s", c->name, *c->synopsis ? " " : "",
                                                        c->synopsis);
                g_assert_true(!strstr(text, line) == c->hidden);
        }
        g_assert_null(strstr(text, "hook"));
        g_autoptr(GRegex) spaces = g_regex_new("\\s+", 0, 0, NULL);
        g_autofree char *flat = g_regex_replace_literal(spaces, text, -1, 0, " ", 0, NULL);
        for (size_t i = 0; i < args_options_count; i++) {
                const ArgsOption *o = &args_options[i];
                g_autofree char *name = g_strdup_printf(" --%s%s%s", o->name,
                                                        o->has_arg == optional_argument ? "[=" : o->metavar ? "=" : "",
                                                        o->metavar ? o->metavar : "");
                g_autofree char *short_name = g_strdup_printf("  -%c --%s", o->short_name, o->name);
                if (!strstr(text, name) || !strstr(flat, o->help) || (o->short_name && !strstr(text, short_name)))
                        g_error("--help lacks --%s or its help:\n%s", o->name, text);
        }
}

static char *pretty(const char *compact) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        json_write_pretty(f, compact);
        g_assert_cmpint(fclose(f), ==, 0);
        return text;
}

static void test_json_pretty(void) {
        g_autofree char *obj = pretty("{\"event\":\"started\",\"cycle\":3,\"text\":\"a,b:{c}[\\\"d\\\"]\"}");
        g_assert_cmpstr(obj, ==,
                        "{\n"
                        "        \"event\" : \"started\",\n"
                        "        \"cycle\" : 3,\n"
                        "        \"text\" : \"a,b:{c}[\\\"d\\\"]\"\n"
                        "}");
        g_autofree char *nested = pretty("[{\"a\":[]},{},[1,2]]");
        g_assert_cmpstr(nested, ==,
                        "[\n"
                        "        {\n"
                        "                \"a\" : []\n"
                        "        },\n"
                        "        {},\n"
                        "        [\n"
                        "                1,\n"
                        "                2\n"
                        "        ]\n"
                        "]");
        g_autofree char *empty = pretty("");
        g_assert_cmpstr(empty, ==, "");
}

/* json_out: short is the value as written, pretty re-indented; both end
 * in a newline */
static void test_json_out(void) {
        for (int p = 0; p <= 1; p++) {
                char *text = NULL;
                size_t size = 0;
                FILE *dest = open_memstream(&text, &size);
                JsonOut out;
                JsonObject j;
                json_object_begin(&j, json_out_begin(&out, dest, p));
                json_object_add_u64(&j, "cycle", 7);
                json_object_end(&j);
                json_out_end(&out);
                g_assert_cmpint(fclose(dest), ==, 0);
                g_assert_cmpstr(text, ==, p ? "{\n        \"cycle\" : 7\n}\n" : "{\"cycle\":7}\n");
                free(text);
        }
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/args/no-command-is-status", test_no_command_is_status);
        g_test_add_func("/args/json-modes", test_json_modes);
        g_test_add_func("/args/output-switches", test_output_switches);
        g_test_add_func("/args/table-drives-getopt", test_table_drives_getopt);
        g_test_add_func("/args/dashdash", test_dashdash);
        g_test_add_func("/args/help-from-tables", test_help_from_tables);
        g_test_add_func("/json/pretty", test_json_pretty);
        g_test_add_func("/json/out", test_json_out);
        return g_test_run();
}
