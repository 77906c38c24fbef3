/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Staged freezing on the real cgroup v2 freezer: scratch cgroups with real
 * processes under a scratch freeze root, the real fridged on a private bus,
 * fakesys as the kernel. Every scratch cgroup is thawed and removed at the
 * end whatever happens (scratch.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "fridge-config.h"
#include "freeze-fixture.h"

/* ---- the plan ---- */

static void test_plan_classes(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        int ia, ib, ic;
        const PlanRow *a = freeze_plan_find(rows, f->a, &ia), *b = freeze_plan_find(rows, f->b, &ib), *c = freeze_plan_find(rows, f->c, &ic);

        g_assert_cmpstr(a->class, ==, "early");
        g_assert_cmpstr(a->reason, ==, "default");
        g_assert_cmpstr(a->unit, ==, "a.service");
        g_assert_cmpstr(b->class, ==, "late");
        g_assert_nonnull(strstr(b->reason, "classes.d/test.conf:2"));
        g_assert_cmpstr(c->class, ==, "nofreeze");
        g_assert_nonnull(strstr(c->reason, "classes.d/test.conf:4"));
        /* freeze order: early, then late, then what is never frozen */
        g_assert_cmpint(ia, <, ib);
        g_assert_cmpint(ib, <, ic);

        /* fridgectl shows the same plan, as JSON for scripts and as a table */
        const char *fridgectl = harness_env("FRIDGECTL");
        if (!fridgectl)
                return;
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", f->h->bus_address);
        char *json_argv[] = { (char *) fridgectl, addr, (char *) "--json", (char *) "plan", NULL };
        g_autofree char *json = NULL;
        g_assert_cmpint(harness_run(json_argv, 10000, &json), ==, 0);
        g_strstrip(json);
        g_assert_true(g_str_has_prefix(json, "[{") && g_str_has_suffix(json, "}]"));
        g_autofree char *b_json = g_strdup_printf("{\"cgroup\":\"%s\",\"unit\":\"b.service\",\"class\":\"late\"",
                                                  f->b);
        g_assert_nonnull(strstr(json, b_json));

        char *text_argv[] = { (char *) fridgectl, addr, (char *) "plan", NULL };
        g_autofree char *text = NULL;
        g_assert_cmpint(harness_run(text_argv, 10000, &text), ==, 0);
        g_assert_true(g_str_has_prefix(text, "CGROUP"));
        g_assert_nonnull(strstr(text, "1 early, 1 late, 1 never frozen"));
}

static void test_plan_detects_fuse_server(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *slowfs = harness_env("SLOWFS");
        if (!slowfs) {
                g_test_skip("SLOWFS is not set");
                return;
        }
        const char *d = scratch_add(f->s, "d.service");
        const char *mnt = f->fuse_mount = g_build_filename(f->h->dir, "fusemnt", NULL);
        g_assert_cmpint(g_mkdir(mnt, 0755), ==, 0);
        char *argv[] = { (char *) slowfs, (char *) mnt, NULL };
        pid_t server = scratch_spawn(f->s, d, argv);
        freeze_wait_fuse_mount(f);

        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        const PlanRow *row = freeze_plan_find(rows, d, NULL);
        g_test_message("d.service: %s (%s)", row->class, row->reason);
        g_assert_cmpstr(row->class, ==, "late");
        g_assert_nonnull(strstr(row->reason, "FUSE"));
        g_assert_nonnull(strstr(row->reason, mnt));

        freeze_fuse_unmount(f, server);
}

/* A process in `cgroup` holding /dev/fuse open, as uid 65534 when
 * `as_nobody` (root opens it: /dev/fuse may be root's alone); returns once
 * it holds it (it is then "sleep") */
static pid_t spawn_fuse_holder(Fixture *f, const char *cgroup, bool as_nobody) {
        char *holder[] = { (char *) "sh", (char *) "-c",
                           as_nobody ? (char *) "exec 3<>/dev/fuse; exec setpriv --reuid=65534 --regid=65534 "
                                                "--clear-groups -- sleep 1000"
                                     : (char *) "exec 3<>/dev/fuse; exec sleep 1000",
                           NULL };
        pid_t pid = scratch_spawn(f->s, cgroup, holder);
        g_autofree char *fd3 = g_strdup_printf("/proc/%d/fd/3", (int) pid);
        g_autofree char *comm_path = g_strdup_printf("/proc/%d/comm", (int) pid);
        for (int i = 0; i < 500; i++) { /* bounded wait for the exec */
                g_autofree char *target = g_file_read_link(fd3, NULL);
                g_autofree char *comm = NULL;
                if (target && g_str_equal(target, "/dev/fuse") && g_file_get_contents(comm_path, &comm, NULL, NULL) &&
                    g_str_equal(g_strstrip(comm), "sleep"))
                        return pid;
                g_usleep(10000);
        }
        g_error("pid %d did not come to hold /dev/fuse", (int) pid);
}

/* GetPlan names a process (pid, command, mount point) to its owner and to
 * root; anyone else reads pid 0 and [hidden] */
static void test_plan_hides_other_users(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *theirs = scratch_add(f->s, "nobody-fuse.service");
        const char *roots = scratch_add(f->s, "root-fuse.service");
        pid_t nobody_pid = spawn_fuse_holder(f, theirs, true);
        pid_t root_pid = spawn_fuse_holder(f, roots, false);
        g_autofree char *nobody_named = g_strdup_printf("FUSE server sleep (pid %d)", (int) nobody_pid);
        g_autofree char *root_named = g_strdup_printf("FUSE server sleep (pid %d)", (int) root_pid);
        g_autofree char *root_pid_text = g_strdup_printf("(pid %d)", (int) root_pid);

        /* root reads all */
        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        g_assert_cmpstr(freeze_plan_find(rows, theirs, NULL)->reason, ==, nobody_named);
        g_assert_cmpstr(freeze_plan_find(rows, roots, NULL)->reason, ==, root_named);

        /* nobody reads its own process, not root's */
        g_autofree char *json = NULL, *text = NULL;
        const char *const as_json[] = { "--json", "plan", NULL };
        const char *const as_text[] = { "plan", NULL };
        g_assert_cmpint(harness_fridgectl_nobody_exit(f->h, &json, as_json), ==, 0);
        g_assert_nonnull(strstr(json, nobody_named));
        g_assert_nonnull(strstr(json, "FUSE server " FRIDGE_PLAN_HIDDEN " (pid 0)"));
        g_assert_null(strstr(json, root_pid_text));
        g_assert_cmpint(harness_fridgectl_nobody_exit(f->h, &text, as_text), ==, 0);
        g_assert_nonnull(strstr(text, "another user's"));
        g_assert_null(strstr(text, root_pid_text));
}

/* An empty cgroup (cgroup.events: populated 0) has no processes read; once
 * a FUSE server enters it, the next plan reads them and classes it late. */
static void test_plan_notices_process_in_empty_cgroup(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *slice = scratch_add(f->s, "e.slice");
        const char *e = scratch_add_in(f->s, slice, "e.service");
        g_autoptr(GPtrArray) before = freeze_get_plan(f->h);
        const PlanRow *row = freeze_plan_find(before, slice, NULL);
        g_assert_cmpstr(row->class, ==, "early");
        g_assert_cmpstr(row->reason, ==, "default");

        pid_t pid = spawn_fuse_holder(f, e, false);
        g_autofree char *named = g_strdup_printf("FUSE server sleep (pid %d)", (int) pid);
        g_autoptr(GPtrArray) after = freeze_get_plan(f->h);
        row = freeze_plan_find(after, slice, NULL); /* e.service alone in it: one entry */
        g_test_message("%s: %s (%s)", row->cgroup, row->class, row->reason);
        g_assert_cmpstr(row->class, ==, "late");
        g_assert_nonnull(strstr(row->reason, named));
}

/* ---- cycles ---- */

static void test_cycle_freezes_in_order(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        harness_control(f->h, "sleep-ms 1500");
        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", NULL, NULL, 0);
        g_assert_true(harness_wait_log_line(f->h, "power/state mem sleeping", 10000));

        /* while the kernel sleeps: early and late frozen, nofreeze running */
        g_assert_true(scratch_is_frozen(f->s, f->a));
        g_assert_true(scratch_is_frozen(f->s, f->b));
        g_assert_false(scratch_is_frozen(f->s, f->c));

        /* the writer was frozen too: its file did not grow while we slept */
        g_autofree char *before = NULL, *after = NULL;
        g_assert_true(g_file_get_contents(f->writer_file, &before, NULL, NULL));
        g_usleep(100000);
        g_assert_true(g_file_get_contents(f->writer_file, &after, NULL, NULL));
        g_assert_cmpuint(strlen(before), ==, strlen(after));

        freeze_expect_finished(f->h, cycle, "done", "");
        freeze_assert_none_frozen(f);

        /* early before the second flush, late after it */
        g_autofree char *log = freeze_fridged_log(f->h);
        gsize early = freeze_log_pos(log, "early stage frozen");
        gsize again = freeze_log_pos(log, "phase flush-again");
        gsize late = freeze_log_pos(log, "late stage frozen");
        g_assert_cmpuint(early, <, again);
        g_assert_cmpuint(again, <, late);
        g_assert_cmpuint(late, <, freeze_log_pos(log, "thawed 2 cgroups in"));
        /* how long the desktop stayed frozen after the resume */
        freeze_log_pos(log, "ms after the resume");
}

/* fridged's open fds that lead to `dir` or below it */
static unsigned fds_below(pid_t pid, const char *dir) {
        g_autofree char *fd_dir = g_strdup_printf("/proc/%d/fd", (int) pid);
        g_autoptr(GDir) d = g_dir_open(fd_dir, 0, NULL);
        g_assert_nonnull(d);
        unsigned n = 0;
        for (const char *name; (name = g_dir_read_name(d));) {
                g_autofree char *link = g_build_filename(fd_dir, name, NULL);
                g_autofree char *target = g_file_read_link(link, NULL);
                n += target && (g_str_equal(target, dir) || g_str_has_prefix(target, dir));
        }
        return n;
}

/* Found by the soak (fds of an idle fridged followed its last cycle): the
 * last stage's cgroups stayed open until the next cycle, pinning each
 * (one removed meanwhile lingered as a dying cgroup) */
static void test_idle_holds_no_stage_cgroup(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", NULL, NULL, 0);
        freeze_expect_finished(f->h, cycle, "done", "");
        freeze_assert_none_frozen(f);
        g_autofree char *a = scratch_abs(f->s, f->a);
        g_autofree char *b = scratch_abs(f->s, f->b);
        g_assert_cmpuint(fds_below(f->h->fridged_pid, a), ==, 0);
        g_assert_cmpuint(fds_below(f->h->fridged_pid, b), ==, 0);
}

static void test_dry_run_thaws(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", "dry-run", "b", 1);
        freeze_expect_finished(f->h, cycle, "dry-run", "");
        freeze_assert_none_frozen(f);
        g_autofree char *log = freeze_fridged_log(f->h);
        freeze_log_pos(log, "late stage frozen");
        freeze_log_pos(log, "thawed 2 cgroups");
}

/* After the resume the thaw comes first: the knobs are put back, the wake
 * reason read and the record written after it. The knob's restore (the
 * mem_sleep the cycle changed) is held in the simulated kernel: the
 * cgroups must thaw meanwhile (before, they stayed frozen until it came). */
static void test_resume_thaws_first(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        harness_control(f->h, "hold-write power/state");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(f->h, "suspend", &cycle, &err, &msg, "mem-sleep", "s", "s2idle", NULL) < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        g_assert_true(harness_wait_log_line(f->h, "power/wakeup_count 0 ok", 10000)); /* the last before the state */
        g_assert_true(scratch_is_frozen(f->s, f->a));
        harness_control(f->h, "hold-write power/mem_sleep\nrelease-write power/state");

        bool thawed = false;
        for (int i = 0; i < 1000 && !thawed; i++) {
                thawed = !scratch_is_frozen(f->s, f->a) && !scratch_is_frozen(f->s, f->b);
                if (!thawed)
                        g_usleep(10000);
        }
        g_assert_true(thawed);
        harness_assert_sys(f->h, "power/mem_sleep", "[s2idle] deep"); /* not put back yet */
        g_autofree char *state = harness_get_string(f->h, "State");
        g_assert_cmpstr(state, ==, "sleeping");

        harness_control(f->h, "release-write power/mem_sleep");
        freeze_expect_finished(f->h, cycle, "done", "");
        harness_assert_sys(f->h, "power/mem_sleep", "s2idle [deep]");
        g_autofree char *log = freeze_fridged_log(f->h);
        g_assert_cmpuint(freeze_log_pos(log, "ms after the resume"), <, freeze_log_pos(log, "resumed after"));
}

static void test_failed_thaws(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        harness_control(f->h, "fail-state EBUSY");
        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", NULL, NULL, 0);
        freeze_expect_finished(f->h, cycle, "failed", FRIDGE_INTERFACE ".Error.Kernel");
        freeze_assert_none_frozen(f);
        g_autofree char *log = freeze_fridged_log(f->h);
        freeze_log_pos(log, "thawed 2 cgroups");
        g_assert_null(strstr(log, "after the resume")); /* there was none */
}

/* TuxOnIce gave up (no storage, last_result 0x5): everything thaws */
static void test_tuxonice_failed_thaws(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        harness_control(f->h, "toi-fail-result 0x5");
        uint64_t cycle = freeze_sleep_ok(f->h, "hibernate", NULL, NULL, 0);
        freeze_expect_finished(f->h, cycle, "failed", FRIDGE_INTERFACE ".Error.Kernel");
        freeze_assert_none_frozen(f);
        g_autofree char *log = freeze_fridged_log(f->h);
        freeze_log_pos(log, "late stage frozen");
        freeze_log_pos(log, "TOI_NOSTORAGE_AVAILABLE");
        freeze_log_pos(log, "thawed 2 cgroups");
}

static void test_client_never_frozen(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *fridgectl = harness_env("FRIDGECTL");
        if (!fridgectl) {
                g_test_skip("FRIDGECTL is not set");
                return;
        }
        const char *client = scratch_add(f->s, "client.scope");
        harness_control(f->h, "sleep-ms 1500");
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", f->h->bus_address);
        char *argv[] = { (char *) fridgectl, addr, (char *) "--no-progress", (char *) "suspend", NULL };
        pid_t pid = scratch_spawn(f->s, client, argv);

        g_assert_true(harness_wait_log_line(f->h, "power/state mem sleeping", 10000));
        g_assert_true(scratch_is_frozen(f->s, f->a));
        g_assert_false(scratch_is_frozen(f->s, client));

        int status = harness_wait_pid(pid, 20000);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        freeze_assert_none_frozen(f);
}

/* `unreadable`: the saved kernel settings cannot be read (a directory in
 * their place): --thaw-all says so in its status but thaws all the same */
static void thaw_all_after_sigkill(Fixture *f, bool unreadable) {
        SKIP_IF_UNSET(f);
        harness_control(f->h, "sleep-ms 30000");
        (void) freeze_sleep_ok(f->h, "suspend", NULL, NULL, 0);
        g_assert_true(harness_wait_log_line(f->h, "power/state mem sleeping", 10000));
        g_assert_true(scratch_is_frozen(f->s, f->a));

        /* fridged dies with cgroups frozen: nothing thaws them but the ledger */
        g_assert_cmpint(kill(f->h->fridged_pid, SIGKILL), ==, 0);
        (void) harness_wait_pid(f->h->fridged_pid, 10000);
        f->h->fridged_pid = 0;
        harness_control(f->h, "wakeup");
        g_assert_true(scratch_is_frozen(f->s, f->a));
        g_assert_true(scratch_is_frozen(f->s, f->b));

        g_autofree char *saved = g_strdup_printf("%s/state/kernel", f->h->dir);
        if (unreadable) {
                g_assert_no_errno(g_unlink(saved));
                g_assert_no_errno(g_mkdir(saved, 0755));
        }
        g_autofree char *state = g_strdup_printf("--state-dir=%s/state", f->h->dir);
        g_autofree char *root = g_strdup_printf("--cgroup-root=%s", f->s->mount);
        g_autofree char *sys = g_strdup_printf("--sysfs-root=%s", f->h->root);
        char *argv[] = { (char *) harness_env("FRIDGED"), (char *) "--thaw-all", state, root, sys, NULL };
        int status = harness_run(argv, 10000, NULL);
        freeze_assert_none_frozen(f);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, unreadable ? 1 : 0);
        if (unreadable)
                g_assert_no_errno(g_rmdir(saved));

        g_autofree char *ledger = g_strdup_printf("%s/state/frozen", f->h->dir);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(ledger, &text, NULL, NULL));
        g_assert_cmpstr(text, ==, "");
}

