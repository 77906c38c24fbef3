/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridge-agent against the real fridged and a notification server on a
 * private session bus (agent-fixture.h): progress and result, Cancel and
 * its refusal, dismissal, fridged restarting or killed, no server, a real
 * dunst's screen, German, the image write's figures. The desktops' own
 * styles and the roles are test-agent-desktops.c's.
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
#include "standin-writer.h"

static void test_progress_and_result(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = fx_start_held_cycle(f, &delay);
        /* fridged names what the cycle waits for */
        guint first = fx_wait_note(f, 0, fx_body_has, "Preparing: waiting for 1 delay inhibitor: test (holding the cycle in "
                                "prepare, pid ", "naming the delay inhibitor");
        harness_control(f->h, "hold-write power/state");
        close(delay);
        guint late = fx_wait_note(f, first, fx_body_has, "point of no return", "saying Cancel is withdrawn");
        harness_control(f->h, "release-write power/state");
        fx_expect_finished(f->h, cycle, "done", "");
        guint end = fx_wait_note(f, late, fx_summary_is, "Woke up from suspend", "with the result");

        g_autoptr(GPtrArray) all = fx_notes(f);
        const Note *n0 = all->pdata[0], *nw = all->pdata[first], *nl = all->pdata[late], *ne = all->pdata[end];
        g_assert_cmpuint(n0->replaces, ==, 0);
        g_assert_cmpstr(n0->summary, ==, "Suspending…");
        g_assert_true(fx_offers_cancel(n0, NULL));
        g_assert_true(fx_offers_cancel(nw, NULL));
        g_assert_false(fx_offers_cancel(nl, NULL));
        g_assert_nonnull(strstr(nl->body, "Going to sleep"));
        int last = -1;
        for (guint i = 1; i <= end; i++) {
                const Note *n = all->pdata[i];
                g_assert_cmpuint(n->replaces, ==, 1); /* the mock's first id */
                if (i == end)
                        break;
                g_assert_cmpint(n->value, >=, 0);
                g_assert_cmpint(n->value, <=, 100);
                g_assert_cmpint(n->value, >=, last);
                last = n->value;
        }
        g_assert_cmpint(nl->value, >, nw->value);
        g_assert_cmpint(ne->value, ==, -1);
        g_assert_cmpint(ne->urgency, ==, 1);
        g_assert_nonnull(strstr(ne->body, "Slept for "));
        g_assert_nonnull(strstr(ne->body, "woken by "));
        g_assert_cmpuint(all->len, ==, end + 1);
}

/* Through logind (Driver=auto with logind on the bus) Cancel is offered
 * until fridged asks logind to sleep; from then on systemd-sleep goes on
 * whatever fridge says */
static void test_logind_withdrawn_at_hand_over(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        if (!harness_env("LOGIND_STANDIN")) {
                g_test_skip("LOGIND_STANDIN is not set");
                return;
        }
        int delay;
        uint64_t cycle = fx_start_held_cycle(f, &delay);
        guint first = fx_wait_note(f, 0, fx_offers_cancel, NULL, "offering Cancel before the hand-over");
        harness_control(f->h, "hold-write power/state");
        close(delay);
        g_assert_true(harness_wait_logind_line(f->h, "hook pre suspend 0", WAIT_MS));
        guint late = fx_wait_note(f, first, fx_body_has, "point of no return", "withdrawing Cancel after the hand-over");
        g_autoptr(GPtrArray) all = fx_notes(f);
        const Note *n = all->pdata[late];
        g_assert_false(fx_offers_cancel(n, NULL));
        g_assert_null(strstr(n->body, "started by the system")); /* fridge started it */
        g_autofree char *started_by = harness_get_string(f->h, "StartedBy");
        g_assert_cmpstr(started_by, ==, "bus");
        harness_control(f->h, "release-write power/state");
        fx_expect_finished(f->h, cycle, "done", "");
}

