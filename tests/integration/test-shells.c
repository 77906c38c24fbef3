/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real shells: gnome-shell (headless Wayland), plasmashell (Xvfb) and
 * sway (headless) with foot and mako, each on a private session bus, with
 * fridged over the simulated kernel and fridge-agent in the session. Their
 * processes sit in scratch cgroups named as their systemd user units are
 * (GNOME's notification proxy in the transient unit dbus-broker gives a
 * bus-activated service, plasmashell in plasma-plasmashell.service). A
 * client stuck in fsync, classed early, holds the cycle in the early
 * freeze: the shells' cgroups are never asked to freeze, the progress on
 * screen moves between two screenshots (kept under meson-logs), and the
 * Cancel clicked or typed on screen ends the cycle with nothing frozen.
 *
 * The session bus runs outside the scratch tree: at its systemd place
 * (user@UID.service/session.slice/dbus.service) fridged never freezes it,
 * and that exemption is classify's unit test's to prove, not this one's.
 */
#include <fcntl.h>
#include <gio/gio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness.h"
#include "harness-private.h"
#include "scratch.h"
#include "session-names.h"

#define WAIT_MS 30000
#define USER_UID 65534          /* the shells refuse root or warn about it: they run as nobody */

typedef struct Fixture {
        Harness *h;
        Scratch *s;
        char *tmp;              /* HOME, XDG dirs, the session bus's socket and services, logs */
        char *session_address;
        GDBusConnection *session;
        pid_t session_pid;
        const char *stuck, *app;        /* the early client that holds the cycle, an app that freezes */
        GPtrArray *watched;     /* the session's cgroups, which must never freeze */
        char *x_display;        /* the X display of an X11 session, or NULL */
} Fixture;

/* ---- set-up ---- */

static const char *missing_tool(const char *const *tools) {
        for (const char *const *t = tools; *t; t++) {
                g_autofree char *path = g_find_program_in_path(*t);
                if (!path)
                        return *t;
        }
        return NULL;
}

/* NULL when the case can run here, else why not */
static const char *skip_reason(const char *const *tools) {
        const char *why = harness_scratch_skip_reason();
        if (why)
                return why;
        if (!harness_env("FRIDGE_AGENT") || !harness_env("FRIDGE_DESKTOP_CLASSES") || !harness_env("SLOWFS"))
                return "FRIDGE_AGENT, FRIDGE_DESKTOP_CLASSES or SLOWFS is not set";
        const char *tool = missing_tool(tools);
        if (tool) {
                static char buf[160];
                g_snprintf(buf, sizeof(buf), "%s is not installed (tools/test installs the desktop set: "
                           "gnome-shell, plasma-workspace, sway and their helpers)", tool);
                return buf;
        }
        return NULL;
}

static char *tmp_path(Fixture *f, const char *name) {
        return g_build_filename(f->tmp, name, NULL);
}

/* A directory of the session's user */
static void user_dir(Fixture *f, const char *name, mode_t mode) {
        g_autofree char *path = tmp_path(f, name);
        g_assert_cmpint(g_mkdir_with_parents(path, mode), ==, 0);
        g_assert_cmpint(chown(path, USER_UID, USER_UID), ==, 0);
        g_assert_cmpint(chmod(path, mode), ==, 0);
}

static void write_file(const char *path, const char *text, bool user_owned) {
        g_autoptr(GError) e = NULL;
        g_assert_true(g_file_set_contents(path, text, -1, &e));
        if (user_owned)
                g_assert_cmpint(chown(path, USER_UID, USER_UID), ==, 0);
}

/* The session bus (root's dbus-daemon; the user and root may connect),
 * activating only the services in TMP/services */
static void start_session_bus(Fixture *f) {
        g_autofree char *conf = tmp_path(f, "session-bus.conf");
        g_autofree char *text = g_strdup_printf(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<busconfig><type>session</type><listen>unix:path=%s/session-bus</listen><auth>EXTERNAL</auth>\n"
                "<servicedir>%s/services</servicedir>\n"
                "<policy context=\"default\"><allow user=\"*\"/><allow send_destination=\"*\" eavesdrop=\"true\"/>"
                "<allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n", f->tmp, f->tmp);
        write_file(conf, text, false);
        g_autofree char *config = g_strdup_printf("--config-file=%s", conf);
        g_autofree char *want = g_strdup(f->session_address);
        char *argv[] = { (char *) "/usr/bin/dbus-daemon", config, (char *) "--nofork", (char *) "--print-address=1", NULL };
        int out = -1;
        f->session_pid = harness_spawn_bg(argv, &out);
        GString *line = g_string_new(NULL);
        char c;
        while (read(out, &c, 1) == 1 && c != '\n')
                g_string_append_c(line, c);
        close(out);
        g_autofree char *said = g_string_free(line, FALSE);
        g_assert_true(g_str_has_prefix(said, want)); /* the services were told it before */
        g_autoptr(GError) e = NULL;
        f->session = g_dbus_connection_new_for_address_sync(
                f->session_address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &e);
        g_assert_no_error(e);
}

/* fridged over scratch cgroups with the shipped classes.d file; the
 * stuck client's unit is early by the test's own file, so the early
 * stage waits for it (detection alone would make it late) */
