/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * systemd's sleep path: `fridgectl hook pre|post` (and the built system-sleep
 * hook, fridgectl by the name "fridge") around a state write fridged does not do itself, and the
 * logind driver against a logind stand-in on the private bus that runs the
 * hook as systemd-sleep does and writes fakesys's state. Freezing is checked
 * on scratch cgroups of the real cgroup v2 freezer.
 */
#include <fcntl.h>
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "fridge-config.h"
#include "harness.h"
#include "scratch.h"

typedef struct CaseOptions {
        bool scratch;            /* scratch cgroups a (early) and b (late) with processes */
        bool logind;             /* the logind stand-in, running the built hook */
        const char *config;      /* more fridge.conf */
        const char *sleep_conf;  /* systemd-sleep's sleep.conf */
        bool slowfs;             /* the flushes stall on held slowfs */
} CaseOptions;

typedef struct Fixture {
        Harness *h;
        ScratchPair p;
} Fixture;

static void setup(Fixture *f, gconstpointer data) {
        const CaseOptions *co = data;
        const char *why = harness_skip_reason();
        if (!why && co->scratch)
                why = scratch_skip_reason();
        if (!why && co->logind && !harness_env("LOGIND_STANDIN"))
                why = "LOGIND_STANDIN is not set";
        if (!why && co->slowfs && !harness_env("SLOWFS"))
                why = "SLOWFS is not set";
        if (why) {
                g_test_skip(why);
                return;
        }
        g_autofree char *config = NULL;
        if (co->scratch) {
                scratch_pair_new(&f->p);
                config = g_strdup_printf("[Freeze]\nRoots=%s\n%s", f->p.s->root, co->config ? co->config : "");
        } else if (co->config)
                config = g_strdup(co->config);
        HarnessOptions o = { .config = config, .classes = "[Late]\nUnits=b.service\n", .real_cgroups = co->scratch,
                             .logind = co->logind, .logind_hook_script = true, .sleep_conf = co->sleep_conf,
                             .slowfs = co->slowfs };
        f->h = harness_new(&o);
        if (co->slowfs) {
                if (!harness_slowfs_stall_flushes(f->h)) {
                        g_clear_pointer(&f->h, harness_free);
                        g_test_skip("syncfs() does not wait for held slowfs on this kernel: no flush stalls");
                        return;
                }
        }
        if (co->logind && !harness_wait_logind_delay(f->h, "fridge", true, 10000))
                g_error("fridged did not take a logind delay lock");
}

static void teardown(Fixture *f, gconstpointer data) {
        if (f->h && g_test_failed()) {
                harness_dump_fridged_log(f->h);
                if (f->h->logind_log) {
                        g_autofree char *log = harness_logind_log(f->h);
                        g_test_message("logind stand-in:\n%s", log);
                }
        }
        if (f->h && f->h->slowfs_held)
                harness_slowfs_release(f->h);
        harness_free(f->h);
        scratch_free(f->p.s); /* after fridged: it must not hold anything frozen */
}

#define SKIP_IF_UNSET(f) do { if (!(f)->h) return; } while (0)

static uint64_t hook_ok(Harness *h, const char *when, const char *kind) {
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 60000, &out, "hook", when, kind), ==, 0);
        uint64_t cycle = 0;
        g_assert_cmpint(sscanf(out, "cycle %" G_GUINT64_FORMAT, &cycle), ==, 1);
        return cycle;
}

static void expect_finished(Harness *h, uint64_t cycle, const char *result, const char *message_part) {
        g_autofree char *res = NULL, *err = NULL, *msg = NULL;
        if (!harness_wait_finished(h, cycle, 20000, &res, &err, &msg))
                g_error("cycle %" G_GUINT64_FORMAT " did not finish", cycle);
        if (!g_str_equal(res, result) || (message_part && !strstr(msg, message_part)))
                g_error("cycle ended (%s, %s, %s); expected %s with '%s'", res, err, msg, result,
                        message_part ? message_part : "");
}

static unsigned count_signals(Harness *h, const char *member, uint64_t cycle) {
        unsigned n = 0;
        for (guint i = 0; i < h->signals->len; i++) {
                HarnessSignal *s = h->signals->pdata[i];
                uint64_t id = 0;
                if (!g_str_equal(s->member, member))
                        continue;
                (void) sd_bus_message_rewind(s->message, true);
                if (sd_bus_message_read(s->message, "t", &id) > 0 && (cycle == 0 || id == cycle))
                        n++;
        }
        return n;
}

static bool fakesys_wrote_state(Harness *h) {
        g_autofree char *log = harness_fakesys_log(h);
        return strstr(log, "power/state") != NULL;
}

