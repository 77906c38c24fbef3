/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridge-agent on each desktop's terms, against mocks on a private session
 * bus (agent-fixture.h): the progress style each notification server's
 * name calls for (GNOME Shell's text bar, before 46 renewed on every
 * update; KDE's job view with its stop button), the user's style setting,
 * and the session's user interface held by its roles (HoldRole). The real
 * shells are test-shells.c's.
 */
#include <fcntl.h>
#include <gio/gio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent-fixture.h"
#include "fridge-config.h"
#include "harness-private.h"
#include "session-names.h"

#define JOBVIEW_NAME "org.kde.JobViewServer"
#define JOBVIEW_PATH "/JobViewServer"
#define JOB_PATH "/JobViewServer/JobView_1"

/* The notification server names itself as one of the desktops' does */
static void server_is(Fixture *f, const char *name, const char *vendor, const char *version) {
        g_autofree char *code = g_strdup_printf("ret = ('%s', '%s', '%s', '1.2')", name, vendor, version);
        fx_mock_call(f, NOTIFY_NAME, NOTIFY_PATH, "AddMethod",
                  g_variant_new("(sssss)", NOTIFY_NAME, "GetServerInformation", "", "ssss", code));
}

/* Plasma's job view server: requestView makes one org.kde.JobViewV2 whose
 * calls the mock records */
static void start_jobview_server(Fixture *f) {
        g_autofree char *log = g_build_filename(f->h->dir, "jobview-mock.log", NULL);
        char *argv[] = { PYTHON, "-m", "dbusmock", JOBVIEW_NAME, JOBVIEW_PATH, "org.kde.JobViewServer", NULL };
        f->jobview_pid = fx_spawn_logged(argv, fx_session_env(f), log, -1);
        fx_wait_name(f, JOBVIEW_NAME);
        const char *code = "ret = dbus.ObjectPath('" JOB_PATH "')\n"
                           "self.AddObject(ret, 'org.kde.JobViewV2', {}, ["
                           "('setPercent', 'u', '', ''), ('setInfoMessage', 's', '', ''), "
                           "('setDescriptionField', 'uss', 'b', 'ret = True'), ('clearDescriptionField', 'u', '', ''), "
                           "('setSuspended', 'b', '', ''), ('setError', 'u', '', ''), ('terminate', 's', '', '')])";
        fx_mock_call(f, JOBVIEW_NAME, JOBVIEW_PATH, "AddMethod",
                  g_variant_new("(sssss)", "org.kde.JobViewServer", "requestView", "ssi", "o", code));
}

/* The job view's calls as "method arg1 arg2 …" lines (strings and numbers) */
static char *job_calls(Fixture *f) {
        g_autoptr(GVariant) r = fx_mock_get_calls(f, JOBVIEW_NAME, JOB_PATH, NULL);
        if (!r)
                return g_strdup(""); /* no view asked for yet */
        GString *out = g_string_new(NULL);
        g_autoptr(GVariant) calls = g_variant_get_child_value(r, 0);
        for (gsize i = 0; i < g_variant_n_children(calls); i++) {
                const char *method;
                g_autoptr(GVariantIter) args = NULL;
                g_variant_get_child(calls, i, "(t&sav)", NULL, &method, &args);
                g_string_append(out, method);
                GVariant *v;
                while (g_variant_iter_next(args, "v", &v)) {
                        g_autofree char *text = g_variant_is_of_type(v, G_VARIANT_TYPE_STRING)
                                                        ? g_variant_dup_string(v, NULL)
                                                        : g_variant_print(v, FALSE);
                        g_string_append_printf(out, " %s", text);
                        g_variant_unref(v);
                }
                g_string_append_c(out, '\n');
        }
        return g_string_free(out, FALSE);
}

static void wait_job_call(Fixture *f, const char *line) {
        if (fx_wait_text(f, job_calls, line))
                return;
        g_autofree char *calls = job_calls(f);
        g_error("the job view never got \"%s\"; it got:\n%s", line, calls);
}

/* The agent started and told which server it draws on, then a cycle held
 * in prepare by a delay inhibitor */
static uint64_t start_styled_cycle(Fixture *f, const char *style, int *ret_delay) {
        fx_start_agent(f);
        g_autofree char *said = g_strdup_printf("progress as %s", style);
        fx_wait_agent_log(f, said);
        *ret_delay = harness_inhibit_delay(f->h, "holding the cycle in prepare");
        return fx_sleep_ok(f->h);
}

/* GNOME Shell draws no `value` hint: a text bar in the body, and no
 * hint. Updated in place under the one id, or, `renewed` (the shell drops
 * an updated banner's buttons), each update, the result too, a new
 * notification that closes the one before it */
static void assert_text_bars(Fixture *f, guint until, bool renewed) {
        g_autoptr(GPtrArray) all = fx_notes(f);
        g_assert_cmpuint(all->len, >, until);
        for (guint i = 0; i <= until; i++) {
                const Note *n = all->pdata[i];
                g_assert_cmpint(n->value, ==, -1);
                if (i < until)
                        g_assert_true(g_regex_match_simple("^[▰▱]{10} [0-9]{1,3} %\n", n->body, 0, 0));
                g_assert_cmpuint(n->replaces, ==, renewed || i == 0 ? 0 : 1);
        }
        g_assert_null(strstr(((Note *) all->pdata[until])->body, "▱"));
        g_assert_cmpuint(fx_mock_count(f, "CloseNotification"), ==, renewed ? until : 0);
}

static void gnome_text_bar(Fixture *f, const char *version, bool renewed) {
        if (!f->h->slow) {
                g_test_skip("SLOWFS is not set");
                return;
        }
        server_is(f, "gnome-shell", "GNOME", version);
        /* a flush that waits: its progress is an update that offers Cancel
         * (stalled first: its children must not inherit the delay lock) */
        g_assert_true(harness_slowfs_stall_flushes(f->h));
        int delay;
        uint64_t cycle = start_styled_cycle(f, "text", &delay);
        guint first = fx_wait_note(f, 0, fx_body_has, "▱▱▱▱▱▱▱▱▱▱ 0 %", "with a text bar");
        close(delay);
        fx_wait_note(f, first + 1, fx_offers_cancel, NULL, "an update offering Cancel");
        harness_slowfs_release(f->h);
        harness_control(f->h, "hold-write power/state");
        guint late = fx_wait_note(f, first, fx_body_has, "point of no return", "saying Cancel is withdrawn");
        harness_control(f->h, "release-write power/state");
        fx_expect_finished(f->h, cycle, "done", "");
        guint end = fx_wait_note(f, late, fx_summary_is, "Woke up from suspend", "with the result");
        assert_text_bars(f, end, renewed);
}

/* GNOME Shell 43 (Debian 12) */
static void test_gnome_text_bar(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        gnome_text_bar(f, "43.9", true);
        g_assert_true(fx_wait_text(f, fx_agent_log, "gnome-shell drops the buttons of a notification it updates"));
}

/* GNOME Shell 46 and later keep the buttons: in place */
static void test_gnome_46_text_bar(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        gnome_text_bar(f, "48.4", false);
}

static void test_style_setting(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        f->config_home = g_build_filename(f->h->dir, "config", NULL);
        g_autofree char *conf = g_build_filename(f->config_home, "fridge", "agent.conf", NULL);
        g_assert_cmpint(g_mkdir_with_parents(f->config_home, 0755), ==, 0);
        g_autofree char *dir = g_path_get_dirname(conf);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_true(g_file_set_contents(conf, "[Progress]\nStyle=text\n", -1, NULL));
        int delay;
        uint64_t cycle = start_styled_cycle(f, "value, but the settings say otherwise", &delay);
        fx_wait_note(f, 0, fx_body_has, "▱▱▱▱▱▱▱▱▱▱ 0 %", "with a text bar");
        g_assert_cmpint(harness_cancel(f->h, cycle, NULL, NULL), ==, 0);
        fx_expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
        guint end = fx_wait_note(f, 0, fx_summary_is, "Suspend cancelled", "with the result");
        assert_text_bars(f, end, false);

        /* a bad value: said, and the server decides */
        (void) harness_stop_pid(&f->agent_pid, 5000);
        g_assert_true(g_file_set_contents(conf, "[Progress]\nStyle=bar\n", -1, NULL));
        fx_start_agent(f);
        fx_wait_agent_log(f, "[Progress] Style=bar is not auto, value, text or job-view");
        fx_wait_agent_log(f, "progress as value\n");
}

/* A bad --progress-style= is refused with what it expects, exit 2 */
static void test_style_option_refused(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *out = NULL;
        char *argv[] = { (char *) harness_env("FRIDGE_AGENT"), "--progress-style=bar", NULL };
        int status = harness_run(argv, 10000, &out);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 2);
}

