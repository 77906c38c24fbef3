/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fridge-config.h"
#include "umockdev-preload.h"

#define CALL_TIMEOUT_USEC (10 * G_USEC_PER_SEC)

/* Live harnesses, for the emergency teardown (atexit, SIGABRT, SIGTERM). */
#define MAX_LIVE 4
static Harness *live[MAX_LIVE];
static bool handlers_installed;
static pid_t harness_owner_pid;

static void harness_stop_internal(Harness *h);
static void take_error(sd_bus_error *e, char **ret_error, char **ret_message);

const char *harness_env(const char *name) {
        const char *v = getenv(name);
        return v && *v ? v : NULL;
}

static bool have_program(const char *name) {
        g_autofree char *p = g_find_program_in_path(name);
        return p != NULL;
}

const char *harness_skip_reason(void) {
        if (geteuid() != 0)
                return "not running as root (FUSE mounts and the private bus need it)";
        if (access("/dev/fuse", R_OK | W_OK) < 0)
                return "/dev/fuse is missing or not accessible";
        if (!have_program("fusermount3"))
                return "fusermount3 is not installed";
        if (!have_program("dbus-daemon"))
                return "dbus-daemon is not installed";
        if (!harness_env("FRIDGED"))
                return "FRIDGED is not set (run through meson test)";
        if (!harness_env("FAKESYS"))
                return "FAKESYS is not set (run through meson test)";
        return NULL;
}

void harness_init(int *argc, char ***argv) {
        g_test_init(argc, argv, NULL);
        const char *why = harness_skip_reason();
        if (why) {
                printf("SKIP: %s\n", why);
                exit(77);
        }
}

/* ---------------------------------------------------------------- time */

static int64_t now_usec(void) {
        return g_get_monotonic_time();
}

static int remaining_ms(int64_t deadline) {
        int64_t left = deadline - now_usec();
        if (left <= 0)
                return 0;
        return (int) ((left + 999) / 1000);
}

/* ---------------------------------------------------------------- processes */

static int pidfd_open_compat(pid_t pid) {
#ifdef SYS_pidfd_open
        return (int) syscall(SYS_pidfd_open, pid, 0);
#else
        errno = ENOSYS;
        return -1;
#endif
}

int harness_wait_pid(pid_t pid, int timeout_ms) {
        int status = 0;
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        int pfd;

        if (pid <= 0)
                return -1;

        pfd = pidfd_open_compat(pid);
        for (;;) {
                pid_t r = waitpid(pid, &status, WNOHANG);
                if (r == pid) {
                        if (pfd >= 0)
                                close(pfd);
                        return status;
                }
                if (r < 0 && errno != EINTR) {
                        if (pfd >= 0)
                                close(pfd);
                        return -1;
                }
                if (remaining_ms(deadline) <= 0)
                        break;
                if (pfd >= 0) {
                        struct pollfd p = { .fd = pfd, .events = POLLIN };
                        (void) poll(&p, 1, remaining_ms(deadline));
                } else {
                        /* no pidfd: short bounded naps */
                        struct timespec ts = { 0, 10 * 1000 * 1000 };
                        nanosleep(&ts, NULL);
                }
        }
        if (pfd >= 0)
                close(pfd);
        return -1;
}

/* SIGTERM, wait, SIGKILL, wait. Returns the wait status or -1. */
static int stop_pid(pid_t *pid, int term_timeout_ms) {
        int status;

        if (*pid <= 0)
                return -1;
        (void) kill(*pid, SIGTERM);
        status = harness_wait_pid(*pid, term_timeout_ms);
        if (status == -1) {
                fprintf(stderr, "harness: pid %d did not exit after SIGTERM, sending SIGKILL\n", (int) *pid);
                (void) kill(*pid, SIGKILL);
                (void) harness_wait_pid(*pid, 5000);
        }
        *pid = 0;
        return status;
}

static void close_fds_from(int lowest) {
#ifdef SYS_close_range
        if (syscall(SYS_close_range, (unsigned) lowest, ~0U, 0) == 0)
                return;
#endif
        for (int fd = lowest; fd < 4096; fd++)
                close(fd);
}

typedef struct SpawnSpec {
        char **argv;
        int stdin_fd;               /* -1: /dev/null */
        int stdout_fd;              /* -1: /dev/null */
        int stderr_fd;              /* -1: inherit */
        int extra_fd;               /* becomes fd 3, or -1 */
        const char *const *env;     /* NAME=VALUE pairs to set, NULL-terminated */
} SpawnSpec;

static pid_t spawn(const SpawnSpec *s) {
        pid_t parent = getpid();
        pid_t pid = fork();

        if (pid < 0)
                g_error("fork: %s", g_strerror(errno));
        if (pid > 0)
                return pid;

        /* child */
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
                _exit(127);

        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        int in = s->stdin_fd >= 0 ? s->stdin_fd : devnull;
        int out = s->stdout_fd >= 0 ? s->stdout_fd : devnull;
        int err = s->stderr_fd >= 0 ? s->stderr_fd : STDERR_FILENO;
        int extra = s->extra_fd;

        /* move everything above 10 first so dup2 order cannot clobber */
        in = fcntl(in, F_DUPFD, 10);
        out = fcntl(out, F_DUPFD, 10);
        err = fcntl(err, F_DUPFD, 10);
        if (extra >= 0)
                extra = fcntl(extra, F_DUPFD, 10);
        if (in < 0 || out < 0 || err < 0 || (s->extra_fd >= 0 && extra < 0))
                _exit(127);
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
                _exit(127);
        if (extra >= 0 && dup2(extra, 3) < 0)
                _exit(127);
        close_fds_from(extra >= 0 ? 4 : 3);

        for (const char *const *e = s->env; e && *e; e++)
                putenv((char *) *e);

        /* undo what the test process changed: SIGPIPE ignored, handlers */
        signal(SIGPIPE, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGABRT, SIG_DFL);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);

        execv(s->argv[0], s->argv);
        fprintf(stderr, "harness: exec %s: %s\n", s->argv[0], strerror(errno));
        _exit(127);
}

pid_t harness_spawn_bg(char **argv, int *ret_stdout_fd) {
        int p[2] = { -1, -1 };
        SpawnSpec s = { .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .extra_fd = -1 };
        pid_t pid;

        if (ret_stdout_fd) {
                g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
                s.stdout_fd = p[1];
        }
        pid = spawn(&s);
        if (ret_stdout_fd) {
                close(p[1]);
                *ret_stdout_fd = p[0];
        }
        return pid;
}

char *harness_read_all(int fd) {
        GString *s = g_string_new(NULL);
        char buf[4096];

        for (;;) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                g_string_append_len(s, buf, n);
        }
        close(fd);
        return g_string_free(s, FALSE);
}

int harness_run(char **argv, int timeout_ms, char **ret_stdout) {
        int fd = -1;
        pid_t pid = harness_spawn_bg(argv, &fd);
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        GString *out = g_string_new(NULL);
        char buf[4096];
        int status;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int ms = remaining_ms(deadline);
                if (ms <= 0)
                        break;
                int r = poll(&p, 1, ms);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        break;
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                g_string_append_len(out, buf, n);
        }
        close(fd);
        status = harness_wait_pid(pid, remaining_ms(deadline) + 1);
        if (status == -1) {
                fprintf(stderr, "harness: %s timed out, killing pid %d\n", argv[0], (int) pid);
                kill(pid, SIGKILL);
                harness_wait_pid(pid, 5000);
        }
        if (ret_stdout)
                *ret_stdout = g_string_free(out, FALSE);
        else
                g_string_free(out, TRUE);
        return status;
}

