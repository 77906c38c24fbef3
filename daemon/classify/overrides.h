/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "plan.h"

/* Runtime classes: SetClass overrides (by unit name or cgroup path) and
 * HoldClass holds (a cgroup keeps a class while the holder keeps its end of
 * a pipe open). Callers validate targets; this module keeps the state in
 * the form classify_tree() reads. */

typedef struct Overrides Overrides;

/* Called when a hold ends by itself (the holder closed its fd). */
typedef void (*OverridesReleased)(uint64_t hold, void *userdata);

Overrides *overrides_new(sd_event *e, OverridesReleased released, void *userdata);
Overrides *overrides_free(Overrides *o);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Overrides, overrides_free)

/* class < 0 removes the override of `target`. */
void overrides_set(Overrides *o, const char *target, CgroupClass class, const char *who);

/* A hold on `cgroup`; *ret_fd is the holder's end of the pipe (the caller
 * passes it on and closes its copy). */
int overrides_add_hold(Overrides *o, const char *cgroup, CgroupClass class, uid_t uid, const char *who,
                       const char *why, int *ret_fd, uint64_t *ret_hold);
/* The holds of `uid`; (uid_t) -1: all of them */
unsigned overrides_count_holds(Overrides *o, uid_t uid);
/* Ends a hold; returns whether there was one. Does not call `released`. */
bool overrides_release_hold(Overrides *o, uint64_t hold);

/* For ClassifyInput: unit or path → ClassChoice*, and path → ClassChoice*
 * (the newest hold on a path wins). Owned by the Overrides. */
GHashTable *overrides_by_target(Overrides *o);
GHashTable *overrides_holds(Overrides *o);
