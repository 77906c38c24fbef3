/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Issue 13, points 1-3, from the outside: the attacks an unprivileged user
 * (uid 65534 through setpriv) makes against a polkit stand-in that allows
 * the sleep actions to everyone, and the faults of the sleep hook's path
 * (its caller killed, its budget spent, a post during its pre). Freezing is
 * checked on scratch cgroups of the real cgroup v2 freezer: a.service
 * (early) and b.service (late).
 */
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <systemd/sd-bus.h>

#include "fridge-config.h"
#include "fridge-limits.h"
#include "harness.h"
#include "scratch.h"

/* polkit says yes to the sleep actions for anyone, and to nothing else */
static const char sleep_for_all[] = "io.fridge.sleep * yes\nio.fridge.hibernate * yes\nio.fridge.inhibit * yes\n";

typedef struct CaseOptions {
        const char *polkit_table;
        bool slowfs;            /* the flushes stall on held slowfs (needs syncfs to wait for it) */
        const char *config;     /* more fridge.conf */
} CaseOptions;

typedef struct Fixture {
        Harness *h;
        ScratchPair p;
        pid_t hook_pid;         /* a background `fridgectl hook pre` of ours, or 0 */
        int hook_out;
} Fixture;

static void setup(Fixture *f, gconstpointer data) {
        const CaseOptions *co = data;
        f->hook_out = -1;
        const char *why = harness_scratch_skip_reason();
        if (!why && !harness_env("FRIDGECTL"))
                why = "FRIDGECTL is not set";
        if (!why && co->slowfs && !harness_env("SLOWFS"))
                why = "SLOWFS is not set";
        if (why) {
                g_test_skip(why);
                return;
        }
        scratch_pair_new(&f->p);
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n%s", f->p.s->root, co->config ? co->config : "");
        HarnessOptions o = { .config = config, .classes = "[Late]\nUnits=b.service\n", .real_cgroups = true,
                             .slowfs = co->slowfs, .open_bus = true, .polkit_table = co->polkit_table };
        f->h = harness_new(&o);
        if (co->slowfs) {
                if (!harness_slowfs_stall_flushes(f->h)) {
                        g_clear_pointer(&f->h, harness_free);
                        g_test_skip("syncfs() does not wait for held slowfs on this kernel: no flush stalls");
                }
        }
}

static void teardown(Fixture *f, gconstpointer data) {
        if (f->hook_pid > 0) {
                (void) kill(f->hook_pid, SIGKILL);
                (void) harness_wait_pid(f->hook_pid, 5000);
        }
        if (f->hook_out >= 0)
                g_free(harness_read_all(f->hook_out));
        if (f->h && g_test_failed())
                harness_dump_fridged_log(f->h);
        if (f->h && f->h->slowfs_held)
                harness_slowfs_release(f->h);
        harness_free(f->h);
        scratch_free(f->p.s); /* after fridged: it must not hold anything frozen */
}

#define SKIP_IF_UNSET(f) do { if (!(f)->h) return; } while (0)

static void assert_frozen(Fixture *f, bool a, bool b) {
        g_assert_cmpint(scratch_is_frozen(f->p.s, f->p.a), ==, a);
        g_assert_cmpint(scratch_is_frozen(f->p.s, f->p.b), ==, b);
}

/* busctl as nobody: a raw call, without fridgectl's checks; its output */
static char *busctl_as_nobody(Harness *h, const char *method_and_args) {
        g_autofree char *cmd = g_strdup_printf("exec setpriv --reuid=65534 --regid=65534 --clear-groups -- busctl "
                                               "--address='%s' call io.fridge.Fridge1 /io/fridge/Fridge1 "
                                               "io.fridge.Fridge1 %s 2>&1", h->bus_address, method_and_args);
        char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
        char *out = NULL;
        int status = harness_run(sh, 20000, &out);
        g_test_message("busctl %s as nobody -> %d: %s", method_and_args, status, out);
        g_assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0);
        return out;
}

static char *polkit_log(Harness *h) {
        char *text = NULL;
        g_assert_true(g_file_get_contents(h->polkit_log, &text, NULL, NULL));
        return text;
}