/* ---------------------------------------------------------------- mounts */

static bool is_mounted(const char *path) {
        g_autofree char *text = NULL;
        g_auto(GStrv) lines = NULL;

        if (!g_file_get_contents("/proc/self/mountinfo", &text, NULL, NULL))
                return false;
        lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                g_auto(GStrv) f = g_strsplit(*l, " ", 6);
                if (g_strv_length(f) >= 5 && g_str_equal(f[4], path))
                        return true;
        }
        return false;
}

static bool wait_for_file(const char *path, pid_t pid, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;

        /* fakesys mounts asynchronously; the brief allows a bounded poll */
        for (;;) {
                int status;
                if (access(path, F_OK) == 0)
                        return true;
                if (waitpid(pid, &status, WNOHANG) == pid)
                        return false;
                if (remaining_ms(deadline) <= 0)
                        return false;
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
}

static void unmount(const char *path, bool *mounted) {
        if (!*mounted && !is_mounted(path))
                return;
        char *u[] = { (char *) "/usr/bin/fusermount3", (char *) "-u", (char *) path, NULL };
        g_autofree char *fm = g_find_program_in_path("fusermount3");
        if (fm)
                u[0] = fm;
        int status = harness_run(u, 5000, NULL);
        if (status != 0 || is_mounted(path)) {
                char *uz[] = { u[0], (char *) "-uz", (char *) path, NULL };
                fprintf(stderr, "harness: fusermount3 -u %s failed, trying -uz\n", path);
                (void) harness_run(uz, 5000, NULL);
        }
        *mounted = is_mounted(path);
        if (*mounted)
                fprintf(stderr, "harness: %s is still mounted!\n", path);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        if (flag == FTW_DP)
                (void) rmdir(path);
        else
                (void) unlink(path);
        return 0;
}

/* ---------------------------------------------------------------- emergency */

static void emergency_cleanup(void) {
        if (getpid() != harness_owner_pid)
                return;
        for (int i = 0; i < MAX_LIVE; i++) {
                Harness *h = live[i];
                if (!h)
                        continue;
                harness_dump_fridged_log(h);
                harness_stop_internal(h);
        }
}

static struct sigaction previous_handlers[NSIG];

/* Clean up, then hand the signal to whoever had it before (scratch cgroups
 * thaw and go there), which in the end is the default: the process dies */
static void fatal_signal(int sig) {
        emergency_cleanup();
        sigaction(sig, &previous_handlers[sig], NULL);
        raise(sig);
}

static void install_handlers(void) {
        struct sigaction sa = { .sa_handler = fatal_signal, .sa_flags = SA_RESETHAND | SA_NODEFER };
        static const int fatal[] = { SIGABRT, SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGTRAP };

        if (handlers_installed)
                return;
        handlers_installed = true;
        harness_owner_pid = getpid();
        atexit(emergency_cleanup);
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < G_N_ELEMENTS(fatal); i++)
                sigaction(fatal[i], &sa, &previous_handlers[fatal[i]]);
        signal(SIGPIPE, SIG_IGN);
}

static void live_add(Harness *h) {
        for (int i = 0; i < MAX_LIVE; i++)
                if (!live[i]) {
                        live[i] = h;
                        return;
                }
        g_error("too many live harnesses");
}

static void live_remove(Harness *h) {
        for (int i = 0; i < MAX_LIVE; i++)
                if (live[i] == h)
                        live[i] = NULL;
}

/* ---------------------------------------------------------------- signals */

static void harness_signal_free(gpointer p) {
        HarnessSignal *s = p;
        g_free(s->interface);
        g_free(s->member);
        sd_bus_message_unref(s->message);
        g_free(s);
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Harness *h = userdata;
        HarnessSignal *s = g_new0(HarnessSignal, 1);

        s->time_usec = now_usec();
        s->interface = g_strdup(sd_bus_message_get_interface(m));
        s->member = g_strdup(sd_bus_message_get_member(m));
        s->message = sd_bus_message_ref(m);
        g_ptr_array_add(h->signals, s);
        return 0;
}

/* ---------------------------------------------------------------- startup */

static void write_file(const char *path, const char *text) {
        g_autoptr(GError) e = NULL;
        if (!g_file_set_contents(path, text, -1, &e))
                g_error("write %s: %s", path, e->message);
}

static char *read_line_from_fd(int fd, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        GString *s = g_string_new(NULL);

        while (!strchr(s->str, '\n')) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                char buf[256];
                int ms = remaining_ms(deadline);
                if (ms <= 0)
                        break;
                int r = poll(&p, 1, ms);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        break;
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                g_string_append_len(s, buf, n);
        }
        if (!strchr(s->str, '\n')) {
                g_string_free(s, TRUE);
                return NULL;
        }
        *strchr(s->str, '\n') = '\0';
        return g_string_free(s, FALSE);
}

static void start_fakesys(Harness *h, const HarnessOptions *opts) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_autofree char *logpath = g_build_filename(h->dir, "fakesys.log", NULL);
        g_autofree char *control = g_build_filename(h->root, "control", NULL);
        int err = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

        g_assert_cmpint(err, >=, 0);
        g_ptr_array_add(argv, (char *) harness_env("FAKESYS"));
        for (const char *const *a = opts ? opts->fakesys_args : NULL; a && *a; a++)
                g_ptr_array_add(argv, (char *) *a);
        g_ptr_array_add(argv, h->root);
        g_ptr_array_add(argv, NULL);

        SpawnSpec s = { .argv = (char **) argv->pdata, .stdin_fd = -1, .stdout_fd = err,
                        .stderr_fd = err, .extra_fd = -1 };
        h->fakesys_pid = spawn(&s);
        close(err);
        h->root_mounted = true;   /* assume so; unmount() checks mountinfo */

        if (!wait_for_file(control, h->fakesys_pid, 5000)) {
                g_autofree char *txt = NULL;
                g_file_get_contents(logpath, &txt, NULL, NULL);
                g_test_message("fakesys output:\n%s", txt ? txt : "");
                g_error("fakesys did not mount %s within 5 s", h->root);
        }
}

static void start_slowfs(Harness *h) {
        const char *slowfs = harness_env("SLOWFS");
        g_autofree char *logpath = g_build_filename(h->dir, "slowfs.log", NULL);
        g_autofree char *control = NULL;
        int err;

        if (!slowfs) {
                g_test_skip("SLOWFS is not set (slowfs not built)");
                return;
        }
        h->slow = g_build_filename(h->dir, "slow", NULL);
        g_assert_cmpint(mkdir(h->slow, 0755), ==, 0);
        control = g_build_filename(h->slow, ".control", NULL);
        err = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        g_assert_cmpint(err, >=, 0);

        char *argv[] = { (char *) slowfs, h->slow, NULL };
        SpawnSpec s = { .argv = argv, .stdin_fd = -1, .stdout_fd = err, .stderr_fd = err, .extra_fd = -1 };
        h->slowfs_pid = spawn(&s);
        close(err);
        h->slowfs_mounted = true;
        if (!wait_for_file(control, h->slowfs_pid, 5000))
                g_error("slowfs did not mount %s within 5 s", h->slow);
}

