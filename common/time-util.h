/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One clock helper for fridged and fridgectl: microseconds, as sd-event
 * and the D-Bus properties count them. */

#include <stdint.h>
#include <time.h>

#include "macro.h"

#define NSEC_PER_USEC 1000ULL

static inline uint64_t timespec_load(const struct timespec *ts) {
        return (uint64_t) ts->tv_sec * USEC_PER_SEC + (uint64_t) ts->tv_nsec / NSEC_PER_USEC;
}

static inline struct timespec *timespec_store(struct timespec *ts, uint64_t usec) {
        ts->tv_sec = (time_t) (usec / USEC_PER_SEC);
        ts->tv_nsec = (long) ((usec % USEC_PER_SEC) * NSEC_PER_USEC);
        return ts;
}

/* The clock now, not sd_event_now()'s cached stamp, which can be a whole
 * loop iteration old. Every clock fridge asks for exists since Linux 2.6.39,
 * so clock_gettime() cannot fail here. */
static inline uint64_t now(clockid_t clock) {
        struct timespec ts;
        clock_gettime(clock, &ts);
        return timespec_load(&ts);
}
