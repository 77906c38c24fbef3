/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Naming what blocks a freeze: for each cgroup a stage could not freeze,
 * its tasks that are not in the freezer's trap, their state, wait channel
 * and the FUSE mount they wait on. It reads /proc/TID/{stat,wchan,syscall,
 * mountinfo,fd,stack}: reads that take the task's mmap lock, which a task
 * stuck in a FUSE page fault may hold for as long as the FUSE server is
 * frozen. So it runs on a worker, on a snapshot of its own (duplicated
 * fds), and the loop bounds how long it waits. */
#include "blockers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cgroups.h"
#include "detect.h"
#include "fileio.h"
#include "macro.h"
#include "parse.h"
#include "util.h"

/* The message goes into CycleFinished and the journal, and anyone can
 * leave a thousand tasks stuck on a FUSE server of their own, in a user
 * namespace with a thousand FUSE mounts: the text is bounded (a task's
 * line may run past it, one task at most) */
#define BLOCKERS_TASKS_SHOWN 16
#define BLOCKERS_TASKS_READ 256
#define BLOCKERS_MOUNTS_SHOWN 8
#define BLOCKERS_TEXT_MAX 4096

typedef struct BlockedCgroup {
        char *shown;    /* as logs and D-Bus show it */
        int dir_fd;     /* a dup of the freezer's O_PATH fd */
} BlockedCgroup;

struct Blockers {
        int proc_fd;            /* a dup: the freezer may go first */
        GPtrArray *cgroups;     /* BlockedCgroup* */
};

static void blocked_cgroup_free(BlockedCgroup *e) {
        if (e->dir_fd >= 0)
                close(e->dir_fd);
        g_free(e->shown);
        g_free(e);
}

int blockers_new(int proc_fd, Blockers **ret) {
        int fd = fcntl(proc_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        Blockers *b = g_new0(Blockers, 1);
        b->proc_fd = fd;
        b->cgroups = g_ptr_array_new_with_free_func((GDestroyNotify) blocked_cgroup_free);
        *ret = b;
        return 0;
}

Blockers *blockers_free(Blockers *b) {
        if (!b)
                return NULL;
        if (b->proc_fd >= 0)
                close(b->proc_fd);
        g_ptr_array_unref(b->cgroups);
        g_free(b);
        return NULL;
}

int blockers_add(Blockers *b, int cgroup_dir_fd, const char *shown) {
        int fd = fcntl(cgroup_dir_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        BlockedCgroup *e = g_new0(BlockedCgroup, 1);
        e->dir_fd = fd;
        e->shown = g_strdup(shown);
        g_ptr_array_add(b->cgroups, e);
        return 0;
}

static char *read_proc(Blockers *b, const char *tid, const char *file) {
        g_autofree char *path = g_strdup_printf("%s/%s", tid, file);
        char *text = NULL;
        /* a mount table is as long as the machine has mounts */
        size_t max = strcmp(file, "mountinfo") == 0 ? READ_FILE_UNBOUNDED : 1024 * 1024;
        if (read_file_at_max(b->proc_fd, path, max, &text) < 0)
                return NULL;
        return strstrip_right(text);
}

/* The task's mount table (its own namespace), all of it, or NULL. The
 * tasks of a cgroup mostly share a namespace, and a table can be megabytes:
 * `cache` keeps the last one, with the namespace it belongs to. */
typedef struct MountCache {
        char *ns;
        GPtrArray *mounts;
} MountCache;

static void mount_cache_clear(MountCache *c) {
        g_clear_pointer(&c->ns, g_free);
        g_clear_pointer(&c->mounts, g_ptr_array_unref);
}

static const GPtrArray *task_mounts(Blockers *b, const char *tid, MountCache *cache) {
        g_autofree char *ns_link = g_strdup_printf("%s/ns/mnt", tid);
        g_autofree char *ns = detect_readlink_at(b->proc_fd, ns_link);
        if (ns && cache->ns && g_str_equal(ns, cache->ns))
                return cache->mounts;
        mount_cache_clear(cache);
        cache->ns = g_steal_pointer(&ns);

        g_autofree char *text = read_proc(b, tid, "mountinfo");
        if (!text)
                text = read_proc(b, "self", "mountinfo");
        if (text && parse_mountinfo(text, &cache->mounts) < 0)
                cache->mounts = NULL;
        return cache->mounts;
}

/* The FUSE ones among them, borrowed. */
static GPtrArray *fuse_only(const GPtrArray *mounts) {
        GPtrArray *out = g_ptr_array_new();
        for (guint i = 0; mounts && i < mounts->len; i++)
                if (detect_fstype_is_fuse(((const MountEntry *) mounts->pdata[i])->fstype))
                        g_ptr_array_add(out, mounts->pdata[i]);
        return out;
}

/* The deeper of `best` and the FUSE mount that holds `path`. */
static const MountEntry *deeper_mount(const GPtrArray *fuse, const char *path, const MountEntry *best) {
        const MountEntry *m = detect_mount_of_path(fuse, path);
        return m && (!best || strlen(m->mount_point) > strlen(best->mount_point)) ? m : best;
}

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

/* The FUSE mount the task's cwd or an open file is on. */
static const MountEntry *task_fuse_mount(Blockers *b, const char *tid, const GPtrArray *fuse) {
        g_autofree char *cwd_link = g_strdup_printf("%s/cwd", tid);
        g_autofree char *cwd = detect_readlink_at(b->proc_fd, cwd_link);
        const MountEntry *best = deeper_mount(fuse, cwd, NULL);

        g_autofree char *fd_dir = g_strdup_printf("%s/fd", tid);
        int dfd = openat(b->proc_fd, fd_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_(closedirp) DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d) {
                closep(&dfd);
                return best;
        }
        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_name[0] == '.')
                        continue;
                g_autofree char *target = detect_readlink_at(dirfd(d), de->d_name);
                best = deeper_mount(fuse, target, best);
        }
        return best;
}

