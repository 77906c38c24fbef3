/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one-line progress display, as a pure function of (progress, label,
 * terminal width), so its layout is unit-tested without a terminal. */

#include <stddef.h>

/* Percentage shown for progress (clamped to 0..1; NaN counts as 0). Rounds
 * to nearest, but never shows 100 before the cycle really reached 1. */
unsigned progress_percent(double progress);

/* Display columns of a UTF-8 string (code points; wide characters count
 * one, an accepted approximation for phase names and daemon text). */
size_t text_columns(const char *s);

/* "[#####.....]  48%  label", at most columns-1 display columns: the last
 * column stays empty so the terminal never wraps onto a second line. The
 * bar takes 2/5 of the width (at most 60 cells) and is left out when the
 * terminal is too narrow; the label is cut with "…" to fit. Control
 * characters in the label become '?', so daemon text cannot move the
 * cursor. Returns a malloc'd string, NULL on OOM. */
char *progress_bar_render(double progress, const char *label, unsigned columns);
