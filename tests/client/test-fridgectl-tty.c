/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs the real fridgectl against a tiny fake fridged on a private
 * dbus-daemon: under a pseudo-terminal (Esc and Ctrl-C cancel, the
 * terminal comes back as it was) and with --json on a pipe.
 *
 * Everything runs in one sd-event loop: the fake daemon's bus, the pty or
 * pipe with fridgectl's output, fridgectl's exit and a timeout. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <grp.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <termios.h>
#include <unistd.h>
#include <utmp.h>

#include "fridge-config.h"
#include "sleep-options.h"

#define CYCLE 42
#define STEP_USEC (100 * 1000)
#define CASE_TIMEOUT_USEC (8 * 1000 * 1000)
#define WHOLE_TEST_TIMEOUT_SEC 100 /* a loaded CI machine under ASan: only a hang ends here */

/* ---- children: killed by PID whatever happens ---- */

static volatile pid_t dbus_pid = -1;
static volatile pid_t fridgectl_pid = -1;

static void kill_children(void) {
        /* Only kill(): this also runs from signal handlers. */
        if (fridgectl_pid > 0)
                kill(fridgectl_pid, SIGKILL);
        if (dbus_pid > 0)
                kill(dbus_pid, SIGKILL);
}

static void reap_children(void) {
        kill_children();
        if (fridgectl_pid > 0)
                (void) waitpid(fridgectl_pid, NULL, 0);
        if (dbus_pid > 0)
                (void) waitpid(dbus_pid, NULL, 0);
        fridgectl_pid = dbus_pid = -1;
}

/* A failed g_assert aborts, which skips atexit(): kill from the handler. */
static void on_fatal_signal(int sig) {
        kill_children();
        signal(sig, SIG_DFL);
        raise(sig);
}

static void install_fatal_handlers(void) {
        static const int sigs[] = { SIGABRT, SIGSEGV, SIGBUS, SIGALRM, SIGTERM, SIGINT, SIGHUP };

        for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++)
                signal(sigs[i], on_fatal_signal);
        atexit(reap_children);
        alarm(WHOLE_TEST_TIMEOUT_SEC);
}

/* In a forked child: die with the test, start with clean signal state. */
static void child_reset(void) {
        sigset_t none;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int s = 1; s < NSIG; s++)
                signal(s, SIG_DFL);
        alarm(0);
}

/* ---- the private bus ---- */

/* A session bus that any uid may connect to: the agent case runs
 * fridgectl as nobody */
static const char bus_config[] =
        "<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>"
        "<policy context=\"default\"><allow user=\"*\"/><allow send_destination=\"*\" eavesdrop=\"true\"/>"
        "<allow eavesdrop=\"true\"/><allow own=\"*\"/>"
        "</policy></busconfig>";

static char *start_dbus_daemon(void) {
        char buf[512] = {};
        size_t len = 0;
        int p[2];
        g_autofree char *config_path = NULL;
        int cfd = g_file_open_tmp("fridgectl-tty-bus-XXXXXX.conf", &config_path, NULL);
        g_assert_cmpint(cfd, >=, 0);
        g_assert_true(g_file_set_contents(config_path, bus_config, -1, NULL));
        close(cfd);
        g_autofree char *config_arg = g_strconcat("--config-file=", config_path, NULL);

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        dbus_pid = fork();
        g_assert_cmpint(dbus_pid, >=, 0);
        if (dbus_pid == 0) {
                child_reset();
                dup2(p[1], STDOUT_FILENO);
                execlp("dbus-daemon", "dbus-daemon", config_arg, "--nofork", "--print-address", (char *) NULL);
                _exit(127);
        }
        close(p[1]);
        while (len < sizeof(buf) - 1 && !memchr(buf, '\n', len)) {
                struct pollfd pfd = { .fd = p[0], .events = POLLIN };
                ssize_t n;

                g_assert_cmpint(poll(&pfd, 1, 5000), ==, 1);
                n = read(p[0], buf + len, sizeof(buf) - 1 - len);
                g_assert_cmpint(n, >, 0);
                len += (size_t) n;
        }
        close(p[0]);
        (void) unlink(config_path); /* read at start-up */
        return g_strstrip(g_strdup(buf));
}

/* ---- the fake fridged ---- */

typedef enum Script {
        SCRIPT_UNTIL_CANCELLED, /* phases forever, until Cancel */
        SCRIPT_DONE,            /* a whole successful cycle */
        SCRIPT_VANISH,          /* fridged drops its name mid-cycle */
        SCRIPT_BUSY,            /* Sleep is refused */
        SCRIPT_SLOW_CANCEL,     /* Cancel is accepted, the cycle goes on */
} Script;

