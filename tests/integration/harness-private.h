/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the harness's files share among themselves (harness.c: life and
 * teardown, harness-proc.c: child processes, harness-start.c: starting
 * the processes, harness-bus.c: the bus, harness-fakesys.c: the simulated
 * kernel). Tests include harness.h only.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "harness.h"

static inline int64_t now_usec(void) {
        return g_get_monotonic_time();
}

static inline int remaining_ms(int64_t deadline) {
        int64_t left = deadline - now_usec();
        if (left <= 0)
                return 0;
        return (int) ((left + 999) / 1000);
}

/* harness-proc.c */
typedef struct HarnessSpawn {
        char **argv;
        int stdin_fd;               /* -1: /dev/null */
        int stdout_fd;              /* -1: /dev/null */
        int stderr_fd;              /* -1: inherit */
        int extra_fd;               /* becomes fd 3, or -1 */
        const char *const *env;     /* NAME=VALUE pairs to set, NULL-terminated */
} HarnessSpawn;

/* Forks and execs s->argv[0]; the child dies with the test process. */
pid_t harness_spawn(const HarnessSpawn *s);
int harness_pidfd_open(pid_t pid);
/* SIGTERM, wait, SIGKILL, wait. Returns the wait status or -1; *pid = 0. */
int harness_stop_pid(pid_t *pid, int term_timeout_ms);
void harness_write_file(const char *path, const char *text);
/* Waits (bounded by the deadline) until fd is readable; false when time
 * ran out or poll() failed */
bool harness_wait_readable(int fd, int64_t deadline);
/* The first line read from fd within timeout_ms, without its newline, or NULL. */
char *harness_read_line(int fd, int timeout_ms);

/* harness-start.c */
/* Polls (bounded) until path exists; false when pid exited or time ran out. */
bool harness_wait_for_file(const char *path, pid_t pid, int timeout_ms);
void harness_start_fakesys(Harness *h, const HarnessOptions *opts);
void harness_start_slowfs(Harness *h);
void harness_start_dbus(Harness *h, bool open_bus);
void harness_start_polkit(Harness *h, const char *table);
void harness_start_logind(Harness *h, const HarnessOptions *opts);
void harness_make_proc_root(Harness *h, const HarnessOptions *opts);
/* Starts fridged and returns once it sent READY=1 (asserts otherwise). */
void harness_start_fridged(Harness *h);

/* harness-bus.c */
void harness_signal_free(gpointer p);
/* Connects h->bus and records every signal from fridged's object path. */
void harness_connect_bus(Harness *h);
/* Copies a D-Bus error's name and message out (each may be NULL). */
void harness_take_error(sd_bus_error *e, char **ret_error, char **ret_message);

/* Removes harness_exe_for_others()'s copies (at exit, and from the fatal
 * signal handlers) */
void harness_remove_exe_copies(void);