static bool setup(Fixture *f, const char *const *tools) {
        const char *why = skip_reason(tools);
        if (why) {
                g_test_skip(why);
                return false;
        }
        f->s = scratch_new();
        f->tmp = g_dir_make_tmp("fridge-shells-XXXXXX", NULL);
        g_assert_nonnull(f->tmp);
        g_assert_cmpint(chmod(f->tmp, 0755), ==, 0);
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\nTimeoutMs=120000\n"
                                                  /* the stuck client holds the flush too: on past it */
                                                  "[Flush]\nTimeoutMs=1500\nOnTimeout=continue\n", f->s->root);
        HarnessOptions o = { .config = config, .vendor_classes = harness_env("FRIDGE_DESKTOP_CLASSES"),
                             .classes = "[Early]\nUnits=stuck.service\n", .real_cgroups = true, .slowfs = true,
                             /* the session's user, on seat0 as logind would say, may sleep */
                             .open_bus = true, .polkit_table = "io.fridge.sleep 65534 yes\n",
                             .seated_uid = USER_UID };
        f->h = harness_new(&o);
        for (const char *d = "home\0run\0config\0data\0cache\0"; *d; d += strlen(d) + 1)
                user_dir(f, d, g_str_equal(d, "run") ? 0700 : 0755);
        f->session_address = g_strdup_printf("unix:path=%s/session-bus", f->tmp);
        g_autofree char *services = tmp_path(f, "services");
        g_assert_cmpint(g_mkdir_with_parents(services, 0755), ==, 0);
        f->watched = g_ptr_array_new();
        f->app = scratch_add(f->s, "app.service");
        scratch_spawn(f->s, f->app, NULL);
        return true;
}

static void dump_logs(Fixture *f);

static void teardown(Fixture *f) {
        if (f->h && g_test_failed())
                dump_logs(f);
        if (f->h && f->h->slowfs_held)
                harness_slowfs_release(f->h);
        harness_free(f->h);
        scratch_free(f->s); /* after fridged: it must not hold anything frozen */
        g_clear_object(&f->session);
        (void) harness_stop_pid(&f->session_pid, 5000);
        g_free(f->session_address);
        g_free(f->x_display);
        if (f->watched)
                g_ptr_array_unref(f->watched);
        if (f->tmp) {
                g_autofree char *rm = g_strdup_printf("rm -rf '%s'", f->tmp);
                (void) !system(rm);
                g_free(f->tmp);
        }
}

/* ---- the session's processes ---- */

/* The session's environment: its user's directories and buses */
static GPtrArray *session_env(Fixture *f, const char *desktop) {
        GPtrArray *env = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(env, g_strdup("PATH=/usr/local/bin:/usr/bin:/bin"));
        g_ptr_array_add(env, g_strdup("LANG=C.UTF-8"));
        const char *const dirs[][2] = { { "HOME", "home" }, { "XDG_RUNTIME_DIR", "run" },
                                        { "XDG_CONFIG_HOME", "config" }, { "XDG_DATA_HOME", "data" },
                                        { "XDG_CACHE_HOME", "cache" } };
        for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++)
                g_ptr_array_add(env, g_strdup_printf("%s=%s/%s", dirs[i][0], f->tmp, dirs[i][1]));
        g_ptr_array_add(env, g_strdup_printf("DBUS_SESSION_BUS_ADDRESS=%s", f->session_address));
        /* the harness's bus: nothing answers there for logind, as on a machine without it */
        g_ptr_array_add(env, g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", f->h->bus_address));
        g_ptr_array_add(env, g_strdup_printf("XDG_CURRENT_DESKTOP=%s", desktop));
        if (f->x_display)
                g_ptr_array_add(env, g_strdup_printf("DISPLAY=%s", f->x_display));
        /* the sanitizers' settings reach fridge-agent */
        for (const char *v = "ASAN_OPTIONS\0UBSAN_OPTIONS\0LSAN_OPTIONS\0"; *v; v += strlen(v) + 1)
                if (g_getenv(v))
                        g_ptr_array_add(env, g_strdup_printf("%s=%s", v, g_getenv(v)));
        return env;
}

/* env -i ENV... [setpriv to the session's user] CMD..., NULL-terminated;
 * it borrows the strings */