/* The user presses Cancel: the cycle is cancelled before anything sleeps */
static void test_cancel_action(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = fx_start_held_cycle(f, &delay);
        guint i = fx_wait_note(f, 0, fx_offers_cancel, NULL, "offering Cancel");
        uint32_t id = fx_press_cancel(f, i);

        fx_expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
        g_autofree char *state = harness_get_string(f->h, "State");
        g_assert_cmpstr(state, ==, "idle");
        g_autofree char *log = harness_fakesys_log(f->h);
        g_assert_null(strstr(log, "power/state"));
        guint end = fx_wait_note(f, i, fx_summary_is, "Suspend cancelled", "with the result");
        g_autoptr(GPtrArray) after = fx_notes(f);
        const Note *n = after->pdata[end];
        g_assert_cmpuint(n->replaces, ==, id);
        g_assert_nonnull(strstr(n->body, "Cancelled: cancelled by user"));
        g_autofree char *alog = fx_agent_log(f);
        g_assert_nonnull(strstr(alog, "cancelled"));
        if (f->nobody) {
                /* polkit decided, and may have asked for a password (flag 1:
                 * interaction allowed): polkit's defaults let the active
                 * session's user cancel without one */
                g_autofree char *plog = NULL;
                g_assert_true(g_file_get_contents(f->h->polkit_log, &plog, NULL, NULL));
                g_assert_nonnull(strstr(plog, "io.fridge.sleep 65534 yes 1\n"));
        }
}

/* polkit says no: the cycle goes on, and the notification says why the
 * Cancel did nothing */
static void test_cancel_refused(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = fx_start_held_cycle(f, &delay);
        guint i = fx_wait_note(f, 0, fx_offers_cancel, NULL, "offering Cancel");
        fx_press_cancel(f, i);
        guint j = fx_wait_note(f, i + 1, fx_body_has, "Cancel was refused: ", "saying the Cancel was refused");
        g_autoptr(GPtrArray) all = fx_notes(f);
        const Note *n = all->pdata[j];
        g_test_message("refused: %s", n->body);
        g_assert_nonnull(strstr(n->body, "io.fridge.sleep"));
        g_assert_true(fx_offers_cancel(n, NULL)); /* it may still be tried, once allowed */
        close(delay);
        fx_expect_finished(f->h, cycle, "done", "");
}

/* systemd-sleep's cycle (the hook's pre): no Cancel, and the reason */
static void test_hook_cycle_not_cancellable(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        fx_start_agent(f);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "hook", "pre", "suspend"), ==, 0);
        uint64_t cycle = 0;
        g_assert_cmpint(sscanf(out, "cycle %" G_GUINT64_FORMAT, &cycle), ==, 1);
        guint i = fx_wait_note(f, 0, fx_body_has, "The sleep was started by the system and cannot be stopped.",
                            "saying the system started the sleep");
        g_autofree char *out2 = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out2, "hook", "post", "suspend"), ==, 0);
        fx_expect_finished(f->h, cycle, "done", "");
        guint end = fx_wait_note(f, i, fx_summary_is, "Woke up from suspend", "with the result");
        g_autoptr(GPtrArray) all = fx_notes(f);
        for (guint j = 0; j <= end; j++)
                g_assert_false(fx_offers_cancel(all->pdata[j], NULL));
}

/* Dismissed by the user, the progress does not pop up again for the rest
 * of the cycle, nor its "done" result; the next cycle shows again */
static void test_dismissed(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = fx_start_held_cycle(f, &delay);
        (void) fx_wait_note(f, 0, fx_offers_cancel, NULL, "offering Cancel");
        fx_dismiss(f, 1);
        fx_pump(f, 200); /* an update already on its way when the user closed it */
        guint before;
        {
                g_autoptr(GPtrArray) all = fx_notes(f);
                before = all->len;
        }
        /* progress moves on: the hand-over withdraws Cancel, the sleep ends */
        close(delay);
        fx_expect_finished(f->h, cycle, "done", "");
        uint64_t next = fx_sleep_ok(f->h);
        fx_expect_finished(f->h, next, "done", "");
        guint end = fx_wait_note(f, before, fx_summary_is, "Woke up from suspend", "for the next cycle");
        g_autoptr(GPtrArray) all = fx_notes(f);
        /* the next cycle's is a new notification, and nothing of the
         * dismissed cycle came before it */
        g_assert_cmpuint(((Note *) all->pdata[before])->replaces, ==, 0);
        for (guint k = before; k <= end; k++)
                g_assert_cmpuint(((Note *) all->pdata[k])->replaces, !=, 1);
        fx_assert_agent_alive(f);
}

/* A dismissed cycle that did not sleep as asked still says so */
static void test_dismissed_then_cancelled(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = fx_start_held_cycle(f, &delay);
        guint i = fx_wait_note(f, 0, fx_offers_cancel, NULL, "offering Cancel");
        fx_dismiss(f, 1);
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_cancel(f->h, cycle, &err, &msg), ==, 0);
        fx_expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
        guint end = fx_wait_note(f, i + 1, fx_summary_is, "Suspend cancelled", "with the result");
        g_autoptr(GPtrArray) all = fx_notes(f);
        g_assert_cmpuint(((Note *) all->pdata[end])->replaces, ==, 0); /* the old one is gone */
}

