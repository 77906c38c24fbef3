/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "agent-fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness-private.h"
#include "session-names.h"


void fx_note_free(Note *n) {
        g_free(n->summary);
        g_free(n->body);
        g_strfreev(n->actions);
        g_free(n);
}

/* ---- processes ---- */

pid_t fx_spawn_logged(char **argv, const char *const *env, const char *log, int stdout_fd) {
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

void fx_start_session_bus(Fixture *f) {
        g_autofree char *log = g_build_filename(f->h->dir, "session-bus.log", NULL);
        g_autofree char *addr = g_strdup_printf("--address=unix:path=%s/session-bus", f->h->dir);
        g_autofree char *config = f->nobody ? open_session_config(f) : g_strdup("--session");
        char *argv[] = { "/usr/bin/dbus-daemon", config, "--nofork", addr, "--print-address=1", NULL };
        int p[2];
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        f->session_pid = fx_spawn_logged(argv, NULL, log, p[1]);
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

void fx_pump(Fixture *f, int ms) {
        int64_t end = g_get_monotonic_time() + ms * G_TIME_SPAN_MILLISECOND;
        while (g_get_monotonic_time() < end) {
                while (g_main_context_iteration(NULL, FALSE))
                        ;
                (void) sd_bus_process(f->h->bus, NULL);
                g_usleep(10 * G_TIME_SPAN_MILLISECOND);
        }
}

void fx_wait_name(Fixture *f, const char *name) {
        for (int i = 0; i < WAIT_MS / 50; i++) {
                if (session_name_has_owner(f->session, name))
                        return;
                fx_pump(f, 50);
        }
        g_error("%s did not appear on the session bus within %d ms", name, WAIT_MS);
}

/* German: glibc honours LANGUAGE under the built-in C.UTF-8 (see test-i18n.c) */
const char *const *fx_session_env(Fixture *f) {
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

void fx_start_mock(Fixture *f) {
        g_autofree char *log = g_build_filename(f->h->dir, "mock.log", NULL);
        char *argv[] = { PYTHON, "-m", "dbusmock", "--template", "notification_daemon", NULL };
        char *as_nobody[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", PYTHON,
                              "-m", "dbusmock", "--template", "notification_daemon", NULL };
        f->mock_pid = fx_spawn_logged(f->nobody ? as_nobody : argv, fx_session_env(f), log, -1);
        fx_wait_name(f, NOTIFY_NAME);
}

void fx_start_agent(Fixture *f) {
        g_free(f->agent_log); /* a second agent logs on in the same file */
        f->agent_log = g_build_filename(f->h->dir, "agent.log", NULL);
        char *agent = (char *) harness_env("FRIDGE_AGENT");
        char *argv[] = { agent, NULL };
        char *as_nobody[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                              (char *) harness_exe_for_others(agent),
                              NULL };
        f->agent_pid = fx_spawn_logged(f->nobody ? as_nobody : argv, fx_session_env(f), f->agent_log, -1);
}

char *fx_agent_log(Fixture *f) {
        g_autofree char *text = NULL;
        (void) g_file_get_contents(f->agent_log, &text, NULL, NULL);
        return g_strdup(text ? text : "");
}

void fx_assert_agent_alive(Fixture *f) {
        int status;
        g_assert_cmpint(waitpid(f->agent_pid, &status, WNOHANG), ==, 0);
}

const char *fx_skip_reason(bool dunst) {
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

void fx_setup(Fixture *f, gconstpointer data) {
        const CaseOptions *co = data;
        const char *why = fx_skip_reason(co->dunst);
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
        fx_start_session_bus(f);
        if (co->mock)
                fx_start_mock(f);
}

void fx_teardown(Fixture *f, gconstpointer data) {
        if (f->h && g_test_failed()) {
                harness_dump_fridged_log(f->h);
                g_autofree char *log = f->agent_log ? fx_agent_log(f) : NULL;
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
        g_autofree char *log = unclean ? fx_agent_log(f) : NULL;
        g_free(f->agent_log);
        harness_free(f->h);
        scratch_free(f->s); /* after fridged: it must not hold anything frozen */
        if (unclean)
                g_error("fridge-agent's wait status after SIGTERM is %d:\n%s", agent_status, log);
}

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
GVariant *fx_mock_get_calls(Fixture *f, const char *name, const char *path, GError **error) {
        return g_dbus_connection_call_sync(f->session, name, path, "org.freedesktop.DBus.Mock", "GetCalls", NULL,
                                           G_VARIANT_TYPE("(a(tsav))"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, error);
}

/* How many times the mock was called `method` */
guint fx_mock_count(Fixture *f, const char *method) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) r = fx_mock_get_calls(f, NOTIFY_NAME, NOTIFY_PATH, &e);
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
GPtrArray *fx_notes(Fixture *f) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) r = fx_mock_get_calls(f, NOTIFY_NAME, NOTIFY_PATH, &e);
        g_assert_no_error(e);
        GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify) fx_note_free);
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

bool fx_note_has_action(const Note *n, const char *key, const char *label) {
        for (char **a = n->actions; a && a[0] && a[1]; a += 2)
                if (g_str_equal(a[0], key) && g_str_equal(a[1], label))
                        return true;
        return false;
}

/* Waits (bounded) for a Notify from index `from` on that satisfies `pred`;
 * its index */
guint fx_wait_note(Fixture *f, guint from, NotePred pred, const void *data, const char *what) {
        for (int i = 0; i < WAIT_MS / 50; i++) {
                g_autoptr(GPtrArray) all = fx_notes(f);
                for (guint j = from; j < all->len; j++)
                        if (pred(all->pdata[j], data))
                                return j;
                fx_pump(f, 50);
        }
        g_autoptr(GPtrArray) all = fx_notes(f);
        for (guint j = 0; j < all->len; j++) {
                const Note *n = all->pdata[j];
                g_autofree char *actions = g_strjoinv(",", n->actions);
                g_test_message("Notify %u: replaces %u, '%s' / '%s', actions [%s], value %d, urgency %d", j,
                               n->replaces, n->summary, n->body, actions, n->value, n->urgency);
        }
        g_error("no notification %s within %d ms", what, WAIT_MS);
}

bool fx_summary_is(const Note *n, const void *s) {
        return g_str_equal(n->summary, s);
}

bool fx_offers_cancel(const Note *n, const void *unused) {
        return fx_note_has_action(n, "cancel", "Cancel");
}

bool fx_body_has(const Note *n, const void *s) {
        return strstr(n->body, s) != NULL;
}

uint64_t fx_sleep_ok(Harness *h) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, NULL) != 0)
                g_error("Sleep failed: %s: %s", err, msg);
        return cycle;
}