/* A session-type bus any uid may connect to (the stock session.conf lets
 * in only the daemon's own uid) */
static char *write_open_bus_config(Harness *h) {
        g_autofree char *path = g_build_filename(h->dir, "bus.conf", NULL);
        g_autofree char *text = g_strdup_printf(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<busconfig><type>session</type><listen>unix:path=%s/bus</listen><auth>EXTERNAL</auth>\n"
                "<policy context=\"default\"><allow user=\"*\"/><allow send_destination=\"*\" eavesdrop=\"true\"/>"
                "<allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n", h->dir);
        write_file(path, text);
        g_assert_cmpint(chmod(h->dir, 0755), ==, 0);   /* the socket must be reachable */
        return g_strdup_printf("--config-file=%s", path);
}

static void start_dbus(Harness *h, bool open_bus) {
        g_autofree char *dbus = g_find_program_in_path("dbus-daemon");
        g_autofree char *address = g_strdup_printf("--address=unix:path=%s/bus", h->dir);
        g_autofree char *config = open_bus ? write_open_bus_config(h) : g_strdup("--session");
        g_autofree char *logpath = g_build_filename(h->dir, "dbus.log", NULL);
        int p[2];
        int err = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

        g_assert_cmpint(err, >=, 0);
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        char *argv[] = { dbus, config, (char *) "--nofork", address, (char *) "--print-address=3", NULL };
        SpawnSpec s = { .argv = argv, .stdin_fd = -1, .stdout_fd = err, .stderr_fd = err, .extra_fd = p[1] };
        h->dbus_pid = spawn(&s);
        close(err);
        close(p[1]);
        h->bus_address = read_line_from_fd(p[0], 10000);
        close(p[0]);
        if (!h->bus_address) {
                g_autofree char *txt = NULL;
                g_file_get_contents(logpath, &txt, NULL, NULL);
                g_error("dbus-daemon did not print its address: %s", txt ? txt : "");
        }
        g_strstrip(h->bus_address);
}

static void start_polkit(Harness *h, const char *table) {
        const char *standin = harness_env("POLKIT_STANDIN");
        if (!standin)
                g_error("POLKIT_STANDIN is not set (tests/polkit not built)");
        g_autofree char *table_path = g_build_filename(h->dir, "polkit.table", NULL);
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", h->bus_address);
        g_autofree char *a_table = g_strdup_printf("--table=%s", table_path);
        h->polkit_log = g_build_filename(h->dir, "polkit.log", NULL);
        g_autofree char *a_log = g_strdup_printf("--log=%s", h->polkit_log);
        int p[2];

        write_file(table_path, table);
        write_file(h->polkit_log, "");
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        char *argv[] = { (char *) standin, a_bus, a_table, a_log, NULL };
        SpawnSpec s = { .argv = argv, .stdin_fd = -1, .stdout_fd = p[1], .stderr_fd = 2, .extra_fd = -1 };
        h->polkit_pid = spawn(&s);
        close(p[1]);
        g_autofree char *ready = read_line_from_fd(p[0], 10000);
        close(p[0]);
        if (!ready || !g_str_has_prefix(ready, "READY"))
                g_error("polkit-standin did not start");
}

/* Hooks as systemd-sleep runs them: the script finds fridgectl through
 * $FRIDGECTL and the bus through DBUS_SYSTEM_BUS_ADDRESS (set by the stand-in) */
static void start_logind(Harness *h, const HarnessOptions *opts) {
        const char *standin = harness_env("LOGIND_STANDIN"), *fridgectl = harness_env("FRIDGECTL");
        const char *script = harness_env("FRIDGE_SLEEP_HOOK");
        if (!standin || !fridgectl || (opts->logind_hook_script && !script))
                g_error("LOGIND_STANDIN, FRIDGECTL or FRIDGE_SLEEP_HOOK is not set");
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", h->bus_address);
        g_autofree char *a_root = g_strdup_printf("--sysfs-root=%s", h->root);
        h->logind_log = g_build_filename(h->dir, "logind.log", NULL);
        g_autofree char *a_log = g_strdup_printf("--log=%s", h->logind_log);
        g_autofree char *a_delay = g_strdup_printf("--delay-max-ms=%u",
                                                   opts->logind_delay_max_ms ? opts->logind_delay_max_ms : 5000);
        g_autofree char *err_path = g_build_filename(h->dir, "logind.stderr", NULL);
        char *script_hook[] = { (char *) "/bin/sh", (char *) script, NULL };
        char *direct_hook[] = { (char *) fridgectl, a_bus, (char *) "--no-progress", (char *) "hook", NULL };
        char **hook = opts->logind_hook_script ? script_hook : direct_hook;
        char *argv[16] = { (char *) standin, a_bus, a_root, a_log, a_delay, (char *) "--" };
        for (int i = 0; hook[i]; i++)
                argv[6 + i] = hook[i];

        write_file(h->logind_log, "");
        int err = open(err_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        int p[2];
        g_assert_cmpint(err, >=, 0);
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        SpawnSpec s = { .argv = argv, .stdin_fd = -1, .stdout_fd = p[1], .stderr_fd = err, .extra_fd = -1 };
        h->logind_pid = spawn(&s);
        close(p[1]);
        close(err);
        g_autofree char *ready = read_line_from_fd(p[0], 10000);
        close(p[0]);
        if (!ready || !g_str_has_prefix(ready, "READY"))
                g_error("logind-standin did not start");
}

char *harness_logind_log(Harness *h) {
        char *text = NULL;
        g_assert_nonnull(h->logind_log);
        g_assert_true(g_file_get_contents(h->logind_log, &text, NULL, NULL));
        return text;
}

bool harness_wait_logind_line(Harness *h, const char *line, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        do {
                g_autofree char *text = harness_logind_log(h);
                g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
                if (g_strv_contains((const char *const *) lines, line))
                        return true;
                g_usleep(20000); /* bounded by the deadline */
        } while (remaining_ms(deadline) > 0);
        return false;
}

char *harness_logind_inhibitors(Harness *h) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *what, *who, *why, *mode;
        uint32_t uid, pid;
        int r = sd_bus_call_method(h->bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                                   "org.freedesktop.login1.Manager", "ListInhibitors", &e, &reply, "");
        if (r < 0)
                g_error("ListInhibitors: %s", e.message);
        GString *out = g_string_new(NULL);
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ssssuu)"), >, 0);
        while (sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid) > 0)
                g_string_append_printf(out, "%s %s\n", who, mode);
        sd_bus_message_unref(reply);
        return g_string_free(out, FALSE);
}

bool harness_wait_logind_delay(Harness *h, const char *who, bool held, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        g_autofree char *want = g_strdup_printf("%s delay\n", who);
        do {
                g_autofree char *list = harness_logind_inhibitors(h);
                if ((strstr(list, want) != NULL) == held)
                        return true;
                g_usleep(20000); /* bounded by the deadline */
        } while (remaining_ms(deadline) > 0);
        return false;
}

