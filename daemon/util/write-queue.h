/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* Writes to the state directories that nothing waits for (a finished
 * cycle's history file, the prune, the record's removal) go to one thread
 * of their own and run there one after the other, in the order they were
 * pushed: the loop never waits for a disk, and the disk catches up in
 * order. Each write logs its own failure (on the thread). */

typedef struct WriteQueue WriteQueue;

typedef void (*WriteQueueFunc)(void *data);     /* on the thread */
typedef void (*WriteQueueFreeFunc)(void *data);

int write_queue_new(WriteQueue **ret);
/* `what` names the write for the log when it is never done; `data` is
 * the queue's (freed by `free_data` after `fn` ran, or when dropped). */
void write_queue_push(WriteQueue *q, const char *what, WriteQueueFunc fn, void *data,
                      WriteQueueFreeFunc free_data);
/* Waits at most `timeout_usec` for what is queued, logs each write not
 * done by then, and lets go of the queue: a write stuck in the kernel
 * finishes (or not) on its own time. Returns how many were not done.
 * Accepts NULL. */
unsigned write_queue_drain_free(WriteQueue *q, uint64_t timeout_usec);
