/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridgectl's conventions through the real bus and fridged: no command is
 * status, --json=short|pretty (each value parsed by python3's json), -q,
 * --no-legend, --no-pager (a stand-in pager on a terminal made by
 * script(1)) and --no-ask-password (the polkit stand-in's log).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness.h"

typedef HarnessFixture Fixture;

static bool need(const char *program) {
        g_autofree char *path = g_find_program_in_path(program);
        if (!path)
                g_test_skip_printf("%s is not installed (tools/lib/setup.sh installs it)", program);
        return path != NULL;
}

/* `sh -c` of "fridgectl --bus-address=… ARGS": its exit code, stdout in *out */
static int sh_fridgectl(Harness *h, const char *env, const char *args, char **out) {
        g_autofree char *q_ctl = g_shell_quote(harness_env("FRIDGECTL"));
        g_autofree char *q_bus = g_shell_quote(h->bus_address);
        g_autofree char *cmd = g_strdup_printf("%s %s --bus-address=%s %s", env, q_ctl, q_bus, args);
        char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
        int status = harness_run(sh, 30000, out);
        g_test_message("%s -> %d:\n%s", cmd, status, *out);
        g_assert_true(status != -1 && WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* The JSON values in text, one after another: python3 reads them and
 * prints how many there are and each one's "event" (or "-") */
static char *json_values(const char *text) {
        static const char reader[] =
                "import json,sys\n"
                "t=sys.stdin.read(); d=json.JSONDecoder(); i=0; ev=[]\n"
                "while t[i:].strip():\n"
                "    i+=len(t[i:])-len(t[i:].lstrip())\n"
                "    v,i=d.raw_decode(t,i)\n"
                "    ev.append(v.get('event','-') if isinstance(v,dict) else '-')\n"
                "print(len(ev),' '.join(ev))\n";
        g_autofree char *in = g_build_filename(g_get_tmp_dir(), "fridgectl-json-XXXXXX", NULL);
        int fd = g_mkstemp(in);
        g_assert_cmpint(fd, >=, 0);
        g_assert_true(g_file_set_contents(in, text, -1, NULL));
        close(fd);
        g_autofree char *q_in = g_shell_quote(in), *q_reader = g_shell_quote(reader);
        g_autofree char *cmd = g_strdup_printf("/usr/bin/python3 -c %s < %s", q_reader, q_in);
        char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
        char *out = NULL;
        int status = harness_run(sh, 20000, &out);
        (void) unlink(in);
        if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                g_error("not JSON values:\n%s", text);
        return g_strchomp(out);
}

static void test_no_command_is_status(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_autofree char *out = NULL, *status = NULL;
        g_assert_cmpint(sh_fridgectl(h, "", "", &out), ==, 0);
        g_assert_cmpint(sh_fridgectl(h, "", "status", &status), ==, 0);
        g_assert_nonnull(strstr(out, "State: idle"));
        g_assert_cmpstr(out, ==, status);
}

/* The kernel's own freeze of file systems (6.16's freeze_filesystems), as
 * the administrator set it: shown by status and FreezeFilesystems, said
 * at a cycle's start; "n/a (kernel)" on a kernel without the file */
static void test_freeze_filesystems(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_autofree char *before = NULL;
        g_assert_cmpint(sh_fridgectl(h, "", "status", &before), ==, 0);
        g_assert_nonnull(strstr(before, "FreezeFilesystems: n/a (kernel)\n"));
        g_autofree char *absent = harness_get_string(h, "FreezeFilesystems");
        g_assert_cmpstr(absent, ==, "");
        harness_free(g_steal_pointer(&f->h));

        static const char *const set[] = { "--file=power/freeze_filesystems=1", NULL };
        HarnessOptions o = { .fakesys_args = set };
        h = f->h = harness_new(&o);
        g_autofree char *after = NULL, *json = NULL, *cycle = NULL;
        g_assert_cmpint(sh_fridgectl(h, "", "status", &after), ==, 0);
        g_assert_nonnull(strstr(after, "FreezeFilesystems: yes\n"));
        g_assert_cmpint(sh_fridgectl(h, "", "--json status", &json), ==, 0);
        g_assert_nonnull(strstr(json, "\"FreezeFilesystems\":\"yes\""));
        g_assert_cmpint(sh_fridgectl(h, "", "suspend --dry-run", &cycle), ==, 0);
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        g_assert_nonnull(strstr(log, ": the kernel freezes file systems too (/sys/power/freeze_filesystems is 1)"));
}

static void test_json_modes(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_autofree char *plain = NULL, *shrt = NULL, *pretty = NULL, *off = NULL;

        g_assert_cmpint(sh_fridgectl(h, "", "--json status", &plain), ==, 0);
        g_assert_cmpint(sh_fridgectl(h, "", "--json=short status", &shrt), ==, 0);
        g_assert_cmpstr(plain, ==, shrt);
        g_assert_true(g_str_has_suffix(shrt, "}\n") && !strchr(shrt, '\n')[1]); /* one line */
        g_autofree char *n_short = json_values(shrt);
        g_assert_cmpstr(n_short, ==, "1 -");
        g_assert_cmpint(sh_fridgectl(h, "", "--json=pretty status", &pretty), ==, 0);
        g_assert_true(g_str_has_prefix(pretty, "{\n        \"State\" : \"idle\",\n"));
        g_autofree char *n_pretty = json_values(pretty);
        g_assert_cmpstr(n_pretty, ==, "1 -");
        g_assert_cmpint(sh_fridgectl(h, "", "--json=off status", &off), ==, 0);
        g_assert_nonnull(strstr(off, "State: idle"));
        g_autofree char *bad = NULL;
        g_assert_cmpint(sh_fridgectl(h, "", "--json=yaml status 2>&1", &bad), ==, 2);
        g_assert_nonnull(strstr(bad, "--json: expected \"pretty\", \"short\" or \"off\", got \"yaml\""));
}

/* A cycle's stream: short is one object a line, pretty the same objects
 * indented, one after another */
static void test_json_stream(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_autofree char *shrt = NULL, *pretty = NULL;

        g_assert_cmpint(sh_fridgectl(h, "", "suspend --dry-run --json=short", &shrt), ==, 0);
        g_autofree char *events = json_values(shrt);
        g_auto(GStrv) lines = g_strsplit(g_strchomp(shrt), "\n", -1);
        g_autofree char *count = g_strdup_printf("%u ", g_strv_length(lines));
        g_assert_true(g_str_has_prefix(events, count)); /* as many objects as lines */
        g_assert_true(g_str_has_suffix(events, " finished"));
        g_assert_nonnull(strstr(events, " started "));

        g_assert_cmpint(sh_fridgectl(h, "", "suspend --dry-run --json=pretty", &pretty), ==, 0);
        g_autofree char *pretty_events = json_values(pretty);
        g_assert_true(g_str_has_prefix(pretty, "{\n        \"event\" : \"started\",\n"));
        g_assert_true(g_str_has_suffix(pretty_events, " finished"));
        g_assert_nonnull(strstr(pretty, "}\n{\n"));
}

static void test_quiet(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_autofree char *out = NULL, *loud = NULL, *err = NULL;

        g_assert_cmpint(sh_fridgectl(h, "", "suspend --dry-run --no-progress", &loud), ==, 0);
        g_assert_cmpstr(loud, !=, "");
        g_assert_cmpint(sh_fridgectl(h, "", "-q suspend --dry-run", &out), ==, 0);
        g_assert_cmpstr(out, ==, "");
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "dry-run");
        /* errors still go to stderr, and the exit status says it */
        g_assert_cmpint(sh_fridgectl(h, "", "-q cancel 99 2>&1", &err), ==, 4);
        g_assert_nonnull(strstr(err, "NoSuchCycle"));
}

static void test_no_legend(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_autofree char *with = NULL, *without = NULL, *hist = NULL, *hist_bare = NULL;

        g_assert_cmpint(sh_fridgectl(h, "", "inhibitors", &with), ==, 0);
        g_assert_true(g_str_has_prefix(with, "WHO ") && strstr(with, "0 block, 0 delay\n"));
        g_assert_cmpint(sh_fridgectl(h, "", "inhibitors --no-legend", &without), ==, 0);
        g_assert_cmpstr(without, ==, "");
        g_assert_cmpint(sh_fridgectl(h, "", "-q suspend --dry-run", &hist), ==, 0);
        g_clear_pointer(&hist, g_free);
        g_assert_cmpint(sh_fridgectl(h, "", "history", &hist), ==, 0);
        g_assert_true(g_str_has_prefix(hist, "    ID ") && strstr(hist, "1 cycle\n"));
        g_assert_cmpint(sh_fridgectl(h, "", "history --no-legend", &hist_bare), ==, 0);
        g_auto(GStrv) bare_lines = g_strsplit(hist_bare, "\n", -1);
        g_assert_cmpuint(g_strv_length(bare_lines), ==, 2); /* one line */
        g_assert_null(strstr(hist_bare, "ID"));
        g_assert_nonnull(strstr(hist_bare, "dry-run"));
}

/* On a terminal (script(1)'s pty) history goes through $PAGER, a script
 * that leaves a mark; not with --no-pager, --json, or off a terminal */
static void test_pager(Fixture *f, gconstpointer data) {
        if (!need("script"))
                return;
        Harness *h = f->h = harness_new(NULL);
        g_autofree char *mark = g_build_filename(h->dir, "paged", NULL);
        g_autofree char *pager = g_build_filename(h->dir, "pager", NULL);
        g_autofree char *body = g_strdup_printf("#!/bin/sh\necho \"LESS=$LESS\" >> '%s'\ncat\n", mark);
        g_assert_true(g_file_set_contents(pager, body, -1, NULL));
        g_assert_cmpint(chmod(pager, 0755), ==, 0);
        g_autofree char *q_ctl = g_shell_quote(harness_env("FRIDGECTL"));
        g_autofree char *q_bus = g_shell_quote(h->bus_address);
        const char *cases[][2] = {
                { "history", "LESS=FRXMK\n" },        /* paged: stdout a terminal */
                { "--no-pager history", "" },
                { "--json history", "" },
                { "history | cat", "" },             /* stdout a pipe */
        };
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                (void) unlink(mark);
                g_autofree char *inner = g_strdup_printf("PAGER=%s %s --bus-address=%s %s", pager, q_ctl,
                                                         q_bus, cases[i][0]);
                g_autofree char *q_inner = g_shell_quote(inner);
                g_autofree char *cmd = g_strdup_printf("env -u SYSTEMD_PAGER -u LESS script -qec %s /dev/null",
                                                       q_inner);
                char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
                g_autofree char *out = NULL, *got = NULL;
                int status = harness_run(sh, 30000, &out);
                g_test_message("%s -> %d:\n%s", inner, status, out);
                g_assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
                if (!g_file_get_contents(mark, &got, NULL, NULL))
                        got = g_strdup("");
                if (!g_str_equal(got, cases[i][1]))
                        g_error("fridgectl %s: the pager saw \"%s\", not \"%s\"", cases[i][0], got, cases[i][1]);
        }
}

/* As uid 65534 at a terminal polkit may ask (flag 1); with
 * --no-ask-password it may not (0), and no agent is started */
static void test_no_ask_password(Fixture *f, gconstpointer data) {
        if (!need("script"))
                return;
        HarnessOptions o = { .open_bus = true, .polkit_table = "* * no\n" };
        Harness *h = f->h = harness_new(&o);
        /* the agent runs as uid 65534: its mark goes where that uid may write */
        g_autofree char *agent_dir = g_build_filename(h->dir, "agent.d", NULL);
        g_assert_cmpint(g_mkdir(agent_dir, 0777), ==, 0);
        g_assert_cmpint(chmod(agent_dir, 0777), ==, 0);
        g_autofree char *agent_mark = g_build_filename(agent_dir, "ran", NULL);
        g_autofree char *agent = g_build_filename(h->dir, "agent", NULL);
        g_autofree char *body = g_strdup_printf("#!/bin/sh\ntouch '%s'\n", agent_mark);
        g_assert_true(g_file_set_contents(agent, body, -1, NULL));
        g_assert_cmpint(chmod(agent, 0755), ==, 0);
        g_assert_cmpint(chmod(h->dir, 0755), ==, 0);
        g_autofree char *q_ctl = g_shell_quote(harness_env("FRIDGECTL"));
        g_autofree char *q_bus = g_shell_quote(h->bus_address);
        for (int ask = 1; ask >= 0; ask--) {
                (void) unlink(agent_mark);
                g_assert_true(g_file_set_contents(h->polkit_log, "", -1, NULL));
                g_autofree char *inner = g_strdup_printf(
                        "FRIDGECTL_POLKIT_AGENT=%s setpriv --reuid=65534 --regid=65534 --clear-groups -- %s "
                        "--bus-address=%s suspend --no-progress%s", agent, q_ctl, q_bus,
                        ask ? "" : " --no-ask-password");
                g_autofree char *q_inner = g_shell_quote(inner);
                g_autofree char *cmd = g_strdup_printf("script -qec %s /dev/null", q_inner);
                char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
                g_autofree char *out = NULL, *log = NULL;
                int status = harness_run(sh, 30000, &out);
                g_test_message("%s -> %d:\n%s", inner, status, out);
                g_assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 4);
                g_assert_nonnull(strstr(out, "AccessDenied"));
                g_assert_true(g_file_get_contents(h->polkit_log, &log, NULL, NULL));
                g_autofree char *want = g_strdup_printf("io.fridge.sleep 65534 no %d\n", ask);
                if (!strstr(log, want))
                        g_error("the polkit stand-in did not see \"%s\":\n%s", want, log);
                g_assert_true(g_file_test(agent_mark, G_FILE_TEST_EXISTS) == ask);
        }
}

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
#define ADD(path, fn) g_test_add("/fridgectl/" path, Fixture, NULL, harness_fixture_setup, fn, harness_fixture_teardown)
        ADD("no-command-is-status", test_no_command_is_status);
        ADD("json-modes", test_json_modes);
        ADD("freeze-filesystems", test_freeze_filesystems);
        ADD("json-stream", test_json_stream);
        ADD("quiet", test_quiet);
        ADD("no-legend", test_no_legend);
        ADD("pager", test_pager);
        ADD("no-ask-password", test_no_ask_password);
        return g_test_run();
}