static void assert_frozen(Fixture *f, bool frozen) {
        g_assert_cmpint(scratch_is_frozen(f->p.s, f->p.a), ==, frozen);
        g_assert_cmpint(scratch_is_frozen(f->p.s, f->p.b), ==, frozen);
}

/* ---- the hook through fridgectl ---- */

static void test_pre_post_nothing_frozen(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = hook_ok(f->h, "pre", "suspend");
        g_autofree char *state = harness_get_string(f->h, "State");
        g_autofree char *phase = harness_get_string(f->h, "Phase");
        g_assert_cmpstr(state, ==, "sleeping");
        g_assert_cmpstr(phase, ==, "kernel");
        g_assert_false(fakesys_wrote_state(f->h)); /* systemd-sleep writes it */

        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_cancel(f->h, cycle, &err, &msg), ==, -1);
        g_assert_cmpstr(err, ==, FRIDGE_INTERFACE ".Error.TooLate");

        g_assert_cmpuint(hook_ok(f->h, "post", "suspend"), ==, cycle);
        expect_finished(f->h, cycle, "done", NULL);
        g_assert_cmpuint(count_signals(f->h, "SleepImminent", cycle), ==, 1);
        g_assert_cmpuint(count_signals(f->h, "Resumed", cycle), ==, 1);
        g_assert_false(fakesys_wrote_state(f->h));
}

static void test_pre_post_freezes(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        assert_frozen(f, false);
        uint64_t cycle = hook_ok(f->h, "pre", "suspend-then-hibernate");
        assert_frozen(f, true); /* when pre returns, systemd-sleep may write the state */
        g_autofree char *kind = harness_get_string(f->h, "Kind");
        g_assert_cmpstr(kind, ==, "suspend");
        g_assert_cmpuint(hook_ok(f->h, "post", "suspend-then-hibernate"), ==, cycle);
        assert_frozen(f, false); /* post answers after the thaw */
        expect_finished(f->h, cycle, "done", NULL);
}

/* systemd >= 256's systemd-sleep freezes user.slice before the hooks unless
 * told not to: a freeze root already frozen at the pre is logged and kept
 * in the cycle's history entry; the cycle goes on and thaws its own */
static void write_cgroup_freeze(const char *path, const char *value) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, value, 1), ==, 1);
        close(fd);
}

static void test_pre_root_already_frozen(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *root = scratch_abs(f->p.s, f->p.s->root);
        g_autofree char *freeze = g_build_filename(root, "cgroup.freeze", NULL);
        write_cgroup_freeze(freeze, "1");
        uint64_t cycle = hook_ok(f->h, "pre", "suspend");
        write_cgroup_freeze(freeze, "0"); /* as systemd-sleep would, after its hooks */
        g_assert_cmpuint(hook_ok(f->h, "post", "suspend"), ==, cycle);
        expect_finished(f->h, cycle, "done", NULL);
        assert_frozen(f, false);
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &log, NULL, NULL));
        g_assert_nonnull(strstr(log, "was frozen already when the sleep hook's pre came"));
        g_autofree char *name = g_strdup_printf("%" G_GUINT64_FORMAT ".cycle", cycle);
        g_autofree char *file = g_build_filename(f->h->dir, "lib", "history", name, NULL);
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_assert_true(g_key_file_load_from_file(kf, file, G_KEY_FILE_NONE, NULL));
        g_auto(GStrv) warnings = g_key_file_get_string_list(kf, "Cycle", "Warnings", NULL, NULL);
        g_assert_nonnull(warnings);
        g_assert_true(g_str_has_prefix(warnings[0], f->p.s->root));
        /* and fridgectl history shows it under the cycle's row */
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "--no-legend", "history", NULL), ==, 0);
        g_autofree char *line = g_strdup_printf("\n       warning: %s", warnings[0]);
        g_assert_nonnull(strstr(out, line));
}

static void test_resumed_wake_reason(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = hook_ok(f->h, "pre", "suspend");
        harness_control(f->h, "wakeup-irq 7"); /* what woke the "machine" */
        hook_ok(f->h, "post", "suspend");
        expect_finished(f->h, cycle, "done", NULL);
        int i = harness_find_signal(f->h, "Resumed", true, cycle);
        g_assert_cmpint(i, >=, 0);
        HarnessSignal *s = f->h->signals->pdata[i];
        uint64_t id, slept;
        const char *reason;
        (void) sd_bus_message_rewind(s->message, true);
        g_assert_cmpint(sd_bus_message_read(s->message, "tts", &id, &slept, &reason), >, 0);
        g_test_message("wake reason: %s, slept %" G_GUINT64_FORMAT " µs", reason, slept);
        g_assert_nonnull(strstr(reason, "irq 7"));
        g_autofree char *last = harness_get_string(f->h, "LastWakeReason");
        g_assert_cmpstr(last, ==, reason);
}

