/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The desktop's user interface stays running through a cycle: a scratch
 * session under the freeze root with Xvfb as the display, dunst (on a
 * private session bus) as the notification server, and an xterm in a
 * cgroup of its own whose shell, in another, runs `fridgectl suspend`
 * against the harness's fridged and fakesys. The shipped
 * data/60-desktop.conf names Xvfb and dunst; the xterm is found as the
 * holder of the client's pty master. Across the whole cycle none of their
 * cgroups is frozen, the bar drawn on the X display moves after the early
 * freeze, and Esc typed into the xterm cancels the cycle and thaws all.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness.h"
#include "scratch.h"

/* What the desktop case needs on PATH; without one it cannot run here */
static const char *const desktop_tools[] = { "Xvfb", "xterm", "xdotool", "dunst", "dbus-daemon", "xwd",
                                             "notify-send", NULL };

typedef struct Fixture {
        Harness *h;
        Scratch *s;
        char *tmp;              /* the session bus socket, the shell's exit code */
} Fixture;

static void setup_harness(Fixture *f, const char *extra_config, bool slowfs) {
        const char *why = harness_scratch_skip_reason();
        if (why) {
                g_test_skip(why);
                return;
        }
        const char *classes = harness_env("FRIDGE_DESKTOP_CLASSES");
        if (!classes) {
                g_test_skip("FRIDGE_DESKTOP_CLASSES (data/60-desktop.conf) is not set");
                return;
        }
        f->s = scratch_new();
        f->tmp = g_dir_make_tmp("fridge-desktop-XXXXXX", NULL);
        g_assert_nonnull(f->tmp);
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n%s", f->s->root, extra_config);
        HarnessOptions o = { .config = config, .vendor_classes = classes, .real_cgroups = true, .slowfs = slowfs };
        f->h = harness_new(&o);
}

static void teardown(Fixture *f, gconstpointer data) {
        if (f->h && g_test_failed())
                harness_dump_fridged_log(f->h);
        if (f->h && f->h->slowfs_held)
                harness_slowfs_release(f->h);
        harness_free(f->h);
        scratch_free(f->s); /* after fridged: it must not hold anything frozen */
        if (f->tmp) {
                g_autofree char *rm = g_strdup_printf("rm -rf '%s'", f->tmp);
                (void) !system(rm);
                g_free(f->tmp);
        }
}

#define SKIP_IF_UNSET(f) do { if (!(f)->h) return; } while (0)

static void assert_none_frozen(Fixture *f) {
        for (guint i = 0; i < f->s->cgroups->len; i++)
                if (scratch_is_frozen(f->s, f->s->cgroups->pdata[i]))
                        g_error("%s is still frozen", (const char *) f->s->cgroups->pdata[i]);
}

static char *fridged_log(Fixture *f) {
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &text, NULL, NULL));
        return g_steal_pointer(&text);
}

/* ---- the session: Xvfb, dunst, the xterm ---- */

/* harness_run() with argv[0] looked up in PATH (it execs the path as given) */
static int run_quiet(char **argv, int timeout_ms) {
        g_autofree char *path = g_find_program_in_path(argv[0]);
        if (!path)
                g_error("%s is not in PATH", argv[0]);
        char *first = argv[0];
        argv[0] = path;
        int status = harness_run(argv, timeout_ms, NULL);
        argv[0] = first;
        return status;
}

