/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "freezer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"
#include "detect.h"
#include "fileio.h"
#include "inotify-events.h"
#include "log.h"
#include "parse.h"
#include "time-util.h"
#include "util.h"

typedef struct StageEntry {
        char *path;     /* relative to the cgroup root */
        char *shown;    /* path as logs and D-Bus show it (cgroups_escape()) */
        int dir_fd;     /* O_PATH, opened without following symlinks */
        int wd;         /* inotify watch on cgroup.events, -1 when none */
        bool frozen;
} StageEntry;

/* A frozen cgroup's directory, kept open from its freeze to its thaw: the
 * thaw writes through it (no path to resolve, no id to check after a
 * resume, when every microsecond is felt), and reaches that very cgroup
 * or none (one removed meanwhile reads ENOENT, gone) */
typedef struct FrozenRef {
        uint64_t id;    /* the inode of its directory, as the ledger has it */
        int fd;         /* O_PATH; -1: thawed by path and id */
} FrozenRef;

struct Freezer {
        sd_event *event;
        int cgroup_fd, proc_fd;
        Ledger *ledger;

        /* One inotify fd for the freezer's life; its source is OFF while
         * idle, so an idle fridged is never woken by it. */
        int inotify_fd;
        sd_event_source *inotify_source;
        sd_event_source *timer_source;
        sd_event_source *defer_source;

        GPtrArray *stage;       /* StageEntry: the current stage, or the last one */
        GHashTable *by_wd;      /* watch descriptor → StageEntry*, while armed */
        unsigned stage_frozen;
        bool stage_active;
        uint64_t stage_gen;     /* bumped on every disarm: spots a cancel from a callback */
        int stage_error;        /* a failed freeze write, reported from the loop */
        FreezerProgress progress;
        FreezerDone done;
        void *userdata;

        FreezerObserver observer;
        void *observer_data;

        GPtrArray *frozen;      /* char *: every cgroup we set cgroup.freeze=1 on, in order */
        GArray *frozen_refs;    /* FrozenRef: their ids and directories, in step with frozen */
        uint64_t thawed_usec;   /* CLOCK_MONOTONIC: the last thaw's last cgroup.freeze write returned */
};

static void observe(Freezer *f, const char *cgroup, FreezerEvent ev) {
        if (f->observer)
                f->observer(cgroup, ev, f->observer_data);
}

void freezer_set_observer(Freezer *f, FreezerObserver observer, void *userdata) {
        f->observer = observer;
        f->observer_data = userdata;
}

static void stage_entry_free(StageEntry *e) {
        if (!e)
                return;
        if (e->dir_fd >= 0)
                close(e->dir_fd);
        g_free(e->path);
        g_free(e->shown);
        g_free(e);
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata);

int freezer_new(sd_event *e, int cgroup_fd, int proc_fd, Ledger *ledger, Freezer **ret) {
        g_autoptr(Freezer) f = g_new0(Freezer, 1);
        f->event = sd_event_ref(e);
        f->cgroup_fd = cgroup_fd;
        f->proc_fd = proc_fd;
        f->ledger = ledger;
        f->stage = g_ptr_array_new_with_free_func((GDestroyNotify) stage_entry_free);
        f->frozen = g_ptr_array_new_with_free_func(g_free);
        f->frozen_refs = g_array_new(FALSE, FALSE, sizeof(FrozenRef));
        f->by_wd = g_hash_table_new(g_direct_hash, g_direct_equal);

        f->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (f->inotify_fd < 0)
                return -errno;
        int r = sd_event_add_io(e, &f->inotify_source, f->inotify_fd, EPOLLIN, on_inotify, f);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(f->inotify_source, SD_EVENT_OFF);
        if (r < 0)
                return r;
        *ret = g_steal_pointer(&f);
        return 0;
}

/* Back to idle: no watches, no timer, no enabled source. The stage's
 * entries stay for freezer_blockers(). */