/* Plasma with its job view server, the agent, and a cycle held in
 * prepare whose job view has come */
static uint64_t start_plasma_cycle(Fixture *f, int *ret_delay) {
        server_is(f, "Plasma", "KDE", "5.27.5");
        start_jobview_server(f);
        uint64_t cycle = start_styled_cycle(f, "job-view", ret_delay);
        wait_job_call(f, "setInfoMessage Preparing\n");
        return cycle;
}

/* Plasma: the job view carries the cycle (percent, the phase, what it
 * waits on) in place of the progress notification; its stop button
 * cancels; the result is a notification */
static void test_kde_job_view_cancel(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = start_plasma_cycle(f, &delay);
        wait_job_call(f, "setDescriptionField 0 Status waiting for 1 delay inhibitor: test (holding the cycle in "
                         "prepare, pid ");
        wait_job_call(f, "setPercent 0\n");
        g_autoptr(GPtrArray) during = fx_notes(f);
        g_assert_cmpuint(during->len, ==, 0); /* no progress notification beside it */
        fx_mock_call(f, JOBVIEW_NAME, JOB_PATH, "EmitSignal",
                  g_variant_new("(sssav)", "org.kde.JobViewV2", "cancelRequested", "", NULL));
        fx_expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
        fx_wait_note(f, 0, fx_summary_is, "Suspend cancelled", "with the result");
        /* as a job its user stopped (KIO's ERR_USER_CANCELED): Plasma drops
         * it rather than show it finished or failed beside the result */
        wait_job_call(f, "setError 1\nterminate \n");
        g_autofree char *calls = job_calls(f);
        g_assert_null(strstr(calls, "point of no return"));
        fx_wait_agent_log(f, "(the job view's stop button)");
}