/* A private session bus and dunst on it, both in `cgroup` */
static void start_dunst(Fixture *f, const char *cgroup, const char *display) {
        g_autofree char *socket = g_build_filename(f->tmp, "session-bus", NULL);
        g_autofree char *listen = g_strdup_printf("--address=unix:path=%s", socket);
        char *bus[] = { (char *) "dbus-daemon", (char *) "--session", (char *) "--nofork", listen, NULL };
        scratch_spawn(f->s, cgroup, bus);
        for (int i = 0; i < 2000 && !g_file_test(socket, G_FILE_TEST_EXISTS); i++)
                g_usleep(5000);
        g_assert_true(g_file_test(socket, G_FILE_TEST_EXISTS));
        g_autofree char *env_bus = g_strdup_printf("DBUS_SESSION_BUS_ADDRESS=unix:path=%s", socket);
        g_autofree char *env_display = g_strdup_printf("DISPLAY=%s", display);
        char *dunst[] = { (char *) "env", env_bus, env_display, (char *) "dunst", NULL };
        scratch_spawn(f->s, cgroup, dunst);
        /* dunst is up once it shows a notification (notify-send waits for its answer) */
        char *notify[] = { (char *) "env", env_bus, env_display, (char *) "notify-send", (char *) "-t",
                           (char *) "0", (char *) "fridge", (char *) "the notification server stays awake", NULL };
        int status = -1;
        for (int i = 0; i < 100 && status != 0; i++) {
                status = run_quiet(notify, 5000);
                if (status != 0)
                        g_usleep(50000);
        }
        g_assert_cmpint(status, ==, 0);
}

/* The screen as xwd writes it: the same pixels give the same bytes */
static char *screenshot(Fixture *f, const char *display, const char *name, gsize *ret_len) {
        g_autofree char *path = g_build_filename(f->tmp, name, NULL);
        char *argv[] = { (char *) "xwd", (char *) "-root", (char *) "-silent", (char *) "-display",
                         (char *) display, (char *) "-out", path, NULL };
        g_assert_cmpint(run_quiet(argv, 10000), ==, 0);
        char *data = NULL;
        g_assert_true(g_file_get_contents(path, &data, ret_len, NULL));
        return data;
}

/* A copy for people under meson-logs/: PNG where convert works, else xwd */
static void keep_artifact(Fixture *f, const char *name) {
        const char *dir = harness_env("FRIDGE_ARTIFACT_DIR");
        if (!dir || g_mkdir_with_parents(dir, 0755) < 0)
                return;
        g_autofree char *xwd = g_build_filename(f->tmp, name, NULL);
        g_autofree char *stem = g_strdup_printf("test-desktop-%s", name);
        g_autofree char *png = g_strdup_printf("%s/%.*s.png", dir, (int) (strlen(stem) - 4), stem);
        g_autofree char *in = g_strdup_printf("xwd:%s", xwd), *out = g_strdup_printf("png:%s", png);
        char *argv[] = { (char *) "convert", in, out, NULL };
        g_autofree char *convert = g_find_program_in_path("convert");
        if (convert && run_quiet(argv, 20000) == 0) {
                g_test_message("screenshot kept: %s", png);
                return;
        }
        g_autofree char *copy = g_build_filename(dir, stem, NULL);
        g_autofree char *data = NULL;
        gsize len;
        if (g_file_get_contents(xwd, &data, &len, NULL) && g_file_set_contents(copy, data, (gssize) len, NULL))
                g_test_message("screenshot kept: %s", copy);
}

/* The xterm in `term`, its shell moving itself to `shell` first (the
 * terminal emulator and the shell in cgroups of their own, as
 * gnome-terminal-server and its vte-spawn scopes are), then fridgectl */
static pid_t start_xterm(Fixture *f, const char *term, const char *shell, const char *display, char **ret_rc) {
        g_autofree char *shell_dir = scratch_abs(f->s, shell);
        *ret_rc = g_build_filename(f->tmp, "fridgectl.rc", NULL);
        g_autofree char *script = g_strdup_printf("echo $$ > '%s/cgroup.procs' && '%s' --bus-address='%s' suspend; "
                                                  "echo $? > '%s'", shell_dir, harness_env("FRIDGECTL"),
                                                  f->h->bus_address, *ret_rc);
        char *argv[] = { (char *) "xterm", (char *) "-display", (char *) display, (char *) "-geometry",
                         (char *) "90x4+0+0", (char *) "-e", (char *) "sh", (char *) "-c", script, NULL };
        return scratch_spawn(f->s, term, argv);
}

static void type_escape(const char *display) {
        /* Without a window manager the focus follows the pointer: put it
         * on the xterm (at +0+0), then type through XTEST */
        char *argv[] = { (char *) "env", g_strdup_printf("DISPLAY=%s", display), (char *) "xdotool",
                         (char *) "mousemove", (char *) "40", (char *) "30", (char *) "sleep", (char *) "0.2",
                         (char *) "key", (char *) "Escape", NULL };
        g_assert_cmpint(run_quiet(argv, 10000), ==, 0);
        g_free(argv[1]);
}

