/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* How a followed cycle is shown: a redrawn bar on a terminal, one plain
 * line per phase otherwise, or one JSON object per event. The cycle code
 * decides what happened; this file only decides how it looks. */

#include <stdbool.h>
#include <stdint.h>

#include "args.h"
#include "cycle-text.h"
#include "json.h"

typedef enum OutputMode {
        OUTPUT_TTY,
        OUTPUT_PLAIN,
        OUTPUT_JSON,
        OUTPUT_QUIET,           /* -q: nothing; the exit status says it */
} OutputMode;

/* What the user should currently see about the cycle. */
typedef struct CycleView {
        uint64_t cycle;
        const char *kind;
        const char *phase;
        double progress;
        const char *text;
        bool cancelling;
} CycleView;

typedef struct Output {
        OutputMode mode;
        bool json_pretty;       /* --json=pretty */
        bool bar_shown;         /* a bar line is on screen without '\n' */
        JsonOut json;           /* the event being written */
} Output;

Output output_pick(const Args *a);

void output_started(Output *o, const CycleView *v);
/* Phase, Progress or ProgressText changed; phase_changed says which. */
void output_update(Output *o, const CycleView *v, bool phase_changed);
void output_sleep_imminent(Output *o, const CycleView *v);
void output_resumed(Output *o, const CycleView *v, uint64_t slept_usec, const char *wake_reason);
void output_cancelling(Output *o, const CycleView *v);
void output_cancel_refused(Output *o, const CycleView *v, const char *error, const char *message);
void output_finished(Output *o, const CycleView *v, const CycleOutcome *outcome);

/* Clears the bar so that a message can be printed on a clean line. */
void output_clear(Output *o);