static void test_post_without_pre(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "hook", "post", "suspend"), ==, 4); /* refused */
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_call(f->h, FRIDGE_INTERFACE, "Hook", NULL, &err, &msg, "ss", "post", "hibernate"),
                        ==, -1);
        g_assert_cmpstr(err, ==, FRIDGE_INTERFACE ".Error.NoSuchCycle");
        g_clear_pointer(&err, g_free);
        g_clear_pointer(&msg, g_free);
        g_assert_cmpint(harness_call(f->h, FRIDGE_INTERFACE, "Hook", NULL, &err, &msg, "ss", "during", "suspend"),
                        ==, -1);
        g_assert_cmpstr(err, ==, "org.freedesktop.DBus.Error.InvalidArgs");
        g_autofree char *state = harness_get_string(f->h, "State");
        g_assert_cmpstr(state, ==, "idle");
}

static void test_post_never_comes(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = hook_ok(f->h, "pre", "suspend");
        assert_frozen(f, true);
        expect_finished(f->h, cycle, "failed", "post never came");
        assert_frozen(f, false);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "hook", "post", "suspend"), ==, 4); /* too late: harmless */
        /* the phase failure is a structured entry; on stderr without a journal */
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &log, NULL, NULL));
        g_assert_nonnull(strstr(log, "failed in phase kernel: the sleep hook's post never came"));
}

/* A sleep systemd started (systemctl suspend) runs in fridge's configured
 * MemSleep= too: set from the pre, after systemd-sleep's own mode write,
 * and put back at the post */
static void test_pre_sets_configured_mem_sleep(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = hook_ok(f->h, "pre", "suspend");
        g_autofree char *during = harness_fakesys_log(f->h);
        g_assert_nonnull(strstr(during, "power/mem_sleep s2idle ok"));
        hook_ok(f->h, "post", "suspend");
        expect_finished(f->h, cycle, "done", NULL);
        g_autofree char *after = harness_fakesys_log(f->h);
        g_assert_true(g_str_has_suffix(after, "power/mem_sleep s2idle ok\npower/mem_sleep deep ok\n"));
}

static void test_pre_busy(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = hook_ok(f->h, "pre", "suspend");
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "hook", "pre", "suspend"), ==, 4);
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_call(f->h, FRIDGE_INTERFACE, "Hook", NULL, &err, &msg, "ss", "pre", "hibernate"),
                        ==, -1);
        g_assert_cmpstr(err, ==, FRIDGE_INTERFACE ".Error.Busy");
        hook_ok(f->h, "post", "suspend");
        expect_finished(f->h, cycle, "done", NULL);
}

/* The installed hook, run as systemd-sleep runs it */
static int run_script(Harness *h, const char *when) {
        g_autofree char *bus = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", h->bus_address);
        char *argv[] = { (char *) "/usr/bin/env", bus, (char *) harness_env("FRIDGE_SLEEP_HOOK"), (char *) when,
                         (char *) "hibernate", NULL };
        return harness_run(argv, 70000, NULL);
}

static void test_script_always_exits_0(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        if (!harness_env("FRIDGE_SLEEP_HOOK")) {
                g_test_skip("FRIDGE_SLEEP_HOOK is not set");
                return;
        }
        g_assert_cmpint(run_script(f->h, "pre"), ==, 0);
        assert_frozen(f, true);
        g_assert_cmpint(run_script(f->h, "post"), ==, 0);
        assert_frozen(f, false);
        g_assert_cmpint(run_script(f->h, "post"), ==, 0); /* NoSuchCycle, hidden */
        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        expect_finished(f->h, cycle, "done", NULL);
}

/* ---- the logind driver ---- */

static gsize line_pos(const char *text, const char *line) {
        const char *p = strstr(text, line);
        if (!p)
                g_error("the logind stand-in's log lacks '%s'", line);
        return (gsize) (p - text);
}

static void assert_order(const char *text, const char *const *lines) {
        for (int i = 1; lines[i]; i++)
                if (line_pos(text, lines[i - 1]) >= line_pos(text, lines[i]))
                        g_error("'%s' is not before '%s'", lines[i - 1], lines[i]);
}

static const char *const phase_order[] = {
        "prepare", "flush", "freeze-early", "flush-again", "freeze-late", "kernel", "thaw", NULL,
};

