/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridge-agent against the real fridged (the harness's private "system"
 * bus, fakesys) and a notification server on a private session bus:
 * python3-dbusmock's notification_daemon template, whose Notify calls are
 * read back through org.freedesktop.DBus.Mock.GetCalls, or a real dunst
 * under Xvfb, whose screen is kept as a test artifact.
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
#include "standin-writer.h"

#define PYTHON "/usr/bin/python3"
#define NOTIFY_NAME "org.freedesktop.Notifications"
#define NOTIFY_PATH "/org/freedesktop/Notifications"
#define WAIT_MS 20000

typedef struct Fixture {
        Harness *h;
        char *session_address;
        GDBusConnection *session;
        bool nobody;            /* the agent runs as uid 65534, as a desktop user would */
        bool german;            /* the agent runs under LANGUAGE=de with the build tree's catalogs */
        pid_t session_pid, mock_pid, agent_pid, xvfb_pid, dunst_pid, jobview_pid;
        char *config_home;      /* XDG_CONFIG_HOME of the agent, NULL: none */
        Scratch *s;             /* scratch cgroups of the role cases */
        int displayfd;          /* Xvfb writes its display number here again at a reset: kept open */
        char *agent_log;
} Fixture;

/* One Notify call the mock recorded */
typedef struct Note {
        uint32_t replaces;
        char *summary, *body;
        char **actions;
        int value;              /* -1: no value hint */
        int urgency;            /* -1: none */
} Note;

static void note_free(Note *n) {
        g_free(n->summary);
        g_free(n->body);
        g_strfreev(n->actions);
        g_free(n);
}

/* ---- processes ---- */

static pid_t spawn_logged(char **argv, const char *const *env, const char *log, int stdout_fd) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        g_assert_cmpint(fd, >=, 0);
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = stdout_fd >= 0 ? stdout_fd : fd,
                           .stderr_fd = fd, .extra_fd = -1, .env = env };
        pid_t pid = harness_spawn(&s);
        close(fd);
        return pid;
}

/* Up to the first newline: dbus-daemon prints its address once it listens */
static char *read_line(int fd) {
        GString *s = g_string_new(NULL);
        char c;
        while (read(fd, &c, 1) == 1 && c != '\n')
                g_string_append_c(s, c);
        close(fd);
        return g_string_free(s, FALSE);
}

/* The session bus of a user other than root: anyone may connect */
static char *open_session_config(Fixture *f) {
        g_autofree char *path = g_build_filename(f->h->dir, "session-bus.conf", NULL);
        g_autofree char *text = g_strdup_printf(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<busconfig><type>session</type><listen>unix:path=%s/session-bus</listen><auth>EXTERNAL</auth>\n"
                "<policy context=\"default\"><allow user=\"*\"/><allow send_destination=\"*\" eavesdrop=\"true\"/>"
                "<allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n", f->h->dir);
        g_assert_true(g_file_set_contents(path, text, -1, NULL));
        return g_strdup_printf("--config-file=%s", path);
}

static void start_session_bus(Fixture *f) {
        g_autofree char *log = g_build_filename(f->h->dir, "session-bus.log", NULL);
        g_autofree char *addr = g_strdup_printf("--address=unix:path=%s/session-bus", f->h->dir);
        g_autofree char *config = f->nobody ? open_session_config(f) : g_strdup("--session");
        char *argv[] = { "/usr/bin/dbus-daemon", config, "--nofork", addr, "--print-address=1", NULL };
        int p[2];
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        f->session_pid = spawn_logged(argv, NULL, log, p[1]);
        close(p[1]);
        g_autofree char *line = read_line(p[0]);
        g_assert_true(g_str_has_prefix(line, "unix:"));
        f->session_address = g_strdup(line);
        g_autoptr(GError) e = NULL;
        f->session = g_dbus_connection_new_for_address_sync(
                f->session_address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &e);
        g_assert_no_error(e);
}

static void pump(Fixture *f, int ms) {
        int64_t end = g_get_monotonic_time() + ms * G_TIME_SPAN_MILLISECOND;
        while (g_get_monotonic_time() < end) {
                while (g_main_context_iteration(NULL, FALSE))
                        ;
                (void) sd_bus_process(f->h->bus, NULL);
                g_usleep(10 * G_TIME_SPAN_MILLISECOND);
        }
}

static void wait_name(Fixture *f, const char *name) {
        for (int i = 0; i < WAIT_MS / 50; i++) {
                if (session_name_has_owner(f->session, name))
                        return;
                pump(f, 50);
        }
        g_error("%s did not appear on the session bus within %d ms", name, WAIT_MS);
}

/* German: glibc honours LANGUAGE under the built-in C.UTF-8 (see test-i18n.c) */
static const char *const *session_env(Fixture *f) {
        static char *env[8];
        for (unsigned i = 0; i < G_N_ELEMENTS(env); i++)
                g_clear_pointer(&env[i], g_free);
        env[0] = g_strdup_printf("DBUS_SESSION_BUS_ADDRESS=%s", f->session_address);
        env[1] = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", f->h->bus_address);
        env[2] = g_strdup("G_MESSAGES_DEBUG=");
        unsigned n = 3;
        if (f->german) {
                env[n++] = g_strdup("LANGUAGE=de");
                env[n++] = g_strdup("LC_ALL=C.UTF-8");
                env[n++] = g_strdup_printf("FRIDGE_LOCALEDIR=%s", harness_env("FRIDGE_PO_DIR"));
        }
        if (f->config_home)
                env[n++] = g_strdup_printf("XDG_CONFIG_HOME=%s", f->config_home);
        return (const char *const *) env;
}

