/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pager.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t pager_pid;

/* NULL: less. "" and "cat" mean no pager, as for systemd */
static const char *pager_command(bool *ret_none) {
        const char *p = getenv("SYSTEMD_PAGER");

        if (!p)
                p = getenv("PAGER");
        *ret_none = p && (!*p || strcmp(p, "cat") == 0);
        return p;
}

/* With no pager to run, what was meant for it still reaches the terminal */
static _Noreturn void copy_through(void) {
        char buf[4096];
        ssize_t n;

        while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
                if (n > 0 && write(STDOUT_FILENO, buf, (size_t) n) != n)
                        break;
        _exit(EXIT_SUCCESS);
}

static _Noreturn void exec_pager(const char *command, int read_fd) {
        sigset_t none;

        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        if (dup2(read_fd, STDIN_FILENO) < 0)
                _exit(EXIT_FAILURE);
        /* F: quit when it fits one screen; R: colours; X: leave the text on
         * screen; M: a verbose prompt; K: Ctrl-C quits */
        const char *less = getenv("SYSTEMD_LESS");
        (void) setenv("LESS", less ? less : "FRXMK", 1);
        if (command)
                execl("/bin/sh", "sh", "-c", command, (char *) NULL);
        else {
                execlp("less", "less", (char *) NULL);
                execlp("more", "more", (char *) NULL);
        }
        copy_through();
}

void pager_open(const Args *a) {
        bool none;
        const char *command = pager_command(&none);
        int p[2];

        if (a->no_pager || a->json || pager_pid > 0 || none || !isatty(STDOUT_FILENO))
                return;
        if (pipe2(p, O_CLOEXEC) < 0)
                return;
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
                exec_pager(command, p[0]);
        if (pid < 0 || dup2(p[1], STDOUT_FILENO) < 0) {
                close(p[0]);
                close(p[1]);
                if (pid > 0)
                        (void) waitpid(pid, NULL, 0);
                return;
        }
        close(p[0]);
        close(p[1]);
        pager_pid = pid;
}

void pager_close(void) {
        if (pager_pid <= 0)
                return;
        fflush(stdout);
        /* The pager sees the end of its input; the terminal stays its */
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0) {
                (void) dup2(null, STDOUT_FILENO);
                close(null);
        } else
                close(STDOUT_FILENO);
        while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        pager_pid = 0;
}
