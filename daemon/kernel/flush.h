/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Writing dirty data back before anything is frozen: syncfs() on every
 * writable file system that has a backing store, run by a worker thread. */

/* Mount points to sync, one per super block, from PROC/self/mountinfo. */
int flush_list_mounts(int proc_fd, char ***ret);

/* Whether a file system type holds data that can be written back; pseudo
 * and memory-only file systems do not. */
bool flush_fstype_has_backing(const char *fstype);

/* Dirty + Writeback from PROC/meminfo, in KiB. */
int flush_read_dirty(int proc_fd, uint64_t *ret_kib);

typedef struct FlushJob FlushJob;

/* A cycle that gives up on its flush (timed out, cancelled) leaves the
 * job's thread in syncfs until the kernel lets go. A device that has not
 * written back over that many flushes will not go faster for more threads
 * waiting on it (each new syncfs queues behind the same writeback), so
 * past this many a flush says so instead of starting one more: four lets
 * a slow device catch up over a few cycles, and bounds the threads (and
 * their stacks) a stuck one costs. */
#define FLUSH_JOBS_MAX 4U

/* Jobs made and not yet finished, across the process */
unsigned flush_jobs_running(void);
/* The mount points they are in syncfs of, each once, ", "-joined (g_free) */
char *flush_jobs_stuck_on(void);

/* Takes ownership of `mount_points` (a NULL-terminated g_strv); NULL when
 * the mount table could not be read: the job then falls back to sync(). */
int flush_job_new(char **mount_points, FlushJob **ret);
/* What the job calls instead of sync() when it has no mount table: the
 * unit tests' stand-in, so that they never wait on the whole machine's
 * writeback (a stuck FUSE mount elsewhere would hang them) */
void flush_job_set_sync_all(FlushJob *j, void (*sync_all)(void));
void flush_job_free(void *job);
/* WorkerFunc: syncfs on each mount point; failures are logged; returns the
 * first error (negative errno) or 0. */
int flush_job_run(void *job);