/* Past the point of no return the job view is withdrawn with the reason;
 * the result is a notification */
static void test_kde_job_view_withdrawn(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = start_plasma_cycle(f, &delay);
        harness_control(f->h, "hold-write power/state");
        close(delay);
        wait_job_call(f, "terminate It can no longer be cancelled: the system is past the point of no return.");
        harness_control(f->h, "release-write power/state");
        fx_expect_finished(f->h, cycle, "done", "");
        guint end = fx_wait_note(f, 0, fx_summary_is, "Woke up from suspend", "with the result");
        g_assert_cmpuint(end, ==, 0); /* the result is the cycle's only notification */
}

/* Plasma named, but no job view server answers: the notification with the
 * hint, as anywhere else */
static void test_kde_without_job_view(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        server_is(f, "Plasma", "KDE", "5.27.5");
        int delay;
        uint64_t cycle = start_styled_cycle(f, "job-view", &delay);
        guint i = fx_wait_note(f, 0, fx_offers_cancel, NULL, "offering Cancel in a notification");
        g_autoptr(GPtrArray) all = fx_notes(f);
        g_assert_cmpint(((Note *) all->pdata[i])->value, >=, 0);
        fx_wait_agent_log(f, "No job view (");
        g_assert_cmpint(harness_cancel(f->h, cycle, NULL, NULL), ==, 0);
        fx_expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
}

/* ---- the session's user interface by role ---- */

static void noop_setup(Fixture *f, gconstpointer data) {
}

/* fridged over scratch cgroups, the session bus and the mock notification
 * server, moved into a cgroup named as dbus-broker names a bus-activated
 * service (which classes.d freezes): false when this cannot run here */
static bool setup_roles_as(Fixture *f, uid_t seated, const char **ret_notify, const char **ret_app) {
        const char *why = fx_skip_reason(false);
        if (!why)
                why = harness_scratch_skip_reason();
        if (why) {
                g_test_skip(why);
                return false;
        }
        f->s = scratch_new();
        *ret_notify = scratch_add(f->s, "dbus-:1.2-org.example.Notifier@0.service");
        *ret_app = scratch_add(f->s, "app.service");
        scratch_spawn(f->s, *ret_app, NULL);
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n", f->s->root);
        /* seated: that user is on seat0, and the agent and the notification server are theirs */
        HarnessOptions o = { .config = config, .real_cgroups = true, .open_bus = true, .seated_uid = seated };
        f->nobody = seated != 0;
        f->h = harness_new(&o);
        fx_start_session_bus(f);
        fx_start_mock(f);
        g_autofree char *dir = scratch_abs(f->s, *ret_notify);
        g_autofree char *procs = g_build_filename(dir, "cgroup.procs", NULL), *pid = g_strdup_printf("%d", f->mock_pid);
        /* in place: g_file_set_contents() would replace the file */
        int fd = open(procs, O_WRONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, pid, strlen(pid)), ==, (ssize_t) strlen(pid));
        close(fd);
        return true;
}