static void start_mock(Fixture *f) {
        g_autofree char *log = g_build_filename(f->h->dir, "mock.log", NULL);
        char *argv[] = { PYTHON, "-m", "dbusmock", "--template", "notification_daemon", NULL };
        char *as_nobody[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", PYTHON,
                              "-m", "dbusmock", "--template", "notification_daemon", NULL };
        f->mock_pid = spawn_logged(f->nobody ? as_nobody : argv, session_env(f), log, -1);
        wait_name(f, NOTIFY_NAME);
}

static void start_agent(Fixture *f) {
        g_free(f->agent_log); /* a second agent logs on in the same file */
        f->agent_log = g_build_filename(f->h->dir, "agent.log", NULL);
        char *agent = (char *) harness_env("FRIDGE_AGENT");
        char *argv[] = { agent, NULL };
        char *as_nobody[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", agent,
                              NULL };
        f->agent_pid = spawn_logged(f->nobody ? as_nobody : argv, session_env(f), f->agent_log, -1);
}

static char *agent_log(Fixture *f) {
        g_autofree char *text = NULL;
        (void) g_file_get_contents(f->agent_log, &text, NULL, NULL);
        return g_strdup(text ? text : "");
}

static void assert_agent_alive(Fixture *f) {
        int status;
        g_assert_cmpint(waitpid(f->agent_pid, &status, WNOHANG), ==, 0);
}

static const char *skip_reason(bool dunst) {
        const char *why = harness_skip_reason();
        if (why)
                return why;
        if (!harness_env("FRIDGE_AGENT"))
                return "FRIDGE_AGENT is not set";
        if (dunst) {
                static const char *const tools[] = { "/usr/bin/Xvfb", "/usr/bin/dunst", "/usr/bin/dunstctl",
                                                     "/usr/bin/import", "/usr/bin/convert" };
                for (size_t i = 0; i < G_N_ELEMENTS(tools); i++)
                        if (access(tools[i], X_OK) < 0)
                                return "xvfb, dunst or imagemagick is not installed";
                return NULL;
        }
        g_autofree char *out = NULL;
        char *argv[] = { PYTHON, "-c", "import dbusmock", NULL };
        if (harness_run(argv, 30000, &out) != 0)
                return "python3-dbusmock is not installed (" PYTHON " -c 'import dbusmock' failed)";
        return NULL;
}

typedef struct CaseOptions {
        bool mock;              /* a mock notification server from the start */
        bool dunst;
        const char *config;
        const char *polkit_table;       /* with it, the agent runs as nobody */
        bool logind;                    /* the logind stand-in: Sleep goes through logind */
        bool german;                    /* the agent in German (needs the built catalogs) */
        bool slowfs;                    /* slowfs, for a flush that takes as long as the case likes */
        const char *const *proc_files;  /* fakesys's /proc files: name, contents, ... */
} CaseOptions;

static void setup(Fixture *f, gconstpointer data) {
        const CaseOptions *co = data;
        const char *why = skip_reason(co->dunst);
        if (why) {
                g_test_skip(why);
                return;
        }
        HarnessOptions o = { .config = co->config, .polkit_table = co->polkit_table, .proc_files = co->proc_files,
                             .open_bus = co->polkit_table != NULL, .logind = co->logind, .slowfs = co->slowfs,
                             .logind_hook_script = co->logind };
        f->nobody = co->polkit_table != NULL;
        f->german = co->german;
        if (f->german && !harness_env("FRIDGE_PO_DIR")) {
                g_test_skip("FRIDGE_PO_DIR is not set: built with -Dnls=disabled");
                return;
        }
        if (f->nobody && access("/usr/bin/setpriv", X_OK) < 0) {
                g_test_skip("setpriv (util-linux) is not installed");
                return;
        }
        f->h = harness_new(&o);
        if (co->logind && !harness_wait_logind_delay(f->h, "fridge", true, 10000))
                g_error("fridged did not take a logind delay lock");
        start_session_bus(f);
        if (co->mock)
                start_mock(f);
}

static void teardown(Fixture *f, gconstpointer data) {
        if (f->h && g_test_failed()) {
                harness_dump_fridged_log(f->h);
                g_autofree char *log = f->agent_log ? agent_log(f) : NULL;
                g_test_message("fridge-agent:\n%s", log ? log : "(not started)");
        }
        bool agent_ran = f->agent_pid > 0;
        int agent_status = harness_stop_pid(&f->agent_pid, 5000);
        (void) harness_stop_pid(&f->dunst_pid, 5000);
        (void) harness_stop_pid(&f->xvfb_pid, 5000);
        if (f->displayfd > 0)
                close(f->displayfd);
        (void) harness_stop_pid(&f->mock_pid, 5000);
        (void) harness_stop_pid(&f->jobview_pid, 5000);
        g_free(f->config_home);
        g_clear_object(&f->session);
        (void) harness_stop_pid(&f->session_pid, 5000);
        g_free(f->session_address);
        /* SIGTERM ends it cleanly: status 0, and under ASan no leak */
        bool unclean = agent_ran && !g_test_failed() && agent_status != 0;
        g_autofree char *log = unclean ? agent_log(f) : NULL;
        g_free(f->agent_log);
        harness_free(f->h);
        scratch_free(f->s); /* after fridged: it must not hold anything frozen */
        if (unclean)
                g_error("fridge-agent's wait status after SIGTERM is %d:\n%s", agent_status, log);
}

