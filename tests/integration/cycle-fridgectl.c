/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whole cycles, part 3: fridgectl driving them (JSON output, exit codes
 * for failed, cancelled and busy cycles).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cycle.h"
#include "fridge-config.h"

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

void test_fridgectl_json_dry_run(Fixture *f, gconstpointer data) {
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

void test_fridgectl_failed(Fixture *f, gconstpointer data) {
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

void test_fridgectl_cancelled(Fixture *f, gconstpointer data) {
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

void test_fridgectl_busy(Fixture *f, gconstpointer data) {
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
