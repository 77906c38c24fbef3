/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fridgectl's exit codes, and the one place that maps a cycle result or a
 * D-Bus error name to them (documented in --help). */

enum {
        EXIT_CODE_DONE    = 0,  /* done, dry-run, or the command succeeded */
        EXIT_CODE_FAILED  = 1,  /* the cycle failed, or fridged unreachable */
        EXIT_CODE_USAGE   = 2,  /* bad command line, or InvalidArgs from fridged */
        EXIT_CODE_ABORTED = 3,  /* the cycle was aborted (cancelled) */
        EXIT_CODE_REFUSED = 4,  /* fridged refused the call: Busy, AccessDenied, … */
};

#include <stdbool.h>

#define FRIDGE_ERROR_PREFIX "io.fridge.Fridge1.Error."

/* CycleFinished's result → exit code. Unknown results count as failures. */
int exit_code_for_result(const char *result);

/* The error name of a failed method call → exit code. */
int exit_code_for_call_error(const char *error_name);

/* True when the error means fridged is not there to answer at all. */
bool error_is_unreachable(const char *error_name);

/* "io.fridge.Fridge1.Error.Busy" → "Busy": the last dotted component. */
const char *error_short_name(const char *error_name);
