/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* stopwatch CMD [ARGS...]: runs CMD and prints "elapsed_usec=N status=S" on
 * stderr (CLOCK_MONOTONIC, fork to exit). For the VM benchmarks: the guest's
 * busybox date has no sub-second format. Exits with CMD's status. */
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: stopwatch CMD [ARGS...]\n");
                return 2;
        }
        uint64_t start = now_usec();
        pid_t pid = fork();
        if (pid < 0) {
                perror("fork");
                return 1;
        }
        if (pid == 0) {
                execvp(argv[1], argv + 1);
                perror(argv[1]);
                _exit(127);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0)
                ;
        uint64_t elapsed = now_usec() - start;
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        fprintf(stderr, "elapsed_usec=%llu status=%d\n", (unsigned long long) elapsed, code);
        return code;
}
