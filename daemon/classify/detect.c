/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "detect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <systemd/sd-login.h>

#include "cgroups.h"
#include "fileio.h"
#include "fridge-config.h"
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

int detect_parse_syscall_args(const char *text, long *ret_nr, uint64_t ret_args[DETECT_SYSCALL_ARGS]) {
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
        size_t n = 0;
        for (char **w = words + 1; *w; w++) {
                if (!**w)
                        continue;
                if (!is_hex_word(*w))
                        return -EBADMSG;
                if (ret_args && n < DETECT_SYSCALL_ARGS)
                        ret_args[n] = g_ascii_strtoull(*w + 2, NULL, 16);
                n++;
        }
        if (nr == -1)
                return -ENODATA; /* blocked, but not in a system call */
        if (ret_args && n < DETECT_SYSCALL_ARGS + 2)
                return -EBADMSG; /* six arguments, the stack and the program counter */

        *ret_nr = nr;
        return 0;
}

int detect_parse_syscall(const char *text, long *ret_nr) {
        return detect_parse_syscall_args(text, ret_nr, NULL);
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

char *detect_readlink_at(int dir_fd, const char *path) {
        char buf[PATH_MAX];
        ssize_t n = readlinkat(dir_fd, path, buf, sizeof(buf) - 1);
        if (n < 0)
                return NULL; /* closed meanwhile, or not ours to look at */
        buf[n] = '\0';
        return g_strdup(buf);
}

static bool fd_is_dev_fuse(int dir_fd, const char *name) {
        g_autofree char *target = detect_readlink_at(dir_fd, name);
        return target && strcmp(target, "/dev/fuse") == 0;
}

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

bool detect_holds_dev_fuse(int proc_fd, pid_t pid) {
        char path[64];
        snprintf(path, sizeof(path), "%d/fd", (int) pid);

        _cleanup_(closedirp) DIR *d = opendir_at(proc_fd, path);
        if (!d)
                return false; /* gone, or another user's process without CAP_SYS_PTRACE */

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

bool detect_fstype_is_fuse(const char *t) {
        return t && (g_str_equal(t, "fuse") || g_str_equal(t, "fuseblk") || g_str_has_prefix(t, "fuse."));
}

/* "fuse" and "fuseblk" do not name their server (the source is whatever
 * the server chose: bindfs puts its source directory there). */
static bool fstype_is_plain_fuse(const char *t) {
        return t && (g_str_equal(t, "fuse") || g_str_equal(t, "fuseblk"));
}

static bool mount_serves(const MountEntry *m, const char *comm) {
        if (!m->fstype)
                return false;
        /* "fuse.sshfs" names its server; plain "fuse" mounts only by their source */
        if (g_str_has_prefix(m->fstype, "fuse."))
                return name_matches_comm(m->fstype + 5, comm);
        return fstype_is_plain_fuse(m->fstype) && m->source && name_matches_comm(m->source, comm);
}

/* The topmost mount at exactly `path` that `comm` may serve: one whose type
 * names comm, or a plain "fuse" one, which names no server at all. */
static const MountEntry *mount_at(const GPtrArray *mounts, const char *path, const char *comm) {
        for (guint i = mounts->len; i > 0; i--) {
                const MountEntry *m = mounts->pdata[i - 1];
                if (strcmp(m->mount_point, path) == 0 && (mount_serves(m, comm) || fstype_is_plain_fuse(m->fstype)))
                        return m;
        }
        return NULL;
}

/* The one mount `comm` may serve whose point ends in the relative path
 * `rel` ("mirror" of "/home/me/mirror"), NULL if none or several. */
static const MountEntry *mount_ending_in(const GPtrArray *mounts, const char *rel, const char *comm) {
        g_autofree char *canon = g_canonicalize_filename(rel, "/");
        if (g_str_equal(canon, "/"))
                return NULL;
        const MountEntry *found = NULL;
        for (guint i = 0; i < mounts->len; i++) {
                const MountEntry *m = mounts->pdata[i];
                if (!g_str_has_suffix(m->mount_point, canon) || mount_at(mounts, m->mount_point, comm) != m)
                        continue;
                if (found)
                        return NULL;
                found = m;
        }
        return found;
}

/* The mount a server's command line names. A plain "fuse" mount carries no
 * server name, and /dev/fuse, once mounted, says nothing of its connection
 * (its fdinfo has no connection number; /sys/fs/fuse/connections/N names
 * no process), so the arguments are the one link that holds for mirrors
 * such as bindfs and for servers started through a wrapper (exec'd or
 * not, the holder of /dev/fuse is the server with its own arguments).
 * The last argument first: servers take the mount point last ("bindfs SRC
 * MNT", "sshfs HOST: MNT"), and SRC may itself be a FUSE mount. Resolved
 * lexically, as stat() on a held FUSE mount would hang. A relative
 * argument is first taken from the cwd, but servers move away once
 * mounted (libfuse's daemonizing goes to "/", bindfs into its source), so
 * then it is the one such mount point that ends in it. */
static const char *mount_in_args(const GPtrArray *mounts, const char *comm, char *const *args, const char *cwd) {
        guint n = args ? g_strv_length((char **) args) : 0;
        for (guint i = n; i > 1; i--) {
                const char *a = args[i - 1];
                g_autofree char *canon = g_canonicalize_filename(a, cwd && *cwd == '/' ? cwd : "/");
                const MountEntry *m = mount_at(mounts, canon, comm);
                if (!m && a[0] != '/')
                        m = mount_ending_in(mounts, a, comm);
                if (m)
                        return m->mount_point;
        }
        return NULL;
}

const char *detect_fuse_mount_for(const GPtrArray *mounts, const char *comm, char *const *args, const char *cwd) {
        if (!mounts || !comm || !*comm)
                return NULL;

        const char *named = mount_in_args(mounts, comm, args, cwd);
        if (named)
                return named;
        for (guint i = 0; i < mounts->len; i++) {
                const MountEntry *m = mounts->pdata[i];
                if (mount_serves(m, comm))
                        return m->mount_point;
        }
        return NULL;
}

char **detect_read_args(int proc_fd, pid_t pid) {
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

int detect_parse_pids(const char *text, GArray **ret_pids) {
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
        return detect_parse_pids(text, ret_pids);
}

/* A process may vanish, or belong to someone we may not inspect: both are
 * normal while looking at a live system, and not worth a word. */
static bool errno_is_skippable(int r) {
        return r == -ENOENT || r == -ESRCH || r == -EACCES || r == -EPERM;
}

char *detect_read_comm(int proc_fd, pid_t pid) {
        char path[64];
        g_autofree char *comm = NULL;

        snprintf(path, sizeof(path), "%d/comm", (int) pid);
        if (read_file_at_single(proc_fd, path, &comm) < 0)
                return g_strdup("?");
        strstrip_right(comm);
        return g_steal_pointer(&comm);
}

/* The sync call pid is blocked in, or NULL. A task waiting in a sync call
 * waits on writeback, uninterruptibly: only then (state D in its `stat`,
 * the cheaper read) is its syscall worth reading, which waits for a
 * running task to stop. */
static const char *pid_sync_call(int proc_fd, pid_t pid, const char *stat) {
        char path[64];
        g_autofree char *text = NULL;
        long nr;

        if (!stat || parse_stat_state(stat) != 'D')
                return NULL;
        snprintf(path, sizeof(path), "%d/syscall", (int) pid);
        int r = read_file_at_single(proc_fd, path, &text);
        if (r < 0) {
                if (!errno_is_skippable(r))
                        log_debug_errno(r, "Cannot read /proc/%d/syscall, not looking for sync calls: %m", (int) pid);
                return NULL;
        }
        if (detect_parse_syscall(text, &nr) < 0)
                return NULL;
        return sync_syscall_name(nr);
}

static void private_reason_free(gpointer p) {
        PrivateReason *r = p;
        g_free(r->redacted);
        g_free(r);
}

GHashTable *detect_private_reasons_new(void) {
        return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, private_reason_free);
}

const char *detect_reason_for(GHashTable *private_reasons, const char *reason, uid_t caller) {
        const PrivateReason *p = private_reasons ? g_hash_table_lookup(private_reasons, reason) : NULL;
        /* (uid_t) -1: a caller or an owner that could not be told is nobody's */
        return !p || caller == 0 || (caller != (uid_t) -1 && caller == p->owner) ? reason : p->redacted;
}

/* The one reason text, said whole (pid, comm, mount) or hidden (0, NULL, NULL) */
static char *fuse_reason(const char *comm, pid_t pid, const char *mount) {
        return mount ? g_strdup_printf("FUSE server %s (pid %d) of %s", comm, (int) pid, mount)
                     : g_strdup_printf("FUSE server %s (pid %d)", comm, (int) pid);
}

static char *sync_reason(const char *comm, pid_t pid, const char *call) {
        return g_strdup_printf("syncing: pid %d (%s) in %s", (int) pid, comm, call);
}

/* Unreadable (gone meanwhile) is nobody's: then only root reads it */
uid_t detect_pid_owner(int proc_fd, pid_t pid) {
        char path[32];
        struct stat st;
        snprintf(path, sizeof(path), "%d", (int) pid);
        return fstatat(proc_fd, path, &st, 0) < 0 ? (uid_t) -1 : st.st_uid;
}

/* sd_uid_get_seats() reads the user's own record (ACTIVE_SEATS=);
 * sd_uid_is_on_seat(uid, 1, NULL) would compare with the caller's own
 * seat, and fridged, a system service, has none: -ENODATA for everyone */
bool detect_uid_at_seat(uid_t uid) {
        return uid != (uid_t) -1 && sd_uid_get_seats(uid, 1, NULL) > 0;
}

void detect_add_private(GHashTable *private_reasons, const char *reason, uid_t owner, char *redacted) {
        PrivateReason *p = g_new0(PrivateReason, 1);
        *p = (PrivateReason) { .owner = owner, .redacted = redacted };
        if (private_reasons)
                g_hash_table_replace(private_reasons, g_strdup(reason), p);
        else
                private_reason_free(p);
}

/* PROC/PID/mountinfo parsed, or NULL: the server's own view, in which its
 * arguments name its mount point. */
static GPtrArray *read_mounts(int proc_fd, const char *tid) {
        g_autofree char *path = g_strdup_printf("%s/mountinfo", tid);
        g_autofree char *text = NULL;
        GPtrArray *mounts = NULL;
        if (read_file_at_max(proc_fd, path, READ_FILE_UNBOUNDED, &text) < 0 || parse_mountinfo(text, &mounts) < 0)
                return NULL;
        return mounts;
}

static char *fuse_server_reason(int proc_fd, pid_t pid, const GPtrArray *mounts, GHashTable *private_reasons) {
        char tid[16], cwd_path[32];
        snprintf(tid, sizeof(tid), "%d", (int) pid);
        snprintf(cwd_path, sizeof(cwd_path), "%d/cwd", (int) pid);
        g_autofree char *comm = detect_read_comm(proc_fd, pid);
        g_auto(GStrv) args = detect_read_args(proc_fd, pid);
        g_autofree char *cwd = detect_readlink_at(proc_fd, cwd_path);
        g_autoptr(GPtrArray) own = read_mounts(proc_fd, tid);
        const char *mount = detect_fuse_mount_for(own ? own : mounts, comm, args, cwd);
        char *reason = fuse_reason(comm, pid, mount);
        detect_add_private(private_reasons, reason, detect_pid_owner(proc_fd, pid),
                    fuse_reason(FRIDGE_PLAN_HIDDEN, 0, mount ? FRIDGE_PLAN_HIDDEN : NULL));
        return reason;
}

#define FUSE_CTL_SUPER_MAGIC 0x65735543 /* linux/magic.h */

char *detect_fuse_connections(int sysfs_fd) {
        DIR *d = opendir_at(sysfs_fd, "sys/fs/fuse/connections");
        if (!d)
                return NULL;
        /* The directory is there whenever fuse is loaded, and empty until
         * fusectl is mounted on it: only fusectl's emptiness says "no FUSE
         * mount" (a guest without it classed its FUSE server early) */
        struct statfs sfs;
        if (fstatfs(dirfd(d), &sfs) < 0 || sfs.f_type != FUSE_CTL_SUPER_MAGIC) {
                closedir(d);
                return NULL;
        }
        GString *names = g_string_new(NULL);
        for (struct dirent *de; (de = readdir(d));)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        g_string_append_printf(names, "%s\n", de->d_name);
        closedir(d);
        return g_string_free(names, FALSE);
}

bool detect_no_fuse_connections(int sysfs_fd) {
        g_autofree char *names = detect_fuse_connections(sysfs_fd);
        return names && !*names;
}

/* Whether pid holds /dev/fuse: from the cache when it knows the process
 * (its start time from `stat`), else from its fd table */
static bool pid_holds_dev_fuse(const DetectInput *in, pid_t pid, const char *stat) {
        uint64_t start = 0;
        bool keyed = in->cache && stat && parse_stat_starttime(stat, &start) >= 0;
        int known = keyed ? detect_cache_lookup(in->cache, pid, start) : -ENOENT;
        if (known >= 0)
                return known;
        bool holds = detect_holds_dev_fuse(in->proc_fd, pid);
        if (keyed)
                detect_cache_store(in->cache, in->gen, pid, start, holds);
        return holds;
}

/* 1 and the reason when pid is a data cleaner, else 0. */
static int detect_pid(const DetectInput *in, pid_t pid, char **ret_reason) {
        const char *hidden = FRIDGE_PLAN_HIDDEN;
        char path[64];
        g_autofree char *stat = NULL;
        snprintf(path, sizeof(path), "%d/stat", (int) pid);
        if (read_file_at_single(in->proc_fd, path, &stat) < 0)
                g_clear_pointer(&stat, g_free); /* gone, or unreadable: its fd table is read all the same */

        if (in->fuse && pid_holds_dev_fuse(in, pid, stat)) {
                *ret_reason = fuse_server_reason(in->proc_fd, pid, in->mounts, in->private_reasons);
                return 1;
        }

        const char *call = pid_sync_call(in->proc_fd, pid, stat);
        if (call) {
                g_autofree char *comm = detect_read_comm(in->proc_fd, pid);
                *ret_reason = sync_reason(comm, pid, call);
                detect_add_private(in->private_reasons, *ret_reason, detect_pid_owner(in->proc_fd, pid),
                                   sync_reason(hidden, 0, call));
                return 1;
        }
        return 0;
}

static int detect_pids(const DetectInput *in, const GArray *pids, char **ret_reason) {
        for (guint i = 0; i < pids->len; i++) {
                g_autofree char *reason = NULL;
                if (detect_pid(in, g_array_index(pids, pid_t, i), &reason) > 0) {
                        if (ret_reason)
                                *ret_reason = g_steal_pointer(&reason);
                        return 1;
                }
        }
        return 0;
}

int detect_procs(const DetectInput *in, const char *procs, char **ret_reason) {
        g_autoptr(GArray) pids = NULL;
        int r = detect_parse_pids(procs, &pids);
        return r < 0 ? r : detect_pids(in, pids, ret_reason);
}

int detect_cgroup(int cgroup_fd, int proc_fd, const char *cgroup_path, const GPtrArray *mounts, bool fuse,
                  GHashTable *private_reasons, char **ret_reason) {
        g_autoptr(GArray) pids = NULL;
        int r = detect_read_pids(cgroup_fd, cgroup_path, &pids);
        if (r < 0)
                return r;
        DetectInput in = { .proc_fd = proc_fd, .mounts = mounts, .fuse = fuse, .private_reasons = private_reasons };
        return detect_pids(&in, pids, ret_reason);
}

/* ---- the mount a blocked system call works on ---- */

/* Where a call names its file: by the fd argument `fd`, or by the path
 * argument `path`, relative to the directory fd `fd` (the cwd when -1 or
 * AT_FDCWD). An empty or NULL path with a dirfd (AT_EMPTY_PATH,
 * utimensat's NULL) means the dirfd's own file. */
typedef struct FileCall {
        long nr;
        int8_t fd, path;
} FileCall;

#define ON_FD(name, i) { SYS_##name, i, -1 }
#define AT_PATH(name, d, p) { SYS_##name, d, p }
#define ON_PATH(name, p) { SYS_##name, -1, p }

static const FileCall file_calls[] = {
        ON_FD(read, 0), ON_FD(write, 0), ON_FD(pread64, 0), ON_FD(pwrite64, 0), ON_FD(readv, 0), ON_FD(writev, 0),
        ON_FD(preadv, 0), ON_FD(pwritev, 0), ON_FD(fsync, 0), ON_FD(fdatasync, 0), ON_FD(syncfs, 0),
        ON_FD(getdents64, 0), ON_FD(ftruncate, 0), ON_FD(fallocate, 0), ON_FD(fstatfs, 0), ON_FD(fgetxattr, 0),
        ON_FD(fsetxattr, 0), ON_FD(flistxattr, 0), ON_FD(fremovexattr, 0), ON_FD(flock, 0), ON_FD(fcntl, 0),
        ON_FD(ioctl, 0), ON_FD(lseek, 0), ON_FD(fchmod, 0), ON_FD(fchown, 0), ON_FD(fchdir, 0), ON_FD(splice, 0),
        ON_FD(sendfile, 1), ON_FD(copy_file_range, 0),
#ifdef SYS_preadv2
        ON_FD(preadv2, 0), ON_FD(pwritev2, 0),
#endif
#ifdef SYS_fstat
        ON_FD(fstat, 0),
#endif
#ifdef SYS_getdents
        ON_FD(getdents, 0),
#endif
#ifdef SYS_sync_file_range
        ON_FD(sync_file_range, 0),
#endif
#ifdef SYS_sync_file_range2
        ON_FD(sync_file_range2, 0),
#endif
        AT_PATH(openat, 0, 1), AT_PATH(faccessat, 0, 1), AT_PATH(mkdirat, 0, 1), AT_PATH(mknodat, 0, 1),
        AT_PATH(unlinkat, 0, 1), AT_PATH(readlinkat, 0, 1), AT_PATH(fchmodat, 0, 1), AT_PATH(fchownat, 0, 1),
        AT_PATH(utimensat, 0, 1), AT_PATH(linkat, 0, 1), AT_PATH(symlinkat, 1, 2), AT_PATH(renameat2, 0, 1),
        AT_PATH(execveat, 0, 1), AT_PATH(name_to_handle_at, 0, 1),
#ifdef SYS_newfstatat
        AT_PATH(newfstatat, 0, 1),
#endif
#ifdef SYS_fstatat64
        AT_PATH(fstatat64, 0, 1),
#endif
#ifdef SYS_statx
        AT_PATH(statx, 0, 1),
#endif
#ifdef SYS_openat2
        AT_PATH(openat2, 0, 1),
#endif
#ifdef SYS_faccessat2
        AT_PATH(faccessat2, 0, 1),
#endif
#ifdef SYS_renameat
        AT_PATH(renameat, 0, 1),
#endif
        ON_PATH(truncate, 0), ON_PATH(statfs, 0), ON_PATH(chdir, 0), ON_PATH(chroot, 0), ON_PATH(execve, 0),
        ON_PATH(getxattr, 0), ON_PATH(lgetxattr, 0), ON_PATH(setxattr, 0), ON_PATH(lsetxattr, 0),
        ON_PATH(listxattr, 0), ON_PATH(llistxattr, 0), ON_PATH(removexattr, 0), ON_PATH(lremovexattr, 0),
#ifdef SYS_open /* the calls only older architectures keep */
        ON_PATH(open, 0), ON_PATH(creat, 0), ON_PATH(stat, 0), ON_PATH(lstat, 0), ON_PATH(access, 0),
        ON_PATH(mkdir, 0), ON_PATH(rmdir, 0), ON_PATH(unlink, 0), ON_PATH(readlink, 0), ON_PATH(rename, 0),
        ON_PATH(link, 0), ON_PATH(symlink, 1), ON_PATH(mknod, 0), ON_PATH(chmod, 0), ON_PATH(chown, 0),
        ON_PATH(lchown, 0), ON_PATH(utimes, 0),
#endif
};

static const FileCall *file_call(long nr) {
        for (size_t i = 0; i < ELEMENTSOF(file_calls); i++)
                if (file_calls[i].nr == nr)
                        return &file_calls[i];
        return NULL;
}

/* An int argument: the kernel reads the low 32 bits of the register */
static int arg_int(uint64_t v) {
        return (int) (int32_t) (uint32_t) v;
}

/* The NUL-terminated string at `addr` in the task's memory, read through
 * PROC/TID/mem (ptrace access: what CAP_SYS_PTRACE gives). */
static char *read_task_string(int proc_fd, const char *tid, uint64_t addr) {
        char path[64];
        snprintf(path, sizeof(path), "%s/mem", tid);
        _cleanup_close_ int fd = addr > INT64_MAX ? -1 : openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        char buf[PATH_MAX];
        /* a path ending before an unmapped page comes back short, whole */
        ssize_t n = pread(fd, buf, sizeof(buf), (off_t) addr);
        if (n <= 0 || !memchr(buf, '\0', (size_t) n))
                return NULL;
        return g_strdup(buf);
}

const MountEntry *detect_mount_of_path(const GPtrArray *mounts, const char *path) {
        const MountEntry *best = NULL;
        for (guint i = 0; mounts && path && path[0] == '/' && i < mounts->len; i++) {
                const MountEntry *m = mounts->pdata[i];
                size_t n = strlen(m->mount_point);
                bool under = g_str_equal(m->mount_point, "/") ||
                             (strncmp(path, m->mount_point, n) == 0 && (path[n] == '\0' || path[n] == '/'));
                /* the later of two at one point is mounted on top */
                if (under && (!best || n >= strlen(best->mount_point)))
                        best = m;
        }
        return best;
}

/* The mount of the task's fd: fdinfo's mnt_id (exact, whatever the file is
 * called now), else the path the fd link shows. */
static const MountEntry *fd_mount(int proc_fd, const char *tid, int fd, const GPtrArray *mounts) {
        char path[64];
        g_autofree char *text = NULL;
        snprintf(path, sizeof(path), "%s/fdinfo/%d", tid, fd);
        const char *field = read_file_at_single(proc_fd, path, &text) >= 0 ? strstr(text, "mnt_id:") : NULL;
        uint32_t id;
        if (field && (field == text || field[-1] == '\n')) {
                g_autofree char *value = g_strndup(field + 7, strcspn(field + 7, "\n"));
                for (guint i = 0; parse_uint32(g_strstrip(value), &id) >= 0 && i < mounts->len; i++)
                        if (((const MountEntry *) mounts->pdata[i])->mount_id == id)
                                return mounts->pdata[i];
        }
        snprintf(path, sizeof(path), "%s/fd/%d", tid, fd);
        g_autofree char *target = detect_readlink_at(proc_fd, path);
        return detect_mount_of_path(mounts, target);
}

/* The path argument made absolute, lexically: the task is blocked in its
 * lookup, so stat()ing it could hang us too. NULL when unreadable; "" when
 * the call works on its dirfd instead. */
static char *call_path(int proc_fd, const char *tid, const FileCall *c, const uint64_t *args) {
        if (args[c->path] == 0)
                return g_strdup("");
        g_autofree char *p = read_task_string(proc_fd, tid, args[c->path]);
        if (!p || !*p)
                return g_steal_pointer(&p);
        if (p[0] == '/')
                return g_canonicalize_filename(p, "/");
        char link[64];
        int dir_fd = c->fd < 0 ? AT_FDCWD : arg_int(args[c->fd]);
        if (dir_fd == AT_FDCWD)
                snprintf(link, sizeof(link), "%s/cwd", tid);
        else
                snprintf(link, sizeof(link), "%s/fd/%d", tid, dir_fd);
        g_autofree char *base = detect_readlink_at(proc_fd, link);
        return base && base[0] == '/' ? g_canonicalize_filename(p, base) : NULL;
}

const MountEntry *detect_blocked_mount(int proc_fd, const char *tid, const GPtrArray *mounts) {
        char path[64];
        g_autofree char *text = NULL;
        uint64_t args[DETECT_SYSCALL_ARGS];
        long nr;
        snprintf(path, sizeof(path), "%s/syscall", tid);
        if (!mounts || read_file_at_single(proc_fd, path, &text) < 0 || detect_parse_syscall_args(text, &nr, args) < 0)
                return NULL;
        const FileCall *c = file_call(nr);
        if (!c)
                return NULL;
        if (c->path >= 0) {
                g_autofree char *p = call_path(proc_fd, tid, c, args);
                if (!p || *p)
                        return p ? detect_mount_of_path(mounts, p) : NULL;
        }
        int fd = c->fd >= 0 ? arg_int(args[c->fd]) : -1;
        return fd >= 0 ? fd_mount(proc_fd, tid, fd, mounts) : NULL;
}