/* Names the mount, or every candidate when nothing ties the task to one. */
/* Task names and mount points are anyone's bytes; the message goes out on
 * D-Bus, where strings are UTF-8 (and one bad string drops the signal) */
static void append_escaped(GString *s, const char *prefix, const char *text) {
        g_autofree char *shown = cgroups_escape(text);
        g_string_append_printf(s, "%s%s", prefix, shown);
}

static void append_fuse_guess(Blockers *b, const char *tid, const GPtrArray *fuse, GString *s) {
        if (fuse->len == 0)
                return;
        const MountEntry *m = task_fuse_mount(b, tid, fuse);
        if (m) {
                append_escaped(s, " on FUSE mount ", m->mount_point);
                return;
        }
        g_string_append(s, " on one of the FUSE mounts ");
        guint shown = MIN(fuse->len, BLOCKERS_MOUNTS_SHOWN);
        for (guint i = 0; i < shown; i++)
                append_escaped(s, i ? ", " : "", ((const MountEntry *) fuse->pdata[i])->mount_point);
        if (fuse->len > shown)
                g_string_append_printf(s, " and %u more", fuse->len - shown);
}

static char task_state(Blockers *b, const char *tid) {
        g_autofree char *stat = read_proc(b, tid, "stat");
        return parse_stat_state(stat);
}

/* FUSE's own waits (request_wait_answer, fuse_*), or, when readable, the
 * stack: often the wchan is a generic wait (folio_wait_bit_common). */
static bool task_in_fuse(Blockers *b, const char *tid, const char *wchan) {
        if (g_str_has_prefix(wchan, "fuse_") || g_str_equal(wchan, "request_wait_answer"))
                return true;
        g_autofree char *stack = read_proc(b, tid, "stack");
        return stack && strstr(stack, "fuse");
}