static uint32_t be32(const char *p) {
        const unsigned char *u = (const unsigned char *) p;
        return (uint32_t) u[0] << 24 | (uint32_t) u[1] << 16 | (uint32_t) u[2] << 8 | u[3];
}

/* The pixels of an xwd file: after its header (header_size, the first
 * word) and colormap (ncolors, the 20th word, of 12 bytes each), whose
 * padding xwd leaves unset, so two dumps of one screen differ there */
static const char *xwd_pixels(const char *data, gsize len, gsize *ret_len) {
        g_assert_cmpuint(len, >=, 100);
        gsize skip = (gsize) be32(data) + (gsize) be32(data + 19 * 4) * 12;
        g_assert_cmpuint(skip, <, len);
        *ret_len = len - skip;
        return data + skip;
}

/* Screenshots until one's pixels differ from `before`'s (the display
 * redraws on its own time), bounded; whether one did */
static bool screen_changes(Fixture *f, const char *display, const char *before, gsize before_len,
                           const char *name) {
        gsize n_before, n_now;
        const char *pixels_before = xwd_pixels(before, before_len, &n_before);
        for (int i = 0; i < 100; i++) {
                gsize len;
                g_autofree char *now = screenshot(f, display, name, &len);
                const char *pixels_now = xwd_pixels(now, len, &n_now);
                if (n_now != n_before || memcmp(pixels_now, pixels_before, n_now) != 0)
                        return true;
                g_usleep(100000);
        }
        return false;
}

static void assert_log_has(const char *log, const char *what) {
        if (!strstr(log, what))
                g_error("fridged's log lacks \"%s\"", what);
}

static void test_desktop_cycle(Fixture *f, gconstpointer data) {
        setup_harness(f, "[Freeze]\nTimeoutMs=120000\n[Flush]\nTimeoutMs=1500\nOnTimeout=continue\n", true);
        SKIP_IF_UNSET(f);
        if (!f->h->slow) {
                g_test_skip("SLOWFS is not set");
                return;
        }
        if (!harness_env("FRIDGECTL")) {
                g_test_skip("FRIDGECTL is not set");
                return;
        }
        const char *x = scratch_add(f->s, "x.scope"), *term = scratch_add(f->s, "term.scope"),
                   *shell = scratch_add(f->s, "shell.scope"), *notify = scratch_add(f->s, "dunst.scope"),
                   *app = scratch_add(f->s, "app.service"), *stuck = scratch_add(f->s, "stuck.service");
        scratch_spawn(f->s, app, NULL);
        g_autofree char *display = g_strdup_printf(":%u", scratch_spawn_xvfb(f->s, x, "1024x300x24"));
        start_dunst(f, notify, display);
        /* a data cleaner (late) in fsync on held slowfs, which cannot freeze:
         * the late stage waits for it, so the cycle stays cancellable */
        harness_assert_task_in_state_d(harness_scratch_stuck_in_fsync(f->h, f->s, stuck, NULL, NULL));

        const char *watched[] = { x, term, shell, notify, NULL };
        ScratchWatch *watch = scratch_watch_start(f->s, watched);

        g_autofree char *rc_file = NULL;
        pid_t xterm = start_xterm(f, term, shell, display, &rc_file);
        /* The early stage is frozen once the second flush runs */
        g_assert_true(harness_wait_property_signal(f->h, "Phase", "flush-again", 30000));
        g_assert_true(scratch_is_frozen(f->s, app));
        gsize a_len;
        g_autofree char *a = screenshot(f, display, "flush-again.xwd", &a_len);
        /* the late stage waits for the task in fsync: the bar moves on to it */
        g_assert_true(harness_wait_property_signal(f->h, "Phase", "freeze-late", 30000));
        g_assert_true(scratch_is_frozen(f->s, app));
        g_assert_true(screen_changes(f, display, a, a_len, "freeze-late.xwd"));
        keep_artifact(f, "flush-again.xwd");
        keep_artifact(f, "freeze-late.xwd");

        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        type_escape(display);
        g_autofree char *res = NULL, *error = NULL, *message = NULL;
        g_assert_true(harness_wait_finished(f->h, cycle, 30000, &res, &error, &message));
        g_assert_cmpstr(res, ==, "aborted");
        g_assert_cmpstr(error, ==, FRIDGE_INTERFACE ".Error.Cancelled");
        for (int i = 0; i < 1000 && !g_file_test(rc_file, G_FILE_TEST_EXISTS); i++)
                g_usleep(10000);
        g_autofree char *rc = NULL;
        g_assert_true(g_file_get_contents(rc_file, &rc, NULL, NULL));
        g_assert_cmpstr(g_strstrip(rc), ==, "3"); /* fridgectl: the cycle was cancelled */
        g_assert_cmpint(harness_wait_pid(xterm, 10000), !=, -1);
        assert_none_frozen(f);

        scratch_watch_end(watch);

        /* the plan said why each is ui */
        g_autofree char *log = fridged_log(f);
        g_autofree char *term_ui = g_strdup_printf("%s is ui: terminal of the caller: xterm (pid %d) holds /dev/pts/",
                                                   term, (int) xterm);
        g_autofree char *shell_ui = g_strdup_printf("%s is ui: the client that started the cycle", shell);
        g_autofree char *x_ui = g_strdup_printf("%s is ui: config %s/vendor/classes.d/60-desktop.conf:", x,
                                                f->h->dir);
        g_autofree char *dunst_ui = g_strdup_printf("%s is ui: config %s/vendor/classes.d/60-desktop.conf:", notify,
                                                    f->h->dir);
        assert_log_has(log, term_ui);
        assert_log_has(log, shell_ui);
        assert_log_has(log, x_ui);
        assert_log_has(log, dunst_ui);
        assert_log_has(log, ": Xvfb (pid ");
        assert_log_has(log, ": dunst (pid ");
        harness_slowfs_release(f->h);
}

