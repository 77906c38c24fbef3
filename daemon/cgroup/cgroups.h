/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

/* Where the cgroup v2 hierarchy is, and which cgroup a process is in. */

/* The mount point of the first cgroup2 mount in PROC/self/mountinfo (on a
 * hybrid layout it is below /sys/fs/cgroup, not at it). */
int cgroups_find_mount(int proc_fd, char **ret);

/* The cgroup v2 path of PID, relative to the mount ("" for the root),
 * from PROC/PID/cgroup's "0::/…" line. */
int cgroups_of_pid(int proc_fd, pid_t pid, char **ret);

/* Whether `path` is `root` or below it ("a/b" is below "a", "ab" is not). */
bool cgroups_is_below(const char *path, const char *root);

/* Whether any of `roots` holds `path`. */
bool cgroups_in_roots(const char *path, char *const *roots);

/* The longest cgroup path fridge takes: the kernel names none longer in
 * /proc/PID/cgroup. */
#define CGROUPS_PATH_MAX 4096

/* A cgroup path relative to the mount, as the config, the callers and the
 * ledger give them: not empty, no leading '/', no "..", "." or empty
 * components, no newline (the ledger is one path a line; the kernel makes
 * no cgroup with one), at most CGROUPS_PATH_MAX bytes. The bytes are not
 * checked otherwise: a cgroup's name can be any but '/' and NUL, UTF-8 or
 * not (cgroups_escape() shows them). */
bool cgroups_path_is_valid(const char *path);

/* The path for people and D-Bus, whose strings must be UTF-8: a byte that
 * is not part of a UTF-8 character, or is a control character, becomes
 * \xNN as systemd writes it; the rest is as it is. g_free(). */
char *cgroups_escape(const char *path);

/* A caller-given cgroup path is usable: valid, under one of the roots, and
 * a real directory (not a symlink) below the cgroup root fd, every
 * component included. */
int cgroups_check_path(int cgroup_fd, const char *path, char *const *roots);