#define SKIP_IF_UNSET(f) do { if (!(f)->h) return; } while (0)

/* ---- the mock's record ---- */

static Note *note_parse(GVariant *args) {
        Note *n = g_new0(Note, 1);
        g_autoptr(GVariant) a1 = g_variant_get_child_value(args, 1), a3 = g_variant_get_child_value(args, 3),
                            a4 = g_variant_get_child_value(args, 4), a5 = g_variant_get_child_value(args, 5),
                            a6 = g_variant_get_child_value(args, 6);
        g_autoptr(GVariant) replaces = g_variant_get_variant(a1), summary = g_variant_get_variant(a3),
                            body = g_variant_get_variant(a4), actions = g_variant_get_variant(a5),
                            hints = g_variant_get_variant(a6);
        n->replaces = g_variant_get_uint32(replaces);
        n->summary = g_variant_dup_string(summary, NULL);
        n->body = g_variant_dup_string(body, NULL);
        n->actions = g_variant_dup_strv(actions, NULL);
        int32_t value;
        guchar urgency;
        n->value = g_variant_lookup(hints, "value", "i", &value) ? value : -1;
        n->urgency = g_variant_lookup(hints, "urgency", "y", &urgency) ? urgency : -1;
        return n;
}

/* A mock object's recorded calls, (a(tsav)); NULL with the error */
static GVariant *mock_get_calls(Fixture *f, const char *name, const char *path, GError **error) {
        return g_dbus_connection_call_sync(f->session, name, path, "org.freedesktop.DBus.Mock", "GetCalls", NULL,
                                           G_VARIANT_TYPE("(a(tsav))"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, error);
}

/* How many times the mock was called `method` */
static guint mock_count(Fixture *f, const char *method) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) r = mock_get_calls(f, NOTIFY_NAME, NOTIFY_PATH, &e);
        g_assert_no_error(e);
        g_autoptr(GVariant) calls = g_variant_get_child_value(r, 0);
        guint n = 0;
        for (gsize i = 0; i < g_variant_n_children(calls); i++) {
                g_autoptr(GVariant) call = g_variant_get_child_value(calls, i);
                g_autoptr(GVariant) m = g_variant_get_child_value(call, 1);
                n += g_str_equal(g_variant_get_string(m, NULL), method);
        }
        return n;
}

/* Every Notify the mock answered, in order */
static GPtrArray *notes(Fixture *f) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) r = mock_get_calls(f, NOTIFY_NAME, NOTIFY_PATH, &e);
        g_assert_no_error(e);
        GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify) note_free);
        g_autoptr(GVariant) calls = g_variant_get_child_value(r, 0);
        for (gsize i = 0; i < g_variant_n_children(calls); i++) {
                g_autoptr(GVariant) call = g_variant_get_child_value(calls, i);
                g_autoptr(GVariant) method = g_variant_get_child_value(call, 1);
                g_autoptr(GVariant) args = g_variant_get_child_value(call, 2);
                if (g_str_equal(g_variant_get_string(method, NULL), "Notify"))
                        g_ptr_array_add(out, note_parse(args));
        }
        return out;
}

static bool note_has_action(const Note *n, const char *key, const char *label) {
        for (char **a = n->actions; a && a[0] && a[1]; a += 2)
                if (g_str_equal(a[0], key) && g_str_equal(a[1], label))
                        return true;
        return false;
}

typedef bool (*NotePred)(const Note *n, const void *data);

/* Waits (bounded) for a Notify from index `from` on that satisfies `pred`;
 * its index */
static guint wait_note(Fixture *f, guint from, NotePred pred, const void *data, const char *what) {
        for (int i = 0; i < WAIT_MS / 50; i++) {
                g_autoptr(GPtrArray) all = notes(f);
                for (guint j = from; j < all->len; j++)
                        if (pred(all->pdata[j], data))
                                return j;
                pump(f, 50);
        }
        g_autoptr(GPtrArray) all = notes(f);
        for (guint j = 0; j < all->len; j++) {
                const Note *n = all->pdata[j];
                g_autofree char *actions = g_strjoinv(",", n->actions);
                g_test_message("Notify %u: replaces %u, '%s' / '%s', actions [%s], value %d, urgency %d", j,
                               n->replaces, n->summary, n->body, actions, n->value, n->urgency);
        }
        g_error("no notification %s within %d ms", what, WAIT_MS);
}

static bool summary_is(const Note *n, const void *s) {
        return g_str_equal(n->summary, s);
}

static bool offers_cancel(const Note *n, const void *unused) {
        return note_has_action(n, "cancel", "Cancel");
}

static bool body_has(const Note *n, const void *s) {
        return strstr(n->body, s) != NULL;
}

static uint64_t sleep_ok(Harness *h) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, NULL) != 0)
                g_error("Sleep failed: %s: %s", err, msg);
        return cycle;
}

