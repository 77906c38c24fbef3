/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

/* What blocks a freeze, named from /proc off the loop (see blockers.c) */
typedef struct Blockers Blockers;

/* Takes duplicates of the fds: the snapshot outlives the freezer's stage */
int blockers_new(int proc_fd, Blockers **ret);
int blockers_add(Blockers *b, int cgroup_dir_fd, const char *shown);
Blockers *blockers_free(Blockers *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Blockers, blockers_free)

/* For each cgroup, the tasks that block it: "user.slice/a.service: pid 123
 * (cat) state D wchan fuse_wait_answer on FUSE mount /mnt/x; …" (g_free).
 * May block for as long as a /proc read does: call it on a worker. */
char *blockers_describe(Blockers *b);