typedef struct Fake {
        sd_bus *bus;
        sd_event *event;
        sd_event_source *timer;
        Script script;
        unsigned step;
        char *state, *phase, *text;
        uint64_t cycle_id;
        double progress;
        unsigned sleep_calls;
        bool sleep_interactive; /* the last Sleep allowed interactive authorization */
        unsigned cancel_calls;
        uint64_t cancel_arg;
        GString *options;       /* the last Sleep's a{sv}: "name=type:value;"... */
} Fake;

static Fake fake;

static void set_str(char **field, const char *value) {
        g_free(*field);
        *field = g_strdup(value);
}

static int get_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        if (g_str_equal(property, "State"))
                return sd_bus_message_append(reply, "s", fake.state);
        if (g_str_equal(property, "CycleId"))
                return sd_bus_message_append(reply, "t", fake.cycle_id);
        if (g_str_equal(property, "Phase"))
                return sd_bus_message_append(reply, "s", fake.phase);
        if (g_str_equal(property, "Progress"))
                return sd_bus_message_append(reply, "d", fake.progress);
        return sd_bus_message_append(reply, "s", fake.text);
}

static void emit_phase(const char *phase, double progress, const char *text) {
        set_str(&fake.phase, phase);
        set_str(&fake.text, text);
        fake.progress = progress;
        g_assert_cmpint(sd_bus_emit_properties_changed(fake.bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "Phase",
                                                       "Progress", "ProgressText", NULL), >=, 0);
}

static void emit_progress(double progress, const char *text) {
        set_str(&fake.text, text);
        fake.progress = progress;
        g_assert_cmpint(sd_bus_emit_properties_changed(fake.bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "Progress",
                                                       "ProgressText", NULL), >=, 0);
}

static void emit_finished(uint64_t cycle, const char *result, const char *error, const char *message) {
        g_assert_cmpint(sd_bus_emit_signal(fake.bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "CycleFinished", "tsss",
                                           cycle, result, error, message), >=, 0);
}

static void finish_cycle(const char *result, const char *error, const char *message) {
        fake.timer = sd_event_source_disable_unref(fake.timer);
        emit_finished(CYCLE, result, error, message);
        set_str(&fake.state, "idle");
        emit_phase("", fake.progress, "");
}

static void step_until_cancelled(void) {
        static const char *const phases[] = { "prepare", "flush", "freeze-early", "flush-again", "freeze-late" };
        const char *phase = phases[fake.step % G_N_ELEMENTS(phases)];
        g_autofree char *text = g_strdup_printf("step %u", fake.step);

        emit_phase(phase, 0.02 * fake.step, text);
}

static void step_done(void) {
        switch (fake.step) {
        case 0: emit_phase("prepare", 0.01, "checking"); break;
        case 1: emit_phase("flush", 0.05, "flushing 12 MiB"); break;
        case 2: emit_progress(0.31, "flushing 8 MiB \"dirty\"\n"); break;
        case 3: emit_phase("freeze-early", 0.5, "freezing"); break;
        case 4: emit_phase("flush-again", 0.6, ""); break;
        case 5: emit_phase("freeze-late", 0.7, ""); break;
        case 6:
                emit_phase("kernel", 0.8, "");
                sd_bus_emit_signal(fake.bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "SleepImminent", "ts",
                                   (uint64_t) CYCLE, "suspend");
                break;
        case 7:
                sd_bus_emit_signal(fake.bus, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "Resumed", "tts",
                                   (uint64_t) CYCLE, (uint64_t) 3200000, "rtc");
                emit_phase("thaw", 0.9, "thawing");
                break;
        default:
                finish_cycle("done", "", "resumed after 3.2 s");
                break;
        }
}

/* Releasing the name is what fridgectl sees when fridged exits. */
static void step_vanish(void) {
        if (fake.step == 0) {
                emit_phase("prepare", 0.01, "");
                return;
        }
        fake.timer = sd_event_source_disable_unref(fake.timer);
        g_assert_cmpint(sd_bus_release_name(fake.bus, FRIDGE_BUS_NAME), >=, 0);
}