static void expect_finished(Harness *h, uint64_t cycle, const char *result, const char *error) {
        g_autofree char *r = NULL, *e = NULL, *m = NULL;
        g_assert_true(harness_wait_finished(h, cycle, WAIT_MS, &r, &e, &m));
        g_assert_cmpstr(r, ==, result);
        g_assert_cmpstr(e, ==, error);
}

/* The agent running, and a cycle held in prepare by a delay inhibitor
 * (closing *ret_delay lets it go on): Cancel can still stop it there */
static uint64_t start_held_cycle(Fixture *f, int *ret_delay) {
        start_agent(f);
        *ret_delay = harness_inhibit_delay(f->h, "holding the cycle in prepare");
        return sleep_ok(f->h);
}

/* A call of a mock's org.freedesktop.DBus.Mock (EmitSignal, AddMethod) */
static void mock_call(Fixture *f, const char *name, const char *path, const char *method, GVariant *args) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) r = g_dbus_connection_call_sync(f->session, name, path, "org.freedesktop.DBus.Mock",
                                                            method, args, NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL,
                                                            &e);
        g_assert_no_error(e);
        g_assert_nonnull(r);
}

/* A signal from the notification server, as the mock's EmitSignal sends it */
static void emit_server_signal(Fixture *f, const char *member, const char *signature, GVariantBuilder *args) {
        mock_call(f, NOTIFY_NAME, NOTIFY_PATH, "EmitSignal", g_variant_new("(sssav)", NOTIFY_NAME, member, signature,
                                                                            args));
}

/* The server's ActionInvoked for the notification of Notify call `i`, as
 * when the user presses Cancel; the notification's id */
static uint32_t press_cancel(Fixture *f, guint i) {
        g_autoptr(GPtrArray) all = notes(f);
        uint32_t id = i == 0 ? 1 : ((Note *) all->pdata[i])->replaces; /* the mock's first id is 1 */
        GVariantBuilder args;
        g_variant_builder_init(&args, G_VARIANT_TYPE("av"));
        g_variant_builder_add(&args, "v", g_variant_new_uint32(id));
        g_variant_builder_add(&args, "v", g_variant_new_string("cancel"));
        emit_server_signal(f, "ActionInvoked", "us", &args);
        return id;
}

/* The server's NotificationClosed(id, reason), as when the user closes it */
static void emit_closed(Fixture *f, uint32_t id, uint32_t reason) {
        GVariantBuilder args;
        g_variant_builder_init(&args, G_VARIANT_TYPE("av"));
        g_variant_builder_add(&args, "v", g_variant_new_uint32(id));
        g_variant_builder_add(&args, "v", g_variant_new_uint32(reason));
        emit_server_signal(f, "NotificationClosed", "uu", &args);
}

/* Pumps (bounded) until the text `read` gives holds `line`; whether it did */
static bool wait_text(Fixture *f, char *(*read)(Fixture *f), const char *line) {
        for (int k = 0; k < WAIT_MS / 50; k++) {
                g_autofree char *text = read(f);
                if (strstr(text, line))
                        return true;
                pump(f, 50);
        }
        return false;
}

static void wait_agent_log(Fixture *f, const char *line) {
        if (!wait_text(f, agent_log, line))
                g_error("the agent never logged '%s'", line);
}

/* The user dismisses the progress notification (reason 2) */
static void dismiss(Fixture *f, uint32_t id) {
        emit_closed(f, id, 2);
        wait_agent_log(f, "dismissed cycle");
}

/* ---- cases ---- */

/* One notification for the cycle: its id kept, the value rising, Cancel
 * offered while a Cancel could still stop the sleep and withdrawn with the
 * reason at the state write; then the result in its place */
static void test_progress_and_result(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = start_held_cycle(f, &delay);
        /* fridged names what the cycle waits for */
        guint first = wait_note(f, 0, body_has, "Preparing: waiting for 1 delay inhibitor: test (holding the cycle in "
                                "prepare, pid ", "naming the delay inhibitor");
        harness_control(f->h, "hold-write power/state");
        close(delay);
        guint late = wait_note(f, first, body_has, "point of no return", "saying Cancel is withdrawn");
        harness_control(f->h, "release-write power/state");
        expect_finished(f->h, cycle, "done", "");
        guint end = wait_note(f, late, summary_is, "Woke up from suspend", "with the result");

        g_autoptr(GPtrArray) all = notes(f);
        const Note *n0 = all->pdata[0], *nw = all->pdata[first], *nl = all->pdata[late], *ne = all->pdata[end];
        g_assert_cmpuint(n0->replaces, ==, 0);
        g_assert_cmpstr(n0->summary, ==, "Suspending…");
        g_assert_true(offers_cancel(n0, NULL));
        g_assert_true(offers_cancel(nw, NULL));
        g_assert_false(offers_cancel(nl, NULL));
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
        uint64_t cycle = start_held_cycle(f, &delay);
        guint first = wait_note(f, 0, offers_cancel, NULL, "offering Cancel before the hand-over");
        harness_control(f->h, "hold-write power/state");
        close(delay);
        g_assert_true(harness_wait_logind_line(f->h, "hook pre suspend 0", WAIT_MS));
        guint late = wait_note(f, first, body_has, "point of no return", "withdrawing Cancel after the hand-over");
        g_autoptr(GPtrArray) all = notes(f);
        const Note *n = all->pdata[late];
        g_assert_false(offers_cancel(n, NULL));
        g_assert_null(strstr(n->body, "started by the system")); /* fridge started it */
        g_autofree char *started_by = harness_get_string(f->h, "StartedBy");
        g_assert_cmpstr(started_by, ==, "bus");
        harness_control(f->h, "release-write power/state");
        expect_finished(f->h, cycle, "done", "");
}