/* `fridgectl hook pre suspend` as root, in the background, as systemd-sleep's hook */
static void start_pre(Fixture *f) {
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", f->h->bus_address);
        char *argv[] = { (char *) harness_env("FRIDGECTL"), addr, (char *) "--no-progress", (char *) "hook",
                         (char *) "pre", (char *) "suspend", NULL };
        f->hook_pid = harness_spawn_bg(argv, &f->hook_out);
}

/* The pre's exit status once it returned (within timeout_ms) */
static int wait_pre(Fixture *f, int timeout_ms) {
        int status = harness_wait_pid(f->hook_pid, timeout_ms);
        f->hook_pid = 0;
        g_autofree char *out = harness_read_all(f->hook_out);
        f->hook_out = -1;
        g_test_message("hook pre: status %d: %s", status, out);
        g_assert_true(status != -1 && WIFEXITED(status));
        return WEXITSTATUS(status);
}

static void expect_finished(Harness *h, uint64_t cycle, const char *result, const char *error,
                            const char *message_part) {
        g_autofree char *res = NULL, *err = NULL, *msg = NULL;
        if (!harness_wait_finished(h, cycle, 20000, &res, &err, &msg))
                g_error("cycle %" G_GUINT64_FORMAT " did not finish", cycle);
        g_test_message("cycle %" G_GUINT64_FORMAT ": %s %s: %s", cycle, res, err, msg);
        if (!g_str_equal(res, result) || g_strcmp0(err, error) != 0 || !strstr(msg, message_part))
                g_error("cycle ended (%s, %s, %s); expected %s, %s with '%s'", res, err, msg, result, error,
                        message_part);
}

/* Polls until neither scratch cgroup is frozen; how long that took, in ms */
static double ms_until_thawed(Fixture *f, int within_ms) {
        int64_t t0 = g_get_monotonic_time();
        while (scratch_is_frozen(f->p.s, f->p.a) || scratch_is_frozen(f->p.s, f->p.b)) {
                if (g_get_monotonic_time() - t0 > (int64_t) within_ms * 1000)
                        g_error("still frozen %d ms later", within_ms);
                g_usleep(5000);
        }
        return (double) (g_get_monotonic_time() - t0) / 1000.0;
}

/* The pre stalls in flush-again with a.service frozen (the first flush ran
 * out of time and went on, as configured) */
static uint64_t pre_frozen_early(Fixture *f) {
        start_pre(f);
        g_assert_true(harness_wait_property_signal(f->h, "Phase", "flush-again", 20000));
        assert_frozen(f, true, false);
        return harness_get_u64(f->h, "CycleId");
}

#define HOOK_ABANDONED FRIDGE_INTERFACE ".Error.HookAbandoned"

/* ---- 1. Hook is root's ---- */

static void test_hook_root_only(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        /* polkit would say yes to anything: it is not asked */
        const char *const pre[] = { "hook", "pre", "suspend", NULL };
        const char *const post[] = { "hook", "post", "suspend", NULL };
        harness_expect_denied_as_nobody(f->h, pre, "only root may call it");
        harness_expect_denied_as_nobody(f->h, post, "only root may call it");
        g_autofree char *raw = busctl_as_nobody(f->h, "Hook ss pre hibernate");
        g_assert_nonnull(strstr(raw, "Access denied"));
        assert_frozen(f, false, false);
        g_autofree char *state = harness_get_string(f->h, "State");
        g_assert_cmpstr(state, ==, "idle");
        g_autofree char *log = polkit_log(f->h);
        g_assert_cmpstr(log, ==, "");

        /* nor can nobody forge the resume of root's sleeping cycle */
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 90000, &out, "hook", "pre", "suspend"), ==, 0);
        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        assert_frozen(f, true, true);
        harness_expect_denied_as_nobody(f->h, post, "only root may call it");
        g_assert_cmpint(harness_find_signal(f->h, "Resumed", true, cycle), <, 0);
        g_autofree char *still = harness_get_string(f->h, "State");
        g_assert_cmpstr(still, ==, "sleeping");
        assert_frozen(f, true, true);
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(harness_fridgectl(f->h, 90000, &out, "hook", "post", "suspend"), ==, 0);
        assert_frozen(f, false, false);
        expect_finished(f->h, cycle, "done", "", "slept and resumed");
}

