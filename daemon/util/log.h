/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <syslog.h>

void log_set_max_level(int level);
int log_get_max_level(void);

/* Logs at LOG_* level; returns -abs(error) (or 0) so callers can `return log_...`. */
int log_internal(int level, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_debug(...)   log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)    log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)  log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)   log_internal(LOG_ERR, 0, __VA_ARGS__)
/* "%m" in these prints the text of `r`, as systemd's log_*_errno do. */
#define log_warning_errno(r, ...) log_internal(LOG_WARNING, (r), __VA_ARGS__)
#define log_error_errno(r, ...)   log_internal(LOG_ERR, (r), __VA_ARGS__)
#define log_debug_errno(r, ...)   log_internal(LOG_DEBUG, (r), __VA_ARGS__)

/* A structured journal entry with a MESSAGE_ID, mirrored to stderr.
 * Extra fields are "KEY=value" strings, NULL-terminated. */
void log_struct_event(int level, const char *message_id, const char *message, ...) __attribute__((sentinel));

/* MESSAGE_IDs administrators can search for with journalctl MESSAGE_ID=… */
#define FRIDGE_MESSAGE_CYCLE_START  "4a5b2e0a8f0d4c31a1c9e2f6b7d80101"
#define FRIDGE_MESSAGE_CYCLE_FINISH "4a5b2e0a8f0d4c31a1c9e2f6b7d80102"
#define FRIDGE_MESSAGE_RESUMED      "4a5b2e0a8f0d4c31a1c9e2f6b7d80103"
#define FRIDGE_MESSAGE_PHASE_FAILED "4a5b2e0a8f0d4c31a1c9e2f6b7d80104"
#define FRIDGE_MESSAGE_LEDGER_THAW  "4a5b2e0a8f0d4c31a1c9e2f6b7d80105"
/* a cycle an earlier fridged left unfinished, reported at start-up */
#define FRIDGE_MESSAGE_CYCLE_INTERRUPTED "4a5b2e0a8f0d4c31a1c9e2f6b7d80106"