int harness_logind_sleep(Harness *h, const char *method, char **ret_error, char **ret_message) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sd_bus_call_method(h->bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                                   "org.freedesktop.login1.Manager", method, &e, NULL, "b", 0);
        if (r >= 0)
                return 0;
        take_error(&e, ret_error, ret_message);
        return -1;
}

int harness_fridgectl_as_nobody(Harness *h, char **ret_output, const char *const *args) {
        const char *fridgectl = harness_env("FRIDGECTL");
        g_assert_nonnull(fridgectl);
        g_autofree char *q_ctl = g_shell_quote(fridgectl);
        g_autofree char *q_bus = g_shell_quote(h->bus_address);
        /* through sh for 2>&1: the refusal is on stderr */
        g_autoptr(GString) cmd = g_string_new(NULL);
        g_string_printf(cmd, "exec setpriv --reuid=65534 --regid=65534 --clear-groups -- %s --bus-address=%s",
                        q_ctl, q_bus);
        for (const char *const *a = args; *a; a++) {
                g_autofree char *q = g_shell_quote(*a);
                g_string_append_printf(cmd, " %s", q);
        }
        g_string_append(cmd, " 2>&1");
        char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd->str, NULL };
        return harness_run(sh, 20000, ret_output);
}

static bool mount_line_is_ours(const char *line, int mount_point_field, const char *dir) {
        g_auto(GStrv) f = g_strsplit(line, " ", mount_point_field + 2);
        g_autofree char *prefix = g_strconcat(dir, "/", NULL);
        return (int) g_strv_length(f) > mount_point_field && g_str_has_prefix(f[mount_point_field], prefix);
}

static void write_filtered_mounts(const char *src, const char *dst, int mount_point_field, const char *dir) {
        g_autofree char *text = NULL;
        g_autoptr(GString) out = g_string_new(NULL);

        if (!g_file_get_contents(src, &text, NULL, NULL))
                g_error("read %s", src);
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++)
                if (**l && mount_line_is_ours(*l, mount_point_field, dir))
                        g_string_append_printf(out, "%s\n", *l);
        write_file(dst, out->str);
}

static void symlink_entries(const char *from_dir, const char *to_dir, const char *const *except) {
        g_autoptr(GDir) d = g_dir_open(from_dir, 0, NULL);
        const char *name;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d))) {
                if (g_ascii_isdigit(name[0]) || g_strv_contains(except, name))
                        continue;
                g_autofree char *target = g_build_filename(from_dir, name, NULL);
                g_autofree char *link = g_build_filename(to_dir, name, NULL);
                if (symlink(target, link) < 0)
                        g_error("symlink %s -> %s: %s", link, target, g_strerror(errno));
        }
}

/* With HARNESS_FAKE_PROC=1: a /proc whose mount tables hold only our mounts,
 * so a file system stuck elsewhere on the host cannot stall the flush. Off
 * by default: its PID entries are a snapshot, so processes a test starts
 * later (clients, FUSE servers, syncing tasks) would be invisible. */
static void make_proc_root(Harness *h, const HarnessOptions *opts) {
        static const char *const top_except[] = { "self", "thread-self", "mounts", NULL };
        static const char *const self_except[] = { "mountinfo", "mounts", NULL };
        g_autofree char *self = NULL, *mi = NULL, *mounts = NULL, *mounts_link = NULL;
        const char *const *files = opts ? opts->proc_files : NULL;

        if (g_strcmp0(g_getenv("HARNESS_FAKE_PROC"), "1") != 0 && !files)
                return;
        h->proc = g_build_filename(h->dir, "proc", NULL);
        self = g_build_filename(h->proc, "self", NULL);
        g_assert_cmpint(mkdir(h->proc, 0755), ==, 0);
        g_assert_cmpint(mkdir(self, 0755), ==, 0);
        /* the /proc/self/... targets resolve to fridged itself when it reads them */
        symlink_entries("/proc", h->proc, top_except);
        symlink_entries("/proc/self", self, self_except);
        mi = g_build_filename(self, "mountinfo", NULL);
        mounts = g_build_filename(self, "mounts", NULL);
        write_filtered_mounts("/proc/self/mountinfo", mi, 4, h->dir);
        write_filtered_mounts("/proc/self/mounts", mounts, 1, h->dir);
        mounts_link = g_build_filename(h->proc, "mounts", NULL);
        g_assert_cmpint(symlink("self/mounts", mounts_link), ==, 0);
        for (; files && files[0] && files[1]; files += 2) {
                g_autofree char *path = g_build_filename(h->proc, files[0], NULL);
                g_assert_true(unlink(path) == 0 || errno == ENOENT);
                write_file(path, files[1]);
        }
}

/* NAME=VALUE strings for fridged's environment to run it in the testbed
 * h->umockdev_dir; they go into `env`, which owns them. */
static void add_umockdev_env(Harness *h, GPtrArray *env) {
        static const char *const names[] = { "LD_PRELOAD", "ASAN_OPTIONS" };
        g_auto(GStrv) preloaded = umockdev_preload_environ(g_get_environ());

        for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
                g_ptr_array_add(env, g_strdup_printf("%s=%s", names[i], g_environ_getenv(preloaded, names[i])));
        g_ptr_array_add(env, g_strdup_printf("UMOCKDEV_DIR=%s", h->umockdev_dir));
        if (h->real_cgroups) {
                /* The preload library sends every /sys path into the testbed,
                 * the cgroup2 mount's too (/sys/fs/cgroup or below). The
                 * kernel, not the library, follows a symlink's target, so
                 * this one leads back to the real /sys/fs */
                g_autofree char *link = g_build_filename(h->umockdev_dir, "sys", "fs", NULL);
                if (symlink("/sys/fs", link) < 0 && errno != EEXIST)
                        g_error("symlink %s: %s", link, g_strerror(errno));
        }
}