static void stage_disarm(Freezer *f) {
        for (guint i = 0; i < f->stage->len; i++) {
                StageEntry *e = f->stage->pdata[i];
                if (e->wd >= 0)
                        (void) inotify_rm_watch(f->inotify_fd, e->wd);
                e->wd = -1;
        }
        g_hash_table_remove_all(f->by_wd);
        f->timer_source = sd_event_source_disable_unref(f->timer_source);
        f->defer_source = sd_event_source_disable_unref(f->defer_source);
        if (f->inotify_source)
                (void) sd_event_source_set_enabled(f->inotify_source, SD_EVENT_OFF);
        f->stage_active = false;
        f->stage_gen++;
}

Freezer *freezer_free(Freezer *f) {
        if (!f)
                return NULL;
        stage_disarm(f);
        /* Last line of defence for "nothing stays frozen" */
        if (f->frozen->len > 0) {
                log_warning("Freezer freed with %u cgroups frozen, thawing them", f->frozen->len);
                (void) freezer_thaw_all(f);
        }
        sd_event_source_disable_unref(f->inotify_source);
        closep(&f->inotify_fd);
        g_ptr_array_unref(f->stage);
        g_hash_table_unref(f->by_wd);
        g_ptr_array_unref(f->frozen);
        for (guint i = 0; i < f->frozen_refs->len; i++) /* left frozen: a thaw failed */
                closep(&g_array_index(f->frozen_refs, FrozenRef, i).fd);
        g_array_unref(f->frozen_refs);
        sd_event_unref(f->event);
        g_free(f);
        return NULL;
}

/* Calls `done` last: it may free the freezer. */
static void stage_finish(Freezer *f, int r) {
        FreezerDone done = f->done;
        void *userdata = f->userdata;

        stage_disarm(f);
        if (done)
                done(f, r, userdata);
}

static bool events_say_frozen(const char *text) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++)
                if (g_str_equal(strstrip_right(*l), "frozen 1"))
                        return true;
        return false;
}

static int read_frozen(const StageEntry *e, bool *ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at_single(e->dir_fd, "cgroup.events", &text);
        if (r == -ENOENT || r == -ENODEV) {
                *ret = true; /* a removed cgroup has nothing left to freeze */
                return 0;
        }
        if (r < 0)
                return r;
        *ret = events_say_frozen(text);
        return 0;
}

int freezer_cgroup_frozen(int cgroup_fd, const char *path, bool *ret) {
        _cleanup_close_ int dir = open_dir_beneath(cgroup_fd, path);
        if (dir < 0)
                return dir;
        _cleanup_free_ char *text = NULL;
        int r = read_file_at_single(dir, "cgroup.events", &text);
        if (r < 0)
                return r;
        *ret = events_say_frozen(text);
        return 0;
}

/* Re-reads one cgroup not yet frozen. Returns false when the stage ended
 * (an error, or the progress callback cancelled it). */
static bool stage_check_entry(Freezer *f, StageEntry *e) {
        uint64_t gen = f->stage_gen;
        bool frozen;

        if (e->frozen)
                return true;
        int r = read_frozen(e, &frozen);
        if (r < 0) {
                log_warning_errno(r, "Failed to read %s/cgroup.events: %m", e->shown);
                stage_finish(f, r);
                return false;
        }
        if (!frozen)
                return true;
        e->frozen = true;
        f->stage_frozen++;
        observe(f, e->path, FREEZER_EVENT_FROZEN);
        if (f->progress)
                f->progress(f, f->stage_frozen, f->stage->len, f->userdata);
        return f->stage_gen == gen;
}

static void stage_finish_if_done(Freezer *f) {
        if (f->stage_active && f->stage_frozen == f->stage->len)
                stage_finish(f, 0);
}

/* Re-reads every cgroup not yet frozen; finishes the stage when all are. */
static void stage_check(Freezer *f) {
        for (guint i = 0; i < f->stage->len; i++)
                if (!stage_check_entry(f, f->stage->pdata[i]))
                        return;
        stage_finish_if_done(f);
}