static int on_step(sd_event_source *s, uint64_t usec, void *userdata) {
        if (fake.script == SCRIPT_DONE)
                step_done();
        else if (fake.script == SCRIPT_VANISH)
                step_vanish();
        else
                step_until_cancelled();
        fake.step++;
        if (fake.timer) {       /* else the cycle just ended */
                sd_event_source_set_time_relative(s, STEP_USEC);
                sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

/* What fridgectl sent, with each value's D-Bus type */
static int read_options(sd_bus_message *m) {
        const char *key, *contents;
        int r;

        g_string_truncate(fake.options, 0);
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                union { int b; uint32_t u; const char *s; } v;
                if ((r = sd_bus_message_read_basic(m, 's', &key)) < 0 ||
                    (r = sd_bus_message_peek_type(m, NULL, &contents)) < 0 ||
                    (r = sd_bus_message_enter_container(m, 'v', contents)) < 0 ||
                    (r = sd_bus_message_read_basic(m, contents[0], &v)) < 0)
                        return r;
                if (contents[0] == 'b')
                        g_string_append_printf(fake.options, "%s=b:%d;", key, v.b);
                else if (contents[0] == 'u')
                        g_string_append_printf(fake.options, "%s=u:%u;", key, v.u);
                else
                        g_string_append_printf(fake.options, "%s=%s:%s;", key, contents, contents[0] == 's' ? v.s : "?");
                if ((r = sd_bus_message_exit_container(m)) < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                        return r;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int method_sleep(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *kind;
        int r;

        fake.sleep_calls++;
        fake.sleep_interactive = sd_bus_message_get_allow_interactive_authorization(m);
        r = sd_bus_message_read(m, "s", &kind);
        if (r < 0)
                return r;
        g_assert_cmpstr(kind, ==, "suspend");
        r = read_options(m);
        if (r < 0)
                return r;
        if (fake.script == SCRIPT_BUSY)
                return sd_bus_error_set(error, "io.fridge.Fridge1.Error.Busy", "cycle 41 is running");

        /* Leftovers of an older cycle, sent before the reply: fridgectl
         * must not take them for its own. */
        emit_finished(CYCLE - 1, "failed", "io.fridge.Fridge1.Error.Kernel", "stale");
        emit_phase("thaw", 0.99, "stale");

        fake.cycle_id = CYCLE;
        fake.step = 0;
        set_str(&fake.state, "running");
        r = sd_bus_reply_method_return(m, "t", (uint64_t) CYCLE);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(fake.event, &fake.timer, CLOCK_MONOTONIC, STEP_USEC, 0, on_step, NULL);
        return r < 0 ? r : 1;
}

static int method_cancel(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        int r;

        fake.cancel_calls++;
        r = sd_bus_message_read(m, "t", &fake.cancel_arg);
        if (r < 0)
                return r;
        r = sd_bus_reply_method_return(m, NULL);
        if (r < 0)
                return r;
        if (fake.script == SCRIPT_SLOW_CANCEL)
                return 1;
        finish_cycle("aborted", "io.fridge.Fridge1.Error.Cancelled", "cancelled by user");
        return 1;
}

static const sd_bus_vtable fake_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Sleep", "sa{sv}", "t", method_sleep, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Cancel", "t", "", method_cancel, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL("SleepImminent", "ts", 0),
        SD_BUS_SIGNAL("Resumed", "tts", 0),
        SD_BUS_SIGNAL("CycleFinished", "tsss", 0),
        SD_BUS_PROPERTY("State", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("CycleId", "t", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Phase", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Progress", "d", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ProgressText", "s", get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_VTABLE_END,
};

static void fake_start(const char *address) {
        g_assert_cmpint(sd_event_new(&fake.event), >=, 0);
        g_assert_cmpint(sd_bus_new(&fake.bus), >=, 0);
        g_assert_cmpint(sd_bus_set_address(fake.bus, address), >=, 0);
        g_assert_cmpint(sd_bus_set_bus_client(fake.bus, true), >=, 0);
        g_assert_cmpint(sd_bus_start(fake.bus), >=, 0);
        g_assert_cmpint(sd_bus_add_object_vtable(fake.bus, NULL, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, fake_vtable,
                                                 NULL), >=, 0);
        g_assert_cmpint(sd_bus_request_name(fake.bus, FRIDGE_BUS_NAME, 0), >=, 0);
        g_assert_cmpint(sd_bus_attach_event(fake.bus, fake.event, 0), >=, 0);
}

static void fake_reset(Script script) {
        fake.timer = sd_event_source_disable_unref(fake.timer);
        fake.script = script;
        fake.step = 0;
        fake.sleep_calls = fake.cancel_calls = 0;
        fake.cancel_arg = UINT64_MAX;
        if (!fake.options)
                fake.options = g_string_new(NULL);
        g_string_truncate(fake.options, 0);
        fake.cycle_id = CYCLE - 1;
        fake.progress = 0;
        set_str(&fake.state, "idle");
        set_str(&fake.phase, "");
        set_str(&fake.text, "");
}

/* ---- running fridgectl ---- */

typedef struct Run {
        const char *key;        /* sent once the bar is drawn, NULL: none */
        bool key_sent;
        const char *key2;       /* sent once "cancelling…" is drawn */
        bool key2_sent;
        bool keys_mode_seen;    /* ICANON was off while the key was sent */
        int out_fd;             /* pty master or pipe */
        int slave_fd;           /* kept open: its termios is checked */
        struct termios before;  /* the pty's settings before fridgectl ran */
        GString *output;
        int status;
        bool exited;
        bool timed_out;
        bool as_nobody;         /* fridgectl runs as uid/gid 65534 */
        const char *agent;      /* FRIDGECTL_POLKIT_AGENT, NULL: unset */
        const char *exe;        /* the fridgectl to run; NULL: $FRIDGECTL */
} Run;

static char *bus_address;

static void drain(Run *run, int timeout_ms) {
        char buf[4096];

        for (;;) {
                struct pollfd pfd = { .fd = run->out_fd, .events = POLLIN };
                ssize_t n;

                if (poll(&pfd, 1, timeout_ms) <= 0)
                        return;
                n = read(run->out_fd, buf, sizeof(buf));
                if (n <= 0)
                        return;
                g_string_append_len(run->output, buf, n);
        }
}

static void maybe_send_key(Run *run) {
        struct termios t;

        /* fridgectl switches the terminal before it calls Sleep, and draws
         * the bar after the reply: a bar with a phase means keys are read. */
        if (!run->key || run->key_sent || !strstr(run->output->str, "%  prepare"))
                return;
        g_assert_cmpint(tcgetattr(run->slave_fd, &t), ==, 0);
        run->keys_mode_seen = !(t.c_lflag & ICANON) && !(t.c_lflag & ECHO) && (t.c_lflag & ISIG);
        g_assert_cmpint(write(run->out_fd, run->key, strlen(run->key)), ==, (ssize_t) strlen(run->key));
        run->key_sent = true;
}

static void maybe_send_second_key(Run *run) {
        if (!run->key2 || run->key2_sent || !strstr(run->output->str, "cancelling"))
                return;
        g_assert_cmpint(write(run->out_fd, run->key2, strlen(run->key2)), ==, (ssize_t) strlen(run->key2));
        run->key2_sent = true;
}

static int on_output(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Run *run = userdata;
        char buf[4096];
        ssize_t n;

        n = read(fd, buf, sizeof(buf));
        if (n <= 0)     /* EOF on the pipe, EIO on a pty without slave */
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        g_string_append_len(run->output, buf, n);
        maybe_send_key(run);
        maybe_send_second_key(run);
        return 0;
}

static int on_child(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Run *run = userdata;

        run->exited = true;
        run->status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
        fridgectl_pid = -1;
        return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Run *run = userdata;

        run->timed_out = true;
        return 0;
}

static void exec_fridgectl(const Run *run, char **extra) {
        const char *exe = run->exe ? run->exe : g_getenv("FRIDGECTL");
        g_autofree char *addr = g_strconcat("--bus-address=", bus_address, NULL);
        g_autoptr(GPtrArray) argv = g_ptr_array_new();

        g_ptr_array_add(argv, (char *) exe);
        g_ptr_array_add(argv, addr);
        for (char **e = extra; *e; e++)
                g_ptr_array_add(argv, *e);
        g_ptr_array_add(argv, NULL);
        execv(exe, (char **) argv->pdata);
        _exit(127);
}

static void spawn_in_pty(Run *run, char **extra) {
        struct winsize ws = { .ws_row = 24, .ws_col = 100 };
        int master, slave;

        g_assert_cmpint(openpty(&master, &slave, NULL, NULL, &ws), ==, 0);
        g_assert_cmpint(tcgetattr(slave, &run->before), ==, 0);
        /* openpty() gives a cooked terminal, as a shell would. */
        g_assert_true(run->before.c_lflag & ECHO);
        g_assert_true(run->before.c_lflag & ICANON);
        fridgectl_pid = fork();
        g_assert_cmpint(fridgectl_pid, >=, 0);
        if (fridgectl_pid == 0) {
                child_reset();
                close(master);
                if (login_tty(slave) < 0)
                        _exit(126);
                if (run->agent)
                        setenv("FRIDGECTL_POLKIT_AGENT", run->agent, 1);
                if (run->as_nobody && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
                        _exit(125);
                exec_fridgectl(run, extra);
        }
        run->out_fd = master;
        run->slave_fd = slave;
}

static void spawn_with_pipe(Run *run, char **extra) {
        int p[2];

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        fridgectl_pid = fork();
        g_assert_cmpint(fridgectl_pid, >=, 0);
        if (fridgectl_pid == 0) {
                int null = open("/dev/null", O_RDONLY);

                child_reset();
                dup2(null, STDIN_FILENO);
                dup2(p[1], STDOUT_FILENO);
                exec_fridgectl(run, extra);
        }
        close(p[1]);
        run->out_fd = p[0];
        run->slave_fd = -1;
}

/* Runs fridgectl to its exit inside the fake's event loop. */
static void run_fridgectl(Run *run, bool pty, char **extra) {
        sd_event_source *io = NULL, *child = NULL, *timeout = NULL;

        run->output = g_string_new(NULL);
        if (pty)
                spawn_in_pty(run, extra);
        else
                spawn_with_pipe(run, extra);

        g_assert_cmpint(sd_event_add_io(fake.event, &io, run->out_fd, EPOLLIN, on_output, run), >=, 0);
        g_assert_cmpint(sd_event_add_child(fake.event, &child, fridgectl_pid, WEXITED, on_child, run), >=, 0);
        g_assert_cmpint(sd_event_add_time_relative(fake.event, &timeout, CLOCK_MONOTONIC, CASE_TIMEOUT_USEC, 0,
                                                   on_timeout, run), >=, 0);
        /* sd_event_run(), not sd_event_loop(): a loop that exited cannot
         * be used again, and each case needs the same one. */
        while (!run->exited && !run->timed_out)
                g_assert_cmpint(sd_event_run(fake.event, UINT64_MAX), >=, 0);
        sd_event_source_disable_unref(io);
        sd_event_source_disable_unref(child);
        sd_event_source_disable_unref(timeout);

        /* pty output may still be in flight after the exit. */
        drain(run, 200);
        if (run->timed_out)
                g_error("fridgectl did not exit in time; output so far:\n%s", run->output->str);
        g_assert_true(run->exited);
}

static void run_done(Run *run) {
        if (run->slave_fd >= 0)
                close(run->slave_fd);
        close(run->out_fd);
        g_string_free(run->output, true);
}

static void assert_same_termios(const struct termios *a, const struct termios *b) {
        g_assert_cmphex(a->c_iflag, ==, b->c_iflag);
        g_assert_cmphex(a->c_oflag, ==, b->c_oflag);
        g_assert_cmphex(a->c_cflag, ==, b->c_cflag);
        g_assert_cmphex(a->c_lflag, ==, b->c_lflag);
        g_assert_cmpmem(a->c_cc, sizeof(a->c_cc), b->c_cc, sizeof(b->c_cc));
}

/* Esc or Ctrl-C under a terminal: Cancel(42), the aborted line, exit 3,
 * and the terminal exactly as before. */
static void check_cancel_by_key(const char *key) {
        char *extra[] = { (char *) "suspend", NULL };
        struct termios after;
        Run run = { .key = key };
        g_autofree char *text = NULL;

        fake_reset(SCRIPT_UNTIL_CANCELLED);
        run_fridgectl(&run, true, extra);
        text = g_strchomp(g_strdup(run.output->str));
        g_test_message("fridgectl output: %s", text);

        g_assert_true(run.key_sent);
        g_assert_true(run.keys_mode_seen);
        g_assert_cmpuint(fake.sleep_calls, ==, 1);
        g_assert_cmpuint(fake.cancel_calls, ==, 1);
        g_assert_cmpuint(fake.cancel_arg, ==, CYCLE);
        g_assert_nonnull(strstr(text, "\r\033[K["));         /* a redrawn bar */
        g_assert_nonnull(strstr(text, "%  prepare: step 0"));
        g_assert_nonnull(strstr(text, "%  cancelling\xe2\x80\xa6"));
        g_assert_true(g_str_has_suffix(text, "\r\033[Kaborted: cancelled by user; all services thawed"));
        g_assert_null(strstr(text, "stale"));
        g_assert_cmpint(run.status, ==, 3);

        g_assert_cmpint(tcgetattr(run.slave_fd, &after), ==, 0);
        g_assert_true(after.c_lflag & ECHO);
        g_assert_true(after.c_lflag & ICANON);
        assert_same_termios(&run.before, &after);
        run_done(&run);
}

/* A stand-in for pkttyagent, in Python (which, unlike dash, leaves the
 * signal mask it inherited alone): says how it was started and which
 * signals it found blocked, closes the notify fd as the real one does once
 * registered, and says when SIGTERM ends it */
static char *write_fake_agent(const char *dir) {
        char *path = g_build_filename(dir, "agent", NULL);
        g_autofree char *script = g_strdup_printf(
                "#!/usr/bin/python3\n"
                "import os, signal, sys, time\n"
                "log = open('%s/agent.log', 'a', buffering=1)\n"
                "log.write('args ' + ' '.join(sys.argv[1:]) + '\\n')\n"
                "blk = [l.split()[1] for l in open('/proc/self/status') if l.startswith('SigBlk:')][0]\n"
                "log.write('sigblk ' + blk + '\\n')\n"
                "def term(*a):\n"
                "    log.write('term\\n')\n"
                "    sys.exit(0)\n"
                "signal.signal(signal.SIGTERM, term)\n"
                "os.close(int(sys.argv[2]))\n"
                "while True:\n"
                "    time.sleep(0.05)\n", dir);
        g_assert_true(g_file_set_contents(path, script, -1, NULL));
        g_assert_cmpint(chmod(path, 0755), ==, 0);
        return path;
}

static char *agent_log(const char *dir) {
        g_autofree char *path = g_build_filename(dir, "agent.log", NULL);
        char *text = NULL;
        return g_file_get_contents(path, &text, NULL, NULL) ? text : g_strdup("");
}

/* A person at a terminal who is not root: polkit's text agent is started
 * for Sleep's question and ended once Sleep answered; Esc still cancels.
 * Root gets no agent (polkit asks root nothing). */
static void test_polkit_agent(void) {
        g_autofree char *dir = g_dir_make_tmp("fridgectl-agent-XXXXXX", NULL);
        g_assert_nonnull(dir);
        g_assert_cmpint(chmod(dir, 0777), ==, 0);
        g_autofree char *agent = write_fake_agent(dir);
        char *extra[] = { (char *) "suspend", NULL };

        Run as_root = { .key = "\x1b", .agent = agent };
        fake_reset(SCRIPT_UNTIL_CANCELLED);
        run_fridgectl(&as_root, true, extra);
        g_assert_cmpint(as_root.status, ==, 3);
        g_assert_true(fake.sleep_interactive);
        g_autofree char *none = agent_log(dir);
        g_assert_cmpstr(none, ==, "");
        run_done(&as_root);

        /* uid 65534 may not reach the build tree (a clone in root's home,
         * 0700 on Debian): it runs a copy of fridgectl from the scratch dir */
        g_autofree char *copy = g_build_filename(dir, "fridgectl", NULL), *bytes = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(g_getenv("FRIDGECTL"), &bytes, &len, NULL));
        g_assert_true(g_file_set_contents(copy, bytes, (gssize) len, NULL));
        g_assert_cmpint(chmod(copy, 0755), ==, 0);
        Run run = { .key = "\x1b", .agent = agent, .as_nobody = true, .exe = copy };
        fake_reset(SCRIPT_UNTIL_CANCELLED);
        run_fridgectl(&run, true, extra);
        g_autofree char *text = g_strchomp(g_strdup(run.output->str));
        g_test_message("fridgectl output: %s", text);
        g_autofree char *log = agent_log(dir);
        g_test_message("agent: %s", log);
        g_assert_true(g_regex_match_simple("^args --notify-fd [0-9]+ --fallback\nsigblk 0+\nterm\n$", log, 0, 0));
        g_assert_true(fake.sleep_interactive);
        g_assert_true(run.keys_mode_seen);
        g_assert_cmpuint(fake.cancel_calls, ==, 1);
        g_assert_cmpint(run.status, ==, 3);
        run_done(&run);
        g_autofree char *log_path = g_build_filename(dir, "agent.log", NULL);
        (void) unlink(log_path);
        (void) unlink(agent);
        (void) unlink(copy);
        (void) rmdir(dir);
}

static void test_esc_cancels(void) {
        check_cancel_by_key("\x1b");
}

static void test_ctrl_c_cancels(void) {
        check_cancel_by_key("\x03");
}

/* Ctrl-C while cancelling: stop waiting, exit 1, terminal restored. */
static void test_ctrl_c_twice_leaves(void) {
        char *extra[] = { (char *) "suspend", NULL };
        Run run = { .key = "\x03", .key2 = "\x03" };
        struct termios after;

        fake_reset(SCRIPT_SLOW_CANCEL);
        run_fridgectl(&run, true, extra);
        g_test_message("fridgectl output: %s", run.output->str);

        g_assert_true(run.key2_sent);
        g_assert_cmpuint(fake.cancel_calls, ==, 1);
        g_assert_nonnull(strstr(run.output->str, "interrupted; cycle 42 may still be running"));
        g_assert_cmpint(run.status, ==, 1);
        g_assert_cmpint(tcgetattr(run.slave_fd, &after), ==, 0);
        assert_same_termios(&run.before, &after);
        run_done(&run);
        fake.timer = sd_event_source_disable_unref(fake.timer);
}

static bool is_json_line(const char *line) {
        size_t n = strlen(line);

        return n >= 2 && line[0] == '{' && line[n - 1] == '}';
}

static void test_json_done(void) {
        char *extra[] = { (char *) "--json", (char *) "suspend", (char *) "--wake-after=5", NULL };
        Run run = {};
        g_auto(GStrv) lines = NULL;
        guint n;

        fake_reset(SCRIPT_DONE);
        run_fridgectl(&run, false, extra);
        g_test_message("fridgectl output:\n%s", run.output->str);

        g_assert_cmpint(run.status, ==, 0);
        g_assert_true(g_str_has_suffix(run.output->str, "}\n"));
        lines = g_strsplit(g_strchomp(run.output->str), "\n", -1);
        n = g_strv_length(lines);
        g_assert_cmpuint(n, >=, 8);
        for (guint i = 0; i < n; i++)
                if (!is_json_line(lines[i]))
                        g_error("line %u is not a JSON object: %s", i, lines[i]);

        g_assert_cmpstr(lines[0], ==, "{\"event\":\"started\",\"cycle\":42,\"kind\":\"suspend\"}");
        g_assert_cmpstr(lines[1], ==,
                        "{\"event\":\"phase\",\"cycle\":42,\"phase\":\"prepare\",\"progress\":0.01,\"text\":\"checking\"}");
        g_assert_true(strstr(run.output->str, "{\"event\":\"progress\",\"cycle\":42,\"phase\":\"flush\","
                                              "\"progress\":0.31,\"text\":\"flushing 8 MiB \\\"dirty\\\"\\u000a\"}"));
        g_assert_true(strstr(run.output->str, "{\"event\":\"sleep-imminent\",\"cycle\":42,\"kind\":\"suspend\"}"));
        g_assert_true(strstr(run.output->str,
                             "{\"event\":\"resumed\",\"cycle\":42,\"slept_usec\":3200000,\"wake_reason\":\"rtc\"}"));
        g_assert_null(strstr(run.output->str, "stale"));
        g_assert_cmpstr(lines[n - 1], ==, "{\"event\":\"finished\",\"cycle\":42,\"result\":\"done\",\"error\":\"\","
                                          "\"message\":\"resumed after 3.2 s\"}");
        g_assert_cmpuint(fake.cancel_calls, ==, 0);
        run_done(&run);
}

static void test_plain_done(void) {
        char *extra[] = { (char *) "suspend", (char *) "--no-progress", NULL };
        Run run = {};

        fake_reset(SCRIPT_DONE);
        run_fridgectl(&run, false, extra);
        g_assert_cmpstr(run.output->str, ==,
                        "phase prepare\n"
                        "phase flush\n"
                        "phase freeze-early\n"
                        "phase flush-again\n"
                        "phase freeze-late\n"
                        "phase kernel\n"
                        "resumed after 3.2 s (wake: rtc)\n"
                        "phase thaw\n"
                        "done: resumed after 3.2 s (wake: rtc)\n");
        g_assert_cmpint(run.status, ==, 0);
        run_done(&run);
}

static void test_daemon_vanishes(void) {
        char *extra[] = { (char *) "suspend", NULL };
        Run run = {};

        fake_reset(SCRIPT_VANISH);
        run_fridgectl(&run, false, extra);
        /* "fridgectl: fridged went away" is an error: on stderr, not here */
        g_assert_cmpstr(run.output->str, ==, "phase prepare\n");
        g_assert_cmpint(run.status, ==, 1);
        run_done(&run);
        g_assert_cmpint(sd_bus_request_name(fake.bus, FRIDGE_BUS_NAME, 0), >=, 0);
}

static void test_busy_is_refused(void) {
        char *extra[] = { (char *) "suspend", (char *) "--json", NULL };
        Run run = {};

        fake_reset(SCRIPT_BUSY);
        run_fridgectl(&run, false, extra);
        g_assert_cmpstr(run.output->str, ==,
                        "{\"event\":\"error\",\"error\":\"io.fridge.Fridge1.Error.Busy\","
                        "\"message\":\"cycle 41 is running\"}\n");
        g_assert_cmpint(run.status, ==, 4);
        run_done(&run);
}

static void test_status_json(void) {
        char *extra[] = { (char *) "status", (char *) "--json", NULL };
        Run run = {};

        fake_reset(SCRIPT_DONE);
        run_fridgectl(&run, false, extra);
        g_assert_cmpstr(run.output->str, ==,
                        "{\"State\":\"idle\",\"CycleId\":41,\"Phase\":\"\",\"Progress\":0,"
                        "\"ProgressText\":\"\"}\n");
        g_assert_cmpint(run.status, ==, 0);
        run_done(&run);
}

/* Every Sleep option of the table, as a flag: fridgectl sends each under
 * its D-Bus name with the table's type, in the table's order */
static void test_options_sent(void) {
        char *extra[64] = { (char *) "--json", (char *) "suspend" };
        g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GString) want = g_string_new(NULL);
        size_t n = 2;
        Run run = {};

        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                char *arg;
                switch (s->type) {
                case SLEEP_OPTION_BOOL:
                        arg = g_strdup_printf("--%s", s->flag);
                        g_string_append_printf(want, "%s=b:1;", s->name);
                        break;
                case SLEEP_OPTION_UINT:
                        arg = g_strdup_printf("--%s=%u", s->flag, s->min);
                        g_string_append_printf(want, "%s=u:%u;", s->name, s->min);
                        break;
                default: {
                        const char *word = s->words[g_strv_length((char **) s->words) - 1];
                        arg = g_strdup_printf("--%s=%s", s->flag, word);
                        g_string_append_printf(want, "%s=s:%s;", s->name, word);
                        break;
                }
                }
                g_ptr_array_add(keep, arg);
                g_assert_cmpuint(n, <, G_N_ELEMENTS(extra) - 1);
                extra[n++] = arg;
        }
        fake_reset(SCRIPT_DONE);
        run_fridgectl(&run, false, extra);
        g_assert_cmpint(run.status, ==, 0);
        g_assert_cmpstr(fake.options->str, ==, want->str);
        run_done(&run);
}

static char *collapse_spaces(const char *s) {
        g_autoptr(GRegex) re = g_regex_new("\\s+", 0, 0, NULL);
        return g_regex_replace_literal(re, s, -1, 0, " ", 0, NULL);
}

/* fridgectl --help lists every Sleep option of the table with its help */
static void test_help_lists_options(void) {
        char *extra[] = { (char *) "--help", NULL };
        Run run = {};

        fake_reset(SCRIPT_DONE);
        run_fridgectl(&run, false, extra);
        g_assert_cmpint(run.status, ==, 0);
        g_autofree char *flat = collapse_spaces(run.output->str);
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                /* the text follows on the line, or on the next for a long flag */
                g_autofree char *short_flag = s->short_flag ? g_strdup_printf("-%c ", s->short_flag) : g_strdup("   ");
                g_autofree char *flag = g_strdup_printf("\n  %s--%s%s%s ", short_flag, s->flag,
                                                        s->metavar ? "=" : "", s->metavar ? s->metavar : "");
                g_autofree char *flag_alone = g_strdup_printf("\n  %s--%s%s%s\n", short_flag, s->flag,
                                                              s->metavar ? "=" : "", s->metavar ? s->metavar : "");
                g_autofree char *help = collapse_spaces(s->help);
                if ((!strstr(run.output->str, flag) && !strstr(run.output->str, flag_alone)) || !strstr(flat, help))
                        g_error("fridgectl --help lacks --%s or its help:\n%s", s->flag, run.output->str);
        }
        g_assert_cmpuint(fake.sleep_calls, ==, 0);
        run_done(&run);
}

int main(int argc, char *argv[]) {
        g_autofree char *daemon = g_find_program_in_path("dbus-daemon");
        sigset_t mask;
        int r;

        g_test_init(&argc, &argv, NULL);
        if (!daemon) {
                printf("SKIP: dbus-daemon is not installed; it provides the private bus for this test\n");
                return 77;
        }
        if (!g_getenv("FRIDGECTL")) {
                printf("SKIP: FRIDGECTL is not set (meson test sets it to the built fridgectl)\n");
                return 77;
        }

        install_fatal_handlers();
        /* sd-event watches children through SIGCHLD, which must be blocked. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        bus_address = start_dbus_daemon();
        fake_start(bus_address);

        g_test_add_func("/fridgectl/tty/esc-cancels", test_esc_cancels);
        g_test_add_func("/fridgectl/tty/polkit-agent", test_polkit_agent);
        g_test_add_func("/fridgectl/tty/ctrl-c-cancels", test_ctrl_c_cancels);
        g_test_add_func("/fridgectl/tty/ctrl-c-twice-leaves", test_ctrl_c_twice_leaves);
        g_test_add_func("/fridgectl/json/done", test_json_done);
        g_test_add_func("/fridgectl/plain/done", test_plain_done);
        g_test_add_func("/fridgectl/plain/daemon-vanishes", test_daemon_vanishes);
        g_test_add_func("/fridgectl/json/busy", test_busy_is_refused);
        g_test_add_func("/fridgectl/json/status", test_status_json);
        g_test_add_func("/fridgectl/json/options-sent", test_options_sent);
        g_test_add_func("/fridgectl/help/lists-options", test_help_lists_options);
        r = g_test_run();

        fake.timer = sd_event_source_disable_unref(fake.timer);
        fake.bus = sd_bus_flush_close_unref(fake.bus);
        fake.event = sd_event_unref(fake.event);
        reap_children();
        g_free(bus_address);
        g_free(fake.state);
        g_free(fake.phase);
        g_free(fake.text);
        return r;
}