static bool setup_roles(Fixture *f, const char **ret_notify, const char **ret_app) {
        return setup_roles_as(f, 0, ret_notify, ret_app);
}

static char *plan_class(Fixture *f, const char *cgroup, char **ret_reason) {
        char *class = NULL, *reason = NULL;
        if (!harness_plan_row(f->h, cgroup, &class, &reason))
                g_error("the plan has no entry for %s", cgroup);
        if (ret_reason)
                *ret_reason = reason;
        else
                g_free(reason);
        return class;
}

/* The agent finds who owns org.freedesktop.Notifications and fridged holds
 * its cgroup as ui (a cycle freezes it not), for as long as the agent
 * runs: the role, not the name of the unit or program */
static void test_role_keeps_notification_server(Fixture *f, gconstpointer data) {
        const char *notify, *app;
        if (!setup_roles(f, &notify, &app))
                return;
        /* nothing keeps it running: the freeze root is one early entry, whole */
        g_autofree char *before = plan_class(f, f->s->root, NULL);
        g_assert_cmpstr(before, ==, "early");

        fx_start_agent(f);
        fx_wait_agent_log(f, "fridged holds org.freedesktop.Notifications (pid ");
        g_autofree char *reason = NULL, *held = plan_class(f, notify, &reason);
        g_test_message("%s: %s: %s", notify, held, reason);
        g_assert_cmpstr(held, ==, "ui");
        g_assert_cmpstr(reason, ==, "held by the user interface of uid 0: owns org.freedesktop.Notifications on its "
                                    "session bus");

        const char *watched[] = { notify, NULL };
        ScratchWatch *w = scratch_watch_start(f->s, watched);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *res = NULL;
        harness_control(f->h, "hold-write power/state");
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, NULL), ==, 0);
        g_assert_true(harness_wait_property_signal(f->h, "Phase", "kernel", WAIT_MS));
        g_assert_true(scratch_is_frozen(f->s, app));
        harness_control(f->h, "release-write power/state");
        g_assert_true(harness_wait_finished(f->h, cycle, WAIT_MS, &res, NULL, NULL));
        g_assert_cmpstr(res, ==, "done");
        scratch_watch_end(w);

        /* the hold lasts as long as the agent */
        (void) harness_stop_pid(&f->agent_pid, 5000);
        g_autofree char *after = NULL;
        for (int i = 0; i < WAIT_MS / 50; i++) {
                g_free(after);
                after = plan_class(f, f->s->root, NULL);
                if (g_str_equal(after, "early"))
                        break;
                fx_pump(f, 50);
        }
        g_assert_cmpstr(after, ==, "early");
}

/* A user on a seat (as logind records it: /run/systemd/users/UID, which
 * fridged, having no seat of its own, must read for that user) runs the
 * agent and the notification server: fridged holds it for them */
static void test_role_held_for_seated_user(Fixture *f, gconstpointer data) {
        const char *notify, *app;
        if (access("/usr/bin/setpriv", X_OK) < 0 || access("/usr/bin/unshare", X_OK) < 0) {
                g_test_skip("setpriv or unshare (util-linux) is not installed");
                return;
        }
        if (!setup_roles_as(f, 65534, &notify, &app))
                return;
        fx_start_agent(f);
        fx_wait_agent_log(f, "fridged holds org.freedesktop.Notifications (pid ");
        g_autofree char *reason = NULL, *held = plan_class(f, notify, &reason);
        g_assert_cmpstr(held, ==, "ui");
        g_assert_cmpstr(reason, ==, "held by the user interface of uid 65534: owns org.freedesktop.Notifications on "
                                    "its session bus");
}

/* dbus-send's answer to HoldRole(role, pid), as `uid` (busctl says only
 * "Access denied" for AccessDenied, whatever the message) */