/* The Phase values announced, in order, joined by spaces */
static char *phases_seen(Harness *h) {
        GString *out = g_string_new(NULL);
        for (guint i = 0; i < h->signals->len; i++) {
                g_autoptr(GPtrArray) ch = harness_parse_props_changed(h->signals->pdata[i]);
                for (guint j = 0; j < ch->len; j++) {
                        HarnessPropChange *c = ch->pdata[j];
                        if (g_str_equal(c->name, "Phase") && c->s && *c->s)
                                g_string_append_printf(out, "%s%s", out->len ? " " : "", c->s);
                }
        }
        return g_string_free(out, FALSE);
}

static void test_logind_sleep_one_cycle(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "suspend", NULL, NULL), ==, 0);
        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        expect_finished(f->h, cycle, "done", NULL);
        assert_frozen(f, false);
        /* post answers after the thaw; the stand-in logs once the hook exits */
        g_assert_true(harness_wait_logind_line(f->h, "prepare-for-sleep false", 20000));

        g_autofree char *log = harness_logind_log(f->h);
        /* root's call, but logind must still check its block inhibitors */
        g_assert_nonnull(strstr(log, "sleep suspend flags=1\n"));
        const char *order[] = { "sleep suspend", "prepare-for-sleep true", "released fridge delay",
                                "hook pre suspend 0", "state mem ok", "hook post suspend 0",
                                "prepare-for-sleep false", NULL };
        assert_order(log, order);
        g_assert_true(harness_wait_logind_delay(f->h, "fridge", true, 10000)); /* taken again */

        /* one cycle from Sleep through logind and both hooks */
        g_assert_cmpuint(count_signals(f->h, "CycleFinished", 0), ==, 1);
        g_assert_cmpuint(count_signals(f->h, "SleepImminent", cycle), ==, 1);
        g_assert_cmpuint(count_signals(f->h, "Resumed", cycle), ==, 1);
        g_autofree char *phases = phases_seen(f->h);
        g_autofree char *want = g_strjoinv(" ", (char **) phase_order);
        g_assert_cmpstr(phases, ==, want);
        g_assert_nonnull(strstr(out, "done"));

        g_autofree char *flog = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &flog, NULL, NULL));
        g_assert_nonnull(strstr(flog, "(driver logind)"));
}

/* An inhibitor's fd (ours) from fridged's Inhibit, or logind's when `logind` */
static int take_inhibitor(Harness *h, bool logind, const char *who, const char *mode) {
        sd_bus_message *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int fd, r = logind ? sd_bus_call_method(h->bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                                                "org.freedesktop.login1.Manager", "Inhibit", &e, &reply, "ssss",
                                                "sleep", who, "testing", mode)
                           : sd_bus_call_method(h->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                                "Inhibit", &e, &reply, "sss", who, "testing", mode);
        if (r < 0)
                g_error("Inhibit (%s) failed: %s", logind ? "logind" : "fridged", e.message);
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        g_assert_cmpint(fd, >=, 0);
        sd_bus_message_unref(reply);
        return fd;
}

static int take_block(Harness *h, bool logind, const char *who) {
        return take_inhibitor(h, logind, who, "block");
}

/* The logind driver asks logind to check its block inhibitors even for
 * root (SD_LOGIND_ROOT_CHECK_INHIBITORS), unless ignore-inhibitors */
static void test_logind_block_inhibitor(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int fd = take_block(f->h, true, "burner");
        g_autofree char *out = NULL;
        /* the reason is on stderr, and with --json in the stream's error object */
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "--json", "suspend", NULL), !=, 0);
        g_assert_nonnull(strstr(out, "active block inhibitor"));
        g_autofree char *log = harness_logind_log(f->h);
        g_assert_nonnull(strstr(log, "refused suspend flags=1\n"));
        assert_frozen(f, false);

        g_autofree char *out2 = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out2, "suspend", "-i", NULL), ==, 0);
        g_assert_true(harness_wait_logind_line(f->h, "prepare-for-sleep false", 20000));
        g_autofree char *log2 = harness_logind_log(f->h);
        g_assert_nonnull(strstr(log2, "sleep suspend flags=0\n"));
        close(fd);
}