static void start_fridged(Harness *h) {
        g_autofree char *notify_path = g_build_filename(h->dir, "notify", NULL);
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", h->bus_address);
        g_autofree char *a_sys = g_strdup_printf("--sysfs-root=%s", h->root);
        g_autofree char *a_conf = g_strdup_printf("--config-dir=%s", h->conf_dir);
        g_autofree char *e_notify = g_strdup_printf("NOTIFY_SOCKET=%s", notify_path);
        /* belt and braces: whatever fridged falls back to is our private bus */
        g_autofree char *e_sys = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", h->bus_address);
        g_autofree char *e_ses = g_strdup_printf("DBUS_SESSION_BUS_ADDRESS=%s", h->bus_address);
        g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func(g_free);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int nfd, err, pidfd;
        bool ready = false;
        int64_t deadline;

        nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        g_assert_cmpint(nfd, >=, 0);
        g_assert_cmpuint(strlen(notify_path), <, sizeof sa.sun_path);
        strcpy(sa.sun_path, notify_path);
        (void) unlink(notify_path); /* left by an earlier fridged of this harness */
        g_assert_cmpint(bind(nfd, (struct sockaddr *) &sa, sizeof sa), ==, 0);

        g_ptr_array_add(env, g_strdup(e_notify));
        g_ptr_array_add(env, g_strdup(e_sys));
        g_ptr_array_add(env, g_strdup(e_ses));
        if (h->umockdev_dir)
                add_umockdev_env(h, env);
        if (h->watchdog_usec > 0)
                g_ptr_array_add(env, g_strdup_printf("WATCHDOG_USEC=%" PRIu64, h->watchdog_usec));
        g_ptr_array_add(env, NULL);

        err = open(h->fridged_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        g_assert_cmpint(err, >=, 0);
        g_autofree char *a_proc = NULL;
        if (h->proc)
                a_proc = g_strdup_printf("--proc-root=%s", h->proc);
        /* Never the host's cgroups unless the test made scratch ones and
         * named them as Roots: an empty directory is the cgroup root then */
        g_autofree char *no_cgroups = g_build_filename(h->dir, "no-cgroups", NULL);
        g_autofree char *a_cgroup = NULL;
        if (!h->real_cgroups) {
                g_assert_cmpint(g_mkdir_with_parents(no_cgroups, 0755), ==, 0);
                a_cgroup = g_strdup_printf("--cgroup-root=%s", no_cgroups);
        }
        /* never the host's /run/fridge ledger nor /usr/lib/fridge classes */
        g_autofree char *a_state = g_strdup_printf("--state-dir=%s/state", h->dir);
        g_autofree char *a_vendor = g_strdup_printf("--vendor-dir=%s/vendor", h->dir);
        char *argv[] = { (char *) harness_env("FRIDGED"), a_bus, a_sys, a_conf, a_state, a_vendor, (char *) "-v",
                         a_cgroup, a_proc, NULL };
        if (!a_cgroup) { /* keep the optional arguments contiguous */
                argv[7] = a_proc;
                argv[8] = NULL;
        }
        SpawnSpec s = { .argv = argv, .stdin_fd = -1, .stdout_fd = err, .stderr_fd = err,
                        .extra_fd = -1, .env = (const char *const *) env->pdata };
        h->fridged_pid = spawn(&s);
        h->fridged_started = true;
        close(err);

        pidfd = pidfd_open_compat(h->fridged_pid);
        deadline = now_usec() + 10 * G_USEC_PER_SEC;
        while (!ready) {
                struct pollfd p[2] = { { .fd = nfd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
                int ms = remaining_ms(deadline);
                if (ms <= 0)
                        break;
                int r = poll(p, pidfd >= 0 ? 2 : 1, ms);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        break;
                if (p[0].revents & POLLIN) {
                        char buf[4096];
                        ssize_t n = recv(nfd, buf, sizeof buf - 1, 0);
                        if (n > 0) {
                                buf[n] = '\0';
                                g_auto(GStrv) lines = g_strsplit(buf, "\n", -1);
                                for (char **l = lines; *l; l++)
                                        if (g_str_equal(*l, "READY=1"))
                                                ready = true;
                        }
                }
                if (!ready && pidfd >= 0 && (p[1].revents & POLLIN))
                        break;  /* fridged exited */
        }
        if (pidfd >= 0)
                close(pidfd);
        if (h->watchdog_usec > 0)
                h->notify_fd = nfd;
        else
                close(nfd);
        if (!ready) {
                int status;
                harness_dump_fridged_log(h);
                if (waitpid(h->fridged_pid, &status, WNOHANG) == h->fridged_pid) {
                        h->fridged_pid = 0;
                        h->fridged_started = false;
                        g_error("fridged exited (wait status 0x%x) before sending READY=1", (unsigned) status);
                }
                g_error("fridged did not send READY=1 within 10 s");
        }
}

static void connect_bus(Harness *h) {
        g_autofree char *match = g_strdup_printf("type='signal',path='%s'", FRIDGE_OBJECT_PATH);
        int r;

        r = sd_bus_new(&h->bus);
        g_assert_cmpint(r, >=, 0);
        r = sd_bus_set_address(h->bus, h->bus_address);
        g_assert_cmpint(r, >=, 0);
        r = sd_bus_set_bus_client(h->bus, 1);
        g_assert_cmpint(r, >=, 0);
        r = sd_bus_start(h->bus);
        if (r < 0)
                g_error("sd_bus_start(%s): %s", h->bus_address, g_strerror(-r));
        r = sd_bus_add_match(h->bus, &h->match_slot, match, on_signal, h);
        g_assert_cmpint(r, >=, 0);
}

Harness *harness_new(const HarnessOptions *opts) {
        Harness *h = g_new0(Harness, 1);
        g_autofree char *tmpl = g_build_filename(g_get_tmp_dir(), "fridge-int-XXXXXX", NULL);

        install_handlers();
        h->fridged_status = -1;
        h->dirty_pipe = -1;
        h->notify_fd = -1;
        h->signals = g_ptr_array_new_with_free_func(harness_signal_free);
        h->dir = g_strdup(g_mkdtemp(tmpl));
        g_assert_nonnull(h->dir);
        h->root = g_build_filename(h->dir, "root", NULL);
        h->conf_dir = g_build_filename(h->dir, "conf", NULL);
        h->fridged_log = g_build_filename(h->dir, "fridged.log", NULL);
        g_assert_cmpint(mkdir(h->root, 0755), ==, 0);
        g_assert_cmpint(mkdir(h->conf_dir, 0755), ==, 0);
        live_add(h);

        h->real_cgroups = opts && opts->real_cgroups;
        h->umockdev_dir = opts ? g_strdup(opts->umockdev_dir) : NULL;
        h->watchdog_usec = opts ? opts->watchdog_usec : 0;
        if (h->real_cgroups && (!opts->config || !strstr(opts->config, "Roots=")))
                g_error("real_cgroups needs a config naming the test's own scratch Roots=");
        if (opts && opts->config) {
                g_autofree char *conf = g_build_filename(h->conf_dir, "fridge.conf", NULL);
                write_file(conf, opts->config);
        }
        if (opts && opts->classes) {
                g_autofree char *dir = g_build_filename(h->conf_dir, "classes.d", NULL);
                g_autofree char *file = g_build_filename(dir, "test.conf", NULL);
                g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
                write_file(file, opts->classes);
        }

        start_fakesys(h, opts);
        if (opts && opts->slowfs) {
                start_slowfs(h);
                if (g_test_failed() || !h->slow || !h->slowfs_pid)
                        return h;   /* skipped: the caller checks g_test_skipped-ish state */
        }
        start_dbus(h, opts && opts->open_bus);
        if (opts && opts->polkit_table)
                start_polkit(h, opts->polkit_table);
        if (opts && opts->logind)
                start_logind(h, opts);
        make_proc_root(h, opts);
        start_fridged(h);
        connect_bus(h);
        return h;
}

void harness_kill_fridged(Harness *h, int sig) {
        g_assert_cmpint(h->fridged_pid, >, 0);
        g_assert_cmpint(kill(h->fridged_pid, sig), ==, 0);
}

void harness_restart_fridged(Harness *h) {
        if (h->fridged_pid > 0) {
                int status = harness_wait_pid(h->fridged_pid, 10000);
                if (status == -1)
                        g_error("fridged (pid %d) did not exit within 10 s", (int) h->fridged_pid);
                h->fridged_pid = 0;
                h->fridged_status = status;
        }
        if (h->notify_fd >= 0)
                close(h->notify_fd);
        h->notify_fd = -1;
        start_fridged(h);
}

bool harness_wait_notify(Harness *h, const char *line, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;

        g_assert_cmpint(h->notify_fd, >=, 0);
        for (;;) {
                struct pollfd p = { .fd = h->notify_fd, .events = POLLIN };
                char buf[4096];
                int ms = remaining_ms(deadline);
                if (ms <= 0)
                        return false;
                int r = poll(&p, 1, ms);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        return false;
                ssize_t n = recv(h->notify_fd, buf, sizeof buf - 1, MSG_DONTWAIT);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                g_auto(GStrv) lines = g_strsplit(buf, "\n", -1);
                if (g_strv_contains((const char *const *) lines, line))
                        return true;
        }
}

void harness_dump_fridged_log(Harness *h) {
        g_autofree char *txt = NULL;

        if (!h || !h->fridged_log)
                return;
        if (!g_file_get_contents(h->fridged_log, &txt, NULL, NULL))
                return;
        fprintf(stderr, "----- fridged stderr (%s) -----\n%s----- end of fridged stderr -----\n",
                h->fridged_log, txt);
        if (h->root_mounted) {
                g_autofree char *path = g_build_filename(h->root, "log", NULL);
                g_autofree char *log = NULL;
                /* fakesys may already be gone; ignore errors */
                if (g_file_get_contents(path, &log, NULL, NULL))
                        fprintf(stderr, "----- fakesys log -----\n%s----- end of fakesys log -----\n", log);
        }
}

static void harness_stop_internal(Harness *h) {
        static bool stopping;

        if (!h || stopping)
                return;
        stopping = true;

        if (h->match_slot)
                h->match_slot = sd_bus_slot_unref(h->match_slot);
        if (h->bus)
                h->bus = sd_bus_flush_close_unref(h->bus);

        /* a held slowfs would keep fridged's syncfs (and its exit) stuck */
        if (h->slowfs_held && h->slow && h->slowfs_pid > 0) {
                g_autofree char *c = g_build_filename(h->slow, ".control", NULL);
                int fd = open(c, O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                        (void) !write(fd, "release\n", 8);
                        close(fd);
                }
                h->slowfs_held = false;
        }

        if (h->fridged_pid > 0)
                h->fridged_status = stop_pid(&h->fridged_pid, 10000);
        /* before fakesys goes: it may be in the middle of a state write */
        if (h->logind_pid > 0)
                (void) stop_pid(&h->logind_pid, 5000);

        if (h->dirty_pid > 0) {
                if (h->dirty_pipe >= 0)
                        close(h->dirty_pipe);
                h->dirty_pipe = -1;
                if (harness_wait_pid(h->dirty_pid, 5000) == -1)
                        (void) stop_pid(&h->dirty_pid, 2000);
                h->dirty_pid = 0;
        }

        if (h->probe_pid > 0) {
                if (harness_wait_pid(h->probe_pid, 5000) == -1)
                        (void) stop_pid(&h->probe_pid, 2000);
                h->probe_pid = 0;
        }

        if (h->slow) {
                unmount(h->slow, &h->slowfs_mounted);
                if (h->slowfs_pid > 0)
                        (void) stop_pid(&h->slowfs_pid, 5000);
        }
        if (h->root) {
                unmount(h->root, &h->root_mounted);
                if (h->fakesys_pid > 0)
                        (void) stop_pid(&h->fakesys_pid, 5000);
        }
        if (h->polkit_pid > 0)
                (void) stop_pid(&h->polkit_pid, 5000);
        if (h->dbus_pid > 0)
                (void) stop_pid(&h->dbus_pid, 5000);

        if (h->dir) {
                if (h->root_mounted || h->slowfs_mounted) {
                        fprintf(stderr, "harness: leaving %s in place, something is still mounted\n", h->dir);
                } else if (g_getenv("HARNESS_KEEP_DIR")) {
                        fprintf(stderr, "harness: keeping %s\n", h->dir);
                } else {
                        (void) nftw(h->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
                }
        }
        live_remove(h);
        stopping = false;
}

int harness_stop(Harness *h) {
        harness_stop_internal(h);
        return h ? h->fridged_status : -1;
}

void harness_free(Harness *h) {
        if (!h)
                return;
        harness_stop_internal(h);
        if (h->notify_fd >= 0)
                close(h->notify_fd);
        g_ptr_array_unref(h->signals);
        g_free(h->dir);
        g_free(h->root);
        g_free(h->conf_dir);
        g_free(h->slow);
        g_free(h->bus_address);
        g_free(h->fridged_log);
        g_free(h->polkit_log);
        g_free(h->logind_log);
        g_free(h->proc);
        g_free(h->umockdev_dir);
        g_free(h);
}

/* ---------------------------------------------------------------- bus calls */

static void take_error(sd_bus_error *e, char **ret_error, char **ret_message) {
        if (ret_error)
                *ret_error = g_strdup(e->name ? e->name : "");
        if (ret_message)
                *ret_message = g_strdup(e->message ? e->message : "");
}

static int append_option(sd_bus_message *m, const char *key, const char *type, va_list *ap) {
        int r;

        r = sd_bus_message_open_container(m, 'e', "sv");
        if (r < 0)
                return r;
        r = sd_bus_message_append_basic(m, 's', key);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'v', type);
        if (r < 0)
                return r;
        switch (type[0]) {
        case 'b': {
                int v = va_arg(*ap, int);
                r = sd_bus_message_append_basic(m, 'b', &v);
                break;
        }
        case 'i': {
                int32_t v = va_arg(*ap, int);
                r = sd_bus_message_append_basic(m, 'i', &v);
                break;
        }
        case 'u': {
                uint32_t v = va_arg(*ap, unsigned);
                r = sd_bus_message_append_basic(m, 'u', &v);
                break;
        }
        case 't': {
                uint64_t v = va_arg(*ap, uint64_t);
                r = sd_bus_message_append_basic(m, 't', &v);
                break;
        }
        case 'd': {
                double v = va_arg(*ap, double);
                r = sd_bus_message_append_basic(m, 'd', &v);
                break;
        }
        case 's': {
                const char *v = va_arg(*ap, const char *);
                r = sd_bus_message_append_basic(m, 's', v);
                break;
        }
        default:
                g_error("harness_sleep: unsupported option type %s", type);
        }
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

int harness_sleep(Harness *h, const char *kind, uint64_t *ret_cycle,
                  char **ret_error, char **ret_message, ...) {
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(h->bus, &m, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                           FRIDGE_INTERFACE, "Sleep");
        g_assert_cmpint(r, >=, 0);
        g_assert_cmpint(sd_bus_message_append(m, "s", kind), >=, 0);
        g_assert_cmpint(sd_bus_message_open_container(m, 'a', "{sv}"), >=, 0);
        va_start(ap, ret_message);
        for (;;) {
                const char *key = va_arg(ap, const char *);
                if (!key)
                        break;
                const char *type = va_arg(ap, const char *);
                r = append_option(m, key, type, &ap);
                g_assert_cmpint(r, >=, 0);
        }
        va_end(ap);
        g_assert_cmpint(sd_bus_message_close_container(m), >=, 0);

        r = sd_bus_call(h->bus, m, CALL_TIMEOUT_USEC, &e, &reply);
        sd_bus_message_unref(m);
        if (r < 0) {
                if (!sd_bus_error_is_set(&e))
                        sd_bus_error_set_errno(&e, r);
                take_error(&e, ret_error, ret_message);
                sd_bus_error_free(&e);
                return -1;
        }
        uint64_t cycle = 0;
        r = sd_bus_message_read(reply, "t", &cycle);
        g_assert_cmpint(r, >, 0);
        sd_bus_message_unref(reply);
        if (ret_cycle)
                *ret_cycle = cycle;
        if (ret_error)
                *ret_error = NULL;
        if (ret_message)
                *ret_message = NULL;
        return 0;
}

int harness_call(Harness *h, const char *interface, const char *member,
                 sd_bus_message **ret_reply, char **ret_error, char **ret_message,
                 const char *types, ...) {
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(h->bus, &m, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                           interface, member);
        g_assert_cmpint(r, >=, 0);
        if (types && *types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                g_assert_cmpint(r, >=, 0);
        }
        r = sd_bus_call(h->bus, m, CALL_TIMEOUT_USEC, &e, &reply);
        sd_bus_message_unref(m);
        if (r < 0) {
                if (!sd_bus_error_is_set(&e))
                        sd_bus_error_set_errno(&e, r);
                take_error(&e, ret_error, ret_message);
                sd_bus_error_free(&e);
                if (ret_reply)
                        *ret_reply = NULL;
                return -1;
        }
        if (ret_error)
                *ret_error = NULL;
        if (ret_message)
                *ret_message = NULL;
        if (ret_reply)
                *ret_reply = reply;
        else
                sd_bus_message_unref(reply);
        return 0;
}

int harness_cancel(Harness *h, uint64_t cycle, char **ret_error, char **ret_message) {
        return harness_call(h, FRIDGE_INTERFACE, "Cancel", NULL, ret_error, ret_message, "t", cycle);
}

char *harness_get_string(Harness *h, const char *name) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        char *s = NULL;
        int r = sd_bus_get_property_string(h->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                           FRIDGE_INTERFACE, name, &e, &s);
        if (r < 0)
                g_error("Get %s: %s: %s", name, e.name, e.message);
        char *ret = g_strdup(s);
        free(s);
        return ret;
}

double harness_get_double(Harness *h, const char *name) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        double d = 0;
        int r = sd_bus_get_property_trivial(h->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                            FRIDGE_INTERFACE, name, &e, 'd', &d);
        if (r < 0)
                g_error("Get %s: %s: %s", name, e.name, e.message);
        return d;
}

uint64_t harness_get_u64(Harness *h, const char *name) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        uint64_t t = 0;
        int r = sd_bus_get_property_trivial(h->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                            FRIDGE_INTERFACE, name, &e, 't', &t);
        if (r < 0)
                g_error("Get %s: %s: %s", name, e.name, e.message);
        return t;
}

/* ---------------------------------------------------------------- waiting */

bool harness_process_until(Harness *h, int timeout_ms,
                           bool (*pred)(Harness *h, void *userdata), void *userdata) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;

        for (;;) {
                if (pred && pred(h, userdata))
                        return true;
                int r = sd_bus_process(h->bus, NULL);
                if (r < 0)
                        g_error("sd_bus_process: %s", g_strerror(-r));
                if (r > 0)
                        continue;
                int64_t left = deadline - now_usec();
                if (left <= 0)
                        return pred ? pred(h, userdata) : false;
                r = sd_bus_wait(h->bus, (uint64_t) left);
                if (r < 0 && r != -EINTR)
                        g_error("sd_bus_wait: %s", g_strerror(-r));
        }
}

