/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Child processes for the harness: spawning with a clean fd table and
 * environment, bounded waits, output capture. */
#include "harness.h"
#include "harness-private.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- processes */

int harness_pidfd_open(pid_t pid) {
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

        pfd = harness_pidfd_open(pid);
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

int harness_stop_pid(pid_t *pid, int term_timeout_ms) {
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

pid_t harness_spawn(const HarnessSpawn *s) {
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
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .extra_fd = -1 };
        pid_t pid;

        if (ret_stdout_fd) {
                g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
                s.stdout_fd = p[1];
        }
        pid = harness_spawn(&s);
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

/* Appends what fd has within the deadline; false at EOF, on an error or
 * when time ran out */
bool harness_wait_readable(int fd, int64_t deadline) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int ms = remaining_ms(deadline);
                if (ms <= 0)
                        return false;
                int r = poll(&p, 1, ms);
                if (r < 0 && errno == EINTR)
                        continue;
                return r > 0;
        }
}

static bool read_more(int fd, GString *into, int64_t deadline) {
        char buf[4096];

        for (;;) {
                if (!harness_wait_readable(fd, deadline))
                        return false;
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return false;
                g_string_append_len(into, buf, n);
                return true;
        }
}

int harness_run(char **argv, int timeout_ms, char **ret_stdout) {
        int fd = -1;
        pid_t pid = harness_spawn_bg(argv, &fd);
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        GString *out = g_string_new(NULL);
        int status;

        while (read_more(fd, out, deadline))
                ;
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

/* ---------------------------------------------------------------- files */

void harness_write_file(const char *path, const char *text) {
        g_autoptr(GError) e = NULL;
        if (!g_file_set_contents(path, text, -1, &e))
                g_error("write %s: %s", path, e->message);
}

char *harness_read_line(int fd, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        GString *s = g_string_new(NULL);

        while (!strchr(s->str, '\n') && read_more(fd, s, deadline))
                ;
        if (!strchr(s->str, '\n')) {
                g_string_free(s, TRUE);
                return NULL;
        }
        *strchr(s->str, '\n') = '\0';
        return g_string_free(s, FALSE);
}
/* Every directory from / down to `path` lets others search it, and the
 * file lets them run it */
static bool reachable_by_others(const char *path) {
        g_autofree char *p = g_canonicalize_filename(path, NULL);
        struct stat st;
        if (stat(p, &st) < 0 || !(st.st_mode & S_IXOTH))
                return false;
        for (char *slash = strrchr(p, '/'); slash && slash != p; slash = strrchr(p, '/')) {
                *slash = '\0';
                if (stat(p, &st) < 0 || !(st.st_mode & S_IXOTH))
                        return false;
        }
        return true;
}

static char *exe_copies_dir;

void harness_remove_exe_copies(void) {
        if (!exe_copies_dir)
                return;
        g_autoptr(GDir) d = g_dir_open(exe_copies_dir, 0, NULL);
        for (const char *n; d && (n = g_dir_read_name(d));) {
                g_autofree char *f = g_build_filename(exe_copies_dir, n, NULL);
                (void) unlink(f);
        }
        (void) rmdir(exe_copies_dir);
        g_clear_pointer(&exe_copies_dir, g_free);
}

const char *harness_exe_for_others(const char *path) {
        static GHashTable *copies;
        if (reachable_by_others(path))
                return path;
        if (!copies) {
                copies = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
                exe_copies_dir = g_dir_make_tmp("fridge-exe-XXXXXX", NULL);
                g_assert_nonnull(exe_copies_dir);
                g_assert_cmpint(chmod(exe_copies_dir, 0755), ==, 0);
        }
        const char *copy = g_hash_table_lookup(copies, path);
        if (copy)
                return copy;
        g_autofree char *bytes = NULL, *base = g_path_get_basename(path);
        gsize len = 0;
        g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
        char *to = g_build_filename(exe_copies_dir, base, NULL);
        g_assert_true(g_file_set_contents(to, bytes, (gssize) len, NULL));
        g_assert_cmpint(chmod(to, 0755), ==, 0);
        g_hash_table_insert(copies, g_strdup(path), to);
        return to;
}

int harness_fridgectl_as_nobody(Harness *h, char **ret_output, const char *const *args) {
        const char *fridgectl = harness_env("FRIDGECTL");
        g_assert_nonnull(fridgectl);
        fridgectl = harness_exe_for_others(fridgectl);
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

int harness_fridgectl(Harness *h, int timeout_ms, char **ret_out, const char *w1, const char *w2, const char *w3) {
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", h->bus_address);
        char *argv[] = { (char *) harness_env("FRIDGECTL"), addr, (char *) "--no-progress", (char *) w1,
                         (char *) w2, (char *) w3, NULL };
        g_autofree char *out = NULL;
        int status = harness_run(argv, timeout_ms, &out);
        g_test_message("fridgectl %s %s %s: status %d: %s", w1, w2 ? w2 : "", w3 ? w3 : "", status, out);
        if (ret_out)
                *ret_out = g_steal_pointer(&out);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int harness_fridgectl_nobody_exit(Harness *h, char **ret_output, const char *const *args) {
        int status = harness_fridgectl_as_nobody(h, ret_output, args);
        g_assert_true(status != -1 && WIFEXITED(status));
        g_test_message("as nobody: fridgectl %s %s -> %d: %s", args[0], args[1] ? args[1] : "", WEXITSTATUS(status),
                       *ret_output);
        return WEXITSTATUS(status);
}

void harness_expect_denied_as_nobody(Harness *h, const char *const *args, const char *says) {
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl_nobody_exit(h, &out, args), ==, 4);
        if (!strstr(out, "AccessDenied") || !strstr(out, says))
                g_error("fridgectl %s as nobody: '%s' is not AccessDenied saying '%s'", args[0], out, says);
}

const char *harness_scratch_skip_reason(void) {
        const char *why = harness_skip_reason();
        return why ? why : scratch_skip_reason();
}

/* ---------------------------------------------------------------- attackers */

HarnessFlood harness_flood_start(Harness *h, unsigned uid, const char *procs, const char *method, unsigned count,
                                 unsigned connections, const char *how) {
        const char *flood = harness_env("BUS_FLOOD");
        if (!flood)
                g_error("BUS_FLOOD is not set (tests/integration/bus-flood not built)");
        flood = harness_exe_for_others(flood);
        g_autofree char *q_flood = g_shell_quote(flood), *q_bus = g_shell_quote(h->bus_address);
        g_autofree char *q_procs = procs ? g_shell_quote(procs) : NULL;
        /* the shell joins the cgroup as root, then becomes the attacker */
        g_autofree char *cmd = g_strdup_printf(
                "%s%s%sexec setpriv --reuid=%u --regid=%u --clear-groups -- %s %s %s %u %u %s",
                procs ? "echo $$ > " : "", procs ? q_procs : "", procs ? " && " : "", uid, uid, q_flood, q_bus,
                method, count, connections, how);
        char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
        int in[2], out[2];
        g_assert_cmpint(pipe2(in, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(out, O_CLOEXEC), ==, 0);
        HarnessSpawn s = { .argv = sh, .stdin_fd = in[0], .stdout_fd = out[1], .stderr_fd = -1, .extra_fd = -1 };
        HarnessFlood f = { .pid = harness_spawn(&s), .stdin_fd = in[1], .stdout_fd = out[0] };
        close(in[0]);
        close(out[1]);
        return f;
}

char *harness_flood_result(HarnessFlood *f, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        GString *s = g_string_new(NULL);
        while (!strstr(s->str, "done\n") && read_more(f->stdout_fd, s, deadline))
                ;
        if (!strstr(s->str, "done\n"))
                g_error("bus-flood did not finish: %s", s->str);
        return g_string_free(s, FALSE);
}

unsigned harness_flood_count(const char *tally, const char *name) {
        g_auto(GStrv) lines = g_strsplit(tally, "\n", -1);
        size_t n = strlen(name);
        for (char **l = lines; *l; l++)
                if (strncmp(*l, name, n) == 0 && (*l)[n] == ' ')
                        return (unsigned) strtoul(*l + n + 1, NULL, 10);
        return 0;
}

int harness_flood_end(HarnessFlood *f) {
        if (f->pid <= 0)
                return -1;
        close(f->stdin_fd);
        close(f->stdout_fd);
        int status = harness_wait_pid(f->pid, 20000);
        f->pid = 0;
        return status;
}
