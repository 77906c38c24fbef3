/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one place that maps a cycle's end or a D-Bus error name to
 * fridgectl's exit codes (documented in --help), by fridge-error.h's table. */

#include <stdbool.h>

/* EXIT_CODE_*, and each error's exit code, are declared with the errors */
#include "fridge-error.h"

/* CycleFinished's result → exit code. Unknown results count as failures. */
int exit_code_for_result(const char *result);

/* CycleFinished's result and error name → exit code: the error's, unless
 * the result is done or dry-run or the error is not fridge's. */
int exit_code_for_finished(const char *result, const char *error_name);

/* The error name of a failed method call → exit code: the table's, 1 for a
 * name not in it. */
int exit_code_for_call_error(const char *error_name);

/* io.fridge.Fridge1.Error.NAME → NAME: the last dotted component. */
const char *error_short_name(const char *error_name);