/* Only the cgroups whose cgroup.events changed are read again: re-reading
 * all of them on every event would be quadratic in the stage's size.
 * false: the stage ended meanwhile. */
static bool on_event(const struct inotify_event *ev, void *userdata) {
        Freezer *f = userdata;
        if (!f->stage_active)
                return true; /* no stage: the events are only drained */
        if (ev->mask & IN_Q_OVERFLOW) {
                stage_check(f); /* events were lost: look at everything */
                return f->stage_active;
        }
        StageEntry *e = g_hash_table_lookup(f->by_wd, GINT_TO_POINTER(ev->wd));
        return !e || stage_check_entry(f, e);
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Freezer *f = userdata;
        int r = inotify_events_drain(fd, on_event, f);
        if (r < 0) {
                log_warning_errno(r, "Failed to read inotify events: %m");
                if (f->stage_active)
                        stage_finish(f, r);
                return 0;
        }
        if (r == 0) /* else the stage ended meanwhile */
                stage_finish_if_done(f);
        return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Freezer *f = userdata;
        uint64_t gen = f->stage_gen;

        /* A change may be queued in this same iteration: look once more */
        stage_check(f);
        if (f->stage_active && f->stage_gen == gen)
                stage_finish(f, -ETIMEDOUT);
        return 0;
}

/* The first check runs from the loop: the kernel may have frozen a cgroup
 * before its watch saw a change, and callbacks never run from inside
 * freezer_freeze_stage(). */
static int on_defer(sd_event_source *s, void *userdata) {
        Freezer *f = userdata;

        f->defer_source = sd_event_source_disable_unref(f->defer_source);
        if (f->stage_error < 0)
                stage_finish(f, f->stage_error);
        else
                stage_check(f);
        return 0;
}

static bool already_frozen(int dir_fd) {
        _cleanup_free_ char *value = NULL;
        return read_file_at_single(dir_fd, "cgroup.freeze", &value) >= 0 && g_str_equal(strstrip_right(value), "1");
}

static int stage_open(Freezer *f, char *const *cgroups) {
        g_ptr_array_set_size(f->stage, 0);
        f->stage_frozen = 0;
        f->stage_error = 0;

        for (char *const *p = cgroups; p && *p; p++)
                if (!cgroups_path_is_valid(*p)) {
                        g_autofree char *shown = cgroups_escape(*p);
                        return log_warning_errno(-EINVAL, "Refusing to freeze invalid cgroup path \"%s\"", shown);
                }

        for (char *const *p = cgroups; p && *p; p++) {
                g_autofree char *shown = cgroups_escape(*p);
                int fd = ledger_cgroup_open(f->cgroup_fd, *p);
                if (fd == -ENOENT) {
                        /* planned at prepare, gone since (a transient scope ended) */
                        log_info("Cgroup %s is gone, nothing to freeze", shown);
                        continue;
                }
                if (fd < 0)
                        return log_warning_errno(fd, "Failed to open cgroup %s: %m", shown);
                if (already_frozen(fd)) {
                        /* someone else froze it: it is theirs to thaw, not ours */
                        log_info("Cgroup %s is frozen already; leaving it as it is", shown);
                        close(fd);
                        continue;
                }
                StageEntry *e = g_new0(StageEntry, 1);
                *e = (StageEntry) { .path = g_strdup(*p), .shown = g_steal_pointer(&shown), .wd = -1, .dir_fd = fd };
                g_ptr_array_add(f->stage, e);
        }
        return 0;
}