/* ---- 2. the pre's caller, the budget, a post during the pre ---- */

static void test_pre_caller_killed_thaws(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = pre_frozen_early(f);
        g_assert_cmpint(kill(f->hook_pid, SIGKILL), ==, 0);
        double ms = ms_until_thawed(f, 1000);
        g_test_message("thawed %.1f ms after the hook's caller was killed", ms);
        (void) harness_wait_pid(f->hook_pid, 5000);
        f->hook_pid = 0;
        expect_finished(f->h, cycle, "failed", HOOK_ABANDONED, "left before it finished");
        harness_slowfs_release(f->h);
        assert_frozen(f, false, false);
}

/* The built hook (a link named "fridge" to fridgectl), or NULL with the
 * case skipped */
static const char *built_hook(void) {
        const char *path = harness_env("FRIDGE_SLEEP_HOOK");
        if (!path)
                g_test_skip("FRIDGE_SLEEP_HOOK is not set");
        return path;
}

/* The budget: fridged's wait for the pre ends first, then thaws; the hook
 * (the built link, as systemd-sleep runs it) returns inside the budget
 * and exits 0: the machine sleeps anyway */
#define SHORT_BUDGET_MS 3000U

static void test_pre_over_budget_thaws(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *hook_path = built_hook();
        if (!hook_path)
                return;
        g_autofree char *budget = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 90000, &budget, "hook", "budget", NULL), ==, 0);
        g_assert_cmpuint(g_ascii_strtoull(budget, NULL, 10), ==, SHORT_BUDGET_MS);
        uint32_t property = 0;
        g_assert_cmpint(sd_bus_get_property_trivial(f->h->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                                    "HookBudgetMs", NULL, 'u', &property), >=, 0);
        g_assert_cmpuint(property, ==, SHORT_BUDGET_MS);

        g_autofree char *bus = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", f->h->bus_address);
        char *argv[] = { (char *) "/usr/bin/env", bus, (char *) hook_path, (char *) "pre", (char *) "suspend", NULL };
        int64_t t0 = g_get_monotonic_time();
        int status = harness_run(argv, 30000, NULL);
        double ms = (double) (g_get_monotonic_time() - t0) / 1000.0;
        g_test_message("the hook returned after %.0f ms (budget %u ms, fridged's wait %u ms)", ms, SHORT_BUDGET_MS,
                       hook_pre_wait_ms(SHORT_BUDGET_MS));
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_assert_cmpfloat(ms, <=, SHORT_BUDGET_MS);
        g_assert_cmpfloat(ms, >=, hook_pre_wait_ms(SHORT_BUDGET_MS)); /* it did wait: the stall was real */
        assert_frozen(f, false, false); /* thawed before the hook returned */
        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        expect_finished(f->h, cycle, "failed", HOOK_ABANDONED, "did not finish within");
        harness_slowfs_release(f->h);
}

/* CMD through sh -c, its stderr with its stdout; its wait status, and
 * how long it took in *ret_ms */
static int run_sh(const char *cmd, char **ret_out, double *ret_ms) {
        char *sh[] = { (char *) "/bin/sh", (char *) "-c", (char *) cmd, NULL };
        int64_t t0 = g_get_monotonic_time();
        int status = harness_run(sh, 20000, ret_out);
        *ret_ms = (double) (g_get_monotonic_time() - t0) / 1000.0;
        g_test_message("%s: status 0x%x after %.0f ms: %s", cmd, status, *ret_ms, *ret_out);
        return status;
}

/* `fridgectl hook` keeps the budget itself, wherever it hangs, and so
 * does the hook, which is fridgectl: here the bus is stopped
 * (SIGSTOP), so the connection never completes, and FRIDGE_HOOK_TIMEOUT
 * gives the budget */