static GPtrArray *session_argv(GPtrArray *env, bool as_user, const char *const *cmd) {
        GPtrArray *a = g_ptr_array_new();
        g_ptr_array_add(a, (char *) "/usr/bin/env");
        g_ptr_array_add(a, (char *) "-i");
        for (guint i = 0; i < env->len; i++)
                g_ptr_array_add(a, env->pdata[i]);
        const char *const drop[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--" };
        for (size_t i = 0; as_user && i < G_N_ELEMENTS(drop); i++)
                g_ptr_array_add(a, (char *) drop[i]);
        for (const char *const *p = cmd; *p; p++)
                g_ptr_array_add(a, (char *) *p);
        g_ptr_array_add(a, NULL);
        return a;
}

/* argv in `cgroup` (a scratch cgroup), with `env` only, as the session's
 * user or root, its output in TMP/LOG */
static pid_t spawn_in(Fixture *f, const char *cgroup, GPtrArray *env, bool as_user, const char *log,
                      const char *const *argv) {
        g_autofree char *path = tmp_path(f, log);
        g_autofree char *redirect = g_strdup_printf("exec \"$@\" >>'%s' 2>&1", path);
        g_autoptr(GPtrArray) a = session_argv(env, as_user, argv);
        const char *const head[] = { "/bin/sh", "-c", redirect, "sh" };
        for (size_t i = 0; i < G_N_ELEMENTS(head); i++)
                g_ptr_array_insert(a, (gint) i, (char *) head[i]);
        return scratch_spawn(f->s, cgroup, (char *const *) a->pdata);
}

/* A bus-activated service of the session's user, as the session bus
 * starts it, in `cgroup` (the unit systemd would give it; NULL: the bus's
 * own), with the session's environment, its output in TMP/NAME.log */
static void add_user_service(Fixture *f, const char *name, const char *desktop, const char *cgroup,
                             const char *command) {
        g_autoptr(GPtrArray) env = session_env(f, desktop);
        g_ptr_array_add(env, NULL);
        g_autofree char *vars = g_strjoinv(" ", (char **) env->pdata);
        g_autofree char *dir = cgroup ? scratch_abs(f->s, cgroup) : NULL;
        g_autofree char *move = dir ? g_strdup_printf("echo $$ > %s/cgroup.procs && ", dir) : g_strdup("");
        g_autofree char *path = g_strdup_printf("%s/services/%s.service", f->tmp, name);
        g_autofree char *text = g_strdup_printf(
                "[D-BUS Service]\nName=%s\nExec=/bin/sh -c '%sexec env -i %s setpriv --reuid=65534 --regid=65534 "
                "--clear-groups -- %s >>%s/%s.log 2>&1'\n", name, move, vars, command, f->tmp, name);
        write_file(path, text, false);
}

static const char *watch_cgroup(Fixture *f, const char *name) {
        const char *cgroup = scratch_add(f->s, name);
        g_ptr_array_add(f->watched, (char *) cgroup);
        return cgroup;
}

static void wait_name(Fixture *f, const char *name, pid_t owner_process) {
        for (int i = 0; i < WAIT_MS / 50; i++) {
                if (session_name_has_owner(f->session, name))
                        return;
                if (owner_process > 0 && kill(owner_process, 0) < 0)
                        break;
                g_usleep(50000);
        }
        g_error("%s did not appear on the session bus", name);
}

static bool agent_log_has(Fixture *f, const char *what) {
        g_autofree char *path = tmp_path(f, "agent.log"), *text = NULL;
        return g_file_get_contents(path, &text, NULL, NULL) && strstr(text, what);
}

/* What the session's programs said, before a failure ends the test
 * (g_error() and failed assertions abort: no teardown runs first) */
static void dump_logs(Fixture *f) {
        g_autofree char *logs = g_strdup_printf("tail -n 30 '%s'/*.log >&2", f->tmp);
        (void) !system(logs);
        harness_dump_fridged_log(f->h);
}

static void wait_agent_log(Fixture *f, const char *what) {
        for (int i = 0; i < WAIT_MS / 50 && !agent_log_has(f, what); i++)
                g_usleep(50000);
        if (!agent_log_has(f, what)) {
                dump_logs(f);
                g_error("fridge-agent did not log \"%s\"", what);
        }
}

/* fridge-agent in fridge-agent.service, as its user unit runs it, as
 * the session's user; it reports the shell's roles, fridged holds them */
static pid_t start_agent(Fixture *f, const char *desktop, const char *wayland_display) {
        const char *cgroup = watch_cgroup(f, "fridge-agent.service");
        g_autoptr(GPtrArray) env = session_env(f, desktop);
        if (wayland_display)
                g_ptr_array_add(env, g_strdup_printf("WAYLAND_DISPLAY=%s", wayland_display));
        const char *const argv[] = { harness_exe_for_others(harness_env("FRIDGE_AGENT")), NULL };
        pid_t pid = spawn_in(f, cgroup, env, true, "agent.log", argv);
        if (wayland_display)
                wait_agent_log(f, "fridged holds compositor (pid ");
        wait_agent_log(f, "fridged holds org.freedesktop.Notifications (pid ");
        return pid;
}

/* The client stuck in fsync on held slowfs, in the early stage */
static void start_stuck_client(Fixture *f) {
        f->stuck = scratch_add(f->s, "stuck.service");
        harness_assert_task_in_state_d(harness_scratch_stuck_in_fsync(f->h, f->s, f->stuck, NULL, NULL));
}

/* The cycle in the early freeze: the app is frozen, the stage waits */
static void wait_early_freeze(Fixture *f) {
        g_assert_true(harness_wait_property_signal(f->h, "Phase", "freeze-early", WAIT_MS));
        for (int i = 0; i < WAIT_MS / 50 && !scratch_is_frozen(f->s, f->app); i++)
                g_usleep(50000);
        g_assert_true(scratch_is_frozen(f->s, f->app));
}

static uint64_t start_held_cycle(Fixture *f) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, NULL), ==, 0);
        wait_early_freeze(f);
        return cycle;
}

/* Cancelled on screen: aborted, nothing left frozen, the session never asked to freeze */
static void assert_cancelled(Fixture *f, uint64_t cycle, ScratchWatch *watch) {
        g_autofree char *res = NULL, *error = NULL, *message = NULL;
        g_assert_true(harness_wait_finished(f->h, cycle, WAIT_MS, &res, &error, &message));
        g_test_message("the cycle: %s %s %s", res, error, message);
        g_assert_cmpstr(res, ==, "aborted");
        g_assert_cmpstr(error, ==, FRIDGE_INTERFACE ".Error.Cancelled");
        harness_slowfs_release(f->h);
        for (guint i = 0; i < f->s->cgroups->len; i++)
                if (scratch_is_frozen(f->s, f->s->cgroups->pdata[i]))
                        g_error("%s is still frozen", (const char *) f->s->cgroups->pdata[i]);
        scratch_watch_end(watch);
}