/* The user presses Cancel: the cycle is cancelled before anything sleeps */
static void test_cancel_action(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = start_held_cycle(f, &delay);
        guint i = wait_note(f, 0, offers_cancel, NULL, "offering Cancel");
        uint32_t id = press_cancel(f, i);

        expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
        g_autofree char *state = harness_get_string(f->h, "State");
        g_assert_cmpstr(state, ==, "idle");
        g_autofree char *log = harness_fakesys_log(f->h);
        g_assert_null(strstr(log, "power/state"));
        guint end = wait_note(f, i, summary_is, "Suspend cancelled", "with the result");
        g_autoptr(GPtrArray) after = notes(f);
        const Note *n = after->pdata[end];
        g_assert_cmpuint(n->replaces, ==, id);
        g_assert_nonnull(strstr(n->body, "Cancelled: cancelled by user"));
        g_autofree char *alog = agent_log(f);
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
        uint64_t cycle = start_held_cycle(f, &delay);
        guint i = wait_note(f, 0, offers_cancel, NULL, "offering Cancel");
        press_cancel(f, i);
        guint j = wait_note(f, i + 1, body_has, "Cancel was refused: ", "saying the Cancel was refused");
        g_autoptr(GPtrArray) all = notes(f);
        const Note *n = all->pdata[j];
        g_test_message("refused: %s", n->body);
        g_assert_nonnull(strstr(n->body, "io.fridge.sleep"));
        g_assert_true(offers_cancel(n, NULL)); /* it may still be tried, once allowed */
        close(delay);
        expect_finished(f->h, cycle, "done", "");
}

/* systemd-sleep's cycle (the hook's pre): no Cancel, and the reason */
static void test_hook_cycle_not_cancellable(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        start_agent(f);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out, "hook", "pre", "suspend"), ==, 0);
        uint64_t cycle = 0;
        g_assert_cmpint(sscanf(out, "cycle %" G_GUINT64_FORMAT, &cycle), ==, 1);
        guint i = wait_note(f, 0, body_has, "The sleep was started by the system and cannot be stopped.",
                            "saying the system started the sleep");
        g_autofree char *out2 = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 60000, &out2, "hook", "post", "suspend"), ==, 0);
        expect_finished(f->h, cycle, "done", "");
        guint end = wait_note(f, i, summary_is, "Woke up from suspend", "with the result");
        g_autoptr(GPtrArray) all = notes(f);
        for (guint j = 0; j <= end; j++)
                g_assert_false(offers_cancel(all->pdata[j], NULL));
}

/* Dismissed by the user, the progress does not pop up again for the rest
 * of the cycle, nor its "done" result; the next cycle shows again */
static void test_dismissed(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = start_held_cycle(f, &delay);
        (void) wait_note(f, 0, offers_cancel, NULL, "offering Cancel");
        dismiss(f, 1);
        pump(f, 200); /* an update already on its way when the user closed it */
        guint before;
        {
                g_autoptr(GPtrArray) all = notes(f);
                before = all->len;
        }
        /* progress moves on: the hand-over withdraws Cancel, the sleep ends */
        close(delay);
        expect_finished(f->h, cycle, "done", "");
        uint64_t next = sleep_ok(f->h);
        expect_finished(f->h, next, "done", "");
        guint end = wait_note(f, before, summary_is, "Woke up from suspend", "for the next cycle");
        g_autoptr(GPtrArray) all = notes(f);
        /* the next cycle's is a new notification, and nothing of the
         * dismissed cycle came before it */
        g_assert_cmpuint(((Note *) all->pdata[before])->replaces, ==, 0);
        for (guint k = before; k <= end; k++)
                g_assert_cmpuint(((Note *) all->pdata[k])->replaces, !=, 1);
        assert_agent_alive(f);
}

/* A dismissed cycle that did not sleep as asked still says so */
static void test_dismissed_then_cancelled(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = start_held_cycle(f, &delay);
        guint i = wait_note(f, 0, offers_cancel, NULL, "offering Cancel");
        dismiss(f, 1);
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_cancel(f->h, cycle, &err, &msg), ==, 0);
        expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
        guint end = wait_note(f, i + 1, summary_is, "Suspend cancelled", "with the result");
        g_autoptr(GPtrArray) all = notes(f);
        g_assert_cmpuint(((Note *) all->pdata[end])->replaces, ==, 0); /* the old one is gone */
}

/* fridged stops and comes back: the agent shows the next cycle */
static void test_fridged_restart(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        start_agent(f);
        uint64_t first = sleep_ok(f->h);
        expect_finished(f->h, first, "done", "");
        guint i = wait_note(f, 0, summary_is, "Woke up from suspend", "for the first cycle");

        harness_kill_fridged(f->h, SIGTERM);
        harness_restart_fridged(f->h);
        uint64_t second = sleep_ok(f->h);
        g_assert_cmpuint(second, >, first);
        expect_finished(f->h, second, "done", "");
        guint j = wait_note(f, i + 1, summary_is, "Woke up from suspend", "for the cycle after the restart");
        g_autoptr(GPtrArray) all = notes(f);
        g_assert_cmpuint(((Note *) all->pdata[j])->replaces, !=, ((Note *) all->pdata[i])->replaces);
        assert_agent_alive(f);
        g_autofree char *log = agent_log(f);
        g_assert_nonnull(strstr(log, "fridged left the bus"));
        g_assert_nonnull(strstr(log, "fridged is back on the bus"));
}