/* fridged stops and comes back: the agent shows the next cycle */
static void test_fridged_restart(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        fx_start_agent(f);
        uint64_t first = fx_sleep_ok(f->h);
        fx_expect_finished(f->h, first, "done", "");
        guint i = fx_wait_note(f, 0, fx_summary_is, "Woke up from suspend", "for the first cycle");

        harness_kill_fridged(f->h, SIGTERM);
        harness_restart_fridged(f->h);
        uint64_t second = fx_sleep_ok(f->h);
        g_assert_cmpuint(second, >, first);
        fx_expect_finished(f->h, second, "done", "");
        guint j = fx_wait_note(f, i + 1, fx_summary_is, "Woke up from suspend", "for the cycle after the restart");
        g_autoptr(GPtrArray) all = fx_notes(f);
        g_assert_cmpuint(((Note *) all->pdata[j])->replaces, !=, ((Note *) all->pdata[i])->replaces);
        fx_assert_agent_alive(f);
        g_autofree char *log = fx_agent_log(f);
        g_assert_nonnull(strstr(log, "fridged left the bus"));
        g_assert_nonnull(strstr(log, "fridged is back on the bus"));
}

/* fridged killed in the middle of a cycle: the notification stops saying
 * "Suspending…" as if it went on, and the next fridged's Interrupted
 * report turns it into a failure, urgency critical */
static void test_fridged_killed_mid_cycle(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = fx_start_held_cycle(f, &delay);
        guint i = fx_wait_note(f, 0, fx_offers_cancel, NULL, "offering Cancel");
        harness_kill_fridged(f->h, SIGKILL);
        guint gone = fx_wait_note(f, i + 1, fx_body_has, "fridged stopped during the cycle", "saying fridged stopped");
        close(delay);
        harness_restart_fridged(f->h);
        fx_expect_finished(f->h, cycle, "failed", "io.fridge.Fridge1.Error.Interrupted");
        guint end = fx_wait_note(f, gone + 1, fx_summary_is, "Suspend failed", "with the Interrupted result");
        g_autoptr(GPtrArray) all = fx_notes(f);
        const Note *g = all->pdata[gone], *e = all->pdata[end];
        g_assert_false(fx_offers_cancel(g, NULL));
        g_assert_cmpuint(g->replaces, ==, 1);
        g_assert_cmpuint(e->replaces, ==, 1);
        g_assert_cmpint(e->urgency, ==, 2);
        g_assert_nonnull(strstr(e->body, "Interrupted: "));
        fx_assert_agent_alive(f);
}

/* No notification server: the agent logs it once, waits, and shows the
 * next cycle once a server is there */
static void test_no_server(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        fx_start_agent(f);
        for (int k = 0; k < 2; k++) {
                uint64_t c = fx_sleep_ok(f->h);
                fx_expect_finished(f->h, c, "done", "");
        }
        /* the agent has tried by now: its line says so */
        for (int k = 0; k < WAIT_MS / 50; k++) {
                g_autofree char *log = fx_agent_log(f);
                if (strstr(log, "waiting for a notification server"))
                        break;
                fx_pump(f, 50);
        }
        fx_start_mock(f);
        uint64_t c = fx_sleep_ok(f->h);
        fx_expect_finished(f->h, c, "done", "");
        (void) fx_wait_note(f, 0, fx_summary_is, "Woke up from suspend", "once a server is there");
        fx_assert_agent_alive(f);
        g_autofree char *log = fx_agent_log(f);
        const char *at = strstr(log, "waiting for a notification server");
        g_assert_nonnull(at);
        g_assert_null(strstr(at + 1, "waiting for a notification server")); /* once */
}

/* A hibernation whose image fridge's writer wrote (the stand-in, speaking
 * its protocol on fridged's socket): the result carries the write's
 * figures, which the agent asks of the cycle's record once it has ended;
 * the next cycle's notification is a new one, whatever that answer does */
