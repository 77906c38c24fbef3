/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "progress-bar.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "utf8.h"

#define BAR_MAX_CELLS 60
#define BAR_MIN_CELLS 5
#define ELLIPSIS "\xe2\x80\xa6"         /* U+2026, one column */

static double clamp_progress(double p) {
        if (isnan(p) || p < 0.0)
                return 0.0;
        return p > 1.0 ? 1.0 : p;
}

unsigned progress_percent(double progress) {
        double p = clamp_progress(progress);
        unsigned pct = (unsigned) lround(p * 100.0);

        /* "100%" next to a cycle that is still running would be a lie. */
        if (pct == 100 && p < 1.0)
                pct = 99;
        return pct;
}

size_t text_columns(const char *s) {
        size_t cols = 0;

        for (const char *p = strempty(s); *p; cols++) {
                uint32_t cp;
                size_t n = utf8_decode(p, &cp);

                p += n > 0 ? n : 1;
        }
        return cols;
}

/* Appends at most max_cols columns of label to out, sanitized. */
static char *append_label(char *out, const char *label, size_t max_cols) {
        size_t cols = text_columns(label);
        bool cut = cols > max_cols;
        size_t keep = cut ? (max_cols > 0 ? max_cols - 1 : 0) : cols;

        for (const char *p = strempty(label); *p && keep > 0; keep--) {
                uint32_t cp;
                size_t n = utf8_decode(p, &cp);

                if (n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
                        *out++ = '?';
                        p += n > 0 ? n : 1;
                        continue;
                }
                memcpy(out, p, n);
                out += n;
                p += n;
        }
        if (cut && max_cols > 0) {
                memcpy(out, ELLIPSIS, strlen(ELLIPSIS));
                out += strlen(ELLIPSIS);
        }
        return out;
}

static char *append_bar(char *out, double progress, size_t cells) {
        size_t filled = (size_t) lround(clamp_progress(progress) * (double) cells);

        *out++ = '[';
        for (size_t i = 0; i < cells; i++)
                *out++ = i < filled ? '#' : '.';
        *out++ = ']';
        *out++ = ' ';
        return out;
}

char *progress_bar_render(double progress, const char *label, unsigned columns) {
        size_t budget = columns > 1 ? columns - 1 : 0;
        size_t cells = budget * 2 / 5;
        char pct[8], *line, *out;
        size_t used;

        if (cells > BAR_MAX_CELLS)
                cells = BAR_MAX_CELLS;
        if (cells < BAR_MIN_CELLS)
                cells = 0;

        /* Each column is at most 4 bytes of UTF-8; the ellipsis is 3. */
        line = malloc(budget * 4 + 8);
        if (!line)
                return NULL;
        out = line;

        snprintf(pct, sizeof(pct), "%3u%%", progress_percent(progress));
        if (cells > 0)
                out = append_bar(out, progress, cells);
        used = cells > 0 ? cells + 3 : 0;

        /* Too narrow for even the percentage: show what fits. */
        if (used + strlen(pct) > budget) {
                out = append_label(out, pct + strspn(pct, " "), budget - used);
                *out = 0;
                return line;
        }
        memcpy(out, pct, strlen(pct));
        out += strlen(pct);
        used += strlen(pct);

        if (label && *label && used + 2 < budget) {
                memcpy(out, "  ", 2);
                out += 2;
                out = append_label(out, label, budget - used - 2);
        }
        *out = 0;
        return line;
}