static void test_thaw_all_after_sigkill(Fixture *f, gconstpointer data) {
        thaw_all_after_sigkill(f, false);
}

static void test_thaw_all_unreadable_settings(Fixture *f, gconstpointer data) {
        thaw_all_after_sigkill(f, true);
}

/* ---- SetClass ---- */

static void set_class(Harness *h, const char *target, const char *class, const char *want_error) {
        g_autofree char *err = NULL, *msg = NULL;
        int r = harness_call(h, FRIDGE_INTERFACE, "SetClass", NULL, &err, &msg, "ss", target, class);
        if (!want_error && r < 0)
                g_error("SetClass(%s, %s) failed: %s: %s", target, class, err, msg);
        if (want_error && (r >= 0 || !g_str_equal(err, want_error)))
                g_error("SetClass(%s, %s): expected %s, got %s: %s", target, class, want_error,
                        r >= 0 ? "success" : err, r >= 0 ? "" : msg);
        if (want_error && !strstr(msg, "unit_or_cgroup") && !strstr(msg, "class"))
                g_error("SetClass error message does not name the argument: %s", msg);
}

static void test_set_class(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        set_class(f->h, f->a, "nofreeze", NULL);
        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        const PlanRow *a = freeze_plan_find(rows, f->a, NULL);
        g_assert_cmpstr(a->class, ==, "nofreeze");
        g_assert_nonnull(strstr(a->reason, "SetClass"));

        set_class(f->h, "a.service", "late", NULL); /* a unit name */
        set_class(f->h, f->a, "", NULL);             /* the path override goes; the unit one applies */
        g_autoptr(GPtrArray) rows2 = freeze_get_plan(f->h);
        g_assert_cmpstr(freeze_plan_find(rows2, f->a, NULL)->class, ==, "late");

        g_autofree char *dotdot = g_strdup_printf("%s/../x", f->s->root);
        g_autofree char *absolute = g_strdup_printf("/%s", f->a);
        const char *const err = "org.freedesktop.DBus.Error.InvalidArgs";
        set_class(f->h, dotdot, "late", err);
        set_class(f->h, absolute, "late", err);
        set_class(f->h, "system.slice/sshd.service", "late", err);  /* outside the roots */
        set_class(f->h, f->a, "bogus", err);
        set_class(f->h, "a b.service", "late", err);

        /* an ancestor's runtime class outranks the classes.d rules below it:
         * b.service's [Late] rule yields, the whole root is one nofreeze entry */
        set_class(f->h, "a.service", "", NULL);
        set_class(f->h, f->s->root, "nofreeze", NULL);
        g_autoptr(GPtrArray) rows3 = freeze_get_plan(f->h);
        const PlanRow *root = freeze_plan_find(rows3, f->s->root, NULL);
        g_assert_cmpstr(root->class, ==, "nofreeze");
        g_assert_nonnull(strstr(root->reason, "SetClass"));
        for (guint i = 0; i < rows3->len; i++)
                g_assert_cmpstr(((PlanRow *) rows3->pdata[i])->cgroup, !=, f->b);

        /* bad who/why strings never reach the log */
        g_autofree char *herr = NULL, *hmsg = NULL;
        g_assert_cmpint(harness_call(f->h, FRIDGE_INTERFACE, "HoldClass", NULL, &herr, &hmsg, "sss", "late",
                                     "x\nForged: line", "why"), <, 0);
        g_assert_cmpstr(herr, ==, err);
}