static void test_hook_deadline_bus_hung(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *hook_path = built_hook();
        if (!hook_path)
                return;
        g_autofree char *direct = g_strdup_printf("FRIDGE_HOOK_TIMEOUT=2 exec '%s' --bus-address='%s' --no-progress "
                                                  "hook pre suspend 2>&1", harness_env("FRIDGECTL"),
                                                  f->h->bus_address);
        g_autofree char *hook = g_strdup_printf("FRIDGE_HOOK_TIMEOUT=2 DBUS_SYSTEM_BUS_ADDRESS='%s' exec '%s' pre "
                                                "suspend 2>&1", f->h->bus_address, hook_path);
        const char *said = "hook pre suspend did not finish within 1.900 s (the hook's budget: 2000 ms)";
        g_assert_cmpint(kill(f->h->dbus_pid, SIGSTOP), ==, 0);
        g_autofree char *out = NULL, *hook_out = NULL;
        double ms, hook_ms;
        int status = run_sh(direct, &out, &ms);
        int hook_status = run_sh(hook, &hook_out, &hook_ms);
        g_assert_cmpint(kill(f->h->dbus_pid, SIGCONT), ==, 0);

        g_assert_true(status != -1 && WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 1);
        g_assert_nonnull(strstr(out, said));
        g_assert_cmpfloat(ms, <=, 2000);
        /* the hook: always 0, fridgectl's words and its own */
        g_assert_true(hook_status != -1 && WIFEXITED(hook_status));
        g_assert_cmpint(WEXITSTATUS(hook_status), ==, 0);
        g_assert_nonnull(strstr(hook_out, said));
        g_assert_nonnull(strstr(hook_out, "fridge-sleep-hook: fridgectl hook pre suspend failed (exit status 1)"));
        g_assert_cmpfloat(hook_ms, <=, 2000);
        g_autofree char *state = harness_get_string(f->h, "State"); /* the bus answers again */
        g_assert_cmpstr(state, ==, "idle");
        assert_frozen(f, false, false);
}

/* A FRIDGE_HOOK_TIMEOUT that is not a number of seconds, or below the
 * budget's floor (the layers inside it would not fit), is said and
 * ignored: fridged's budget is asked, and the hook works */
static void test_hook_budget_env_bad(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        static const char *const values[] = { "soon", "1" };
        double ms;
        for (int i = 0; i < 2; i++) {
                g_autofree char *cmd = g_strdup_printf("FRIDGE_HOOK_TIMEOUT=%s exec '%s' --bus-address='%s' "
                                                       "--no-progress hook %s suspend 2>&1", values[i],
                                                       harness_env("FRIDGECTL"), f->h->bus_address,
                                                       i == 0 ? "pre" : "post");
                g_autofree char *said = g_strdup_printf("FRIDGE_HOOK_TIMEOUT=%s is not a number of seconds from 2 "
                                                        "to 85; ignored", values[i]);
                g_autofree char *out = NULL;
                int status = run_sh(cmd, &out, &ms);
                g_assert_true(status != -1 && WIFEXITED(status));
                g_assert_cmpint(WEXITSTATUS(status), ==, 0);
                g_assert_nonnull(strstr(out, said));
                assert_frozen(f, i == 0, i == 0);
        }
        expect_finished(f->h, harness_get_u64(f->h, "CycleId"), "done", "", "slept and resumed");
}

static void test_post_during_pre_thaws(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = pre_frozen_early(f);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 90000, &out, "hook", "post", "suspend"), ==, 0); /* accepted */
        assert_frozen(f, false, false); /* post answers after the thaw */
        g_assert_cmpint(wait_pre(f, 5000), ==, 4); /* the pre learns why */
        expect_finished(f->h, cycle, "failed", HOOK_ABANDONED, "post came while its pre was still running");
        harness_slowfs_release(f->h);
        g_autofree char *state = harness_get_string(f->h, "State");
        g_assert_cmpstr(state, ==, "idle");
}

/* ---- 3. freezing others without sleeping is io.fridge.manage's ---- */

static void assert_nothing_happened(Fixture *f) {
        g_autofree char *log = harness_fakesys_log(f->h);
        g_assert_cmpstr(log, ==, "");
        g_autofree char *last = harness_get_string(f->h, "LastResult");
        g_assert_cmpstr(last, ==, "");
        assert_frozen(f, false, false);
}

