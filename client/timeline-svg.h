/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `fridgectl plot` as a pure function of GetCycleTimeline's reply: one
 * cycle drawn as systemd-analyze plot draws a boot, as SVG. Phases as bars
 * on a time axis, the flush's dirty bytes as an area, each cgroup's freeze
 * and thaw, the kernel phase's sleep and wake source. Every name is
 * written as text the XML parser takes: markup characters as entities,
 * control characters and bytes that are not UTF-8 as \xNN. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A time that did not happen (GetCycleTimeline's 2^64-1) */
#define PLOT_NEVER UINT64_MAX

/* Times in µs from the cycle's start; strings borrowed */
typedef struct PlotPhase {
        const char *name;
        uint64_t start, end;
} PlotPhase;

typedef struct PlotCgroup {
        const char *name, *stage;
        uint64_t freeze, frozen, thawed;
} PlotCgroup;

typedef struct PlotSample {
        uint64_t at, kib;
} PlotSample;

typedef struct PlotTimeline {
        uint64_t id;
        const char *kind, *result;
        uint64_t start_realtime;        /* CLOCK_REALTIME µs; 0: unknown */
        uint64_t end;                   /* PLOT_NEVER: still running */
        uint64_t slept_usec;
        const char *wake_reason;
        uint32_t cgroups_dropped;
        uint64_t image_raw_bytes, image_written_bytes, image_usec; /* fridge's image write; 0: none */
        const PlotPhase *phases;
        size_t n_phases;
        const PlotCgroup *cgroups;
        size_t n_cgroups;
        const PlotSample *samples;
        size_t n_samples;
} PlotTimeline;

/* The whole document; 0, or -EIO when writing failed */
int timeline_svg_write(FILE *f, const PlotTimeline *t);

/* `s` as XML character data or attribute value (both quotes escaped) */
void svg_write_escaped(FILE *f, const char *s);

/* "12.5 ms", "3.20 s", "1 min 5 s" */
void plot_format_usec(uint64_t usec, char *buf, size_t size);