/* ---- an X server sharing its cgroup with applications ---- */

typedef struct PlanRow {
        char *cgroup, *class, *reason;
} PlanRow;

static void plan_row_free(PlanRow *r) {
        g_free(r->cgroup);
        g_free(r->class);
        g_free(r->reason);
        g_free(r);
}

static PlanRow *plan_find(Harness *h, const char *cgroup) {
        PlanRow *found = g_new0(PlanRow, 1);
        if (!harness_plan_row(h, cgroup, &found->class, &found->reason))
                g_error("the plan has no entry for %s", cgroup);
        found->cgroup = g_strdup(cgroup);
        return found;
}

/* A program named Xorg (its comm and its executable's basename) in
 * session-2.scope beside two sleeps, as `uid`'s; app.service beside it.
 * Returns Xorg's pid. */
static pid_t spawn_xorg_session(Fixture *f, const char *session, const char *app, uid_t uid) {
        g_autofree char *xorg = g_build_filename(f->tmp, "Xorg", NULL);
        g_autofree char *sleep_path = g_find_program_in_path("sleep");
        g_autofree char *bytes = NULL;
        gsize len;
        g_assert_true(g_file_get_contents(sleep_path, &bytes, &len, NULL));
        g_assert_true(g_file_set_contents(xorg, bytes, (gssize) len, NULL));
        g_assert_cmpint(chmod(xorg, 0755), ==, 0);
        g_assert_cmpint(chmod(f->tmp, 0755), ==, 0);
        g_autofree char *reuid = g_strdup_printf("--reuid=%u", (unsigned) uid);
        g_autofree char *regid = g_strdup_printf("--regid=%u", (unsigned) uid);
        char *x_argv[] = { (char *) "setpriv", reuid, regid, (char *) "--clear-groups", (char *) "--", xorg,
                           (char *) "1000", NULL };
        char *app_argv[] = { (char *) "sleep", (char *) "1000", NULL };
        pid_t x = scratch_spawn(f->s, session, x_argv);
        scratch_spawn(f->s, session, app_argv);
        scratch_spawn(f->s, session, app_argv);
        scratch_spawn(f->s, app, app_argv);
        /* scratch_spawn returns once the child is in its cgroup; its exec may come later */
        g_autofree char *comm_path = g_strdup_printf("/proc/%d/comm", (int) x);
        for (int i = 0; i < 500; i++) {
                g_autofree char *comm = NULL;
                if (g_file_get_contents(comm_path, &comm, NULL, NULL) && g_str_equal(g_strstrip(comm), "Xorg"))
                        break;
                g_usleep(10000);
        }
        return x;
}