static void assert_plan_class(Fixture *f, const char *cgroup, const char *want, const char *reason_has) {
        g_autofree char *class = NULL, *reason = NULL;
        if (!harness_plan_row(f->h, cgroup, &class, &reason))
                g_error("the plan has no entry for %s", cgroup);
        g_test_message("%s: %s: %s", cgroup, class, reason);
        g_assert_cmpstr(class, ==, want);
        if (!strstr(reason, reason_has))
                g_error("the plan's reason for %s lacks \"%s\": %s", cgroup, reason_has, reason);
}

static ScratchWatch *watch_session(Fixture *f) {
        g_ptr_array_add(f->watched, NULL);
        ScratchWatch *w = scratch_watch_start(f->s, (const char *const *) f->watched->pdata);
        g_ptr_array_remove_index(f->watched, f->watched->len - 1);
        return w;
}

/* A copy of a screenshot for people under meson-logs/ */
static void keep_artifact(const char *path, const char *name) {
        const char *dir = harness_env("FRIDGE_ARTIFACT_DIR");
        g_autofree char *data = NULL;
        gsize len;
        if (!dir || g_mkdir_with_parents(dir, 0755) < 0 || !g_file_get_contents(path, &data, &len, NULL))
                return;
        g_autofree char *copy = g_strdup_printf("%s/test-shells-%s", dir, name);
        if (g_file_set_contents(copy, data, (gssize) len, NULL))
                g_test_message("screenshot kept: %s", copy);
}

static bool files_differ(const char *a, const char *b) {
        g_autofree char *da = NULL, *db = NULL;
        gsize la = 0, lb = 0;
        g_assert_true(g_file_get_contents(a, &da, &la, NULL));
        g_assert_true(g_file_get_contents(b, &db, &lb, NULL));
        return la != lb || memcmp(da, db, la) != 0;
}

/* ---- GNOME Shell ---- */

#define MUTTER_RD "org.gnome.Mutter.RemoteDesktop"
#define GNOME_BANNER_X 262      /* the banner on a 1024x768 monitor: centred, 500 wide, under the top bar */
#define GNOME_BANNER_Y 36
#define GNOME_BANNER_W 500
#define GNOME_BANNER_H 140

/* gsettings for a quiet start: no hot corner, no animations, no welcome tour */
static void gnome_settings(Fixture *f) {
        user_dir(f, "config/glib-2.0/settings", 0755);
        g_autofree char *keyfile = tmp_path(f, "config/glib-2.0/settings/keyfile");
        write_file(keyfile, "[org/gnome/desktop/interface]\nenable-hot-corners=false\nenable-animations=false\n"
                            "[org/gnome/shell]\nwelcome-dialog-last-shown-version='999'\n", true);
        user_dir(f, "data/gnome-shell", 0755);
        g_autofree char *warned = tmp_path(f, "data/gnome-shell/lock-warning-shown");
        write_file(warned, "", true);
}

static GVariant *gnome_call(Fixture *f, const char *dest, const char *path, const char *iface, const char *method,
                            GVariant *args) {
        g_autoptr(GError) e = NULL;
        GVariant *r = g_dbus_connection_call_sync(f->session, dest, path, iface, method, args, NULL,
                                                  G_DBUS_CALL_FLAGS_NONE, 20000, NULL, &e);
        if (!r)
                g_error("%s.%s: %s", iface, method, e->message);
        return r;
}

/* A screenshot of the whole monitor (w = 0) or an area, through the
 * shell's own D-Bus API: the caller must own org.gnome.Screenshot (on its
 * allow-list), and the shell, as the user, writes the file */
static char *gnome_screenshot(Fixture *f, const char *name, int x, int y, int w, int h) {
        char *path = g_build_filename(f->tmp, "home", name, NULL);
        GVariant *args = w ? g_variant_new("(iiiibs)", x, y, w, h, FALSE, path)
                           : g_variant_new("(bbs)", FALSE, FALSE, path);
        g_autoptr(GVariant) r = gnome_call(f, "org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot",
                                           "org.gnome.Shell.Screenshot", w ? "ScreenshotArea" : "Screenshot", args);
        gboolean ok = FALSE;
        g_variant_get(r, "(b&s)", &ok, NULL);
        g_assert_true(ok);
        return path;
}

typedef struct GnomeInput {
        Fixture *f;
        char *session;          /* a RemoteDesktop session's object path */
} GnomeInput;

static void gnome_input(GnomeInput *in, const char *method, GVariant *args) {
        g_variant_unref(gnome_call(in->f, MUTTER_RD, in->session, MUTTER_RD ".Session", method, args));
        g_usleep(100000);
}

static void gnome_input_start(Fixture *f, GnomeInput *ret) {
        g_autoptr(GVariant) r = gnome_call(f, MUTTER_RD, "/org/gnome/Mutter/RemoteDesktop", MUTTER_RD,
                                           "CreateSession", NULL);
        *ret = (GnomeInput) { .f = f };
        g_variant_get(r, "(o)", &ret->session);
        gnome_input(ret, "Start", NULL);
}

static void gnome_key(GnomeInput *in, unsigned keysym) {
        gnome_input(in, "NotifyKeyboardKeysym", g_variant_new("(ub)", keysym, TRUE));
        gnome_input(in, "NotifyKeyboardKeysym", g_variant_new("(ub)", keysym, FALSE));
}

/* Without a screen-cast stream only relative motion exists: into the
 * top-left corner first, where the pointer stops, then to (x, y) */
static void gnome_pointer_to(GnomeInput *in, double x, double y) {
        gnome_input(in, "NotifyPointerMotionRelative", g_variant_new("(dd)", -5000.0, -5000.0));
        gnome_input(in, "NotifyPointerMotionRelative", g_variant_new("(dd)", x, y));
}

