/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

void log_set_max_level(int level);
int log_get_max_level(void);

/* The cycle being run: while it is set, every entry carries
 * FRIDGE_CYCLE=<id> (under the journal as a field, always to the sink).
 * The manager sets it when a cycle becomes current and clears it (0) when
 * the cycle is gone. */
void log_set_cycle(uint64_t id);
/* The current thread's cycle instead (a worker: the one that started it) */
void log_set_thread_cycle(uint64_t id);
uint64_t log_get_cycle(void);

/* Sees every entry as it is logged, whatever the level: its text and its
 * fields ("KEY=value", NULL-terminated). For tests. NULL: none. Called
 * under a lock, from whichever thread logs (workers too). */
typedef void (*LogSink)(int level, const char *message, const char *const *fields, void *userdata);
void log_set_sink(LogSink sink, void *userdata);

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
/* a cycle moved from one state to another (FRIDGE_STATE, FRIDGE_PREVIOUS_STATE) */
#define FRIDGE_MESSAGE_CYCLE_STATE "4a5b2e0a8f0d4c31a1c9e2f6b7d80107"
/* the state write has not returned within [Sleep] KernelWatchdogMs
 * (FRIDGE_WRITE_FILE, FRIDGE_WRITE_VALUE) */
#define FRIDGE_MESSAGE_KERNEL_STUCK "4a5b2e0a8f0d4c31a1c9e2f6b7d80111"
/* systemd-sleep freezes user.slice itself before fridge's hook: would (at
 * start-up, FRIDGE_SYSTEMD_VERSION) or did (at the hook's pre, FRIDGE_CGROUP) */
#define FRIDGE_MESSAGE_SLEEP_FREEZE "4a5b2e0a8f0d4c31a1c9e2f6b7d80112"