static int stage_watch(Freezer *f) {
        for (guint i = 0; i < f->stage->len; i++) {
                StageEntry *e = f->stage->pdata[i];
                /* inotify takes a path, not a dirfd: name the directory we
                 * opened without following symlinks through its fd. */
                char path[64];
                snprintf(path, sizeof(path), "/proc/self/fd/%d/cgroup.events", e->dir_fd);
                e->wd = inotify_add_watch(f->inotify_fd, path, IN_MODIFY);
                if (e->wd < 0)
                        return log_warning_errno(-errno, "Failed to watch %s/cgroup.events: %m", e->shown);
                g_hash_table_insert(f->by_wd, GINT_TO_POINTER(e->wd), e);
        }
        return 0;
}

static int stage_arm(Freezer *f, uint64_t timeout_usec) {
        int r = stage_watch(f);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(f->inotify_source, SD_EVENT_ON);
        if (r < 0)
                return r;
        /* UINT64_MAX: wait without a limit */
        if (timeout_usec != UINT64_MAX) {
                r = sd_event_add_time_relative(f->event, &f->timer_source, CLOCK_MONOTONIC, timeout_usec,
                                               USEC_PER_MSEC, on_timeout, f);
                if (r < 0)
                        return r;
        }
        return sd_event_add_defer(f->event, &f->defer_source, on_defer, f);
}

/* Every cgroup goes into the ledger (on disk) before the first freeze
 * write, so a crash at any point leaves a ledger that covers it. */
static int stage_record(Freezer *f) {
        g_autofree char **paths = g_new0(char *, f->stage->len + 1);
        g_autofree uint64_t *ids = g_new0(uint64_t, f->stage->len + 1);
        for (guint i = 0; i < f->stage->len; i++) {
                StageEntry *e = f->stage->pdata[i];
                struct stat st;
                paths[i] = e->path;
                /* the id of the very directory the freeze goes through */
                if (fstat(e->dir_fd, &st) < 0)
                        return log_warning_errno(-errno, "Failed to stat cgroup %s: %m", e->path);
                ids[i] = st.st_ino;
        }
        if (f->ledger) {
                int r = ledger_add(f->ledger, paths, ids);
                if (r < 0)
                        return log_warning_errno(r, "Failed to add the stage to the ledger: %m");
        }
        /* From here thaw_all owns them, even if a write below fails */
        for (guint i = 0; i < f->stage->len; i++) {
                const StageEntry *e = f->stage->pdata[i];
                FrozenRef ref = { .id = ids[i], .fd = fcntl(e->dir_fd, F_DUPFD_CLOEXEC, 3) };
                g_ptr_array_add(f->frozen, g_strdup(paths[i]));
                g_array_append_val(f->frozen_refs, ref);
        }
        return 0;
}

static int stage_write(Freezer *f) {
        for (guint i = 0; i < f->stage->len; i++) {
                StageEntry *e = f->stage->pdata[i];
                int r = write_file_at(e->dir_fd, "cgroup.freeze", "1");
                if (r == -ENOENT || r == -ENODEV)
                        continue; /* removed meanwhile: its events read as done below */
                if (r < 0)
                        return log_warning_errno(r, "Failed to freeze %s: %m", e->shown);
                observe(f, e->path, FREEZER_EVENT_FREEZE);
        }
        return 0;
}

int freezer_freeze_stage(Freezer *f, char *const *cgroups, uint64_t timeout_usec, FreezerProgress progress,
                         FreezerDone done, void *userdata) {
        if (f->stage_active)
                return -EBUSY;

        /* Nothing is written to the kernel until everything that can fail
         * without side effects has succeeded. */
        int r = stage_open(f, cgroups);
        if (r >= 0)
                r = stage_arm(f, timeout_usec);
        if (r >= 0)
                r = stage_record(f);
        if (r < 0) {
                stage_disarm(f);
                g_ptr_array_set_size(f->stage, 0);
                return r;
        }

        f->progress = progress;
        f->done = done;
        f->userdata = userdata;
        f->stage_active = true;
        /* Some cgroups may be frozen already: the failure goes to `done`
         * from the loop, and thaw_all undoes what was written. */
        f->stage_error = stage_write(f);
        return 0;
}

