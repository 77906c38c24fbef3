/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "flush.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "util.h"

struct FlushJob {
        char **mount_points;
        void (*sync_all)(void); /* without a mount table: sync(), or a test's stand-in */
        const char *current;    /* the mount point in syncfs now (in mount_points), under `jobs_lock` */
        bool listed;            /* in `jobs`, under `jobs_lock` */
};

/* Every job from its making to the end of its run: a job whose cycle
 * abandoned it (a flush that timed out or was cancelled) still holds a
 * thread in syncfs. Threads are the process's, so is the list. */
static GMutex jobs_lock;
static GPtrArray *jobs;

static void jobs_remove(FlushJob *j) {
        g_mutex_lock(&jobs_lock);
        if (j->listed)
                g_ptr_array_remove_fast(jobs, j);
        j->listed = false;
        g_mutex_unlock(&jobs_lock);
}

unsigned flush_jobs_running(void) {
        g_mutex_lock(&jobs_lock);
        unsigned n = jobs ? jobs->len : 0;
        g_mutex_unlock(&jobs_lock);
        return n;
}

char *flush_jobs_stuck_on(void) {
        g_autoptr(GPtrArray) where = g_ptr_array_new_with_free_func(g_free);
        g_mutex_lock(&jobs_lock);
        for (guint i = 0; jobs && i < jobs->len; i++) {
                const FlushJob *j = jobs->pdata[i];
                const char *p = j->current ? j->current : j->mount_points ? "(not started)" : "(sync)";
                if (!g_ptr_array_find_with_equal_func(where, p, g_str_equal, NULL))
                        g_ptr_array_add(where, g_strdup(p));
        }
        g_mutex_unlock(&jobs_lock);
        g_ptr_array_add(where, NULL);
        return g_strjoinv(", ", (char **) where->pdata);
}

static void job_set_current(FlushJob *j, const char *mount_point) {
        g_mutex_lock(&jobs_lock);
        j->current = mount_point;
        g_mutex_unlock(&jobs_lock);
}

static const char *const no_backing[] = {
        "autofs", "binfmt_misc", "bpf", "cgroup", "cgroup2", "configfs", "debugfs", "devpts",
        "devtmpfs", "efivarfs", "fusectl", "hugetlbfs", "mqueue", "nsfs", "proc", "pstore",
        "ramfs", "rootfs", "rpc_pipefs", "securityfs", "selinuxfs", "sysfs", "tmpfs", "tracefs",
        NULL,
};

bool flush_fstype_has_backing(const char *fstype) {
        return fstype && *fstype && !g_strv_contains(no_backing, fstype);
}

/* The super block decides: a mount that is read-only only for us (a
 * read-only bind mount, or every mount under systemd's ProtectSystem=strict
 * in fridged.service) still has dirty data that syncfs() writes back */
static bool mount_is_writable(const MountEntry *m) {
        return !mount_options_has(m->super_options, "ro");
}

int flush_list_mounts(int proc_fd, char ***ret) {
        g_autofree char *text = NULL;
        g_autoptr(GPtrArray) mounts = NULL;

        int r = read_file_at_max(proc_fd, "self/mountinfo", READ_FILE_UNBOUNDED, &text);
        if (r < 0)
                return log_error_errno(r, "Failed to read mountinfo: %m");
        r = parse_mountinfo(text, &mounts);
        if (r < 0)
                return log_error_errno(r, "Failed to parse mountinfo: %m");

        /* syncfs() works on a whole super block: one mount point of each is enough */
        g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < mounts->len; i++) {
                const MountEntry *m = mounts->pdata[i];
                if (!mount_is_writable(m) || !flush_fstype_has_backing(m->fstype))
                        continue;
                gpointer dev = GUINT_TO_POINTER(((m->major & 0xfffu) << 20) | (m->minor & 0xfffffu));
                if (!g_hash_table_add(seen, dev))
                        continue;
                g_ptr_array_add(out, g_strdup(m->mount_point));
        }
        g_ptr_array_add(out, NULL);
        *ret = (char **) g_ptr_array_free(g_steal_pointer(&out), FALSE);
        return 0;
}

int flush_read_dirty(int proc_fd, uint64_t *ret_kib) {
        g_autofree char *text = NULL;
        MeminfoDirty d;

        int r = read_file_at_single(proc_fd, "meminfo", &text);
        if (r < 0)
                return r;
        r = parse_meminfo(text, &d);
        if (r < 0)
                return r;
        *ret_kib = d.dirty_kib + d.writeback_kib;
        return 0;
}

int flush_job_new(char **mount_points, FlushJob **ret) {
        FlushJob *j = g_new0(FlushJob, 1);
        j->mount_points = mount_points;
        j->sync_all = sync;
        g_mutex_lock(&jobs_lock);
        if (!jobs)
                jobs = g_ptr_array_new();
        g_ptr_array_add(jobs, j);
        j->listed = true;
        g_mutex_unlock(&jobs_lock);
        *ret = j;
        return 0;
}

void flush_job_set_sync_all(FlushJob *j, void (*sync_all)(void)) {
        j->sync_all = sync_all;
}

void flush_job_free(void *job) {
        FlushJob *j = job;
        if (!j)
                return;
        jobs_remove(j); /* one that never ran */
        g_strfreev(j->mount_points);
        g_free(j);
}

static int job_sync_all(FlushJob *j) {
        int first_error = 0;

        if (!j->mount_points) {
                /* No mount table to go by: write back everything there is */
                j->sync_all();
                return 0;
        }

        for (char **p = j->mount_points; *p; p++) {
                job_set_current(j, *p);
                _cleanup_close_ int fd = open(*p, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
                int r = fd < 0 ? -errno : 0;
                if (r >= 0 && syncfs(fd) < 0)
                        r = -errno;
                if (r < 0) {
                        log_warning_errno(r, "Failed to write back %s: %m", *p);
                        if (first_error == 0)
                                first_error = r;
                }
        }
        return first_error;
}

int flush_job_run(void *job) {
        FlushJob *j = job;
        int r = job_sync_all(j);
        jobs_remove(j);
        return r;
}
