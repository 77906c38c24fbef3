/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Every answer fridge gives as an error, declared once (fridge-error.c):
 * its D-Bus name, what it means, and fridgectl's exit code. fridged's
 * internal code returns a FridgeError for an API answer and a negative
 * errno only for a plain system failure; the bus layer turns the first
 * into the name below and fridgectl turns the name back into an exit code.
 * Shared by fridged and fridgectl (no GLib). */

#include <stdbool.h>

#define FRIDGE_ERROR_PREFIX "io.fridge.Fridge1.Error."

/* fridgectl's exit codes (documented in --help and fridgectl(1)) */
enum {
        EXIT_CODE_DONE    = 0,  /* done, dry-run, or the command succeeded */
        EXIT_CODE_FAILED  = 1,  /* the cycle failed, or fridged unreachable */
        EXIT_CODE_USAGE   = 2,  /* bad command line, or InvalidArgs from fridged */
        EXIT_CODE_ABORTED = 3,  /* the cycle was aborted (cancelled) */
        EXIT_CODE_REFUSED = 4,  /* fridged refused the call: Busy, AccessDenied, … */
};

/* The order is free (nothing stores the numbers); NONE stays 0 so that a
 * function returning "0 or a FridgeError" reads as success-or-answer. */
typedef enum FridgeError {
        FRIDGE_ERROR_NONE,
        /* a cycle ends with these (CycleFinished), and a Hook call with them */
        FRIDGE_ERROR_CANCELLED,
        FRIDGE_ERROR_WAKEUP_EVENT,
        FRIDGE_ERROR_KERNEL,
        FRIDGE_ERROR_FLUSH_TIMEOUT,
        FRIDGE_ERROR_FREEZE_TIMEOUT,
        FRIDGE_ERROR_NOT_SUPPORTED,
        FRIDGE_ERROR_THAW_FAILED,
        FRIDGE_ERROR_INTERNAL,     /* org.freedesktop.DBus.Error.Failed */
        FRIDGE_ERROR_INHIBITED,
        FRIDGE_ERROR_INTERRUPTED,  /* fridged stopped mid-cycle; reported by the next one */
        FRIDGE_ERROR_HOOK_ABANDONED, /* the sleep hook left, ran out of budget, or its post came early */
        /* method calls are refused with these */
        FRIDGE_ERROR_BUSY,
        FRIDGE_ERROR_NO_SUCH_CYCLE,
        FRIDGE_ERROR_TOO_LATE,
        FRIDGE_ERROR_HIBERNATE_NOT_READY,
        FRIDGE_ERROR_INVALID_ARGS,    /* org.freedesktop.DBus.Error.InvalidArgs */
        FRIDGE_ERROR_ACCESS_DENIED,   /* org.freedesktop.DBus.Error.AccessDenied */
        FRIDGE_ERROR_LIMITS_EXCEEDED, /* org.freedesktop.DBus.Error.LimitsExceeded */
        _FRIDGE_ERROR_MAX,
        _FRIDGE_ERROR_INVALID = -1,
} FridgeError;

typedef struct FridgeErrorInfo {
        const char *name;     /* the D-Bus error name; "" for NONE */
        const char *summary;  /* one line for people: docs and the default message */
        int call_exit;        /* fridgectl's exit code when a method call answers with it */
        int cycle_exit;       /* … and when a cycle ends with it (CycleFinished); -1: none does */
} FridgeErrorInfo;

/* The entry of `e`; out of range: FRIDGE_ERROR_INTERNAL's */
const FridgeErrorInfo *fridge_error_info(FridgeError e);
const char *fridge_error_name(FridgeError e);
const char *fridge_error_summary(FridgeError e);
/* The error with that D-Bus name; _FRIDGE_ERROR_INVALID for any other
 * (NULL and "" included: no error is not an error's name) */
FridgeError fridge_error_from_name(const char *name);
/* Whether the name is one of fridge's own (io.fridge.Fridge1.Error.*) */
bool fridge_error_is_own(FridgeError e);

/* Whether a call's error name says fridged is not reachable (not on the
 * bus, activation failed, no reply, disconnected) rather than refusing */
bool fridge_error_name_is_unreachable(const char *name);
