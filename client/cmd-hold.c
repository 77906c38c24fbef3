/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hold CLASS -- CMD [ARGS…]: HoldClass, then run CMD while the returned fd
 * stays open. The hold is on fridgectl's own cgroup, which CMD shares: a
 * child stays in its parent's cgroup.
 * inhibit [--mode=MODE] -- CMD [ARGS…]: the same with Inhibit. A delay
 * inhibitor lasts as long as CMD, too: CMD decides when it is done. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "i18n.h"
#include "report.h"

static volatile sig_atomic_t child_pid;

/* SIGTERM and SIGHUP are meant for the job: pass them on and keep holding
 * until CMD is gone, rather than dropping the hold under a running CMD. */
static void forward_signal(int sig) {
        int saved = errno;

        if (child_pid > 0)
                (void) kill((pid_t) child_pid, sig);
        errno = saved;
}

/* Calls `member` (HoldClass or Inhibit, three strings in, an fd out); the
 * fd returned is ours (O_CLOEXEC), or a negative errno. On a refusal e is
 * set. */
static int take_fd(sd_bus *bus, const char *member, const char *s1, const char *s2, const char *s3,
                   sd_bus_error *e) {
        _cleanup_bus_message_ sd_bus_message *reply = NULL;
        int r, fd;

        r = sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, member, e, &reply,
                               "sss", s1, s2, s3);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "h", &fd);
        if (r < 0)
                return r;
        /* The message owns its fd; our copy must not leak into CMD. */
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        return fd < 0 ? -errno : fd;
}

static int wait_child(pid_t pid) {
        int status;

        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return EXIT_CODE_FAILED;
}

/* From before the hold is taken until the forwarding is in place: a
 * SIGTERM in between would otherwise kill us with the hold granted and CMD
 * never run (or not yet told) */
static void block_job_signals(sigset_t *old) {
        sigset_t job;
        sigemptyset(&job);
        sigaddset(&job, SIGTERM);
        sigaddset(&job, SIGHUP);
        (void) sigprocmask(SIG_BLOCK, &job, old);
}

static void exec_child(const Args *a, const sigset_t *old_mask) {
        const char *cmd = a->exec_argv[0];

        (void) sigprocmask(SIG_SETMASK, old_mask, NULL);

        execvp(cmd, a->exec_argv);
        /* What a shell says, with its exit codes: 127 not found, 126 else. */
        fprintf(stderr, _("fridgectl: cannot run %s: %s\n"), cmd, strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
}

/* Runs CMD while `fd` (taken by the caller, or a negative errno with e
 * set on a refusal, `what` saying what was refused) stays open */
static int run_holding(const Args *a, int taken, const sd_bus_error *e, const char *what, const sigset_t *old_mask) {
        _cleanup_close_ int fd = taken;
        struct sigaction ignore = { .sa_handler = SIG_IGN }, forward = { .sa_handler = forward_signal };
        struct sigaction old_int, old_quit, old_term, old_hup;
        pid_t pid;
        int r;

        if (fd < 0) {
                if (sd_bus_error_is_set(e))
                        (void) report_call_error(a, what, e);
                else
                        (void) report_errno(a, what, fd);
                /* Whatever went wrong, CMD did not run. */
                (void) sigprocmask(SIG_SETMASK, old_mask, NULL);
                return EXIT_CODE_REFUSED;
        }

        /* The bus connection stays open too, until we return: fridged also
         * ends the hold when our bus name goes away. (sd-bus sockets are
         * O_CLOEXEC, so CMD does not get it either.) */
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                r = -errno;
                (void) sigprocmask(SIG_SETMASK, old_mask, NULL);
                return report_errno(a, _("cannot fork"), r);
        }
        if (pid == 0)
                exec_child(a, old_mask);

        /* Like system(): Ctrl-C and Ctrl-\ reach CMD from the terminal
         * anyway; CMD decides whether they end it, and the hold lasts
         * until it does. */
        child_pid = pid;
        sigemptyset(&forward.sa_mask);
        (void) sigaction(SIGINT, &ignore, &old_int);
        (void) sigaction(SIGQUIT, &ignore, &old_quit);
        (void) sigaction(SIGTERM, &forward, &old_term);
        (void) sigaction(SIGHUP, &forward, &old_hup);
        (void) sigprocmask(SIG_SETMASK, old_mask, NULL);   /* what came meanwhile goes to CMD now */
        r = wait_child(pid);
        (void) sigaction(SIGINT, &old_int, NULL);
        (void) sigaction(SIGQUIT, &old_quit, NULL);
        (void) sigaction(SIGTERM, &old_term, NULL);
        (void) sigaction(SIGHUP, &old_hup, NULL);
        child_pid = 0;
        if (r < 0)
                return report_errno(a, _("cannot wait for the command"), r);
        return r;       /* the fd is closed on the way out: the hold ends */
}

int cmd_hold(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        char what[300];

        sigset_t old_mask;
        block_job_signals(&old_mask);
        int fd = take_fd(bus, "HoldClass", a->hold_class, args_hold_who(a), args_hold_why(a), &e);
        snprintf(what, sizeof(what), _("cannot hold class %s"), a->hold_class);
        return run_holding(a, fd, &e, what, &old_mask);
}

int cmd_inhibit(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        char what[300];

        sigset_t old_mask;
        block_job_signals(&old_mask);
        int fd = take_fd(bus, "Inhibit", args_hold_who(a), args_hold_why(a), args_inhibit_mode(a), &e);
        /* Translators: %s is the inhibitor's mode, block or delay, as given */
        snprintf(what, sizeof(what), _("cannot take a %s inhibitor"), args_inhibit_mode(a));
        return run_holding(a, fd, &e, what, &old_mask);
}