static void test_logind_third_party_suspend(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        /* systemd-sleep has decided: fridge's block only shows in the journal */
        int block = take_block(f->h, false, "burner");
        harness_control(f->h, "sleep-ms 1500");
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_logind_sleep(f->h, "Suspend", &err, &msg), ==, 0);
        /* frozen by the hook's pre before systemd-sleep's state write */
        g_assert_true(harness_wait_log_line(f->h, "power/state mem sleeping", 20000));
        assert_frozen(f, true);
        g_assert_true(harness_wait_logind_line(f->h, "prepare-for-sleep false", 20000));
        assert_frozen(f, false);

        int i = harness_find_signal(f->h, "SleepImminent", false, 0);
        g_assert_cmpint(i, >=, 0);
        HarnessSignal *s = f->h->signals->pdata[i];
        uint64_t cycle;
        const char *kind;
        (void) sd_bus_message_rewind(s->message, true);
        g_assert_cmpint(sd_bus_message_read(s->message, "ts", &cycle, &kind), >, 0);
        g_assert_cmpstr(kind, ==, ""); /* logind does not say */
        expect_finished(f->h, cycle, "done", NULL); /* the hook's cycle has the announced id */
        g_assert_cmpuint(count_signals(f->h, "SleepImminent", 0), ==, 1);

        g_autofree char *log = harness_logind_log(f->h);
        const char *order[] = { "prepare-for-sleep true", "released fridge delay", "hook pre suspend 0",
                                "state mem ok", "hook post suspend 0", NULL };
        assert_order(log, order);
        g_assert_true(harness_wait_logind_delay(f->h, "fridge", true, 10000));
        g_autofree char *flog = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &flog, NULL, NULL));
        g_assert_nonnull(strstr(flog, "systemd-sleep is already sleeping; fridge's block inhibitors do not stop "
                                      "it (held by burner (testing, pid "));
        close(block);
}

static void test_auto_without_logind_is_direct(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, NULL), ==, 0);
        expect_finished(f->h, cycle, "done", NULL);
        g_assert_true(fakesys_wrote_state(f->h));
        g_autofree char *flog = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &flog, NULL, NULL));
        g_assert_nonnull(strstr(flog, "(driver direct)"));
}

static void test_logind_driver_without_logind(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, NULL), ==, -1);
        g_assert_cmpstr(err, ==, FRIDGE_INTERFACE ".Error.NotSupported");
        g_assert_nonnull(strstr(msg, "org.freedesktop.login1"));
        g_assert_false(fakesys_wrote_state(f->h));
}

/* ---- kernel knobs on logind's path ---- */

/* An admin's pm_test level, not the kernel's none (a restore to a default
 * would be caught); the cycles here change mem_sleep to s2idle */
#define PM_TEST_BEFORE "none core processors platform devices [freezer]"
#define MEM_SLEEP_BEFORE "s2idle [deep]"

/* Each line after the one before it (not just its first occurrence) */
static void assert_sequence(const char *what, const char *text, const char *const *lines) {
        const char *p = text;
        for (int i = 0; lines[i]; i++) {
                const char *q = strstr(p, lines[i]);
                if (!q)
                        g_error("%s: no '%s' after '%s' in:\n%s", what, lines[i], i ? lines[i - 1] : "the start", text);
                p = q + strlen(lines[i]);
        }
}

/* fridgectl suspend FLAG: one cycle that logind slept (PrepareForSleep
 * went out, its hooks ran), done */
static void suspend_through_logind(Fixture *f, const char *flag) {
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "suspend", flag, NULL), ==, 0);
        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        expect_finished(f->h, cycle, "done", NULL);
        g_assert_true(harness_wait_logind_line(f->h, "prepare-for-sleep false", 20000));
        g_autofree char *log = harness_logind_log(f->h);
        const char *const order[] = { "sleep suspend", "prepare-for-sleep true", "hook pre suspend 0", "state mem ok",
                                      "hook post suspend 0", "prepare-for-sleep false", NULL };
        assert_sequence("logind stand-in", log, order);
        g_assert_cmpuint(count_signals(f->h, "SleepImminent", cycle), ==, 1);
        g_autofree char *flog = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &flog, NULL, NULL));
        g_assert_nonnull(strstr(flog, "(driver logind)"));
}

static void assert_fakesys_sequence(Fixture *f, const char *const *lines) {
        g_autofree char *log = harness_fakesys_log(f->h);
        assert_sequence("fakesys", log, lines);
}

static void test_logind_pm_test(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        harness_control(f->h, "set power/pm_test " PM_TEST_BEFORE);
        suspend_through_logind(f, "--pm-test=devices");
        /* set for systemd-sleep's state write, put back after it as it was
         * (an admin's level, not none) */
        const char *const order[] = { "power/pm_test devices ok", "power/state mem ok", "power/pm_test freezer ok",
                                      NULL };
        assert_fakesys_sequence(f, order);
        harness_assert_sys(f->h, "power/pm_test", PM_TEST_BEFORE);
}