static void append_fuse_mount(Blockers *b, const char *tid, const char *wchan, MountCache *cache, GString *s) {
        const GPtrArray *mounts = task_mounts(b, tid, cache);
        /* The file of the call the task is blocked in: read with what
         * CAP_SYS_PTRACE gives, as the hardened unit has no CAP_SYS_ADMIN
         * for PROC/TID/stack */
        const MountEntry *m = detect_blocked_mount(b->proc_fd, tid, mounts);
        if (m && detect_fstype_is_fuse(m->fstype)) {
                append_escaped(s, " on FUSE mount ", m->mount_point);
                return;
        }
        if (!task_in_fuse(b, tid, wchan))
                return;
        g_autoptr(GPtrArray) fuse = fuse_only(mounts);
        append_fuse_guess(b, tid, fuse, s);
}

static void describe_task(Blockers *b, const char *tid, MountCache *cache, GString *s) {
        g_autofree char *raw_comm = read_proc(b, tid, "comm");
        g_autofree char *comm = raw_comm ? cgroups_escape(raw_comm) : g_strdup("?");
        g_autofree char *raw_wchan = read_proc(b, tid, "wchan");
        /* A running task has no wait channel: the kernel shows "0" or nothing */
        const char *wchan = raw_wchan && *raw_wchan && !g_str_equal(raw_wchan, "0") ? raw_wchan : "-";

        g_string_append_printf(s, " pid %s (%s) state %c wchan %s", tid, comm, task_state(b, tid),
                               wchan);
        append_fuse_mount(b, tid, wchan, cache, s);
}

/* A task already in the cgroup freezer's trap is not what blocks it. The
 * trap sleeps interruptibly in do_freezer_trap(), which is inlined into
 * get_signal() on current kernels, so wchan shows either name. */
static bool task_is_frozen(Blockers *b, const char *tid) {
        g_autofree char *wchan = read_proc(b, tid, "wchan");
        if (!wchan || !(g_str_equal(wchan, "do_freezer_trap") || g_str_equal(wchan, "get_signal")))
                return false;
        return task_state(b, tid) == 'S';
}

static void describe_cgroup(Blockers *b, const BlockedCgroup *e, GString *s) {
        _cleanup_free_ char *threads = NULL;
        int r = read_file_at(e->dir_fd, "cgroup.threads", &threads);
        if (r < 0) {
                g_string_append_printf(s, "%s: cannot list tasks (%s)", e->shown, errno_text(r));
                return;
        }

        g_string_append_printf(s, "%s:", e->shown);
        g_auto(GStrv) tids = g_strsplit(threads, "\n", -1);
        _cleanup_(mount_cache_clear) MountCache cache = { 0 };
        unsigned n = 0, looked = 0, more = 0;
        for (char **t = tids; *t; t++) {
                if (!**t)
                        continue;
                /* Not even read past the bound: each read may wait */
                if (n >= BLOCKERS_TASKS_SHOWN || looked >= BLOCKERS_TASKS_READ || s->len >= BLOCKERS_TEXT_MAX) {
                        more++;
                        continue;
                }
                looked++;
                if (task_is_frozen(b, *t))
                        continue;
                if (n++ > 0)
                        g_string_append_c(s, ',');
                describe_task(b, *t, &cache, s);
        }
        if (more > 0)
                g_string_append_printf(s, " and %u more task%s not looked at", more, more == 1 ? "" : "s");
        else if (n == 0)
                g_string_append(s, " no blocking task found");
}

char *blockers_describe(Blockers *b) {
        GString *s = g_string_new(NULL);
        guint i;
        for (i = 0; i < b->cgroups->len && s->len < BLOCKERS_TEXT_MAX; i++) {
                if (s->len > 0)
                        g_string_append(s, "; ");
                describe_cgroup(b, b->cgroups->pdata[i], s);
        }
        if (i < b->cgroups->len)
                g_string_append_printf(s, "; and %u more cgroups", b->cgroups->len - i);
        return g_string_free(s, FALSE);
}
