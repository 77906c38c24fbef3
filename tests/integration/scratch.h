/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scratch cgroups for tests on the real cgroup v2 freezer: one root
 * "fridge-itest-PID-N" below the cgroup2 mount (found in mountinfo, never
 * assumed), child cgroups below it, and processes the test started in them.
 * scratch_free() (also run from an atexit handler) thaws every scratch
 * cgroup, kills the processes by PID and removes the cgroups, so nothing is
 * left frozen whatever the test did.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

typedef struct Scratch {
        char *mount;       /* the cgroup2 mount point */
        char *root;        /* relative: fridge-itest-PID-N */
        GPtrArray *cgroups; /* relative paths created, in creation order */
        GArray *pids;      /* processes started, pid_t */
} Scratch;

/* Why scratch cgroups cannot be made here, or NULL. */
const char *scratch_skip_reason(void);

Scratch *scratch_new(void);
void scratch_free(Scratch *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Scratch, scratch_free)

/* mkdir ROOT/name (one level); returns the relative path (owned by s). */
const char *scratch_add(Scratch *s, const char *name);
/* mkdir PARENT/name, PARENT a scratch cgroup (relative, as returned) */
const char *scratch_add_in(Scratch *s, const char *parent, const char *name);

/* A child that moves itself into `cgroup` (relative) and then execs argv
 * (NULL argv: pause() forever). Returns once it is in the cgroup. */
pid_t scratch_spawn(Scratch *s, const char *cgroup, char *const *argv);

/* Xvfb in `cgroup` with one screen of `geometry` (WxHxDEPTH); its
 * display number, once it listens */
unsigned scratch_spawn_xvfb(Scratch *s, const char *cgroup, const char *geometry);

/* "frozen 1" in cgroup.events */
bool scratch_is_frozen(Scratch *s, const char *cgroup);

/* Absolute path of a relative cgroup path. */
char *scratch_abs(Scratch *s, const char *cgroup);

/* A thread that reads cgroup.freeze and cgroup.events of each of
 * `cgroups` (relative, NULL-terminated) over and over, so that fridged's
 * write of 1 or the kernel's "frozen 1" is seen between two reads at the
 * latest; scratch_watch_end() stops it and fails the test when one was
 * seen frozen. */
typedef struct ScratchWatch ScratchWatch;
ScratchWatch *scratch_watch_start(Scratch *s, const char *const *cgroups);
void scratch_watch_end(ScratchWatch *w);

/* Two scratch cgroups, a.service and b.service, one sleeping process in
 * each: what a test of the freezing order needs least */
typedef struct ScratchPair {
        Scratch *s;
        const char *a, *b;
} ScratchPair;

void scratch_pair_new(ScratchPair *ret);