/* systemd-sleep writes MemorySleepMode= before the pre hook: fridge's mode,
 * set from the pre, is the one the state write sleeps in */
static void test_logind_mem_sleep_after_systemd(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        suspend_through_logind(f, "--mem-sleep=s2idle");
        g_autofree char *log = harness_logind_log(f->h);
        g_assert_nonnull(strstr(log, "mode mem_sleep deep ok"));
        const char *const order[] = { "power/mem_sleep deep ok", "power/mem_sleep s2idle ok", "power/state mem sleeping",
                                      "power/state mem ok", "power/mem_sleep deep ok", NULL };
        assert_fakesys_sequence(f, order);
}

static void test_logind_wake_after(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        harness_control(f->h, "sleep-ms 600000"); /* only the alarm ends this sleep */
        suspend_through_logind(f, "--wake-after=1");
        const char *const order[] = { "class/rtc/rtc0/wakealarm +1 ok", "power/state mem sleeping", "power/state mem ok",
                                      "class/rtc/rtc0/wakealarm 0 ok", NULL };
        assert_fakesys_sequence(f, order);
}

/* SuspendState=freeze: systemd-sleep would write freeze, and no mem_sleep
 * mode applies to that; fridge says so instead of pretending */
static void test_logind_suspend_state_conflict(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, "mem-sleep", "s", "deep", NULL), ==, -1);
        g_assert_cmpstr(err, ==, FRIDGE_INTERFACE ".Error.NotSupported");
        g_assert_nonnull(strstr(msg, "SuspendState=freeze"));
        g_assert_nonnull(strstr(msg, "sleep-root/etc/systemd/sleep.conf"));
        g_autofree char *log = harness_logind_log(f->h);
        g_assert_null(strstr(log, "sleep suspend"));
        g_assert_false(fakesys_wrote_state(f->h));
}

/* systemd-sleep sleeps whatever the pre answers: an alarm the kernel
 * refuses (someone else's is armed) leaves the other knobs in place for
 * that sleep, pm_test among them, and the cycle fails with it afterwards */
static void test_logind_knob_refused(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *other = g_strdup_printf("set class/rtc/rtc0/wakealarm %" G_GINT64_FORMAT,
                                                 g_get_real_time() / G_USEC_PER_SEC + 3600);
        harness_control(f->h, other);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "suspend", "--pm-test=devices", "--wake-after=5"), ==, 1);
        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        expect_finished(f->h, cycle, "failed", "the kernel refused to arm the RTC wake alarm");
        g_assert_true(harness_wait_logind_line(f->h, "prepare-for-sleep false", 20000));
        const char *const order[] = { "power/pm_test devices ok", "class/rtc/rtc0/wakealarm +5 EBUSY",
                                      "power/state mem ok", "power/pm_test none ok", NULL };
        assert_fakesys_sequence(f, order);
        g_autofree char *log = harness_fakesys_log(f->h);
        g_assert_null(strstr(log, "wakealarm 0")); /* not ours to clear */
}

/* A rehearsal stays one when its cycle ends before the state write: logind
 * was asked, and systemd-sleep writes the state whatever fridge's pre
 * answers. The level goes back once the post says that sleep is over. */
static void test_logind_pm_test_kept_after_cancel(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        harness_control(f->h, "set power/pm_test " PM_TEST_BEFORE);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, "pm-test", "s", "devices", NULL), ==, 0);
        /* the pre has joined: the cycle froze a.service and flushes again */
        g_assert_true(harness_wait_property_signal(f->h, "Phase", "flush-again", 20000));
        g_autofree char *cerr = NULL, *cmsg = NULL;
        g_assert_cmpint(harness_cancel(f->h, cycle, &cerr, &cmsg), ==, 0);
        expect_finished(f->h, cycle, "aborted", NULL);
        harness_slowfs_release(f->h);
        g_assert_true(harness_wait_logind_line(f->h, "prepare-for-sleep false", 20000));
        const char *const order[] = { "power/pm_test devices ok", "power/state mem ok", "power/pm_test freezer ok",
                                      NULL };
        assert_fakesys_sequence(f, order);
        harness_assert_sys(f->h, "power/pm_test", PM_TEST_BEFORE);
        g_autofree char *record = g_build_filename(f->h->dir, "state", "kernel", NULL);
        g_assert_false(g_file_test(record, G_FILE_TEST_EXISTS));
        g_autofree char *flog = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &flog, NULL, NULL));
        g_assert_nonnull(strstr(flog, "/sys/power/pm_test stays devices until that sleep is over"));
}