static void gnome_click(GnomeInput *in) {
        gnome_input(in, "NotifyPointerButton", g_variant_new("(ib)", 272 /* BTN_LEFT */, TRUE));
        gnome_input(in, "NotifyPointerButton", g_variant_new("(ib)", 272, FALSE));
}

static void gnome_input_stop(GnomeInput *in) {
        gnome_input(in, "Stop", NULL);
        g_free(in->session);
}

static pid_t start_gnome_shell(Fixture *f, const char *shell) {
        g_autoptr(GPtrArray) env = session_env(f, "GNOME");
        g_ptr_array_add(env, g_strdup("GSETTINGS_BACKEND=keyfile"));
        g_ptr_array_add(env, g_strdup("XDG_SESSION_TYPE=wayland"));
        const char *const argv[] = { "gnome-shell", "--headless", "--wayland", "--no-x11", "--virtual-monitor",
                                     "1024x768", NULL };
        pid_t pid = spawn_in(f, shell, env, true, "gnome-shell.log", argv);
        /* the shell activates its notification proxy as it starts */
        wait_name(f, "org.gnome.Shell.Screenshot", pid);
        wait_name(f, "org.freedesktop.Notifications", pid);
        /* the screenshot tool's name, which the shell lets take screenshots */
        g_variant_unref(gnome_call(f, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                   "RequestName", g_variant_new("(su)", "org.gnome.Screenshot", 0)));
        return pid;
}

/* Screenshots of the banner as it pops up, until one differs from the
 * first: the countdown and the bar move on (the agent renews the banner at
 * most every 5 s while only the countdown moves: see agent/text.c) */
static void gnome_banner_moves(Fixture *f) {
        g_autofree char *first = gnome_screenshot(f, "banner-1.png", GNOME_BANNER_X, GNOME_BANNER_Y, GNOME_BANNER_W,
                                                  GNOME_BANNER_H);
        keep_artifact(first, "gnome-banner-1.png");
        for (int i = 0; i < 60; i++) {
                g_usleep(250000);
                g_autofree char *next = gnome_screenshot(f, "banner-2.png", GNOME_BANNER_X, GNOME_BANNER_Y,
                                                         GNOME_BANNER_W, GNOME_BANNER_H);
                if (files_differ(first, next)) {
                        keep_artifact(next, "gnome-banner-2.png");
                        return;
                }
        }
        g_error("the GNOME banner did not change in 15 s");
}

static void test_gnome(Fixture *f, gconstpointer data) {
        static const char *const tools[] = { "gnome-shell", "gjs", "setpriv", "dbus-daemon", NULL };
        if (!setup(f, tools))
                return;
        const char *shell = watch_cgroup(f, "org.gnome.Shell@wayland.service");
        const char *proxy = watch_cgroup(f, "dbus-:1.2-org.gnome.Shell.Notifications@0.service");
        gnome_settings(f);
        /* as gnome-shell activates it, in the transient unit dbus-broker gives it */
        add_user_service(f, "org.gnome.Shell.Notifications", "GNOME", proxy,
                         "/usr/bin/gjs /usr/share/gnome-shell/org.gnome.Shell.Notifications");
        start_session_bus(f);
        start_gnome_shell(f, shell);
        start_agent(f, "GNOME", "wayland-0");
        wait_agent_log(f, "Notification server gnome-shell (GNOME ");
        /* by their roles, which rank above the vendor's names */
        assert_plan_class(f, proxy, "ui", "uid 65534: owns org.freedesktop.Notifications on its session bus");
        assert_plan_class(f, shell, "ui", "uid 65534: its Wayland compositor");
        start_stuck_client(f);

        ScratchWatch *watch = watch_session(f);
        GnomeInput in;
        gnome_input_start(f, &in);
        gnome_key(&in, 0xff1b); /* Escape: out of the overview the shell starts in */
        gnome_pointer_to(&in, 500, 600); /* away from where banners pop up */
        g_autofree char *empty = gnome_screenshot(f, "no-banner.png", GNOME_BANNER_X, GNOME_BANNER_Y, GNOME_BANNER_W,
                                                  GNOME_BANNER_H);
        uint64_t cycle = start_held_cycle(f);
        gnome_banner_moves(f);
        /* the pointer on the banner: it expands and shows its Cancel button */
        gnome_pointer_to(&in, GNOME_BANNER_X + GNOME_BANNER_W / 2, GNOME_BANNER_Y + 30);
        g_usleep(500000);
        g_autofree char *screen = gnome_screenshot(f, "screen.png", 0, 0, 0, 0);
        keep_artifact(screen, "gnome.png");
        gnome_pointer_to(&in, GNOME_BANNER_X + GNOME_BANNER_W / 2, GNOME_BANNER_Y + 132); /* Cancel, under a 3-line body */
        gnome_click(&in);
        assert_cancelled(f, cycle, watch);
        /* the result pops up as a banner of its own (an update in place
         * after the click would only go to the message list) */
        g_usleep(1000000);
        g_autofree char *result = gnome_screenshot(f, "result.png", 0, 0, 0, 0);
        keep_artifact(result, "gnome-result.png");
        g_autofree char *banner = gnome_screenshot(f, "result-banner.png", GNOME_BANNER_X, GNOME_BANNER_Y,
                                                   GNOME_BANNER_W, GNOME_BANNER_H);
        g_assert_true(files_differ(empty, banner));
        gnome_input_stop(&in);
}

/* ---- Plasma under Xvfb ---- */

