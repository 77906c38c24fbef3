/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "polkit-agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fridge-config.h"

/* How long a slow start may take before the call goes ahead without it */
#define AGENT_READY_MS 10000
/* How long it may take to end after SIGTERM */
#define AGENT_END_MS 2000

static pid_t agent_pid;

static const char *agent_path(void) {
        /* Only for the tests' stand-in agent; never when set-uid */
        const char *p = secure_getenv("FRIDGECTL_POLKIT_AGENT");
        return p && *p ? p : POLKIT_AGENT_PATH;
}

static void exec_agent(const char *path, int notify_fd, pid_t parent) {
        /* fridgectl blocks SIGINT and SIGTERM for its event loop; the mask
         * outlives exec, and pkttyagent never unblocks them: its end at
         * polkit_agent_close() would never come */
        sigset_t none;
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) signal(SIGINT, SIG_DFL);
        (void) signal(SIGTERM, SIG_DFL);
        /* Gone with fridgectl, however it ends */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                _exit(127);
        /* The notify fd must outlive exec: a plain dup, without CLOEXEC */
        int fd = fcntl(notify_fd, F_DUPFD, 3);
        char arg[16];
        if (fd < 0)
                _exit(127);
        snprintf(arg, sizeof(arg), "%d", fd);
        execl(path, path, "--notify-fd", arg, "--fallback", (char *) NULL);
        _exit(127);
}

bool polkit_agent_open(sd_bus *bus, bool ask_password) {
        /* --no-ask-password: polkit answers without asking anyone */
        bool person = ask_password && isatty(STDIN_FILENO);
        (void) sd_bus_set_allow_interactive_authorization(bus, person);
        /* polkit asks nothing of root */
        if (!person || agent_pid > 0 || geteuid() == 0)
                return false;
        const char *path = agent_path();
        if (access(path, X_OK) < 0)
                return false;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return false;
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid == 0)
                exec_agent(path, p[1], parent);
        close(p[1]);
        if (pid < 0) {
                close(p[0]);
                return false;
        }
        /* It closes its end once registered with polkitd (or exits) */
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        (void) poll(&pfd, 1, AGENT_READY_MS);
        close(p[0]);
        agent_pid = pid;
        return true;
}

/* Whether it was reaped within `ms` */
static bool reaped_within(pid_t pid, int ms) {
        for (int waited = 0; waited <= ms; waited += 10) {
                pid_t r = waitpid(pid, NULL, WNOHANG);
                if (r == pid || (r < 0 && errno != EINTR))
                        return true;
                (void) usleep(10000);
        }
        return false;
}

void polkit_agent_close(void) {
        if (agent_pid <= 0)
                return;
        (void) kill(agent_pid, SIGTERM);
        /* An agent that ignores SIGTERM does not keep fridgectl */
        if (!reaped_within(agent_pid, AGENT_END_MS)) {
                (void) kill(agent_pid, SIGKILL);
                while (waitpid(agent_pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        agent_pid = 0;
}
