/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "detect-cache.h"
#include "parse.h"

/* Detection of data cleaners, re-run at every prepare: FUSE servers (a
 * process holding /dev/fuse open) and processes blocked in sync, fsync,
 * fdatasync, syncfs, msync or sync_file_range (the PF_SYNCTHREAD idea). */

/* /proc/PID/syscall: "NR arg… sp pc", "running", or "-1 sp pc" (not in a
 * syscall). *ret_nr is the number; -ENODATA for running/-1; -EBADMSG. */
int detect_parse_syscall(const char *text, long *ret_nr);

/* The same, also giving the six arguments (which must be there). */
#define DETECT_SYSCALL_ARGS 6
int detect_parse_syscall_args(const char *text, long *ret_nr, uint64_t ret_args[DETECT_SYSCALL_ARGS]);

/* Whether the syscall number is one of the sync family. */
bool detect_syscall_is_sync(long nr);

/* Whether any fd of PID (under the proc root) is /dev/fuse. */
bool detect_holds_dev_fuse(int proc_fd, pid_t pid);

/* Whether a mount of this type is FUSE: "fuse", "fuseblk", "fuse.NAME". */
bool detect_fstype_is_fuse(const char *fstype);

/* The FUSE mount point a server named `comm` most likely serves, NULL if
 * none: first the last of its arguments `args` (NULL-terminated, may be
 * NULL; relative ones taken from `cwd`, may be NULL) that is a mount point
 * of type "fuse.COMM" or of plain "fuse"/"fuseblk" (which names no server:
 * bindfs, servers started by a wrapper); else a mount of type "fuse.COMM"
 * or "fuse"/"fuseblk" with source COMM. `mounts` holds MountEntry*
 * (parse.h). */
const char *detect_fuse_mount_for(const GPtrArray *mounts, const char *comm, char *const *args, const char *cwd);

/* readlinkat() into a new string, NULL on errors. */
char *detect_readlink_at(int dir_fd, const char *path);

/* The deepest of `mounts` (MountEntry*) holding the absolute `path`, the
 * topmost of several at one point; NULL if none. */
const MountEntry *detect_mount_of_path(const GPtrArray *mounts, const char *path);

/* The mount of the file the task TID (under the proc root) works on in the
 * system call it is blocked in, from what CAP_SYS_PTRACE may read:
 * PROC/TID/syscall names the call and its arguments; an fd argument leads
 * to PROC/TID/fdinfo/FD's mnt_id, a path argument is read from
 * PROC/TID/mem and resolved against PROC/TID/cwd or the dirfd. NULL when
 * the task is in no such call, or it cannot be told. An entry of
 * `mounts`, the task's own mount table. */
const MountEntry *detect_blocked_mount(int proc_fd, const char *tid, const GPtrArray *mounts);

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

/* The owner of PROC/PID as above; (uid_t) -1 when it cannot be told */
uid_t detect_pid_owner(int proc_fd, pid_t pid);
/* Whether logind has `uid` active on a seat: the user at the screen */
bool detect_uid_at_seat(uid_t uid);
/* Files `reason` as private to `owner`, with `redacted` (taken) for the
 * others; private_reasons may be NULL (then redacted is freed) */
void detect_add_private(GHashTable *private_reasons, const char *reason, uid_t owner, char *redacted);
/* PROC/PID/comm without its newline, "?" when unreadable */
char *detect_read_comm(int proc_fd, pid_t pid);
/* PROC/PID/cmdline as a strv, argv[0] first, its first 4 KiB (empty on
 * errors; g_strfreev) */
char **detect_read_args(int proc_fd, pid_t pid);

/* reason → PrivateReason*, both owned */
GHashTable *detect_private_reasons_new(void);
/* What `caller` may read of `reason`: the reason, or its redacted form */
const char *detect_reason_for(GHashTable *private_reasons, const char *reason, uid_t caller);

/* True only when fusectl's SYSFS/sys/fs/fuse/connections is there and
 * empty: no FUSE file system is mounted in any namespace. Unknown (no
 * fusectl, unreadable) is false. */
bool detect_no_fuse_connections(int sysfs_fd);

/* Looks at the processes of one cgroup. Returns 1 and a reason (g_free) when
 * one is a FUSE server ("FUSE server sshfs (pid 123) of /mnt/x") or is in a
 * sync call ("syncing: pid 123 (tar) in fsync"), 0 when none is, <0 on
 * errors reading cgroup.procs. Processes that vanish meanwhile are skipped.
 * The reason's owner and redacted form go to `private_reasons` (may be NULL).
 * `fuse` false: no FUSE connection exists, no fd table is read for
 * /dev/fuse. Only a task in state D (stat) has its syscall read. */
int detect_cgroup(int cgroup_fd, int proc_fd, const char *cgroup_path, const GPtrArray *mounts, bool fuse,
                  GHashTable *private_reasons, char **ret_reason);

/* What detect_procs() looks with, beyond the pids */
typedef struct DetectInput {
        int proc_fd;
        const GPtrArray *mounts;        /* may be NULL */
        bool fuse;                      /* as detect_cgroup()'s */
        GHashTable *private_reasons;    /* may be NULL */
        DetectCache *cache;             /* may be NULL: every fd table is read */
        uint64_t gen;                   /* detect_cache_begin()'s */
} DetectInput;

/* detect_cgroup() over the text of a cgroup.procs already read: a process
 * the cache knows (same pid and start time, same token) has its fd table
 * taken from it; its stat is read all the same (state D: a sync call). */
int detect_procs(const DetectInput *in, const char *procs, char **ret_reason);

/* fusectl's entries in SYSFS/sys/fs/fuse/connections, one a line in
 * directory order ("" when there is none); NULL when fusectl is not there
 * or unreadable (then nothing tells whether FUSE is mounted). */
char *detect_fuse_connections(int sysfs_fd);

/* The pids of the text of a cgroup.procs; -EBADMSG on a bad line. */
int detect_parse_pids(const char *text, GArray **ret_pids);

/* The pids of a cgroup (cgroup.procs below the cgroup root fd). */
int detect_read_pids(int cgroup_fd, const char *cgroup_path, GArray **ret_pids);