static void test_bad_classes_file(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *log = freeze_fridged_log(f->h);
        /* reported with path and line, skipped; the rest works */
        freeze_log_pos(log, "classes.d/test.conf:3");
        /* without the file every scratch cgroup is early: one entry at the root */
        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        g_assert_cmpstr(freeze_plan_find(rows, f->s->root, NULL)->class, ==, "early");
        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", "dry-run", "b", 1);
        freeze_expect_finished(f->h, cycle, "dry-run", "");
        freeze_assert_none_frozen(f);
}

/* ---- HoldClass ---- */

typedef struct Holder {
        pid_t pid;
        int to_child;   /* 'c': close the fd and report; 'x': exit */
        int from_child; /* result lines */
} Holder;

static void holder_child(const char *procs, const char *address, const char *class, int in, int out) {
        sd_bus *bus = NULL;
        sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int fd = -1, dup_fd = -1;
        char cmd;

        int cg = open(procs, O_WRONLY | O_CLOEXEC);
        if (cg < 0 || write(cg, "0", 1) != 1)
                _exit(80);
        close(cg);
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, address) < 0 || sd_bus_set_bus_client(bus, 1) < 0 ||
            sd_bus_start(bus) < 0)
                _exit(81);
        if (g_str_equal(class, "limit")) {
                /* 17 holds on one connection, all kept: the 17th must be refused */
                for (int i = 1; i <= 17; i++) {
                        if (sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                               "HoldClass", &error, &reply, "sss", "late", "many", "") < 0) {
                                dprintf(out, "err%d %s\n", i, error.name);
                                _exit(0);
                        }
                        if (sd_bus_message_read(reply, "h", &fd) < 0 || fcntl(fd, F_DUPFD_CLOEXEC, 3) < 0)
                                _exit(83);
                        reply = sd_bus_message_unref(reply);
                }
                dprintf(out, "ok\n");
                _exit(0);
        }
        if (sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "HoldClass", &error,
                               &reply, "sss", class, "backup", "nightly") < 0) {
                dprintf(out, "err %s\n", error.name);
                _exit(0);
        }
        if (sd_bus_message_read(reply, "h", &fd) < 0 || (dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
                _exit(82);
        sd_bus_message_unref(reply);
        dprintf(out, "ok\n");
        while (read(in, &cmd, 1) == 1) {
                if (cmd == 'c') {
                        close(dup_fd);
                        dprintf(out, "closed\n");
                } else
                        _exit(0); /* the connection and the fd go with the process */
        }
        _exit(0);
}

static Holder spawn_holder(Fixture *f, const char *cgroup, const char *class) {
        g_autofree char *dir = scratch_abs(f->s, cgroup);
        g_autofree char *procs = g_build_filename(dir, "cgroup.procs", NULL);
        int to[2], from[2];
        g_assert_cmpint(pipe2(to, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(from, O_CLOEXEC), ==, 0);
        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0)
                holder_child(procs, f->h->bus_address, class, to[0], from[1]);
        close(to[0]);
        close(from[1]);
        g_array_append_val(f->s->pids, pid); /* scratch_free ends it whatever happens */
        return (Holder) { .pid = pid, .to_child = to[1], .from_child = from[0] };
}

static char *holder_read(Holder *h) {
        char buf[256];
        ssize_t n = read(h->from_child, buf, sizeof(buf) - 1);
        g_assert_cmpint(n, >, 0);
        buf[n] = '\0';
        return g_strdup(g_strstrip(buf));
}

static bool plan_class_is(Harness *h, const char *cgroup, const char *class) {
        g_autoptr(GPtrArray) rows = freeze_get_plan(h);
        for (guint i = 0; i < rows->len; i++) {
                const PlanRow *r = rows->pdata[i];
                if (g_str_equal(r->cgroup, cgroup))
                        return g_str_equal(r->class, class);
        }
        return false;
}

/* The release is asynchronous (fridged sees the hang-up on its loop) */
static void wait_plan_class(Harness *h, const char *cgroup, const char *class) {
        for (int i = 0; i < 200 && !plan_class_is(h, cgroup, class); i++)
                g_usleep(10000);
        if (!plan_class_is(h, cgroup, class))
                g_error("%s did not become %s in the plan", cgroup, class);
}

static void test_hold_class(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *job = scratch_add(f->s, "backup.service");
        Holder h = spawn_holder(f, job, "late");
        g_autofree char *res = holder_read(&h);
        g_assert_cmpstr(res, ==, "ok");

        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        const PlanRow *row = freeze_plan_find(rows, job, NULL);
        g_assert_cmpstr(row->class, ==, "late");
        g_assert_nonnull(strstr(row->reason, "held by backup: nightly"));

        /* closing the fd ends the hold */
        g_assert_cmpint(write(h.to_child, "c", 1), ==, 1);
        g_autofree char *closed = holder_read(&h);
        g_assert_cmpstr(closed, ==, "closed");
        wait_plan_class(f->h, job, "early");

        /* so does the holder going away, connection and all */
        Holder h2 = spawn_holder(f, job, "nofreeze");
        g_autofree char *res2 = holder_read(&h2);
        g_assert_cmpstr(res2, ==, "ok");
        wait_plan_class(f->h, job, "nofreeze");
        g_assert_cmpint(write(h2.to_child, "x", 1), ==, 1);
        (void) waitpid(h2.pid, NULL, 0);
        wait_plan_class(f->h, job, "early");

        /* no caller holds more than 16 at once: each costs fridged an fd */
        Holder many = spawn_holder(f, job, "limit");
        g_autofree char *res4 = holder_read(&many);
        g_assert_cmpstr(res4, ==, "err17 org.freedesktop.DBus.Error.LimitsExceeded");
        close(many.to_child);
        close(many.from_child);

        Holder bad = spawn_holder(f, job, "sometimes");
        g_autofree char *res3 = holder_read(&bad);
        g_assert_cmpstr(res3, ==, "err org.freedesktop.DBus.Error.InvalidArgs");
        close(h.to_child);
        close(h.from_child);
        close(h2.to_child);
        close(h2.from_child);
        close(bad.to_child);
        close(bad.from_child);
}

/* ---- cancel and SIGTERM with cgroups frozen ---- */

/* The first flush times out and goes on (as configured); the second one is
 * held by slowfs, so the cycle waits in flush-again with early frozen. */
static uint64_t reach_flush_again_frozen(Fixture *f) {
        harness_slowfs_make_dirty(f->h, 1024 * 1024);
        harness_slowfs_hold(f->h);
        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", NULL, NULL, 0);
        g_assert_true(harness_wait_property_signal(f->h, "Phase", "flush-again", 15000));
        g_assert_true(scratch_is_frozen(f->s, f->a));
        g_assert_false(scratch_is_frozen(f->s, f->b)); /* late: not yet */
        return cycle;
}

static void test_cancel_thaws(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = reach_flush_again_frozen(f);
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_cancel(f->h, 0, &err, &msg), ==, 0);
        freeze_expect_finished(f->h, cycle, "aborted", FRIDGE_INTERFACE ".Error.Cancelled");
        freeze_assert_none_frozen(f);
        harness_slowfs_release(f->h);
}

