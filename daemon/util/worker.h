/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-event.h>

/* Blocking work (syncfs, the state write) runs on a thread of its own; the
 * result comes back to the sd-event loop through an eventfd, so the loop
 * never blocks. A worker the loop no longer cares about (a cancelled flush
 * stuck in syncfs) is abandoned: the thread finishes on its own time and
 * its data is freed then. */

typedef struct Worker Worker;

typedef int (*WorkerFunc)(void *data);                 /* on the thread */
/* On the loop; `data` is still alive while this runs. */
typedef void (*WorkerDone)(int result, void *data, void *userdata);
typedef void (*WorkerFreeFunc)(void *data);

/* On success the worker calls `done` exactly once unless abandoned first;
 * after `done` returns the worker is gone. *ret (may be NULL) is only for
 * worker_abandon(). */
int worker_start(sd_event *e, WorkerFunc fn, void *data, WorkerFreeFunc free_data, WorkerDone done,
                 void *userdata, Worker **ret);

/* From `done`: its data is the caller's from now on (the worker will not
 * free it), for a next step that needs it. */
void *worker_take_data(Worker *w);

/* `done` will not be called. Accepts NULL. */
void worker_abandon(Worker *w);
