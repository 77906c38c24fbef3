/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The human sentences fridgectl prints about a cycle, as pure functions so
 * the wording is unit-tested. All return malloc'd strings (NULL on OOM). */

#include <stdbool.h>
#include <stdint.h>

#include "image-text.h"

typedef struct CycleOutcome {
        const char *result;             /* done|aborted|failed|dry-run */
        const char *error;              /* D-Bus error name or "" */
        const char *message;
        bool cancel_requested;          /* this client asked to cancel */
        bool resumed;                   /* a Resumed signal was seen */
        uint64_t slept_usec;
        const char *wake_reason;
        const char *pm_test;            /* the --pm-test level, or NULL */
        ImageWrite image;               /* a hibernation's, from the history; writer NULL: none */
} CycleOutcome;

/* "flush: flushing 212 MiB"; just one of the two when the other is empty. */
char *cycle_label(const char *phase, const char *text);

/* "3.2 s", "12 min 5 s", "2 h 7 min". */
char *format_duration(uint64_t usec);

/* "resumed after 3.2 s (wake: rtc)" */
char *cycle_resumed_line(uint64_t slept_usec, const char *wake_reason);


/* FreezeTimeout's message, "cgroups did not freeze within N ms: A; B",
 * as "cgroups did not freeze within N ms\n  A\n  B": one indented line
 * per blocker. NULL when the message does not have that form (or OOM). */
char *freeze_timeout_text(const char *message);

/* The last line: "done: resumed after …", "aborted: cancelled by user; …",
 * "failed: FreezeTimeout: …", … For FreezeTimeout the blockers follow on
 * lines of their own (see freeze_timeout_text()); no trailing newline. */
char *cycle_final_line(const CycleOutcome *o);
