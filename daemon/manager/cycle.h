/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The design's words as types: kind, phase and result. The errors a cycle
 * can end with are FridgeErrors (fridge-error.h, shared with fridgectl). */

#include "fridge-error.h"

typedef enum SleepKind {
        SLEEP_SUSPEND,
        SLEEP_HIBERNATE,
        SLEEP_HYBRID,
        _SLEEP_KIND_MAX,
        _SLEEP_KIND_INVALID = -1,
} SleepKind;

typedef enum Phase {
        PHASE_NONE,
        PHASE_PREPARE,
        PHASE_FLUSH,
        PHASE_FREEZE_EARLY,
        PHASE_FLUSH_AGAIN,
        PHASE_FREEZE_LATE,
        PHASE_KERNEL,
        PHASE_THAW,
        _PHASE_MAX,
} Phase;

typedef enum CycleResult {
        RESULT_NONE,
        RESULT_DONE,
        RESULT_ABORTED,
        RESULT_FAILED,
        RESULT_DRY_RUN,
        _RESULT_MAX,
} CycleResult;

const char *sleep_kind_to_string(SleepKind k);
SleepKind sleep_kind_from_string(const char *s);
const char *phase_to_string(Phase p);
const char *cycle_result_to_string(CycleResult r);
