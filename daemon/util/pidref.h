/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A process, not a number: a pid is reused once its process is reaped, so a
 * tracked pid is pinned by a pidfd, or, where the kernel has no pidfd_open,
 * by its start time (field 22 of /proc/PID/stat), and checked before use. */
typedef struct PidRef {
        pid_t pid;
        int fd;                 /* pidfd, -1: none */
        uint64_t starttime;     /* clock ticks after boot, 0: not read */
} PidRef;

#define PIDREF_NULL ((PidRef) { .pid = 0, .fd = -1 })

/* Pins `pid` now: a pidfd, and its start time from proc_fd (/proc). Fails
 * when the process is gone or neither identity can be had. */
int pidref_set(PidRef *p, int proc_fd, pid_t pid);
/* A copy with its own pidfd (dup); 0 or <0. */
int pidref_copy(const PidRef *p, PidRef *ret);
void pidref_done(PidRef *p);

/* Whether the process pinned is still the one behind p->pid: its pidfd
 * says it is running (not yet reaped), or its start time is unchanged. */
bool pidref_is_alive(const PidRef *p, int proc_fd);

/* Field 22 of proc_fd's PID/stat. */
int pidref_read_starttime(int proc_fd, pid_t pid, uint64_t *ret);
