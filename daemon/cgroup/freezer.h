/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "blockers.h"
#include "ledger.h"

/* The cgroup v2 freezer: writes cgroup.freeze and waits for "frozen 1" in
 * cgroup.events through inotify (no polling), a whole stage at once, with a
 * timeout; thaws in reverse order. Paths are relative to the cgroup root fd. */

typedef struct Freezer Freezer;

/* Called on the loop: r = 0 when every cgroup of the stage reported frozen,
 * -ETIMEDOUT when the timeout passed first, another <0 on errors (a write
 * refused, a cgroup gone). */
typedef void (*FreezerDone)(Freezer *f, int r, void *userdata);
/* Called on the loop each time one more cgroup of the stage is frozen. */
typedef void (*FreezerProgress)(Freezer *f, unsigned frozen, unsigned total, void *userdata);

/* What became of one cgroup, for whoever keeps a cycle's timeline */
typedef enum FreezerEvent {
        FREEZER_EVENT_FREEZE,   /* cgroup.freeze 1 written */
        FREEZER_EVENT_FROZEN,   /* cgroup.events said frozen */
        FREEZER_EVENT_THAWED,   /* cgroup.freeze 0 written */
} FreezerEvent;
/* `cgroup` is relative to the cgroup root, unescaped; called on the loop */
typedef void (*FreezerObserver)(const char *cgroup, FreezerEvent ev, void *userdata);

/* cgroup_fd and proc_fd are borrowed; the ledger too (may be NULL in tests). */
/* Whether the cgroup `path` (relative to the cgroup root) is frozen now,
 * by anyone: "frozen 1" in its cgroup.events, which an ancestor's freeze
 * sets too */
int freezer_cgroup_frozen(int cgroup_fd, const char *path, bool *ret);

int freezer_new(sd_event *e, int cgroup_fd, int proc_fd, Ledger *ledger, Freezer **ret);
Freezer *freezer_free(Freezer *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Freezer, freezer_free)

/* Every cgroup's freeze, frozen and thaw go to `observer` from now on (NULL: nobody) */
void freezer_set_observer(Freezer *f, FreezerObserver observer, void *userdata);

/* One stage: each cgroup is added to the ledger, then its cgroup.freeze is
 * set to 1; all wait together. Only one stage at a time. An empty stage
 * calls `done` (from the loop, not from inside this call) with 0. */
int freezer_freeze_stage(Freezer *f, char *const *cgroups, uint64_t timeout_usec, FreezerProgress progress,
                         FreezerDone done, void *userdata);

/* Stops waiting for the current stage (if any); `done` is not called. */
void freezer_cancel_stage(Freezer *f);

/* Thaws everything this freezer froze (or started to), in reverse order,
 * synchronously (writes of cgroup.freeze = 0 return at once), removing each
 * from the ledger. Safe to call repeatedly. Returns how many it thawed.
 * Once nothing is frozen, the last stage's cgroups are let go (their fds
 * closed; freezer_blockers() has nothing to name then). */
unsigned freezer_thaw_all(Freezer *f);
/* CLOCK_MONOTONIC µs when the last cgroup a thaw thawed was thawed (its
 * write returned), before the ledger's rewrite and the stage's release;
 * 0 before the first */
uint64_t freezer_thawed_usec(const Freezer *f);

/* After a -ETIMEDOUT: the cgroups of the stage that are not frozen, for
 * blockers_describe() on a worker */
int freezer_blockers(Freezer *f, Blockers **ret);

/* How many cgroups are frozen by this freezer now. */
unsigned freezer_n_frozen(const Freezer *f);
/* A cgroup of the stage not frozen yet, as shown (escaped), borrowed;
 * NULL when none is left */
const char *freezer_first_pending(const Freezer *f);
