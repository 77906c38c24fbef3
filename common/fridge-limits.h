/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Limits shared by the configuration (daemon/config) and the Sleep options
 * (sleep-options.c), so that fridged and fridgectl agree on them. */

#define FLUSH_TIMEOUT_MIN_MS 100U
#define FLUSH_TIMEOUT_MAX_MS 3600000U
#define FREEZE_TIMEOUT_MIN_MS 100U
#define FREEZE_TIMEOUT_MAX_MS 600000U
/*
 * The sleep hook's budget B, [Sleep] HookTimeoutMs: from the moment
 * systemd-sleep starts fridge's hook to its return, every layer inside it
 * gives up before the one around it, so none gives up while another still
 * holds (S is the slack between two layers, Q fridgectl's question for B):
 *   `fridgectl hook` asks fridged for B                at most Q
 *   fridgectl's own deadline, from its start           B - Q - S (B - S
 *                                                      when FRIDGE_HOOK_TIMEOUT gives B)
 *   fridgectl's Hook call                              B - Q - 2S
 *   fridged's wait from Hook("pre") to frozen          B - Q - 3S, then it thaws
 * The hook is fridgectl itself (client/sleep-hook.c): it starts no
 * process, each of which costs every sleep. fridged also waits B of
 * awake time for the post once frozen. systemd 252 runs the hooks under
 * one limit, DEFAULT_TIMEOUT_USEC (90 s: src/sleep/sleep.c's
 * execute_directories(), an alarm() on the process running them all): the
 * largest B keeps 5 s of it for systemd-sleep itself.
 */
#define HOOK_TIMEOUT_MIN_MS 2000U
#define HOOK_TIMEOUT_MAX_MS 85000U
#define HOOK_TIMEOUT_DEFAULT_MS 60000U
#define HOOK_QUERY_MS 1000U

static inline unsigned hook_slack_ms(unsigned budget_ms) {
        unsigned s = budget_ms / 20;
        return s < 20 ? 20 : s > 1000 ? 1000 : s;
}
/* `fridgectl hook`'s own deadline (asked: with the question) */
static inline unsigned hook_deadline_ms(unsigned budget_ms, unsigned query_ms) {
        return budget_ms - query_ms - hook_slack_ms(budget_ms);
}
static inline unsigned hook_call_timeout_ms(unsigned budget_ms) {
        return budget_ms - HOOK_QUERY_MS - 2 * hook_slack_ms(budget_ms);
}
static inline unsigned hook_pre_wait_ms(unsigned budget_ms) {
        return budget_ms - HOOK_QUERY_MS - 3 * hook_slack_ms(budget_ms);
}
/* How long delay inhibitors may hold a cycle in prepare ([Delay] TimeoutMs) */
#define DELAY_TIMEOUT_MAX_MS 20000U
/* How long a queued cycle waits for the block inhibitors to go */
#define QUEUE_TIMEOUT_MIN_MS 100U
#define QUEUE_TIMEOUT_MAX_MS 3600000U
#define QUEUE_TIMEOUT_DEFAULT_MS 30000U
/* The RTC wake alarm: up to a year */
#define WAKE_AFTER_MAX_SEC 31536000U
