/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* PERSISTENT_DIR/cycle: the running cycle (id, kind, phase, start time,
 * fridged's pid, the boot it runs in, who started it),
 * rewritten atomically (write, fsync, rename, fsync the directory) when a
 * cycle starts and at each phase, removed when it finishes. A fridged that
 * finds one at start-up knows a cycle was interrupted (SIGKILL, a crash; a
 * power cut when the boot differs) and reports it.
 * PERSISTENT_DIR/next-cycle-id keeps ids from
 * repeating across restarts. Both files are small "KEY=value" lines. */

typedef struct CycleRecord {
        uint64_t id;
        char *kind;
        char *phase;
        uint64_t started_usec;  /* CLOCK_REALTIME */
        pid_t pid;              /* fridged's */
        char *boot_id;          /* the boot it ran in (kernel/random/boot_id); NULL: unknown */
        bool by_hook;           /* the sleep hook started it, not a caller of Sleep */
        uid_t starter_uid;      /* the caller's; (uid_t) -1: unknown */
        pid_t starter_pid;      /* the caller's; 0: unknown */
} CycleRecord;

CycleRecord *cycle_record_free(CycleRecord *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CycleRecord, cycle_record_free)

/* Writes the record (replacing any, atomically) to the page cache: the
 * cycle's first flush takes it to disk, before anything is frozen */
int record_write(int dir_fd, const CycleRecord *r);
/* Writes it (not durable) unless a newer cycle's record is there: for
 * a phase written late, off the loop. Safe on another thread. */
int record_update(int dir_fd, const CycleRecord *r);
/* The record, or NULL with 0 when there is none; -EBADMSG when malformed. */
int record_read(int dir_fd, CycleRecord **ret);
/* Removes it if it is cycle `id`'s (or unreadable); 0 when it was not
 * there or is another cycle's. Safe on another thread than the writer. */
int record_remove(int dir_fd, uint64_t id);

/* The first id a new cycle may take: 1 when never saved. */
int record_read_next_id(int dir_fd, uint64_t *ret);
int record_write_next_id(int dir_fd, uint64_t next);

/* STATE_DIR/announced-cycle-id: the last cycle whose CycleFinished went
 * out, written (to the page cache: a killed process loses nothing there)
 * just before it. The cycle's history entry and its record's removal wait
 * on the write queue after the announcement, so a fridged killed between
 * leaves the record behind; its restart finds the id here and does not
 * announce the cycle a second time. 0 when none was saved. */
int record_read_announced(int state_fd, uint64_t *ret);
int record_write_announced(int state_fd, uint64_t id);