/* fridged killed in the middle of a cycle: the notification stops saying
 * "Suspending…" as if it went on, and the next fridged's Interrupted
 * report turns it into a failure, urgency critical */
static void test_fridged_killed_mid_cycle(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = start_held_cycle(f, &delay);
        guint i = wait_note(f, 0, offers_cancel, NULL, "offering Cancel");
        harness_kill_fridged(f->h, SIGKILL);
        guint gone = wait_note(f, i + 1, body_has, "fridged stopped during the cycle", "saying fridged stopped");
        close(delay);
        harness_restart_fridged(f->h);
        expect_finished(f->h, cycle, "failed", "io.fridge.Fridge1.Error.Interrupted");
        guint end = wait_note(f, gone + 1, summary_is, "Suspend failed", "with the Interrupted result");
        g_autoptr(GPtrArray) all = notes(f);
        const Note *g = all->pdata[gone], *e = all->pdata[end];
        g_assert_false(offers_cancel(g, NULL));
        g_assert_cmpuint(g->replaces, ==, 1);
        g_assert_cmpuint(e->replaces, ==, 1);
        g_assert_cmpint(e->urgency, ==, 2);
        g_assert_nonnull(strstr(e->body, "Interrupted: "));
        assert_agent_alive(f);
}

/* No notification server: the agent logs it once, waits, and shows the
 * next cycle once a server is there */
static void test_no_server(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        start_agent(f);
        for (int k = 0; k < 2; k++) {
                uint64_t c = sleep_ok(f->h);
                expect_finished(f->h, c, "done", "");
        }
        /* the agent has tried by now: its line says so */
        for (int k = 0; k < WAIT_MS / 50; k++) {
                g_autofree char *log = agent_log(f);
                if (strstr(log, "waiting for a notification server"))
                        break;
                pump(f, 50);
        }
        start_mock(f);
        uint64_t c = sleep_ok(f->h);
        expect_finished(f->h, c, "done", "");
        (void) wait_note(f, 0, summary_is, "Woke up from suspend", "once a server is there");
        assert_agent_alive(f);
        g_autofree char *log = agent_log(f);
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
        start_agent(f);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(f->h, "hibernate", &cycle, &err, &msg, NULL) != 0)
                g_error("Sleep(hibernate) failed: %s: %s", err, msg);
        guint writing = wait_note(f, 0, body_has, "writing the image: 2 of 4 MiB", "with the writer's progress");
        standin_writer_let_go(w);
        expect_finished(f->h, cycle, "done", "");
        guint end = wait_note(f, writing, body_has, "image: 8.0 MiB written as 2.0 MiB (4.0x) in 0.5 s, 16 MiB/s",
                              "with the image's figures");
        uint64_t next = sleep_ok(f->h);
        expect_finished(f->h, next, "done", "");
        guint after = wait_note(f, end, summary_is, "Woke up from suspend", "the next cycle's result");
        g_autoptr(GPtrArray) all = notes(f);
        const Note *ne = all->pdata[end], *na = all->pdata[after];
        g_assert_cmpstr(ne->summary, ==, "Woke up from hibernation");
        g_assert_cmpuint(ne->replaces, ==, 1);  /* the cycle's own notification, replaced */
        g_assert_cmpuint(na->replaces, !=, 1);  /* not the hibernation's */
        g_assert_null(strstr(na->body, "image:"));
        standin_writer_free(w);
        assert_agent_alive(f);
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
        f->dunst_pid = spawn_logged(argv, env, log, -1);
        wait_name(f, NOTIFY_NAME);
        g_autofree char *png = g_build_filename(f->h->dir, "blank.png", NULL);
        g_assert_cmpuint(screen_colours(display, png), ==, 1); /* nothing shown yet */

        int delay;
        uint64_t cycle = start_held_cycle(f, &delay);
        const char *dir = harness_env("AGENT_ARTIFACT_DIR");
        g_autofree char *shot = g_build_filename(dir ? dir : f->h->dir, "fridge-agent-dunst.png", NULL);
        unsigned colours = 0;
        for (int i = 0; i < WAIT_MS / 100 && colours <= 1; i++) {
                pump(f, 100);
                colours = screen_colours(display, shot);
        }
        g_test_message("screenshot %s: %u colours", shot, colours);
        g_assert_cmpuint(colours, >, 1);
        char *count[] = { "/usr/bin/dunstctl", "count", "displayed", NULL };
        g_autofree char *n = NULL;
        const char *const cenv[] = { sess, NULL };
        g_autofree char *clog = g_build_filename(f->h->dir, "dunstctl.out", NULL);
        pid_t pid = spawn_logged(count, cenv, clog, -1);
        g_assert_cmpint(harness_wait_pid(pid, 30000), ==, 0);
        g_assert_true(g_file_get_contents(clog, &n, NULL, NULL));
        g_assert_cmpuint(strtoul(n, NULL, 10), >=, 1);
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_cancel(f->h, cycle, &err, &msg), ==, 0);
        close(delay);
        expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
}