static void test_sigterm_thaws(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = reach_flush_again_frozen(f);
        g_assert_cmpint(kill(f->h->fridged_pid, SIGTERM), ==, 0);
        /* fridged thaws before it exits (its flush thread may still be held) */
        for (int i = 0; i < 500 && scratch_is_frozen(f->s, f->a); i++)
                g_usleep(10000);
        freeze_assert_none_frozen(f);
        g_autofree char *res = NULL, *error = NULL;
        g_assert_true(harness_wait_finished(f->h, cycle, 5000, &res, &error, NULL));
        g_assert_cmpstr(res, ==, "aborted");
        harness_slowfs_release(f->h);
}

/* ---- fridgectl hold ---- */

static void test_fridgectl_hold(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *fridgectl = harness_env("FRIDGECTL");
        if (!fridgectl) {
                g_test_skip("FRIDGECTL is not set");
                return;
        }
        const char *job = scratch_add(f->s, "job.scope");
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", f->h->bus_address);
        char *argv[] = { (char *) fridgectl, addr, (char *) "hold", (char *) "late", (char *) "--who=nightly",
                         (char *) "--", (char *) "sleep", (char *) "30", NULL };
        pid_t pid = scratch_spawn(f->s, job, argv);
        wait_plan_class(f->h, job, "late");
        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        g_assert_nonnull(strstr(freeze_plan_find(rows, job, NULL)->reason, "held by nightly"));

        /* fridgectl passes SIGTERM on to the command; when it ends, so does the hold */
        g_assert_cmpint(kill(pid, SIGTERM), ==, 0);
        int status = harness_wait_pid(pid, 10000);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 128 + SIGTERM);
        wait_plan_class(f->h, job, "early");
}

