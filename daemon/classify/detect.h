/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

/* Detection of data cleaners, re-run at every prepare: FUSE servers (a
 * process holding /dev/fuse open) and processes blocked in sync, fsync,
 * fdatasync, syncfs, msync or sync_file_range (the PF_SYNCTHREAD idea). */

/* /proc/PID/syscall: "NR arg… sp pc", "running", or "-1 sp pc" (not in a
 * syscall). *ret_nr is the number; -ENODATA for running/-1; -EBADMSG. */
int detect_parse_syscall(const char *text, long *ret_nr);

/* Whether the syscall number is one of the sync family. */
bool detect_syscall_is_sync(long nr);

/* Whether any fd of PID (under the proc root) is /dev/fuse. */
bool detect_holds_dev_fuse(int proc_fd, pid_t pid);

/* The FUSE mount point a server named `comm` most likely serves: a mount of
 * type "fuse.COMM" (or "fuseblk"/"fuse" with source COMM); NULL if none.
 * When several match, the one named in the server's arguments `args`
 * (NULL-terminated, may be NULL) wins: servers take their mount point on
 * the command line. `mounts` holds MountEntry* (parse.h). */
const char *detect_fuse_mount_for(const GPtrArray *mounts, const char *comm, char *const *args);

/* Who may read what a detection's reason names (a pid, a command, a mount
 * point: what /proc shows only to the process's owner): that owner (the
 * owner of PROC/PID, as the kernel sees it: a process that changed its
 * uids or is not dumpable is root's) and root. Anyone else reads
 * `redacted`: pid 0, and FRIDGE_PLAN_HIDDEN for the command and the mount
 * point. */
typedef struct PrivateReason {
        uid_t owner;
        char *redacted;
} PrivateReason;

/* reason → PrivateReason*, both owned */
GHashTable *detect_private_reasons_new(void);
/* What `caller` may read of `reason`: the reason, or its redacted form */
const char *detect_reason_for(GHashTable *private_reasons, const char *reason, uid_t caller);

/* Looks at the processes of one cgroup. Returns 1 and a reason (g_free) when
 * one is a FUSE server ("FUSE server sshfs (pid 123) of /mnt/x") or is in a
 * sync call ("syncing: pid 123 (tar) in fsync"), 0 when none is, <0 on
 * errors reading cgroup.procs. Processes that vanish meanwhile are skipped.
 * The reason's owner and redacted form go to `private_reasons` (may be NULL). */
int detect_cgroup(int cgroup_fd, int proc_fd, const char *cgroup_path, const GPtrArray *mounts,
                  GHashTable *private_reasons, char **ret_reason);

/* The pids of a cgroup (cgroup.procs below the cgroup root fd). */
int detect_read_pids(int cgroup_fd, const char *cgroup_path, GArray **ret_pids);