/* pm_test goes in before logind is asked: refused (the level vanished
 * after Sleep checked it), nothing sleeps, where from the pre systemd-sleep
 * would have slept for real */
static void test_logind_pm_test_refused(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        /* a delay inhibitor holds the cycle in prepare while the level goes:
         * the kernel's change cannot race the cycle's write */
        int delay = take_inhibitor(f->h, false, "holder", "delay");
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, "pm-test", "s", "devices", NULL), ==, 0);
        g_assert_true(harness_wait_property_signal(f->h, "Phase", "prepare", 10000));
        harness_control(f->h, "set power/pm_test [none] core processors platform freezer");
        close(delay);
        expect_finished(f->h, cycle, "failed", "the kernel refused to set pm_test devices");
        g_autofree char *log = harness_logind_log(f->h);
        g_assert_null(strstr(log, "sleep suspend"));
        g_assert_false(fakesys_wrote_state(f->h));
}

/* ---- a crash on logind's path ---- */

static void assert_knobs_as_before(Harness *h) {
        harness_assert_sys(h, "power/pm_test", PM_TEST_BEFORE);
        harness_assert_sys(h, "power/mem_sleep", MEM_SLEEP_BEFORE);
        harness_assert_sys(h, "class/rtc/rtc0/wakealarm", "");
}

/* fridged --thaw-all, as ExecStopPost= runs it after the kill; never
 * without --sysfs-root: its default is the host's */
static void run_thaw_all(Fixture *f) {
        g_autofree char *state = g_strdup_printf("--state-dir=%s/state", f->h->dir);
        g_autofree char *sys = g_strdup_printf("--sysfs-root=%s", f->h->root);
        g_autofree char *cg = g_strdup_printf("--cgroup-root=%s", f->p.s->mount);
        char *argv[] = { (char *) harness_env("FRIDGED"), (char *) "--thaw-all", state, sys, cg, NULL };
        g_autofree char *out = NULL;
        int status = harness_run(argv, 30000, &out);
        g_test_message("fridged --thaw-all: %s", out ? out : "");
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

/* fridged is SIGKILLed while logind's sleep is held in a write of
 * systemd-sleep's (fakesys holds `held`): at handed-over (its mode write,
 * before the pre: pm_test set) or at hook-sleeping (its state write, after
 * the pre: pm_test, mem_sleep and the alarm set). The next start, or
 * --thaw-all before it, puts the knobs back as they were before the cycle. */
static void logind_crash(Fixture *f, const char *held, bool thaw_all) {
        SKIP_IF_UNSET(f);
        bool frozen = g_str_equal(held, "power/state");
        harness_control(f->h, "set power/pm_test " PM_TEST_BEFORE);
        g_autofree char *hold = g_strdup_printf("hold-write %s", held);
        harness_control(f->h, hold);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(f->h, "suspend", &cycle, &err, &msg, "pm-test", "s", "devices", "mem-sleep", "s", "s2idle",
                          "wake-after-sec", "u", 300, NULL) < 0)
                g_error("Sleep: %s: %s", err, msg);
        g_assert_true(harness_wait_logind_line(f->h, frozen ? "hook pre suspend 0" : "delay-done 0-left", 20000));
        harness_assert_sys(f->h, "power/pm_test", "none core processors platform [devices] freezer");
        if (frozen) {
                harness_assert_sys(f->h, "power/mem_sleep", "[s2idle] deep");
                g_autofree char *alarm = harness_read_sys(f->h, "class/rtc/rtc0/wakealarm");
                g_assert_cmpstr(g_strstrip(alarm), !=, "");
        }
        assert_frozen(f, frozen);

        harness_kill_fridged(f->h, SIGKILL);
        g_autofree char *release = g_strdup_printf("release-write %s", held);
        harness_control(f->h, release);
        /* systemd-sleep goes on without fridged; the dead one put nothing back */
        g_assert_true(harness_wait_logind_line(f->h, "prepare-for-sleep false", 20000));
        harness_assert_sys(f->h, "power/pm_test", "none core processors platform [devices] freezer");

        if (thaw_all) { /* on its own, before any restart */
                run_thaw_all(f);
                assert_knobs_as_before(f->h);
                assert_frozen(f, false);
        }
        harness_restart_fridged(f->h);
        expect_finished(f->h, cycle, "failed", "during phase");
        assert_knobs_as_before(f->h);
        assert_frozen(f, false);
}

static void test_logind_crash_handed_over_restart(Fixture *f, gconstpointer data) {
        logind_crash(f, "power/mem_sleep", false);
}

