/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "detect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroups.h"
#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "util.h"

static bool is_hex_word(const char *w) {
        if (!g_str_has_prefix(w, "0x") || !w[2])
                return false;
        for (const char *p = w + 2; *p; p++)
                if (!g_ascii_isxdigit(*p))
                        return false;
        return true;
}

int detect_parse_syscall(const char *text, long *ret_nr) {
        if (!text)
                return -EBADMSG;
        g_autofree char *t = g_strstrip(g_strdup(text));
        if (strcmp(t, "running") == 0)
                return -ENODATA;

        g_auto(GStrv) words = g_strsplit_set(t, " \t", -1);
        if (!words[0] || !*words[0])
                return -EBADMSG;

        char *end;
        errno = 0;
        long nr = strtol(words[0], &end, 10);
        if (errno != 0 || *end || nr < -1 || !g_ascii_isdigit(words[0][words[0][0] == '-']))
                return -EBADMSG;
        /* The rest is arguments, stack and program counter: all "0x…" */
        for (char **w = words + 1; *w; w++)
                if (**w && !is_hex_word(*w))
                        return -EBADMSG;
        if (nr == -1)
                return -ENODATA; /* blocked, but not in a system call */

        *ret_nr = nr;
        return 0;
}

/* The name a person knows the call by, or NULL when it cleans no data. */
static const char *sync_syscall_name(long nr) {
        /* Every architecture has the first five; 32-bit ARM has only the
         * second sync_file_range, x86 only the first */
        static const struct {
                long nr;
                const char *name;
        } calls[] = {
                { SYS_sync, "sync" },
                { SYS_fsync, "fsync" },
                { SYS_fdatasync, "fdatasync" },
                { SYS_syncfs, "syncfs" },
                { SYS_msync, "msync" },
#ifdef SYS_sync_file_range
                { SYS_sync_file_range, "sync_file_range" },
#endif
#ifdef SYS_sync_file_range2
                { SYS_sync_file_range2, "sync_file_range2" },
#endif
        };
        for (size_t i = 0; i < ELEMENTSOF(calls); i++)
                if (calls[i].nr == nr)
                        return calls[i].name;
        return NULL;
}

bool detect_syscall_is_sync(long nr) {
        return sync_syscall_name(nr) != NULL;
}

static bool fd_is_dev_fuse(int dir_fd, const char *name) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dir_fd, name, target, sizeof(target) - 1);
        if (n < 0)
                return false; /* closed meanwhile, or not ours to look at */
        target[n] = '\0';
        return strcmp(target, "/dev/fuse") == 0;
}

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

bool detect_holds_dev_fuse(int proc_fd, pid_t pid) {
        char path[64];
        snprintf(path, sizeof(path), "%d/fd", (int) pid);

        int fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return false; /* gone, or another user's process without CAP_SYS_PTRACE */
        _cleanup_(closedirp) DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return false;
        }

        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_name[0] == '.')
                        continue;
                if (fd_is_dev_fuse(dirfd(d), de->d_name))
                        return true;
        }
        return false;
}

/* The kernel cuts comm to 15 characters, the subtype of the mount is whole. */
static bool name_matches_comm(const char *name, const char *comm) {
        size_t n = strlen(comm);
        if (n >= 15)
                return strncmp(name, comm, n) == 0;
        return strcmp(name, comm) == 0;
}

static bool mount_serves(const MountEntry *m, const char *comm) {
        if (!m->fstype)
                return false;
        /* "fuse.sshfs" names its server; plain "fuse" mounts only by their source */
        if (g_str_has_prefix(m->fstype, "fuse."))
                return name_matches_comm(m->fstype + 5, comm);
        return (strcmp(m->fstype, "fuse") == 0 || strcmp(m->fstype, "fuseblk") == 0) && m->source &&
               name_matches_comm(m->source, comm);
}

static bool named_in(char *const *args, const char *mount_point) {
        for (char *const *a = args; a && *a; a++) {
                g_autofree char *canon = g_canonicalize_filename(*a, "/");
                if (strcmp(canon, mount_point) == 0)
                        return true;
        }
        return false;
}

const char *detect_fuse_mount_for(const GPtrArray *mounts, const char *comm, char *const *args) {
        if (!mounts || !comm || !*comm)
                return NULL;

        const char *first = NULL;
        for (guint i = 0; i < mounts->len; i++) {
                const MountEntry *m = mounts->pdata[i];
                if (!mount_serves(m, comm))
                        continue;
                if (named_in(args, m->mount_point))
                        return m->mount_point;
                if (!first)
                        first = m->mount_point;
        }
        return first;
}