/* An X11 session without user units: "Xorg" and two applications in one
 * session scope. The scope is kept running whole, and the plan says which
 * process kept it and how many others run on with it; a cgroup beside it
 * is frozen. */
static void test_xorg_shares_cgroup(Fixture *f, gconstpointer data) {
        setup_harness(f, "", false);
        SKIP_IF_UNSET(f);
        const char *session = scratch_add(f->s, "session-2.scope"), *app = scratch_add(f->s, "app.service");
        pid_t x = spawn_xorg_session(f, session, app, 0);

        PlanRow *row = plan_find(f->h, session);
        g_autofree char *want = g_strdup_printf("Xorg (pid %d) keeps its cgroup running, and with it 2 other "
                                                "processes", (int) x);
        g_test_message("%s: %s: %s", row->cgroup, row->class, row->reason);
        g_assert_cmpstr(row->class, ==, "ui");
        g_assert_true(g_str_has_prefix(row->reason, "config "));
        g_assert_nonnull(strstr(row->reason, "60-desktop.conf:"));
        g_assert_true(g_str_has_suffix(row->reason, want));
        plan_row_free(row);
        PlanRow *other = plan_find(f->h, app);
        g_assert_cmpstr(other->class, ==, "early");
        plan_row_free(other);

        /* a cycle keeps it running and freezes the other */
        harness_control(f->h, "sleep-ms 1000");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(f->h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        g_assert_true(harness_wait_log_line(f->h, "power/state mem sleeping", 20000));
        g_assert_true(scratch_is_frozen(f->s, app));
        g_assert_false(scratch_is_frozen(f->s, session));
        g_autofree char *res = NULL;
        g_assert_true(harness_wait_finished(f->h, cycle, 20000, &res, NULL, NULL));
        g_assert_cmpstr(res, ==, "done");
        assert_none_frozen(f);
}

/* Anyone may run a program named Xorg (or Xvfb, or dunst): one of a user
 * who has no active session on a seat keeps nothing running */
static void test_xorg_of_another_user(Fixture *f, gconstpointer data) {
        setup_harness(f, "", false);
        SKIP_IF_UNSET(f);
        const char *session = scratch_add(f->s, "session-2.scope"), *app = scratch_add(f->s, "app.service");
        pid_t x = spawn_xorg_session(f, session, app, 65534);
        g_autofree char *status_path = g_strdup_printf("/proc/%d/status", (int) x);
        g_autofree char *status = NULL;
        g_assert_true(g_file_get_contents(status_path, &status, NULL, NULL));
        g_assert_true(g_regex_match_simple("^Uid:\\s+65534\\s", status, G_REGEX_MULTILINE, 0));
        /* nothing is kept: the freeze root is one early entry, whole */
        PlanRow *row = plan_find(f->h, f->s->root);
        g_test_message("%s: %s: %s", row->cgroup, row->class, row->reason);
        g_assert_cmpstr(row->class, ==, "early");
        plan_row_free(row);
}

static void noop_setup(Fixture *f, gconstpointer data) {
}

#define ADD(name, fn) g_test_add("/desktop/" name, Fixture, NULL, noop_setup, fn, teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        for (const char *const *t = desktop_tools; *t; t++) {
                g_autofree char *path = g_find_program_in_path(*t);
                if (!path) {
                        printf("SKIP: %s is not installed (the desktop tests need Xvfb, xterm, xdotool, dunst, "
                               "dbus-daemon, xwd and notify-send; tools/lib/setup.sh installs them)\n", *t);
                        return 77;
                }
        }
        ADD("cycle-keeps-ui", test_desktop_cycle);
        ADD("xorg-shares-cgroup", test_xorg_shares_cgroup);
        ADD("xorg-of-another-user", test_xorg_of_another_user);
        return g_test_run();
}
