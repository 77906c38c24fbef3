/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

/* Authorization of the methods that change something: root may always;
 * anyone else is asked about at polkit (CheckAuthorization), without
 * blocking the loop. The method is dispatched a second time when the
 * answer is in (systemd's pattern), so handlers stay straight-line:
 *
 *     r = polkit_verify(p, msg, "io.fridge.sleep", error);
 *     if (r <= 0)
 *             return r;     (0: asked, the reply comes later)
 */

#define POLKIT_ACTION_SLEEP     "io.fridge.sleep"
#define POLKIT_ACTION_HIBERNATE "io.fridge.hibernate"
#define POLKIT_ACTION_CONFIGURE "io.fridge.configure"
#define POLKIT_ACTION_INHIBIT   "io.fridge.inhibit"
/* Freezing others without sleeping: dry runs, long freeze timeouts */
#define POLKIT_ACTION_MANAGE    "io.fridge.manage"
/* Sleeping although fridge's block inhibitors are held */
#define POLKIT_ACTION_IGNORE_INHIBITORS "io.fridge.ignore-inhibitors"
/* Seeing every user's cycles in the history, not only one's own */
#define POLKIT_ACTION_HISTORY   "io.fridge.history"

/* Calls of one uid waiting for polkit at once ([Limits]
 * PendingAuthorizationsPerUser=, this by default): a flood while polkit is
 * slow is refused (LimitsExceeded) instead of using up fridged's quota of
 * pending replies at the bus, which every caller's questions share */
#define POLKIT_PENDING_PER_UID_DEFAULT 16U

typedef struct Polkit Polkit;

/* Watches `bus`'s incoming messages (a filter) to drop each answer as its
 * call comes back; a uid may wait for `pending_max` answers at once */
int polkit_new(sd_bus *bus, unsigned pending_max, Polkit **ret);
Polkit *polkit_free(Polkit *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Polkit, polkit_free)

/* 1: allowed, go on. 0: polkit was asked; return 0 from the handler (the
 * message comes back with the answer). Negative: refused or failed, with
 * `error` set (AccessDenied names the action; LimitsExceeded when the
 * caller's uid waits for `pending_max` answers already). */
int polkit_verify(Polkit *p, sd_bus_message *msg, const char *action, sd_bus_error *error);
/* The same for every action of the NULL-terminated list, asked in turn
 * (the first refused one is named) */
int polkit_verify_all(Polkit *p, sd_bus_message *msg, const char *const *actions, sd_bus_error *error);

/* What polkit would answer the caller about every action of the list,
 * asked without user interaction (logind's CanSuspend): yes for root
 * unasked; no when any action is refused (or polkit cannot be asked);
 * challenge when any needs authentication and none is refused. Returns as
 * polkit_verify(), with *ret set on 1. */
typedef enum PolkitAnswer {
        POLKIT_ANSWER_YES,
        POLKIT_ANSWER_CHALLENGE,
        POLKIT_ANSWER_NO,
        _POLKIT_ANSWER_MAX,
} PolkitAnswer;
int polkit_check_all(Polkit *p, sd_bus_message *msg, const char *const *actions, PolkitAnswer *ret,
                     sd_bus_error *error);
const char *polkit_answer_to_string(PolkitAnswer a);