static bool signal_cycle_is(HarnessSignal *s, uint64_t cycle) {
        uint64_t c = 0;
        sd_bus_message_rewind(s->message, true);
        if (sd_bus_message_read_basic(s->message, 't', &c) <= 0)
                return false;
        return c == cycle;
}

int harness_find_signal(Harness *h, const char *member, bool match_cycle, uint64_t cycle) {
        for (guint i = 0; i < h->signals->len; i++) {
                HarnessSignal *s = g_ptr_array_index(h->signals, i);
                if (g_strcmp0(s->interface, FRIDGE_INTERFACE) != 0 || g_strcmp0(s->member, member) != 0)
                        continue;
                if (match_cycle && !signal_cycle_is(s, cycle))
                        continue;
                return (int) i;
        }
        return -1;
}

typedef struct { uint64_t cycle; } CycleArg;

static bool finished_pred(Harness *h, void *userdata) {
        CycleArg *a = userdata;
        return harness_find_signal(h, "CycleFinished", true, a->cycle) >= 0;
}

bool harness_wait_finished(Harness *h, uint64_t cycle, int timeout_ms,
                           char **ret_result, char **ret_error, char **ret_message) {
        CycleArg a = { cycle };
        const char *result = NULL, *error = NULL, *message = NULL;
        uint64_t c;

        if (!harness_process_until(h, timeout_ms, finished_pred, &a)) {
                g_test_message("no CycleFinished for cycle %" G_GUINT64_FORMAT " within %d ms",
                               cycle, timeout_ms);
                return false;
        }
        HarnessSignal *s = g_ptr_array_index(h->signals, harness_find_signal(h, "CycleFinished", true, cycle));
        sd_bus_message_rewind(s->message, true);
        int r = sd_bus_message_read(s->message, "tsss", &c, &result, &error, &message);
        g_assert_cmpint(r, >, 0);
        g_test_message("cycle %" G_GUINT64_FORMAT " finished: result=%s error=%s message=%s",
                       cycle, result, error, message);
        if (ret_result)
                *ret_result = g_strdup(result);
        if (ret_error)
                *ret_error = g_strdup(error);
        if (ret_message)
                *ret_message = g_strdup(message);
        return true;
}