static int xdotool(const char *display, const char *const *args, char **ret_out) {
        g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(a, g_strdup("/usr/bin/env"));
        g_ptr_array_add(a, g_strdup_printf("DISPLAY=%s", display));
        g_ptr_array_add(a, g_strdup("xdotool"));
        for (const char *const *p = args; *p; p++)
                g_ptr_array_add(a, g_strdup(*p));
        g_ptr_array_add(a, NULL);
        return harness_run((char **) a->pdata, 20000, ret_out);
}

/* The job view's popup: plasmashell's visible window of the popup's size
 * (DESKTOP-NOTES: 336x104), 0 until it shows */
static unsigned long plasma_job_window(const char *display, int *ret_x, int *ret_y) {
        const char *const search[] = { "search", "--onlyvisible", "--classname", "plasmashell", NULL };
        g_autofree char *out = NULL;
        if (xdotool(display, search, &out) != 0 || !out)
                return 0;
        g_auto(GStrv) ids = g_strsplit(g_strstrip(out), "\n", -1);
        for (char **id = ids; *id && **id; id++) {
                const char *const geo[] = { "getwindowgeometry", "--shell", *id, NULL };
                g_autofree char *g = NULL;
                if (xdotool(display, geo, &g) != 0 || !g)
                        continue;
                int x = -1, y = -1, w = 0, h = 0;
                g_auto(GStrv) lines = g_strsplit(g, "\n", -1);
                for (char **l = lines; *l; l++)
                        (void) (sscanf(*l, "X=%d", &x) || sscanf(*l, "Y=%d", &y) || sscanf(*l, "WIDTH=%d", &w) ||
                                sscanf(*l, "HEIGHT=%d", &h));
                if (w > 200 && w < 600 && h > 60 && h < 300) {
                        *ret_x = x;
                        *ret_y = y;
                        return strtoul(*id, NULL, 10);
                }
        }
        return 0;
}

/* xwd of `window`, or of the whole screen (0) */
static char *xwd_window(Fixture *f, const char *display, unsigned long window, const char *name) {
        char *path = tmp_path(f, name);
        g_autofree char *id = window ? g_strdup_printf("%lu", window) : NULL;
        char *argv[] = { (char *) "/usr/bin/xwd", (char *) (id ? "-id" : "-root"), id ? id : (char *) "-silent",
                         (char *) "-silent", (char *) "-display", (char *) display, (char *) "-out", path, NULL };
        g_assert_cmpint(harness_run(argv, 10000, NULL), ==, 0);
        return path;
}

/* A PNG copy for people (convert), beside the xwd the test compares */
static void keep_xwd(Fixture *f, const char *xwd, const char *name) {
        g_autofree char *png = tmp_path(f, name), *in = g_strdup_printf("xwd:%s", xwd);
        char *argv[] = { (char *) "/usr/bin/convert", in, png, NULL };
        if (harness_run(argv, 20000, NULL) == 0)
                keep_artifact(png, name);
}