static void test_hibernate_image_figures(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        struct stat st;
        if (stat("/dev/loop0", &st) < 0 || !S_ISBLK(st.st_mode)) {
                g_test_skip("needs /dev/loop0 to stand for a swap partition");
                return;
        }
        StandinWriter *w = standin_writer_start(f->h, SCRIPT_WRITE);
        fx_start_agent(f);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(f->h, "hibernate", &cycle, &err, &msg, NULL) != 0)
                g_error("Sleep(hibernate) failed: %s: %s", err, msg);
        guint writing = fx_wait_note(f, 0, fx_body_has, "writing the image: 2 of 4 MiB", "with the writer's progress");
        standin_writer_let_go(w);
        fx_expect_finished(f->h, cycle, "done", "");
        guint end = fx_wait_note(f, writing, fx_body_has, "image: 8.0 MiB written as 2.0 MiB (4.0x) in 0.5 s, 16 MiB/s",
                              "with the image's figures");
        uint64_t next = fx_sleep_ok(f->h);
        fx_expect_finished(f->h, next, "done", "");
        guint after = fx_wait_note(f, end, fx_summary_is, "Woke up from suspend", "the next cycle's result");
        g_autoptr(GPtrArray) all = fx_notes(f);
        const Note *ne = all->pdata[end], *na = all->pdata[after];
        g_assert_cmpstr(ne->summary, ==, "Woke up from hibernation");
        g_assert_cmpuint(ne->replaces, ==, 1);  /* the cycle's own notification, replaced */
        g_assert_cmpuint(na->replaces, !=, 1);  /* not the hibernation's */
        g_assert_null(strstr(na->body, "image:"));
        standin_writer_free(w);
        fx_assert_agent_alive(f);
}

/* ---- a real notification server ---- */

static void start_display(Fixture *f, char **ret_display) {
        g_autofree char *log = g_build_filename(f->h->dir, "xvfb.log", NULL);
        int p[2];
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        g_autofree char *fd_arg = g_strdup_printf("%d", 3);
        char *argv[] = { "/usr/bin/Xvfb", "-displayfd", fd_arg, "-screen", "0", "800x600x24", "-nolisten", "tcp", "-noreset",
                         NULL };
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = fd, .stderr_fd = fd, .extra_fd = p[1] };
        f->xvfb_pid = harness_spawn(&s);
        close(fd);
        close(p[1]);
        char buf[32] = "";
        ssize_t n = read(p[0], buf, sizeof(buf) - 1); /* Xvfb writes the number once it listens */
        f->displayfd = p[0];
        g_assert_cmpint(n, >, 0);
        buf[n] = 0;
        *ret_display = g_strdup_printf(":%d", atoi(buf));
}

static unsigned screen_colours(const char *display, const char *png) {
        char *shot[] = { "/usr/bin/import", "-display", (char *) display, "-window", "root", (char *) png, NULL };
        g_autofree char *o1 = NULL, *o2 = NULL;
        if (harness_run(shot, 30000, &o1) != 0)
                return 0;
        char *count[] = { "/usr/bin/convert", (char *) png, "-format", "%k", "info:", NULL };
        if (harness_run(count, 30000, &o2) != 0)
                return 0;
        return (unsigned) strtoul(o2, NULL, 10);
}

/* dunst on Xvfb shows the agent's notification: the screen is kept as
 * meson-logs/fridge-agent-dunst.png */
static void test_dunst_screenshot(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *display = NULL;
        start_display(f, &display);
        g_autofree char *disp = g_strdup_printf("DISPLAY=%s", display);
        g_autofree char *sess = g_strdup_printf("DBUS_SESSION_BUS_ADDRESS=%s", f->session_address);
        const char *const env[] = { disp, sess, "XDG_CONFIG_HOME=/nonexistent", NULL };
        g_autofree char *log = g_build_filename(f->h->dir, "dunst.log", NULL);
        char *argv[] = { "/usr/bin/dunst", "-verbosity", "info", NULL };
        f->dunst_pid = fx_spawn_logged(argv, env, log, -1);
        fx_wait_name(f, NOTIFY_NAME);
        g_autofree char *png = g_build_filename(f->h->dir, "blank.png", NULL);
        g_assert_cmpuint(screen_colours(display, png), ==, 1); /* nothing shown yet */

        int delay;
        uint64_t cycle = fx_start_held_cycle(f, &delay);
        const char *dir = harness_env("AGENT_ARTIFACT_DIR");
        g_autofree char *shot = g_build_filename(dir ? dir : f->h->dir, "fridge-agent-dunst.png", NULL);
        unsigned colours = 0;
        for (int i = 0; i < WAIT_MS / 100 && colours <= 1; i++) {
                fx_pump(f, 100);
                colours = screen_colours(display, shot);
        }
        g_test_message("screenshot %s: %u colours", shot, colours);
        g_assert_cmpuint(colours, >, 1);
        char *count[] = { "/usr/bin/dunstctl", "count", "displayed", NULL };
        g_autofree char *n = NULL;
        const char *const cenv[] = { sess, NULL };
        g_autofree char *clog = g_build_filename(f->h->dir, "dunstctl.out", NULL);
        pid_t pid = fx_spawn_logged(count, cenv, clog, -1);
        g_assert_cmpint(harness_wait_pid(pid, 30000), ==, 0);
        g_assert_true(g_file_get_contents(clog, &n, NULL, NULL));
        g_assert_cmpuint(strtoul(n, NULL, 10), >=, 1);
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_cancel(f->h, cycle, &err, &msg), ==, 0);
        close(delay);
        fx_expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
}