void harness_prop_change_free(HarnessPropChange *c) {
        if (!c)
                return;
        g_free(c->name);
        g_free(c->s);
        g_free(c);
}

GPtrArray *harness_parse_props_changed(HarnessSignal *sig) {
        GPtrArray *a = g_ptr_array_new_with_free_func((GDestroyNotify) harness_prop_change_free);
        sd_bus_message *m = sig->message;
        const char *iface = NULL;
        int r;

        if (g_strcmp0(sig->interface, "org.freedesktop.DBus.Properties") != 0 ||
            g_strcmp0(sig->member, "PropertiesChanged") != 0)
                return a;
        sd_bus_message_rewind(m, true);
        r = sd_bus_message_read_basic(m, 's', &iface);
        g_assert_cmpint(r, >, 0);
        if (g_strcmp0(iface, FRIDGE_INTERFACE) != 0)
                return a;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        g_assert_cmpint(r, >, 0);
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *name = NULL, *contents = NULL;
                char type;
                HarnessPropChange *c = g_new0(HarnessPropChange, 1);

                g_assert_cmpint(sd_bus_message_read_basic(m, 's', &name), >, 0);
                c->name = g_strdup(name);
                g_assert_cmpint(sd_bus_message_peek_type(m, &type, &contents), >, 0);
                g_assert_cmpint(type, ==, 'v');
                c->type = contents[0];
                if (g_str_equal(contents, "s")) {
                        const char *v = NULL;
                        g_assert_cmpint(sd_bus_message_read(m, "v", "s", &v), >, 0);
                        c->s = g_strdup(v);
                } else if (g_str_equal(contents, "d")) {
                        g_assert_cmpint(sd_bus_message_read(m, "v", "d", &c->d), >, 0);
                } else if (g_str_equal(contents, "t")) {
                        g_assert_cmpint(sd_bus_message_read(m, "v", "t", &c->t), >, 0);
                } else {
                        g_assert_cmpint(sd_bus_message_skip(m, "v"), >=, 0);
                }
                g_assert_cmpint(sd_bus_message_exit_container(m), >=, 0);
                g_ptr_array_add(a, c);
        }
        g_assert_cmpint(r, >=, 0);
        sd_bus_message_exit_container(m);
        return a;
}

