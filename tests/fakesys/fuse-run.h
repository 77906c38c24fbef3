/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared main loop of the test file systems (fakesys, slowfs). */
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

/* Where a file system's handlers wait: they wait on cond (with lock held)
 * and give up once *quitting is set. When SIGTERM/SIGINT/SIGHUP arrives,
 * fuse_run sets *quitting under lock and wakes them all before it stops
 * the loop, or the loop could not join its workers. */
typedef struct FuseRunWaits {
        pthread_mutex_t *lock;
        pthread_cond_t *cond;   /* initialized by fuse_run: CLOCK_MONOTONIC */
        bool *quitting;
} FuseRunWaits;

/* Mounts fs_ops on mountpoint (foreground, multi-threaded), serves until
 * unmounted or signalled, unmounts, and returns the exit status. */
int fuse_run(const char *argv0, const char *mountpoint, bool allow_other,
             const char *fsname, const struct fuse_operations *fs_ops,
             const FuseRunWaits *waits);

/* Absolute CLOCK_MONOTONIC deadline ms milliseconds from now, for
 * pthread_cond_timedwait on FuseRunWaits.cond. */
struct timespec fuse_run_deadline_ms(long ms);
