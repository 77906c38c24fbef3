/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

/* /run/fridge/frozen: every cgroup fridged froze, written (and fsynced)
 * before the freeze, so a restarted fridged, or `fridged --thaw-all`, thaws
 * exactly those. One relative cgroup path per line. */

typedef struct Ledger Ledger;

/* Creates DIR (0755) if needed; the file is DIR/frozen. */
int ledger_open(const char *dir, Ledger **ret);
Ledger *ledger_free(Ledger *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Ledger, ledger_free)

/* Appends the cgroups (NULL-terminated) and fsyncs once, before any of
 * their cgroup.freeze writes: one fsync a stage, not one a cgroup. */
int ledger_add(Ledger *l, char *const *cgroups);
/* Removes one line for each (rewrite to a temporary file, fsync, rename):
 * one rewrite for a whole thaw, not one a cgroup. */
int ledger_remove(Ledger *l, char *const *cgroups);
/* What the ledger holds now (NULL-terminated, g_strfreev). */
char **ledger_list(Ledger *l);

/* Thaws every cgroup in the ledger under the cgroup root fd that is still
 * frozen (cgroup.freeze reads 1), logs each one it thawed, skips and logs
 * entries that are malformed (absolute, "..") or gone, then empties the
 * ledger. Returns how many were thawed, or <0. */
int ledger_thaw_all(Ledger *l, int cgroup_fd);

/* Opens a cgroup path (cgroups_path_is_valid()) below the cgroup root fd
 * with open_dir_beneath(), refusing symlinks and non-directories, so no
 * ledger line or caller can lead a write outside the cgroup mount. Returns
 * an O_PATH directory fd (close it), or <0 (-EINVAL for an invalid path). */
int ledger_cgroup_open(int cgroup_fd, const char *cgroup);