/* ---- fridged inside a freeze root ---- */

/* cgroupfs takes plain writes only (no temporary file and rename) */
static void write_procs(const char *dir, pid_t pid) {
        g_autofree char *procs = g_build_filename(dir, "cgroup.procs", NULL);
        g_autofree char *text = g_strdup_printf("%d", (int) pid);
        int fd = open(procs, O_WRONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, text, strlen(text)), ==, (ssize_t) strlen(text));
        close(fd);
}

static void test_never_freezes_itself(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        /* not a built-in name: only fridged's lookup of its own cgroup can exempt it */
        const char *own = scratch_add(f->s, "daemon.scope");
        g_autofree char *dir = scratch_abs(f->s, own);
        write_procs(dir, f->h->fridged_pid);

        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        const PlanRow *row = freeze_plan_find(rows, own, NULL);
        g_assert_cmpstr(row->class, ==, "nofreeze");
        g_assert_cmpstr(row->reason, ==, "fridged itself");

        harness_control(f->h, "sleep-ms 1500");
        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", NULL, NULL, 0);
        g_assert_true(harness_wait_log_line(f->h, "power/state mem sleeping", 10000));
        g_assert_true(scratch_is_frozen(f->s, f->a));
        g_assert_false(scratch_is_frozen(f->s, own));
        g_assert_false(scratch_is_frozen(f->s, f->s->root)); /* its ancestor: split, not frozen whole */
        freeze_expect_finished(f->h, cycle, "done", "");
        freeze_assert_none_frozen(f);

        /* back out, so the scratch cgroup can go when the test ends */
        write_procs(f->s->mount, f->h->fridged_pid);
}

