/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared main loop of the test file systems (fakesys, slowfs). */
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

/* Called once from the signal thread when SIGTERM/SIGINT/SIGHUP arrives,
 * before the loop is told to stop: it must wake every handler that is
 * blocked in a wait of its own, or the loop could not join its workers. */
typedef void (*fuse_run_quit_fn)(void);

/* Mounts fs_ops on mountpoint (foreground, multi-threaded), serves until
 * unmounted or signalled, unmounts, and returns the exit status. */
int fuse_run(const char *argv0, const char *mountpoint, bool allow_other,
             const char *fsname, const struct fuse_operations *fs_ops,
             fuse_run_quit_fn on_quit);

/* Absolute CLOCK_MONOTONIC deadline ms milliseconds from now, for
 * pthread_cond_timedwait on a condition created by fuse_run_cond_init. */
struct timespec fuse_run_deadline_ms(long ms);
void fuse_run_cond_init(pthread_cond_t *cond);
