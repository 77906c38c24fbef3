/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "progress.h"

#include <math.h>
#include <stdio.h>

/* Where each phase starts in the whole cycle. Flushing dominates the time a
 * user waits, so it gets the widest band. */
static const double band_start[_PHASE_MAX + 1] = {
        [PHASE_NONE] = 0.0,
        [PHASE_PREPARE] = 0.0,
        [PHASE_FLUSH] = 0.05,
        [PHASE_FREEZE_EARLY] = 0.55,
        [PHASE_FLUSH_AGAIN] = 0.65,
        [PHASE_FREEZE_LATE] = 0.80,
        [PHASE_KERNEL] = 0.90,
        [PHASE_THAW] = 0.95,
        [_PHASE_MAX] = 1.0,
};

static double clamp01(double v) {
        if (isnan(v) || v < 0.0)
                return 0.0;
        return v > 1.0 ? 1.0 : v;
}

double progress_flush_fraction(uint64_t start_kib, uint64_t now_kib) {
        if (start_kib == 0 || now_kib == 0)
                return 1.0;
        if (now_kib >= start_kib)
                return 0.0;
        return 1.0 - (double) now_kib / (double) start_kib;
}

double progress_overall(Phase phase, double fraction) {
        if (phase >= _PHASE_MAX)
                return 1.0;
        double lo = band_start[phase], hi = band_start[phase + 1];
        return lo + (hi - lo) * clamp01(fraction);
}

double progress_monotonic(double previous, double next) {
        next = clamp01(next);
        return next < previous ? clamp01(previous) : next;
}

const char *progress_format_kib(uint64_t kib, char *buf, unsigned size) {
        if (kib < 1024)
                snprintf(buf, size, "%llu KiB", (unsigned long long) kib);
        else if (kib < 1024ULL * 1024 * 10)
                snprintf(buf, size, "%llu MiB", (unsigned long long) ((kib + 512) / 1024));
        else
                snprintf(buf, size, "%.1f GiB", (double) kib / (1024.0 * 1024.0));
        return buf;
}