static void test_manage_needed(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *const dry[] = { "suspend", "--dry-run", "--no-progress", NULL };
        harness_expect_denied_as_nobody(f->h, dry, "io.fridge.manage");
        const char *const dry_hibernate[] = { "hibernate", "--dry-run", "--no-progress", NULL };
        harness_expect_denied_as_nobody(f->h, dry_hibernate, "io.fridge.manage");
        g_autofree char *longer = g_strdup_printf("%u", FREEZE_TIMEOUT_MAX_MS);
        const char *const long_freeze[] = { "suspend", "--freeze-timeout", longer, "--no-progress", NULL };
        harness_expect_denied_as_nobody(f->h, long_freeze, "io.fridge.manage");
        const char *const just_over[] = { "suspend", "--freeze-timeout", "10001", "--no-progress", NULL };
        harness_expect_denied_as_nobody(f->h, just_over, "io.fridge.manage");
        const char *const pm_test[] = { "suspend", "--pm-test", "devices", "--no-progress", NULL };
        harness_expect_denied_as_nobody(f->h, pm_test, "io.fridge.manage");
        assert_nothing_happened(f);
        g_autofree char *log = polkit_log(f->h);
        g_test_message("polkit was asked:\n%s", log);
        g_assert_nonnull(strstr(log, "io.fridge.sleep 65534 yes"));
        g_assert_nonnull(strstr(log, "io.fridge.manage 65534 no"));

        /* SetClass still needs io.fridge.configure */
        g_autofree char *set = busctl_as_nobody(f->h, "SetClass ss user.slice late");
        g_assert_nonnull(strstr(set, "Access denied"));
        g_autofree char *log2 = polkit_log(f->h);
        g_assert_nonnull(strstr(log2, "io.fridge.configure 65534 no"));

        /* a sleep within the administrator's freeze bound is the sleep action's alone */
        g_autofree char *out = NULL;
        const char *const within[] = { "suspend", "--freeze-timeout", "10000", "--no-progress", NULL };
        g_assert_cmpint(harness_fridgectl_nobody_exit(f->h, &out, within), ==, 0);
        g_autofree char *last = harness_get_string(f->h, "LastResult");
        g_assert_cmpstr(last, ==, "done");
}

/* With io.fridge.manage, the dry run goes ahead: the refusal above is that action's */
static void test_manage_allows(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *out = NULL;
        const char *const dry[] = { "suspend", "--dry-run", "--no-progress", NULL };
        g_assert_cmpint(harness_fridgectl_nobody_exit(f->h, &out, dry), ==, 0);
        g_autofree char *last = harness_get_string(f->h, "LastResult");
        g_assert_cmpstr(last, ==, "dry-run");
        g_autofree char *log = polkit_log(f->h);
        g_assert_nonnull(strstr(log, "io.fridge.manage 65534 yes"));
}

int main(int argc, char **argv) {
        static const CaseOptions everything = { .polkit_table = "* * yes\n" },
                sleep_only = { .polkit_table = sleep_for_all },
                sleep_and_manage = { .polkit_table = "io.fridge.sleep * yes\nio.fridge.manage * yes\n" },
                stall = { .polkit_table = sleep_for_all, .slowfs = true,
                          .config = "[Flush]\nTimeoutMs=3000\nOnTimeout=continue\n" },
                stall_short_budget = { .polkit_table = sleep_for_all, .slowfs = true,
                                       .config = "[Flush]\nTimeoutMs=1200\nOnTimeout=continue\n"
                                                 "[Sleep]\nHookTimeoutMs=3000\n" };
        g_test_init(&argc, &argv, NULL);
#define ADD(name, fn, o) g_test_add("/hook-hardening/" name, Fixture, &o, setup, fn, teardown)
        ADD("hook-root-only", test_hook_root_only, everything);
        ADD("pre-caller-killed-thaws", test_pre_caller_killed_thaws, stall);
        ADD("pre-over-budget-thaws", test_pre_over_budget_thaws, stall_short_budget);
        ADD("post-during-pre-thaws", test_post_during_pre_thaws, stall);
        ADD("hook-deadline-bus-hung", test_hook_deadline_bus_hung, sleep_only);
        ADD("hook-budget-env-bad", test_hook_budget_env_bad, sleep_only);
        ADD("manage-needed", test_manage_needed, sleep_only);
        ADD("manage-allows", test_manage_allows, sleep_and_manage);
#undef ADD
        return g_test_run();
}