static char *hold_role_as(Fixture *f, unsigned uid, const char *role, pid_t pid) {
        g_autofree char *reuid = g_strdup_printf("--reuid=%u", uid), *regid = g_strdup_printf("--regid=%u", uid);
        g_autofree char *addr = g_strdup_printf("--bus=%s", f->h->bus_address);
        g_autofree char *dest = g_strdup_printf("--dest=%s", FRIDGE_BUS_NAME);
        g_autofree char *role_arg = g_strdup_printf("string:%s", role), *pid_arg = g_strdup_printf("uint32:%d", (int) pid);
        char *argv[] = { "/usr/bin/setpriv", reuid, regid, "--clear-groups", "--", "/usr/bin/dbus-send", addr,
                         "--print-reply", dest, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE ".HoldRole", role_arg, pid_arg,
                         NULL };
        g_autofree char *log = g_build_filename(f->h->dir, "dbus-send.log", NULL);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        HarnessSpawn sp = { .argv = argv, .stdin_fd = -1, .stdout_fd = fd, .stderr_fd = fd, .extra_fd = -1 };
        pid_t p = harness_spawn(&sp);
        close(fd);
        (void) harness_wait_pid(p, 10000);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(log, &text, NULL, NULL));
        g_test_message("HoldRole(%s, %d) as uid %u: %s", role, (int) pid, uid, text);
        return g_steal_pointer(&text);
}

/* Attacks as attackers make them, on the real bus: a user with no session
 * on a seat holds nothing (anyone may own a name on a bus of their own);
 * root's agent cannot hold another user's process; roles are a closed list */
static void test_role_refusals(Fixture *f, gconstpointer data) {
        const char *notify, *app;
        if (!setup_roles(f, &notify, &app))
                return;
        if (access("/usr/bin/dbus-send", X_OK) < 0 || access("/usr/bin/setpriv", X_OK) < 0) {
                g_test_skip("dbus-send or setpriv is not installed");
                return;
        }
        char *sleeper[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                            "/bin/sleep", "1000", NULL };
        pid_t nobodys = scratch_spawn(f->s, app, sleeper);
        for (int i = 0; i < 500; i++) {
                g_autofree char *st = g_strdup_printf("/proc/%d", (int) nobodys);
                struct stat sb;
                if (stat(st, &sb) == 0 && sb.st_uid == 65534)
                        break;
                g_usleep(10000);
        }
        g_autofree char *off_seat = hold_role_as(f, 65534, "org.freedesktop.Notifications", nobodys);
        g_assert_nonnull(strstr(off_seat, "uid 65534 has no active session on a seat"));
        g_autofree char *not_own = hold_role_as(f, 0, "org.freedesktop.Notifications", nobodys);
        g_autofree char *want = g_strdup_printf("pid %d is not a process of uid 0, the caller's", (int) nobodys);
        g_assert_nonnull(strstr(not_own, want));
        g_autofree char *odd = hold_role_as(f, 0, "org.example.Anything", f->mock_pid);
        g_assert_nonnull(strstr(odd, "role 'org.example.Anything' is not one of org.freedesktop.Notifications, "));
        g_autofree char *cls = plan_class(f, f->s->root, NULL);
        g_assert_cmpstr(cls, ==, "early"); /* nothing held */
}

int main(int argc, char **argv) {
        static const CaseOptions mock = { .mock = true, .config = "[Delay]\nTimeoutMs=20000\n" },
                                 bare = { .config = "[Delay]\nTimeoutMs=20000\n" },
                                 flush = { .mock = true, .config = "[Delay]\nTimeoutMs=20000\n", .slowfs = true };
        harness_init(&argc, &argv);
#define ADD(name, fn, o) g_test_add("/agent/" name, Fixture, &o, fx_setup, fn, fx_teardown)
        ADD("gnome-text-bar", test_gnome_text_bar, flush);
        ADD("gnome-46-text-bar", test_gnome_46_text_bar, flush);
        ADD("style-setting", test_style_setting, mock);
        ADD("style-option-refused", test_style_option_refused, bare);
        ADD("kde-job-view-cancel", test_kde_job_view_cancel, mock);
        ADD("kde-job-view-withdrawn", test_kde_job_view_withdrawn, mock);
        ADD("kde-without-job-view", test_kde_without_job_view, mock);
        /* their own set-up: scratch cgroups under fridged */
        g_test_add("/agent/role-keeps-notification-server", Fixture, NULL, noop_setup,
                   test_role_keeps_notification_server, fx_teardown);
        g_test_add("/agent/role-refusals", Fixture, NULL, noop_setup, test_role_refusals, fx_teardown);
        g_test_add("/agent/role-held-for-seated-user", Fixture, NULL, noop_setup, test_role_held_for_seated_user,
                   fx_teardown);
#undef ADD
        return g_test_run();
}
