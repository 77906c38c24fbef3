/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "polkit-agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fridge-config.h"

/* How long a slow start may take before the call goes ahead without it */
#define AGENT_READY_MS 10000

static pid_t agent_pid;

static const char *agent_path(void) {
        /* Only for the tests' stand-in agent; never when set-uid */
        const char *p = secure_getenv("FRIDGECTL_POLKIT_AGENT");
        return p && *p ? p : POLKIT_AGENT_PATH;
}

static void exec_agent(const char *path, int notify_fd) {
        /* The notify fd must outlive exec: a plain dup, without CLOEXEC */
        int fd = fcntl(notify_fd, F_DUPFD, 3);
        char arg[16];
        if (fd < 0)
                _exit(127);
        snprintf(arg, sizeof(arg), "%d", fd);
        execl(path, path, "--notify-fd", arg, "--fallback", (char *) NULL);
        _exit(127);
}

bool polkit_agent_open(sd_bus *bus) {
        bool person = isatty(STDIN_FILENO);
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
        pid_t pid = fork();
        if (pid == 0)
                exec_agent(path, p[1]);
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

void polkit_agent_close(void) {
        if (agent_pid <= 0)
                return;
        (void) kill(agent_pid, SIGTERM);
        while (waitpid(agent_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        agent_pid = 0;
}
