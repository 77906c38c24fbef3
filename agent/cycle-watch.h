/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fridged's side: io.fridge.Fridge1 watched on the system bus (whoever
 * owns the name now: a restarted fridged is picked up again), its
 * properties kept as one AgentCycle, its signals passed on. */

#include <gio/gio.h>
#include <stdint.h>

#include "text.h"

typedef struct CycleWatchOps {
        /* the properties changed while a cycle runs (never while idle) */
        void (*changed)(void *userdata, const AgentCycle *c);
        void (*resumed)(void *userdata, uint64_t cycle, uint64_t slept_usec, const char *wake_reason);
        void (*finished)(void *userdata, uint64_t cycle, const char *result, const char *error,
                         const char *message);
        /* fridged left the bus (a restarted one reports the cycle it left) */
        void (*vanished)(void *userdata);
        /* Cancel(cycle) was refused: fridged's or polkit's message */
        void (*cancel_refused)(void *userdata, uint64_t cycle, const char *message);
} CycleWatchOps;

typedef struct CycleWatch CycleWatch;

int cycle_watch_new(GDBusConnection *system, const CycleWatchOps *ops, void *userdata, CycleWatch **ret);
CycleWatch *cycle_watch_free(CycleWatch *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CycleWatch, cycle_watch_free)

/* The cycle as last reported (borrowed) */
const AgentCycle *cycle_watch_cycle(const CycleWatch *w);
/* Cancel(cycle), with polkit allowed to ask; a refusal is logged and
 * reported through cancel_refused */
void cycle_watch_cancel(CycleWatch *w, uint64_t cycle);

/* The image write of `cycle`, just finished, from ListCycles(1) (fridged
 * has stored the entry before it sent CycleFinished), passed to `done`
 * within a second: writer NULL when none was told, the caller may not
 * see the cycle or fridged did not answer. image NULL: the watch was
 * freed meanwhile, and `done` only frees what userdata holds. */
typedef void (*CycleWatchImageFunc)(const ImageWrite *image, void *userdata);
void cycle_watch_image_write(CycleWatch *w, uint64_t cycle, CycleWatchImageFunc done, void *userdata);