/* The notification in German, from the catalog: summary, phase, Cancel's
 * label and the result */
static void test_german(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        int delay;
        uint64_t cycle = start_held_cycle(f, &delay);
        guint first = wait_note(f, 0, body_has, "Vorbereitung: ", "with the German phase");
        close(delay);
        expect_finished(f->h, cycle, "done", "");
        guint end = wait_note(f, first, summary_is, "Aus der Bereitschaft aufgewacht", "with the German result");

        g_autoptr(GPtrArray) all = notes(f);
        const Note *n0 = all->pdata[0], *ne = all->pdata[end];
        g_assert_cmpstr(n0->summary, ==, "Bereitschaft wird eingeleitet …");
        g_assert_true(note_has_action(n0, "cancel", "Abbrechen"));
        g_assert_true(g_str_has_prefix(ne->body, "Der Rechner ist wieder wach; geweckt von ") ||
                      strstr(ne->body, " geschlafen; geweckt von ") != NULL);
}

/* ---- where the progress is drawn: each desktop's way ---- */

#define JOBVIEW_NAME "org.kde.JobViewServer"
#define JOBVIEW_PATH "/JobViewServer"
#define JOB_PATH "/JobViewServer/JobView_1"

/* The notification server names itself as one of the desktops' does */
static void server_is(Fixture *f, const char *name, const char *vendor, const char *version) {
        g_autofree char *code = g_strdup_printf("ret = ('%s', '%s', '%s', '1.2')", name, vendor, version);
        mock_call(f, NOTIFY_NAME, NOTIFY_PATH, "AddMethod",
                  g_variant_new("(sssss)", NOTIFY_NAME, "GetServerInformation", "", "ssss", code));
}

/* Plasma's job view server: requestView makes one org.kde.JobViewV2 whose
 * calls the mock records */
static void start_jobview_server(Fixture *f) {
        g_autofree char *log = g_build_filename(f->h->dir, "jobview-mock.log", NULL);
        char *argv[] = { PYTHON, "-m", "dbusmock", JOBVIEW_NAME, JOBVIEW_PATH, "org.kde.JobViewServer", NULL };
        f->jobview_pid = spawn_logged(argv, session_env(f), log, -1);
        wait_name(f, JOBVIEW_NAME);
        const char *code = "ret = dbus.ObjectPath('" JOB_PATH "')\n"
                           "self.AddObject(ret, 'org.kde.JobViewV2', {}, ["
                           "('setPercent', 'u', '', ''), ('setInfoMessage', 's', '', ''), "
                           "('setDescriptionField', 'uss', 'b', 'ret = True'), ('clearDescriptionField', 'u', '', ''), "
                           "('setSuspended', 'b', '', ''), ('setError', 'u', '', ''), ('terminate', 's', '', '')])";
        mock_call(f, JOBVIEW_NAME, JOBVIEW_PATH, "AddMethod",
                  g_variant_new("(sssss)", "org.kde.JobViewServer", "requestView", "ssi", "o", code));
}

/* The job view's calls as "method arg1 arg2 …" lines (strings and numbers) */
static char *job_calls(Fixture *f) {
        g_autoptr(GVariant) r = mock_get_calls(f, JOBVIEW_NAME, JOB_PATH, NULL);
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
        if (wait_text(f, job_calls, line))
                return;
        g_autofree char *calls = job_calls(f);
        g_error("the job view never got \"%s\"; it got:\n%s", line, calls);
}

/* The agent started and told which server it draws on, then a cycle held
 * in prepare by a delay inhibitor */
static uint64_t start_styled_cycle(Fixture *f, const char *style, int *ret_delay) {
        start_agent(f);
        g_autofree char *said = g_strdup_printf("progress as %s", style);
        wait_agent_log(f, said);
        *ret_delay = harness_inhibit_delay(f->h, "holding the cycle in prepare");
        return sleep_ok(f->h);
}

/* GNOME Shell draws no `value` hint: a text bar in the body, and no
 * hint. Updated in place under the one id, or, `renewed` (the shell drops
 * an updated banner's buttons), each update, the result too, a new
 * notification that closes the one before it */
static void assert_text_bars(Fixture *f, guint until, bool renewed) {
        g_autoptr(GPtrArray) all = notes(f);
        g_assert_cmpuint(all->len, >, until);
        for (guint i = 0; i <= until; i++) {
                const Note *n = all->pdata[i];
                g_assert_cmpint(n->value, ==, -1);
                if (i < until)
                        g_assert_true(g_regex_match_simple("^[▰▱]{10} [0-9]{1,3} %\n", n->body, 0, 0));
                g_assert_cmpuint(n->replaces, ==, renewed || i == 0 ? 0 : 1);
        }
        g_assert_null(strstr(((Note *) all->pdata[until])->body, "▱"));
        g_assert_cmpuint(mock_count(f, "CloseNotification"), ==, renewed ? until : 0);
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
        guint first = wait_note(f, 0, body_has, "▱▱▱▱▱▱▱▱▱▱ 0 %", "with a text bar");
        close(delay);
        wait_note(f, first + 1, offers_cancel, NULL, "an update offering Cancel");
        harness_slowfs_release(f->h);
        harness_control(f->h, "hold-write power/state");
        guint late = wait_note(f, first, body_has, "point of no return", "saying Cancel is withdrawn");
        harness_control(f->h, "release-write power/state");
        expect_finished(f->h, cycle, "done", "");
        guint end = wait_note(f, late, summary_is, "Woke up from suspend", "with the result");
        assert_text_bars(f, end, renewed);
}