void fx_expect_finished(Harness *h, uint64_t cycle, const char *result, const char *error) {
        g_autofree char *r = NULL, *e = NULL, *m = NULL;
        g_assert_true(harness_wait_finished(h, cycle, WAIT_MS, &r, &e, &m));
        g_assert_cmpstr(r, ==, result);
        g_assert_cmpstr(e, ==, error);
}

/* The agent running, and a cycle held in prepare by a delay inhibitor
 * (closing *ret_delay lets it go on): Cancel can still stop it there */
uint64_t fx_start_held_cycle(Fixture *f, int *ret_delay) {
        fx_start_agent(f);
        *ret_delay = harness_inhibit_delay(f->h, "holding the cycle in prepare");
        return fx_sleep_ok(f->h);
}

/* A call of a mock's org.freedesktop.DBus.Mock (EmitSignal, AddMethod) */
void fx_mock_call(Fixture *f, const char *name, const char *path, const char *method, GVariant *args) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) r = g_dbus_connection_call_sync(f->session, name, path, "org.freedesktop.DBus.Mock",
                                                            method, args, NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL,
                                                            &e);
        g_assert_no_error(e);
        g_assert_nonnull(r);
}

/* A signal from the notification server, as the mock's EmitSignal sends it */
void fx_emit_server_signal(Fixture *f, const char *member, const char *signature, GVariantBuilder *args) {
        fx_mock_call(f, NOTIFY_NAME, NOTIFY_PATH, "EmitSignal", g_variant_new("(sssav)", NOTIFY_NAME, member, signature,
                                                                            args));
}

/* The server's ActionInvoked for the notification of Notify call `i`, as
 * when the user presses Cancel; the notification's id */
uint32_t fx_press_cancel(Fixture *f, guint i) {
        g_autoptr(GPtrArray) all = fx_notes(f);
        uint32_t id = i == 0 ? 1 : ((Note *) all->pdata[i])->replaces; /* the mock's first id is 1 */
        GVariantBuilder args;
        g_variant_builder_init(&args, G_VARIANT_TYPE("av"));
        g_variant_builder_add(&args, "v", g_variant_new_uint32(id));
        g_variant_builder_add(&args, "v", g_variant_new_string("cancel"));
        fx_emit_server_signal(f, "ActionInvoked", "us", &args);
        return id;
}

/* The server's NotificationClosed(id, reason), as when the user closes it */
void fx_emit_closed(Fixture *f, uint32_t id, uint32_t reason) {
        GVariantBuilder args;
        g_variant_builder_init(&args, G_VARIANT_TYPE("av"));
        g_variant_builder_add(&args, "v", g_variant_new_uint32(id));
        g_variant_builder_add(&args, "v", g_variant_new_uint32(reason));
        fx_emit_server_signal(f, "NotificationClosed", "uu", &args);
}

/* Pumps (bounded) until the text `read` gives holds `line`; whether it did */
bool fx_wait_text(Fixture *f, char *(*read)(Fixture *f), const char *line) {
        for (int k = 0; k < WAIT_MS / 50; k++) {
                g_autofree char *text = read(f);
                if (strstr(text, line))
                        return true;
                fx_pump(f, 50);
        }
        return false;
}

void fx_wait_agent_log(Fixture *f, const char *line) {
        if (!fx_wait_text(f, fx_agent_log, line))
                g_error("the agent never logged '%s'", line);
}

/* The user dismisses the progress notification (reason 2) */
void fx_dismiss(Fixture *f, uint32_t id) {
        fx_emit_closed(f, id, 2);
        fx_wait_agent_log(f, "dismissed cycle");
}

/* ---- cases ---- */

/* One notification for the cycle: its id kept, the value rising, Cancel
 * offered while a Cancel could still stop the sleep and withdrawn with the
 * reason at the state write; then the result in its place */
