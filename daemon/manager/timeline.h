/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* What a picture of one cycle needs, recorded while it runs: each phase's
 * start and end, each cgroup's freeze and thaw, the flush's dirty bytes
 * over time, the kernel phase's sleep and wake source. Times are µs
 * offsets from the cycle's start (CLOCK_MONOTONIC, which stands still
 * while the machine sleeps), plus the start in CLOCK_REALTIME. Bounded:
 * at most TIMELINE_CGROUPS_MAX cgroups (the rest are counted) and
 * TIMELINE_SAMPLES_MAX flush samples (thinned out evenly, the newest
 * always kept), so a cycle over thousands of cgroups or an hour-long flush
 * costs the same few KiB. Pure: no clock is read here. */

#define TIMELINE_PHASES_MAX 64
#define TIMELINE_CGROUPS_MAX 256
/* A longer cgroup name keeps its first and last half of this, in characters */
#define TIMELINE_NAME_MAX 256
#define TIMELINE_SAMPLES_MAX 128
/* A time that did not happen (a cgroup never seen frozen, a phase still open) */
#define TIMELINE_NEVER UINT64_MAX

typedef struct TimelinePhase {
        char *name;             /* phase_to_string()'s */
        uint64_t start, end;    /* end: TIMELINE_NEVER while open */
} TimelinePhase;

typedef struct TimelineCgroup {
        char *name;             /* as D-Bus shows it: \xNN escaped (cgroups_escape()) */
        char *stage;            /* "early" or "late" */
        uint64_t freeze;        /* cgroup.freeze written */
        uint64_t frozen;        /* cgroup.events said frozen; NEVER when it never did */
        uint64_t thawed;        /* cgroup.freeze 0 written; NEVER when not (yet) */
} TimelineCgroup;

typedef struct TimelineSample {
        uint64_t at;
        uint64_t kib;           /* Dirty + Writeback */
} TimelineSample;

typedef enum TimelineCgroupEvent {
        TIMELINE_FREEZE,
        TIMELINE_FROZEN,
        TIMELINE_THAWED,
} TimelineCgroupEvent;

typedef struct Timeline {
        uint64_t id;
        char *kind;
        char *result;           /* "" while the cycle runs */
        uint64_t start_realtime;        /* CLOCK_REALTIME µs */
        uint64_t start_monotonic;       /* the origin of the offsets; not kept on disk */
        uint64_t end;                   /* the finish; NEVER while running */
        GArray *phases;                 /* TimelinePhase, in order; a phase may come back (a retry) */
        GArray *cgroups;                /* TimelineCgroup, in freeze order */
        GHashTable *cgroup_index;       /* name → index + 1 into cgroups; not kept on disk */
        unsigned cgroups_dropped;       /* cgroups past TIMELINE_CGROUPS_MAX, not recorded */
        GArray *samples;                /* TimelineSample */
        unsigned sample_stride;         /* one sample in this many is kept */
        uint64_t samples_seen;
        bool last_provisional;          /* the last sample is off the stride: the next replaces it */
        uint64_t slept_usec;            /* the kernel phase's sleep, 0 when none */
        char *wake_reason;              /* "" when it did not sleep */
        /* fridge's image write in the kernel phase, 0 when none finished */
        uint64_t image_raw_bytes, image_written_bytes, image_usec;
} Timeline;

int timeline_new(uint64_t id, const char *kind, uint64_t start_realtime, uint64_t start_monotonic,
                 Timeline **ret);
Timeline *timeline_free(Timeline *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Timeline, timeline_free)

/* Closes the open phase and opens `name`; NULL only closes. */
void timeline_phase(Timeline *t, const char *name, uint64_t monotonic);
void timeline_cgroup(Timeline *t, const char *name, const char *stage, TimelineCgroupEvent ev,
                     uint64_t monotonic);
void timeline_flush_sample(Timeline *t, uint64_t kib, uint64_t monotonic);
void timeline_kernel(Timeline *t, uint64_t slept_usec, const char *wake_reason);
/* The image write's figures: before compression, on the swap, its time */
void timeline_image(Timeline *t, uint64_t raw_bytes, uint64_t written_bytes, uint64_t usec);
/* Closes the open phase */
void timeline_finish(Timeline *t, const char *result, uint64_t monotonic);

/* Groups [Timeline], [Phases], [Cgroups], [Flush] and [Kernel] of `kf`
 * (replacing them): one cycle's file of the history. [Kernel]'s Image*
 * keys are there only for an image write, and optional when read. */
void timeline_to_keyfile(const Timeline *t, GKeyFile *kf);
/* -EBADMSG when a group or key is missing or malformed (logged, naming
 * it), or holds more than the bounds allow. */
int timeline_from_keyfile(GKeyFile *kf, Timeline **ret);