static uint32_t be32(const unsigned char *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/* The share of an xwd's 32-bit pixels that are light (three bytes of four
 * over 200): Breeze's popups are light, the wallpaper behind is dark, so a
 * popup still fading in or not yet drawn reads low */
static double xwd_light_share(const char *path) {
        g_autofree char *data = NULL;
        gsize len = 0;
        if (!g_file_get_contents(path, &data, &len, NULL) || len < 100)
                return 0.0;
        const unsigned char *u = (const unsigned char *) data;
        gsize skip = (gsize) be32(u) + (gsize) be32(u + 19 * 4) * 12;
        if (be32(u + 11 * 4) != 32 || skip >= len)
                return 0.0;
        gsize n = (len - skip) / 4, light = 0;
        for (gsize i = 0; i < n; i++) {
                const unsigned char *p = u + skip + i * 4;
                light += (p[0] > 200) + (p[1] > 200) + (p[2] > 200) + (p[3] > 200) >= 3;
        }
        return n ? (double) light / (double) n : 0.0;
}

/* The job view's popup once it is drawn: its window and place */
static unsigned long plasma_wait_job(Fixture *f, const char *display, int *ret_x, int *ret_y) {
        for (int i = 0; i < WAIT_MS / 100; i++) {
                unsigned long window = plasma_job_window(display, ret_x, ret_y);
                g_autofree char *shot = window ? xwd_window(f, display, window, "job-0.xwd") : NULL;
                if (shot && xwd_light_share(shot) > 0.4)
                        return window;
                g_usleep(100000);
        }
        dump_logs(f);
        g_error("no job view showed on the screen");
}

static pid_t start_plasmashell(Fixture *f, const char *cgroup, const char *display) {
        g_autoptr(GPtrArray) env = session_env(f, "KDE");
        g_ptr_array_add(env, g_strdup("QT_QPA_PLATFORM=xcb"));
        g_ptr_array_add(env, g_strdup("KDE_FULL_SESSION=true"));
        const char *const argv[] = { "plasmashell", "--no-respawn", NULL };
        pid_t pid = spawn_in(f, cgroup, env, true, "plasmashell.log", argv);
        wait_name(f, "org.kde.JobViewServer", pid);
        wait_name(f, "org.freedesktop.Notifications", pid);
        return pid;
}

static void test_plasma(Fixture *f, gconstpointer data) {
        static const char *const tools[] = { "plasmashell", "Xvfb", "xdotool", "xwd", "convert", "setpriv", NULL };
        if (!setup(f, tools))
                return;
        const char *x = watch_cgroup(f, "session-3.scope");
        const char *shell = watch_cgroup(f, "plasma-plasmashell.service");
        const char *display = f->x_display = g_strdup_printf(":%u", scratch_spawn_xvfb(f->s, x, "1024x768x24"));
        /* plasmashell will not load without the activity manager; both in
         * their units, which freeze */
        add_user_service(f, "org.kde.ActivityManager", "KDE", scratch_add(f->s, "plasma-kactivitymanagerd.service"),
                         "/usr/lib/x86_64-linux-gnu/libexec/kactivitymanagerd");
        add_user_service(f, "org.kde.kglobalaccel", "KDE", scratch_add(f->s, "plasma-kglobalaccel.service"),
                         "/usr/bin/kglobalaccel5");
        start_session_bus(f);
        start_plasmashell(f, shell, display);
        start_agent(f, "KDE", NULL);
        wait_agent_log(f, "Notification server Plasma (KDE ");
        /* plasmashell owns the notification and job view names: one of them */
        assert_plan_class(f, shell, "ui", "held by the user interface of uid 65534: owns org.");
        assert_plan_class(f, x, "ui", "60-desktop.conf");
        start_stuck_client(f);

        ScratchWatch *watch = watch_session(f);
        uint64_t cycle = start_held_cycle(f);
        int wx = 0, wy = 0;
        unsigned long window = plasma_wait_job(f, display, &wx, &wy);
        g_autofree char *first = xwd_window(f, display, window, "job-1.xwd");
        keep_xwd(f, first, "plasma-job-1.png");
        bool moved = false;
        for (int i = 0; i < 60 && !moved; i++) {
                g_usleep(250000);
                g_autofree char *next = xwd_window(f, display, window, "job-2.xwd");
                moved = xwd_light_share(next) > 0.4 && files_differ(first, next);
                if (moved)
                        keep_xwd(f, next, "plasma-job-2.png");
        }
        g_assert_true(moved);
        /* the job's stop button, right of the bar (a square, 285,84 in
         * the 336x104 popup) */
        g_autofree char *bx = g_strdup_printf("%d", wx + 285), *by = g_strdup_printf("%d", wy + 84);
        const char *const click[] = { "mousemove", bx, by, "sleep", "0.3", "click", "1", NULL };
        g_assert_cmpint(xdotool(display, click, NULL), ==, 0);
        assert_cancelled(f, cycle, watch);
        g_usleep(1000000);
        g_autofree char *result = xwd_window(f, display, 0, "result.xwd");
        keep_xwd(f, result, "plasma-result.png");
        wait_agent_log(f, "the job view's stop button");
}

/* ---- sway, headless, with foot, mako and Xwayland ---- */

/* The compositor's socket in XDG_RUNTIME_DIR, once it listens */
static char *sway_wait_display(Fixture *f, pid_t sway) {
        g_autofree char *run = tmp_path(f, "run");
        for (int i = 0; i < WAIT_MS / 50 && kill(sway, 0) == 0; i++) {
                g_autoptr(GDir) d = g_dir_open(run, 0, NULL);
                for (const char *n; d && (n = g_dir_read_name(d));)
                        if (g_str_has_prefix(n, "wayland-") && !g_str_has_suffix(n, ".lock"))
                                return g_strdup(n);
                g_usleep(50000);
        }
        dump_logs(f);
        g_error("sway did not open its Wayland socket");
}

static pid_t start_sway(Fixture *f, const char *session, char **ret_display) {
        g_autofree char *conf = tmp_path(f, "sway.conf");
        /* Xwayland at once (it starts with the first X client otherwise), no
         * bar (its clock would change the screen on its own) */
        write_file(conf, "output HEADLESS-1 resolution 1024x600\nxwayland force\ndefault_border none\n", false);
        g_autoptr(GPtrArray) env = session_env(f, "sway");
        const char *const wlr[] = { "WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman" };
        for (size_t i = 0; i < G_N_ELEMENTS(wlr); i++)
                g_ptr_array_add(env, g_strdup(wlr[i]));
        const char *const argv[] = { "sway", "-c", conf, NULL };
        pid_t pid = spawn_in(f, session, env, true, "sway.log", argv);
        *ret_display = sway_wait_display(f, pid);
        return pid;
}

/* A program of the session's user on its Wayland display */
static GPtrArray *wayland_env(Fixture *f, const char *display) {
        GPtrArray *env = session_env(f, "sway");
        g_ptr_array_add(env, g_strdup_printf("WAYLAND_DISPLAY=%s", display));
        return env;
}

static int run_as_user(Fixture *f, const char *display, const char *const *cmd) {
        g_autoptr(GPtrArray) env = wayland_env(f, display);
        g_autoptr(GPtrArray) a = session_argv(env, true, cmd);
        return harness_run((char **) a->pdata, 20000, NULL);
}

static char *grim_shot(Fixture *f, const char *display, const char *name) {
        char *path = g_build_filename(f->tmp, "home", name, NULL);
        const char *const argv[] = { "grim", path, NULL };
        g_assert_cmpint(run_as_user(f, display, argv), ==, 0);
        return path;
}

/* Xwayland, which sway starts (wlroots forks it twice): in sway's cgroup */
static pid_t sway_xwayland(Fixture *f, const char *session) {
        g_autofree char *dir = scratch_abs(f->s, session), *procs = NULL;
        g_autofree char *path = g_build_filename(dir, "cgroup.procs", NULL);
        if (!g_file_get_contents(path, &procs, NULL, NULL))
                return 0;
        g_auto(GStrv) pids = g_strsplit(procs, "\n", -1);
        for (char **p = pids; *p && **p; p++) {
                g_autofree char *comm = NULL, *cpath = g_strdup_printf("/proc/%s/comm", *p);
                if (g_file_get_contents(cpath, &comm, NULL, NULL) && g_str_equal(g_strstrip(comm), "Xwayland"))
                        return (pid_t) atoi(*p);
        }
        return 0;
}

/* foot, as sway's exec would start it, running fridgectl suspend: its
 * exit code in TMP/fridgectl.rc */
static pid_t start_foot(Fixture *f, const char *cgroup, const char *display, char **ret_rc) {
        *ret_rc = tmp_path(f, "home/fridgectl.rc"); /* the user writes it */
        g_autofree char *script = g_strdup_printf("'%s' --bus-address='%s' suspend; echo $? > '%s'",
                                                  harness_exe_for_others(harness_env("FRIDGECTL")),
                                                  f->h->bus_address, *ret_rc);
        g_autoptr(GPtrArray) env = wayland_env(f, display);
        /* foot starts the shell in its own working directory, the build
         * tree's, which the user may not enter */
        g_autofree char *home = tmp_path(f, "home"), *cwd = g_strdup_printf("--working-directory=%s", home);
        const char *const argv[] = { "foot", cwd, "sh", "-c", script, NULL };
        return spawn_in(f, cgroup, env, true, "foot.log", argv);
}

/* grim's screenshots until one differs from the first: fridgectl's bar and
 * mako's notification move on */
static void sway_screen_moves(Fixture *f, const char *display) {
        g_autofree char *first = grim_shot(f, display, "sway-1.png");
        keep_artifact(first, "sway-1.png");
        for (int i = 0; i < 60; i++) {
                g_usleep(250000);
                g_autofree char *next = grim_shot(f, display, "sway-2.png");
                if (files_differ(first, next)) {
                        keep_artifact(next, "sway-2.png");
                        return;
                }
        }
        g_error("sway's screen did not change in 15 s");
}

static void test_sway(Fixture *f, gconstpointer data) {
        static const char *const tools[] = { "sway", "foot", "mako", "Xwayland", "wtype", "grim", "setpriv", NULL };
        if (!setup(f, tools))
                return;
        if (!harness_env("FRIDGECTL")) {
                g_test_skip("FRIDGECTL is not set");
                return;
        }
        const char *session = watch_cgroup(f, "session-2.scope");
        const char *notify = watch_cgroup(f, "mako.service");
        const char *term = watch_cgroup(f, "app-sway-foot-1.scope");
        start_session_bus(f);
        g_autofree char *display = NULL;
        (void) start_sway(f, session, &display);
        g_autoptr(GPtrArray) env = wayland_env(f, display);
        const char *const mako[] = { "mako", NULL };
        pid_t mako_pid = spawn_in(f, notify, env, true, "mako.log", mako);
        wait_name(f, "org.freedesktop.Notifications", mako_pid);
        /* by name, before any role: a seated user's sway and mako */
        assert_plan_class(f, session, "ui", "60-desktop.conf");
        assert_plan_class(f, notify, "ui", "60-desktop.conf");
        start_agent(f, "sway", display);
        wait_agent_log(f, "Notification server mako ");
        assert_plan_class(f, session, "ui", "uid 65534: its Wayland compositor");
        assert_plan_class(f, notify, "ui", "uid 65534: owns org.freedesktop.Notifications on its session bus");
        pid_t xwayland = 0;
        for (int i = 0; i < WAIT_MS / 50 && !(xwayland = sway_xwayland(f, session)); i++)
                g_usleep(50000);
        g_assert_cmpint(xwayland, >, 0);
        start_stuck_client(f);

        ScratchWatch *watch = watch_session(f);
        g_autofree char *rc_file = NULL;
        pid_t foot = start_foot(f, term, display, &rc_file);
        wait_early_freeze(f);
        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        sway_screen_moves(f, display);
        /* wtype loses keys typed at once after it connects (DESKTOP-NOTES) */
        const char *const esc[] = { "wtype", "-s", "300", "-k", "Escape", NULL };
        g_assert_cmpint(run_as_user(f, display, esc), ==, 0);
        assert_cancelled(f, cycle, watch);
        g_usleep(1000000);
        g_autofree char *result = grim_shot(f, display, "result.png");
        keep_artifact(result, "sway-result.png");
        for (int i = 0; i < 1000 && !g_file_test(rc_file, G_FILE_TEST_EXISTS); i++)
                g_usleep(10000);
        g_autofree char *rc = NULL;
        g_assert_true(g_file_get_contents(rc_file, &rc, NULL, NULL));
        g_assert_cmpstr(g_strstrip(rc), ==, "3"); /* fridgectl: the cycle was cancelled */
        g_assert_cmpint(harness_wait_pid(foot, 10000), !=, -1);
        g_assert_cmpint(kill(xwayland, 0), ==, 0);
        g_autofree char *foot_ui = g_strdup_printf("%s is ui: the client that started the cycle", term);
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &log, NULL, NULL));
        if (!strstr(log, foot_ui))
                g_error("fridged's log lacks \"%s\"", foot_ui);
}

static void fixture_setup(Fixture *f, gconstpointer data) {
}

static void fixture_teardown(Fixture *f, gconstpointer data) {
        teardown(f);
}

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
#define ADD(name, fn) g_test_add("/shells/" name, Fixture, NULL, fixture_setup, fn, fixture_teardown)
        ADD("gnome", test_gnome);
        ADD("plasma", test_plasma);
        ADD("sway", test_sway);
        return g_test_run();
}
