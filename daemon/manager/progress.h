/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "cycle.h"

/* How far a flush has come: the share of the dirty amount at phase start
 * that is gone. More dirt than at the start counts as no progress. */
double progress_flush_fraction(uint64_t start_kib, uint64_t now_kib);

/* A phase-local fraction (0..1) placed in that phase's band of the whole
 * cycle, so one Progress value runs 0..1 across all phases. */
double progress_overall(Phase phase, double fraction);

/* Progress never goes back within a cycle. */
double progress_monotonic(double previous, double next);

/* "412 MiB", "12 KiB", "1.5 GiB" into buf. */
const char *progress_format_kib(uint64_t kib, char *buf, unsigned size);