typedef struct { const char *name, *value; } PropArg;

static bool prop_pred(Harness *h, void *userdata) {
        PropArg *p = userdata;
        for (guint i = 0; i < h->signals->len; i++) {
                g_autoptr(GPtrArray) ch = harness_parse_props_changed(g_ptr_array_index(h->signals, i));
                for (guint j = 0; j < ch->len; j++) {
                        HarnessPropChange *c = g_ptr_array_index(ch, j);
                        if (c->type == 's' && g_str_equal(c->name, p->name) && g_str_equal(c->s, p->value))
                                return true;
                }
        }
        return false;
}

bool harness_wait_property_signal(Harness *h, const char *name, const char *value, int timeout_ms) {
        PropArg p = { name, value };
        return harness_process_until(h, timeout_ms, prop_pred, &p);
}

/* ---------------------------------------------------------------- fakesys */

char *harness_fakesys_log(Harness *h) {
        g_autofree char *path = g_build_filename(h->root, "log", NULL);
        g_autoptr(GError) e = NULL;
        char *txt = NULL;

        if (!g_file_get_contents(path, &txt, NULL, &e))
                g_error("read %s: %s", path, e->message);
        return txt;
}

char **harness_fakesys_log_lines(Harness *h) {
        g_autofree char *txt = harness_fakesys_log(h);
        g_autoptr(GPtrArray) a = g_ptr_array_new();
        g_auto(GStrv) lines = g_strsplit(txt, "\n", -1);

        for (char **l = lines; *l; l++) {
                g_strstrip(*l);
                if (**l)
                        g_ptr_array_add(a, g_strdup(*l));
        }
        g_ptr_array_add(a, NULL);
        return (char **) g_ptr_array_free(g_steal_pointer(&a), FALSE);
}

static void write_control(const char *path, const char *cmd) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                g_error("open %s: %s", path, g_strerror(errno));
        g_autofree char *line = g_str_has_suffix(cmd, "\n") ? g_strdup(cmd) : g_strconcat(cmd, "\n", NULL);
        ssize_t n = write(fd, line, strlen(line));
        int e = errno;
        close(fd);
        if (n != (ssize_t) strlen(line))
                g_error("write '%s' to %s: %s", cmd, path, n < 0 ? g_strerror(e) : "short write");
}

void harness_control(Harness *h, const char *cmd) {
        g_autofree char *path = g_build_filename(h->root, "control", NULL);
        write_control(path, cmd);
}

char *harness_read_sys(Harness *h, const char *rel) {
        g_autofree char *path = g_build_filename(h->root, "sys", rel, NULL);
        g_autoptr(GError) e = NULL;
        char *txt = NULL;

        if (!g_file_get_contents(path, &txt, NULL, &e))
                g_error("read %s: %s", path, e->message);
        return txt;
}

void harness_write_sys(Harness *h, const char *rel, const char *value) {
        g_autofree char *path = g_build_filename(h->root, "sys", rel, NULL);
        write_control(path, value);
}

bool harness_wait_log_line(Harness *h, const char *line, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;

        /* FUSE files give no change notification: a bounded poll, and the
         * bus is processed meanwhile so no signal is lost or delayed */
        for (;;) {
                g_auto(GStrv) lines = harness_fakesys_log_lines(h);
                if (g_strv_contains((const char *const *) lines, line))
                        return true;
                if (remaining_ms(deadline) <= 0)
                        return false;
                harness_process_until(h, MIN(20, remaining_ms(deadline)), NULL, NULL);
        }
}

/* ---------------------------------------------------------------- slowfs */

void harness_slowfs_control(Harness *h, const char *cmd) {
        g_autofree char *path = g_build_filename(h->slow, ".control", NULL);
        g_assert_nonnull(h->slow);
        write_control(path, cmd);
}

char *harness_slowfs_stats(Harness *h) {
        g_autofree char *path = g_build_filename(h->slow, ".stats", NULL);
        char *txt = NULL;
        if (!g_file_get_contents(path, &txt, NULL, NULL))
                return g_strdup("");
        g_strstrip(txt);
        return txt;
}

void harness_slowfs_make_dirty(Harness *h, size_t bytes) {
        g_autofree char *path = g_build_filename(h->slow, "dirty", NULL);
        int ready[2], hold[2];
        pid_t parent = getpid();
        char c;

        g_assert_nonnull(h->slow);
        g_assert_cmpint(h->dirty_pid, ==, 0);
        g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(hold, O_CLOEXEC), ==, 0);

        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
                if (getppid() != parent)
                        _exit(1);
                close(ready[0]);
                close(hold[1]);
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0)
                        _exit(2);
                char *buf = malloc(65536);
                if (!buf)
                        _exit(3);
                memset(buf, 'f', 65536);
                for (size_t done = 0; done < bytes;) {
                        size_t n = MIN((size_t) 65536, bytes - done);
                        ssize_t w = write(fd, buf, n);
                        if (w <= 0)
                                _exit(4);
                        done += (size_t) w;
                }
                free(buf);
                (void) !write(ready[1], "r", 1);
                /* keep the data dirty: no close until the parent lets go */
                while (read(hold[0], &c, 1) < 0 && errno == EINTR)
                        ;
                close(fd);
                _exit(0);
        }
        close(ready[1]);
        close(hold[0]);
        h->dirty_pid = pid;
        h->dirty_pipe = hold[1];

        struct pollfd p = { .fd = ready[0], .events = POLLIN };
        int r = poll(&p, 1, 10000);
        ssize_t n = r > 0 ? read(ready[0], &c, 1) : 0;
        close(ready[0]);
        if (n != 1)
                g_error("the dirty-data child did not write %zu bytes to %s", bytes, path);
}

void harness_slowfs_hold(Harness *h) {
        harness_slowfs_control(h, "hold");
        h->slowfs_held = true;
}

void harness_slowfs_release(Harness *h) {
        harness_slowfs_control(h, "release");
        h->slowfs_held = false;
}

bool harness_slowfs_syncfs_blocks(Harness *h, int within_ms) {
        pid_t parent = getpid();

        g_assert_nonnull(h->slow);
        g_assert_cmpint(h->probe_pid, ==, 0);
        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(1);
                int fd = open(h->slow, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0 || syncfs(fd) < 0)
                        _exit(2);
                _exit(0);
        }
        int status = harness_wait_pid(pid, within_ms);
        if (status != -1)
                return false;   /* syncfs returned while the writeback is held */
        h->probe_pid = pid;
        return true;
}
