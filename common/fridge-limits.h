/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Limits shared by the configuration (daemon/config) and the Sleep options
 * (sleep-options.c), so that fridged and fridgectl agree on them. */

#define FLUSH_TIMEOUT_MIN_MS 100U
#define FLUSH_TIMEOUT_MAX_MS 3600000U
#define FREEZE_TIMEOUT_MIN_MS 100U
#define FREEZE_TIMEOUT_MAX_MS 600000U
#define HOOK_TIMEOUT_MIN_MS 100U
#define HOOK_TIMEOUT_MAX_MS 3600000U
/* How long delay inhibitors may hold a cycle in prepare ([Delay] TimeoutMs) */
#define DELAY_TIMEOUT_MAX_MS 20000U
/* How long a queued cycle waits for the block inhibitors to go */
#define QUEUE_TIMEOUT_MIN_MS 100U
#define QUEUE_TIMEOUT_MAX_MS 3600000U
#define QUEUE_TIMEOUT_DEFAULT_MS 30000U
/* The RTC wake alarm: up to a year */
#define WAKE_AFTER_MAX_SEC 31536000U