/* The notification in German, from the catalog: summary, phase, Cancel's
 * label and the result */
static void test_german(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = fx_start_held_cycle(f, &delay);
        guint first = fx_wait_note(f, 0, fx_body_has, "Vorbereitung: ", "with the German phase");
        close(delay);
        fx_expect_finished(f->h, cycle, "done", "");
        guint end = fx_wait_note(f, first, fx_summary_is, "Aus der Bereitschaft aufgewacht", "with the German result");

        g_autoptr(GPtrArray) all = fx_notes(f);
        const Note *n0 = all->pdata[0], *ne = all->pdata[end];
        g_assert_cmpstr(n0->summary, ==, "Bereitschaft wird eingeleitet …");
        g_assert_true(fx_note_has_action(n0, "cancel", "Abbrechen"));
        g_assert_true(g_str_has_prefix(ne->body, "Der Rechner ist wieder wach; geweckt von ") ||
                      strstr(ne->body, " geschlafen; geweckt von ") != NULL);
}

/* ---- where the progress is drawn: each desktop's way ---- */

int main(int argc, char **argv) {
        /* a swap partition for the image (loop0), no dirty data */
        static const char *const hibernate_proc[] = {
                "swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/loop0 partition 1048572 0 -2\n",
                "meminfo", "MemTotal: 2000000 kB\nDirty: 0 kB\nWriteback: 0 kB\nActive(anon): 20000 kB\n"
                "Inactive(anon): 1000 kB\n", NULL };
        static const CaseOptions mock = { .mock = true, .config = "[Delay]\nTimeoutMs=20000\n" },
                                 bare = { .config = "[Delay]\nTimeoutMs=20000\n" },
                                 dunst = { .dunst = true, .config = "[Delay]\nTimeoutMs=20000\n" },
                                 logind = { .mock = true, .config = "[Delay]\nTimeoutMs=20000\n", .logind = true },
                                 denied = { .mock = true, .config = "[Delay]\nTimeoutMs=20000\n",
                                            .polkit_table = "io.fridge.sleep 65534 no\n" },
                                 user = { .mock = true, .config = "[Delay]\nTimeoutMs=20000\n",
                                          .polkit_table = "io.fridge.sleep 65534 yes\n" },
                                 german = { .mock = true, .config = "[Delay]\nTimeoutMs=20000\n", .german = true },
                                 hibernate = { .mock = true, .config = "[Sleep]\nHibernateWriter=fridge\n",
                                               .proc_files = hibernate_proc };
        harness_init(&argc, &argv);
#define ADD(name, fn, o) g_test_add("/agent/" name, Fixture, &o, fx_setup, fn, fx_teardown)
        ADD("progress-and-result", test_progress_and_result, mock);
        ADD("logind-withdrawn-at-hand-over", test_logind_withdrawn_at_hand_over, logind);
        ADD("cancel-action", test_cancel_action, mock);
        ADD("cancel-action-as-user", test_cancel_action, user);
        ADD("cancel-refused", test_cancel_refused, denied);
        ADD("hook-cycle-not-cancellable", test_hook_cycle_not_cancellable, mock);
        ADD("dismissed", test_dismissed, mock);
        ADD("dismissed-then-cancelled", test_dismissed_then_cancelled, mock);
        ADD("fridged-restart", test_fridged_restart, mock);
        ADD("fridged-killed-mid-cycle", test_fridged_killed_mid_cycle, mock);
        ADD("no-server", test_no_server, bare);
        ADD("dunst-screenshot", test_dunst_screenshot, dunst);
        ADD("german", test_german, german);
        ADD("hibernate-image-figures", test_hibernate_image_figures, hibernate);
#undef ADD
        return g_test_run();
}