static void test_never_freezes_the_bus(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        /* the private dbus-daemon moves into the freeze root, under a name
         * no rule knows: only fridged's lookup of the bus daemon's pid exempts it */
        const char *bus = scratch_add(f->s, "broker.scope");
        g_autofree char *dir = scratch_abs(f->s, bus);
        write_procs(dir, f->h->dbus_pid);

        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        const PlanRow *row = freeze_plan_find(rows, bus, NULL);
        g_assert_cmpstr(row->class, ==, "nofreeze");
        g_assert_cmpstr(row->reason, ==, "the bus daemon");

        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", "dry-run", "b", 1);
        freeze_expect_finished(f->h, cycle, "dry-run", ""); /* signals still arrive: the bus was not frozen */
        g_assert_false(scratch_is_frozen(f->s, bus));
        write_procs(f->s->mount, f->h->dbus_pid);
}

/* ---- trees of any depth, names of any bytes ---- */

/* A chain 200 deep whose bottom is mixed (so every level splits and the
 * deepest cgroup is written itself), a name that is not UTF-8, and
 * cgroups named like fridged's unit, the bus and a manager in the wrong
 * place: all planned, frozen and thawed as their classes say. */
static void test_deep_and_odd_names(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *level = scratch_add(f->s, "chain");
        for (int i = 1; i < 200; i++)
                level = scratch_add_in(f->s, level, "d");
        const char *deep = scratch_add_in(f->s, level, "deep.service");
        const char *kept = scratch_add_in(f->s, level, "c.service"); /* nofreeze by classes.d */
        const char *odd = scratch_add(f->s, "odd\xff\xfe.service");
        const char *impostors[] = { scratch_add(f->s, "fridged.service"), scratch_add(f->s, "dbus.service"),
                                    scratch_add(f->s, "init.scope") };
        const char *spawned[] = { deep, kept, odd, impostors[0], impostors[1], impostors[2] };
        for (size_t i = 0; i < G_N_ELEMENTS(spawned); i++)
                scratch_spawn(f->s, spawned[i], NULL);

        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        g_assert_cmpstr(freeze_plan_find(rows, deep, NULL)->class, ==, "early");
        g_assert_cmpstr(freeze_plan_find(rows, kept, NULL)->class, ==, "nofreeze");
        g_autofree char *odd_shown = g_strdup_printf("%s/odd\\xff\\xfe.service", f->s->root);
        g_assert_cmpstr(freeze_plan_find(rows, odd_shown, NULL)->class, ==, "early");
        for (size_t i = 0; i < G_N_ELEMENTS(impostors); i++) {
                const PlanRow *r = freeze_plan_find(rows, impostors[i], NULL);
                g_assert_cmpstr(r->class, ==, "early");
                g_assert_cmpstr(r->reason, ==, "default");
        }

        harness_control(f->h, "sleep-ms 1500");
        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", NULL, NULL, 0);
        g_assert_true(harness_wait_log_line(f->h, "power/state mem sleeping", 10000));
        g_assert_true(scratch_is_frozen(f->s, deep));
        g_assert_false(scratch_is_frozen(f->s, kept));
        g_assert_false(scratch_is_frozen(f->s, level));
        g_assert_true(scratch_is_frozen(f->s, odd));
        for (size_t i = 0; i < G_N_ELEMENTS(impostors); i++)
                g_assert_true(scratch_is_frozen(f->s, impostors[i]));
        freeze_expect_finished(f->h, cycle, "done", "");
        freeze_assert_none_frozen(f);
        g_assert_false(scratch_is_frozen(f->s, deep));
        g_assert_false(scratch_is_frozen(f->s, odd));
}