void freezer_cancel_stage(Freezer *f) {
        if (f && f->stage_active)
                stage_disarm(f);
}

/* 1 when thawed, 0 when gone or another cgroup now (logged), <0 failed */
static int thaw_one(Freezer *f, const char *path, const FrozenRef *ref) {
        int r = ref->fd >= 0 ? write_file_at(ref->fd, "cgroup.freeze", "0") : -ENOENT;
        if (r != -ENOENT && r != -ENODEV)
                return r < 0 ? r : 1;
        /* Removed since (or never kept): by path, where a cgroup made again
         * under the name is told apart by its id, and logged */
        _cleanup_close_ int fd = ledger_cgroup_open(f->cgroup_fd, path);
        if (fd >= 0 && !ledger_cgroup_is(fd, path, ref->id))
                return 0;
        r = fd < 0 ? fd : write_file_at(fd, "cgroup.freeze", "0");
        if (r == -ENOENT) {
                g_autofree char *shown = cgroups_escape(path);
                log_info("Cgroup %s is gone, nothing to thaw", shown);
                return 0;
        }
        return r < 0 ? r : 1;
}

unsigned freezer_thaw_all(Freezer *f) {
        g_autoptr(GPtrArray) done = g_ptr_array_new_with_free_func(g_free);
        unsigned n = 0;

        for (guint i = f->frozen->len; i-- > 0;) {
                const char *path = f->frozen->pdata[i];
                FrozenRef *ref = &g_array_index(f->frozen_refs, FrozenRef, i);
                int r = thaw_one(f, path, ref);
                if (r < 0) {
                        g_autofree char *shown = cgroups_escape(path);
                        /* Kept, with its ledger line, for a retry or a restart */
                        log_warning_errno(r, "Failed to thaw %s: %m", shown);
                        continue;
                }
                n += r;
                if (r > 0) {
                        f->thawed_usec = now(CLOCK_MONOTONIC);
                        observe(f, path, FREEZER_EVENT_THAWED);
                }
                closep(&ref->fd);
                g_ptr_array_add(done, g_ptr_array_steal_index(f->frozen, i));
                g_array_remove_index(f->frozen_refs, i);
        }
        /* The ledger forgets them only after all are thawed: one rewrite */
        g_ptr_array_add(done, NULL);
        if (f->ledger && done->len > 1) {
                int r = ledger_remove(f->ledger, (char **) done->pdata);
                if (r < 0)
                        log_warning_errno(r, "Failed to remove the thawed cgroups from the ledger: %m");
        }
        /* Idle again: an open fd would pin each cgroup of the last stage
         * (a removed one lingers as a dying cgroup) until the next cycle */
        if (f->frozen->len == 0 && !f->stage_active)
                g_ptr_array_set_size(f->stage, 0);
        return n;
}

uint64_t freezer_thawed_usec(const Freezer *f) {
        return f->thawed_usec;
}

unsigned freezer_n_frozen(const Freezer *f) {
        return f->frozen->len;
}

const char *freezer_first_pending(const Freezer *f) {
        for (guint k = 0; k < f->stage->len; k++) {
                const StageEntry *e = f->stage->pdata[k];
                if (!e->frozen)
                        return e->shown;
        }
        return NULL;
}

/* ---- what blocks a freeze: a snapshot for blockers.c ---- */

int freezer_blockers(Freezer *f, Blockers **ret) {
        g_autoptr(Blockers) b = NULL;
        int r = blockers_new(f->proc_fd, &b);
        if (r < 0)
                return r;
        for (guint i = 0; i < f->stage->len; i++) {
                const StageEntry *e = f->stage->pdata[i];
                if (e->frozen)
                        continue;
                r = blockers_add(b, e->dir_fd, e->shown);
                if (r < 0)
                        return r;
        }
        *ret = g_steal_pointer(&b);
        return 0;
}