/* PROC/PID/cmdline as a strv (empty on errors) */
static char **read_args(int proc_fd, pid_t pid) {
        char path[64];
        snprintf(path, sizeof(path), "%d/cmdline", (int) pid);
        _cleanup_close_ int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
        g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
        char buf[4096];
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n > 0)
                buf[n] = '\0'; /* a truncated last argument still ends */
        for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t) strlen(buf + i) + 1)
                g_ptr_array_add(args, g_strdup(buf + i));
        g_ptr_array_add(args, NULL);
        return (char **) g_ptr_array_free(g_steal_pointer(&args), FALSE);
}

static bool cgroup_path_is_root(const char *p) {
        return !p || !*p || strcmp(p, ".") == 0 || strcmp(p, "/") == 0;
}

int detect_read_pids(int cgroup_fd, const char *cgroup_path, GArray **ret_pids) {
        /* The path may come from a caller: never let it leave the cgroup root */
        if (!cgroup_path_is_root(cgroup_path) && !cgroups_path_is_valid(cgroup_path))
                return -EINVAL;

        g_autofree char *procs = cgroup_path_is_root(cgroup_path)
                                         ? g_strdup("cgroup.procs")
                                         : g_build_filename(cgroup_path, "cgroup.procs", NULL);
        g_autofree char *text = NULL;
        int r = read_file_at(cgroup_fd, procs, &text);
        if (r < 0)
                return r;

        g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                if (!**l)
                        continue;
                uint32_t v;
                if (parse_uint32(*l, &v) < 0 || v == 0 || v > INT_MAX)
                        return -EBADMSG;
                pid_t pid = (pid_t) v;
                g_array_append_val(pids, pid);
        }
        *ret_pids = g_steal_pointer(&pids);
        return 0;
}

/* A process may vanish, or belong to someone we may not inspect: both are
 * normal while looking at a live system, and not worth a word. */
static bool errno_is_skippable(int r) {
        return r == -ENOENT || r == -ESRCH || r == -EACCES || r == -EPERM;
}

static char *read_comm(int proc_fd, pid_t pid) {
        char path[64];
        g_autofree char *comm = NULL;

        snprintf(path, sizeof(path), "%d/comm", (int) pid);
        if (read_file_at(proc_fd, path, &comm) < 0)
                return g_strdup("?");
        strstrip_right(comm);
        return g_steal_pointer(&comm);
}

/* The sync call pid is blocked in, or NULL. */
static const char *pid_sync_call(int proc_fd, pid_t pid) {
        char path[64];
        g_autofree char *text = NULL;
        long nr;

        snprintf(path, sizeof(path), "%d/syscall", (int) pid);
        int r = read_file_at(proc_fd, path, &text);
        if (r < 0) {
                if (!errno_is_skippable(r))
                        log_debug_errno(r, "Cannot read /proc/%d/syscall, not looking for sync calls: %m", (int) pid);
                return NULL;
        }
        if (detect_parse_syscall(text, &nr) < 0)
                return NULL;
        return sync_syscall_name(nr);
}

/* 1 and the reason when pid is a data cleaner, else 0. */
static int detect_pid(int proc_fd, pid_t pid, const GPtrArray *mounts, char **ret_reason) {
        if (detect_holds_dev_fuse(proc_fd, pid)) {
                g_autofree char *comm = read_comm(proc_fd, pid);
                g_auto(GStrv) args = read_args(proc_fd, pid);
                const char *mount = detect_fuse_mount_for(mounts, comm, args);
                *ret_reason = mount ? g_strdup_printf("FUSE server %s (pid %d) of %s", comm, (int) pid, mount)
                                    : g_strdup_printf("FUSE server %s (pid %d)", comm, (int) pid);
                return 1;
        }

        const char *call = pid_sync_call(proc_fd, pid);
        if (call) {
                g_autofree char *comm = read_comm(proc_fd, pid);
                *ret_reason = g_strdup_printf("syncing: pid %d (%s) in %s", (int) pid, comm, call);
                return 1;
        }
        return 0;
}

int detect_cgroup(int cgroup_fd, int proc_fd, const char *cgroup_path, const GPtrArray *mounts,
                  char **ret_reason) {
        g_autoptr(GArray) pids = NULL;
        int r = detect_read_pids(cgroup_fd, cgroup_path, &pids);
        if (r < 0)
                return r;

        for (guint i = 0; i < pids->len; i++) {
                g_autofree char *reason = NULL;
                if (detect_pid(proc_fd, g_array_index(pids, pid_t, i), mounts, &reason) > 0) {
                        if (ret_reason)
                                *ret_reason = g_steal_pointer(&reason);
                        return 1;
                }
        }
        return 0;
}