/* GNOME Shell 43 (Debian 12) */
static void test_gnome_text_bar(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        gnome_text_bar(f, "43.9", true);
        g_assert_true(wait_text(f, agent_log, "gnome-shell drops the buttons of a notification it updates"));
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
        wait_note(f, 0, body_has, "▱▱▱▱▱▱▱▱▱▱ 0 %", "with a text bar");
        g_assert_cmpint(harness_cancel(f->h, cycle, NULL, NULL), ==, 0);
        expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
        guint end = wait_note(f, 0, summary_is, "Suspend cancelled", "with the result");
        assert_text_bars(f, end, false);

        /* a bad value: said, and the server decides */
        (void) harness_stop_pid(&f->agent_pid, 5000);
        g_assert_true(g_file_set_contents(conf, "[Progress]\nStyle=bar\n", -1, NULL));
        start_agent(f);
        wait_agent_log(f, "[Progress] Style=bar is not auto, value, text or job-view");
        wait_agent_log(f, "progress as value\n");
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
        g_autoptr(GPtrArray) during = notes(f);
        g_assert_cmpuint(during->len, ==, 0); /* no progress notification beside it */
        mock_call(f, JOBVIEW_NAME, JOB_PATH, "EmitSignal",
                  g_variant_new("(sssav)", "org.kde.JobViewV2", "cancelRequested", "", NULL));
        expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
        wait_note(f, 0, summary_is, "Suspend cancelled", "with the result");
        /* as a job its user stopped (KIO's ERR_USER_CANCELED): Plasma drops
         * it rather than show it finished or failed beside the result */
        wait_job_call(f, "setError 1\nterminate \n");
        g_autofree char *calls = job_calls(f);
        g_assert_null(strstr(calls, "point of no return"));
        wait_agent_log(f, "(the job view's stop button)");
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
        expect_finished(f->h, cycle, "done", "");
        guint end = wait_note(f, 0, summary_is, "Woke up from suspend", "with the result");
        g_assert_cmpuint(end, ==, 0); /* the result is the cycle's only notification */
}

/* Plasma named, but no job view server answers: the notification with the
 * hint, as anywhere else */
static void test_kde_without_job_view(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        server_is(f, "Plasma", "KDE", "5.27.5");
        int delay;
        uint64_t cycle = start_styled_cycle(f, "job-view", &delay);
        guint i = wait_note(f, 0, offers_cancel, NULL, "offering Cancel in a notification");
        g_autoptr(GPtrArray) all = notes(f);
        g_assert_cmpint(((Note *) all->pdata[i])->value, >=, 0);
        wait_agent_log(f, "No job view (");
        g_assert_cmpint(harness_cancel(f->h, cycle, NULL, NULL), ==, 0);
        expect_finished(f->h, cycle, "aborted", "io.fridge.Fridge1.Error.Cancelled");
        close(delay);
}

/* ---- the session's user interface by role ---- */

static void noop_setup(Fixture *f, gconstpointer data) {
}

/* fridged over scratch cgroups, the session bus and the mock notification
 * server, moved into a cgroup named as dbus-broker names a bus-activated
 * service (which classes.d freezes): false when this cannot run here */
static bool setup_roles_as(Fixture *f, uid_t seated, const char **ret_notify, const char **ret_app) {
        const char *why = skip_reason(false);
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
        start_session_bus(f);
        start_mock(f);
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

        start_agent(f);
        wait_agent_log(f, "fridged holds org.freedesktop.Notifications (pid ");
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
                pump(f, 50);
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
        start_agent(f);
        wait_agent_log(f, "fridged holds org.freedesktop.Notifications (pid ");
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
                                 flush = { .mock = true, .config = "[Delay]\nTimeoutMs=20000\n", .slowfs = true },
                                 hibernate = { .mock = true, .config = "[Sleep]\nHibernateWriter=fridge\n",
                                               .proc_files = hibernate_proc };
        harness_init(&argc, &argv);
#define ADD(name, fn, o) g_test_add("/agent/" name, Fixture, &o, setup, fn, teardown)
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
        ADD("gnome-text-bar", test_gnome_text_bar, flush);
        ADD("gnome-46-text-bar", test_gnome_46_text_bar, flush);
        ADD("style-setting", test_style_setting, mock);
        ADD("style-option-refused", test_style_option_refused, bare);
        ADD("kde-job-view-cancel", test_kde_job_view_cancel, mock);
        ADD("kde-job-view-withdrawn", test_kde_job_view_withdrawn, mock);
        ADD("kde-without-job-view", test_kde_without_job_view, mock);
        /* their own set-up: scratch cgroups under fridged */
        g_test_add("/agent/role-keeps-notification-server", Fixture, NULL, noop_setup,
                   test_role_keeps_notification_server, teardown);
        g_test_add("/agent/role-refusals", Fixture, NULL, noop_setup, test_role_refusals, teardown);
        g_test_add("/agent/role-held-for-seated-user", Fixture, NULL, noop_setup, test_role_held_for_seated_user,
                   teardown);
#undef ADD
        return g_test_run();
}
