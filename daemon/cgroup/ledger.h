/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* /run/fridge/frozen: every cgroup fridged froze, written (and fsynced)
 * before the freeze, so a restarted fridged, or `fridged --thaw-all`, thaws
 * exactly those. Format 2: a "fridge-ledger 2" line, then "ID PATH" a line:
 * the cgroup's id (the inode of its directory) and its relative path; only
 * a cgroup whose id still matches is thawed, so one removed and made again
 * under the same name is left alone (and logged). Format 1 (an older
 * fridged's: one path a line, no header) is still read, its entries with
 * id 0, "not recorded", thawed by path as that fridged would have: /run is
 * a tmpfs, so such a ledger outlives only an upgrade, not a reboot. */

typedef struct Ledger Ledger;

/* Creates DIR (0755) if needed; the file is DIR/frozen. */
int ledger_open(const char *dir, Ledger **ret);
Ledger *ledger_free(Ledger *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Ledger, ledger_free)

/* Appends the cgroups (NULL-terminated) with their ids (ids[i] for
 * cgroups[i]: st_ino of the directory fd the caller freezes through; NULL
 * or 0: not recorded) and fsyncs once, before any of their cgroup.freeze
 * writes: one fsync a stage, not one a cgroup. */
int ledger_add(Ledger *l, char *const *cgroups, const uint64_t *ids);
/* Removes one line for each (rewrite to a temporary file, fsync, rename):
 * one rewrite for a whole thaw, not one a cgroup. */
int ledger_remove(Ledger *l, char *const *cgroups);
/* The paths the ledger holds now (NULL-terminated, g_strfreev). */
char **ledger_list(Ledger *l);

/* Thaws every cgroup in the ledger under the cgroup root fd that is still
 * frozen (cgroup.freeze reads 1) and still has the recorded id, logs each
 * one it thawed, skips and logs entries that are malformed (absolute, ".."),
 * gone or another cgroup now (path and both ids), then empties the
 * ledger. Returns how many were thawed, or <0. */
int ledger_thaw_all(Ledger *l, int cgroup_fd);

/* Opens a cgroup path (cgroups_path_is_valid()) below the cgroup root fd
 * with open_dir_beneath(), refusing symlinks and non-directories, so no
 * ledger line or caller can lead a write outside the cgroup mount. Returns
 * an O_PATH directory fd (close it), or <0 (-EINVAL for an invalid path). */
int ledger_cgroup_open(int cgroup_fd, const char *cgroup);

/* Whether the directory fd (`path`, for the log) is still the cgroup of id
 * `id`: a cgroup removed and made again under the same name has a new id
 * (inode), and is someone else's to thaw; that is logged with the path and
 * both ids. Id 0 (not recorded, an older fridged's ledger): by path, as
 * that fridged would have. */
bool ledger_cgroup_is(int fd, const char *path, uint64_t id);
