/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The design's words as types: kind, phase, result, and the errors a cycle
 * can end with. Only bus.c turns a FridgeError into a D-Bus error name. */

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

typedef enum FridgeError {
        FRIDGE_ERROR_NONE,
        FRIDGE_ERROR_CANCELLED,
        FRIDGE_ERROR_WAKEUP_EVENT,
        FRIDGE_ERROR_KERNEL,
        FRIDGE_ERROR_FLUSH_TIMEOUT,
        FRIDGE_ERROR_FREEZE_TIMEOUT,
        FRIDGE_ERROR_NOT_SUPPORTED,
        FRIDGE_ERROR_THAW_FAILED,
        FRIDGE_ERROR_INTERNAL,
        FRIDGE_ERROR_INHIBITED,
        FRIDGE_ERROR_INTERRUPTED,  /* fridged stopped mid-cycle; reported by the next one */
        _FRIDGE_ERROR_MAX,
} FridgeError;

const char *sleep_kind_to_string(SleepKind k);
SleepKind sleep_kind_from_string(const char *s);
const char *phase_to_string(Phase p);
const char *cycle_result_to_string(CycleResult r);