static void test_logind_crash_handed_over_thaw_all(Fixture *f, gconstpointer data) {
        logind_crash(f, "power/mem_sleep", true);
}

static void test_logind_crash_hook_sleeping_restart(Fixture *f, gconstpointer data) {
        logind_crash(f, "power/state", false);
}

static void test_logind_crash_hook_sleeping_thaw_all(Fixture *f, gconstpointer data) {
        logind_crash(f, "power/state", true);
}

static void test_direct_bypasses_logind(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "suspend", "--pm-test=devices", NULL), ==, 0);
        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        expect_finished(f->h, cycle, "done", NULL);
        g_autofree char *log = harness_logind_log(f->h);
        g_assert_null(strstr(log, "sleep suspend"));
        const char *const order[] = { "power/pm_test devices ok", "power/state mem ok", "power/pm_test none ok", NULL };
        assert_fakesys_sequence(f, order);
}

int main(int argc, char **argv) {
        static const CaseOptions plain = {}, scratch = { .scratch = true },
                short_bound = { .scratch = true, .config = "[Sleep]\nHookTimeoutMs=5000\n" },
                logind = { .scratch = true, .logind = true },
                driver_logind = { .config = "[Sleep]\nDriver=logind\n" },
                logind_plain = { .logind = true },
                logind_stall = { .scratch = true, .logind = true, .slowfs = true,
                                 .config = "[Flush]\nTimeoutMs=2000\nOnTimeout=continue\n" },
                mem_sleep_s2idle = { .config = "[Sleep]\nMemSleep=s2idle\n" },
                logind_mem_sleep = { .logind = true, .sleep_conf = "[Sleep]\nMemorySleepMode=deep\n" },
                logind_freeze = { .logind = true, .sleep_conf = "[Sleep]\nSuspendState=freeze\n" },
                logind_direct = { .logind = true, .config = "[Sleep]\nDriver=direct\n" },
                logind_crash = { .scratch = true, .logind = true, .sleep_conf = "[Sleep]\nMemorySleepMode=deep\n" };
        g_test_init(&argc, &argv, NULL);
#define ADD(name, fn, o) g_test_add("/hook/" name, Fixture, &o, setup, fn, teardown)
        ADD("pre-post-nothing-frozen", test_pre_post_nothing_frozen, plain);
        ADD("pre-post-freezes", test_pre_post_freezes, scratch);
        ADD("pre-root-already-frozen", test_pre_root_already_frozen, scratch);
        ADD("resumed-wake-reason", test_resumed_wake_reason, plain);
        ADD("post-without-pre", test_post_without_pre, plain);
        ADD("post-never-comes", test_post_never_comes, short_bound);
        ADD("pre-busy", test_pre_busy, plain);
        ADD("pre-sets-configured-mem-sleep", test_pre_sets_configured_mem_sleep, mem_sleep_s2idle);
        ADD("script-always-exits-0", test_script_always_exits_0, scratch);
        ADD("logind-sleep-one-cycle", test_logind_sleep_one_cycle, logind);
        ADD("logind-third-party-suspend", test_logind_third_party_suspend, logind);
        ADD("logind-block-inhibitor", test_logind_block_inhibitor, logind);
        ADD("auto-without-logind-is-direct", test_auto_without_logind_is_direct, plain);
        ADD("logind-driver-without-logind", test_logind_driver_without_logind, driver_logind);
        ADD("logind-pm-test", test_logind_pm_test, logind_plain);
        ADD("logind-mem-sleep-after-systemd", test_logind_mem_sleep_after_systemd, logind_mem_sleep);
        ADD("logind-wake-after", test_logind_wake_after, logind_plain);
        ADD("logind-suspend-state-conflict", test_logind_suspend_state_conflict, logind_freeze);
        ADD("logind-knob-refused", test_logind_knob_refused, logind_plain);
        ADD("logind-pm-test-refused", test_logind_pm_test_refused, logind_plain);
        ADD("logind-pm-test-kept-after-cancel", test_logind_pm_test_kept_after_cancel, logind_stall);
        ADD("logind-direct-bypasses", test_direct_bypasses_logind, logind_direct);
        ADD("logind-crash-handed-over-restart", test_logind_crash_handed_over_restart, logind_crash);
        ADD("logind-crash-handed-over-thaw-all", test_logind_crash_handed_over_thaw_all, logind_crash);
        ADD("logind-crash-hook-sleeping-restart", test_logind_crash_hook_sleeping_restart, logind_crash);
        ADD("logind-crash-hook-sleeping-thaw-all", test_logind_crash_hook_sleeping_thaw_all, logind_crash);
#undef ADD
        return g_test_run();
}