/* ---- restart ---- */

static void test_restart_thaws_from_ledger(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        harness_control(f->h, "sleep-ms 30000");
        (void) freeze_sleep_ok(f->h, "suspend", NULL, NULL, 0);
        g_assert_true(harness_wait_log_line(f->h, "power/state mem sleeping", 10000));
        g_assert_cmpint(kill(f->h->fridged_pid, SIGKILL), ==, 0);
        (void) harness_wait_pid(f->h->fridged_pid, 10000);
        f->h->fridged_pid = 0;
        harness_control(f->h, "wakeup");
        g_assert_true(scratch_is_frozen(f->s, f->a));

        /* a new fridged thaws what the old one left frozen, at start-up */
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", f->h->bus_address);
        g_autofree char *a_sys = g_strdup_printf("--sysfs-root=%s", f->h->root);
        g_autofree char *a_conf = g_strdup_printf("--config-dir=%s", f->h->conf_dir);
        g_autofree char *a_state = g_strdup_printf("--state-dir=%s/state", f->h->dir);
        g_autofree char *a_persistent = g_strdup_printf("--persistent-dir=%s/lib", f->h->dir);
        g_autofree char *a_vendor = g_strdup_printf("--vendor-dir=%s/vendor", f->h->dir);
        g_autofree char *a_root = g_strdup_printf("--config-root=%s/config-root", f->h->dir);
        char *argv[] = { (char *) harness_env("FRIDGED"), a_bus, a_sys, a_conf, a_state, a_persistent, a_vendor,
                         a_root, NULL };
        int out = -1;
        pid_t pid = harness_spawn_bg(argv, &out);
        for (int i = 0; i < 500 && (scratch_is_frozen(f->s, f->a) || scratch_is_frozen(f->s, f->b)); i++)
                g_usleep(10000);
        kill(pid, SIGTERM);
        int status = harness_wait_pid(pid, 10000);
        g_autofree char *text = harness_read_all(out);
        g_test_message("the second fridged printed: %s", text);
        g_assert_false(scratch_is_frozen(f->s, f->a));
        g_assert_false(scratch_is_frozen(f->s, f->b));
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
#define ADD(name, fn, data) g_test_add("/freeze/" name, Fixture, data, freeze_fixture_setup, fn, freeze_fixture_teardown)
        static const char *const tuxonice_args[] = { "--tuxonice", NULL };
        static const CaseOptions tuxonice = { .fakesys_args = tuxonice_args };
        static const CaseOptions open_bus = { .open_bus = true };
        ADD("plan-classes", test_plan_classes, NULL);
        ADD("plan-detects-fuse-server", test_plan_detects_fuse_server, NULL);
        ADD("plan-hides-other-users", test_plan_hides_other_users, &open_bus);
        ADD("plan-notices-process-in-empty-cgroup", test_plan_notices_process_in_empty_cgroup, NULL);
        ADD("cycle-freezes-in-order", test_cycle_freezes_in_order, NULL);
        ADD("dry-run-thaws", test_dry_run_thaws, NULL);
        ADD("resume-thaws-first", test_resume_thaws_first, NULL);
        ADD("idle-holds-no-stage-cgroup", test_idle_holds_no_stage_cgroup, NULL);
        ADD("failed-thaws", test_failed_thaws, NULL);
        ADD("tuxonice-failed-thaws", test_tuxonice_failed_thaws, &tuxonice);
        ADD("client-never-frozen", test_client_never_frozen, NULL);
        ADD("thaw-all-after-sigkill", test_thaw_all_after_sigkill, NULL);
        ADD("thaw-all-unreadable-settings", test_thaw_all_unreadable_settings, NULL);
        ADD("set-class", test_set_class, NULL);
        static const CaseOptions bad_file = { .classes = "[Late]\nUnits=b.service\nWhat=ever\n" };
        /* the held slowfs also holds the flush: go on after it, to reach the freeze */
        ADD("bad-classes-file", test_bad_classes_file, &bad_file);
        ADD("hold-class", test_hold_class, NULL);
        ADD("restart-thaws-from-ledger", test_restart_thaws_from_ledger, NULL);
        static const CaseOptions held_again = { .slowfs = true,
                                                .extra_config = "[Flush]\nTimeoutMs=1000\nOnTimeout=continue\n" };
        ADD("cancel-thaws", test_cancel_thaws, &held_again);
        ADD("sigterm-thaws", test_sigterm_thaws, &held_again);
        ADD("fridgectl-hold", test_fridgectl_hold, NULL);
        ADD("never-freezes-itself", test_never_freezes_itself, NULL);
        ADD("never-freezes-the-bus", test_never_freezes_the_bus, NULL);
        ADD("deep-and-odd-names", test_deep_and_odd_names, NULL);
        return g_test_run();
}
