/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "initramfs-watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inotify-events.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

#define WATCH_MASK                                                                                           \
        (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB |      \
         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

typedef struct Watched {
        int wd;                 /* -1: none */
        char *name;             /* the file's name in that directory */
} Watched;

struct InitramfsWatch {
        sd_event *event;
        InitramfsWatchChanged on_change;
        void *userdata;
        int fd;                 /* inotify, made at the first start */
        sd_event_source *io;
        Watched dirs[2];        /* the path's directory; the symlink's target's */
        bool absent, watching, changed, gone;
};

InitramfsWatch *initramfs_watch_new(sd_event *e, InitramfsWatchChanged on_change, void *userdata) {
        InitramfsWatch *w = g_new0(InitramfsWatch, 1);
        w->event = sd_event_ref(e);
        w->on_change = on_change;
        w->userdata = userdata;
        w->fd = -1;
        for (size_t i = 0; i < G_N_ELEMENTS(w->dirs); i++)
                w->dirs[i].wd = -1;
        return w;
}

void initramfs_watch_stop(InitramfsWatch *w) {
        for (size_t i = 0; i < G_N_ELEMENTS(w->dirs); i++) {
                if (w->dirs[i].wd >= 0)
                        (void) inotify_rm_watch(w->fd, w->dirs[i].wd);
                w->dirs[i].wd = -1;
                g_clear_pointer(&w->dirs[i].name, g_free);
        }
        w->watching = w->changed = w->gone = false;
}

InitramfsWatch *initramfs_watch_free(InitramfsWatch *w) {
        if (!w)
                return NULL;
        initramfs_watch_stop(w);
        w->io = sd_event_source_disable_unref(w->io);
        if (w->fd >= 0)
                close(w->fd);
        sd_event_unref(w->event);
        g_free(w);
        return NULL;
}

/* Whether the event changes what the writer would find */
static bool event_changes(const InitramfsWatch *w, const Watched *d, const struct inotify_event *ev) {
        if (ev->len == 0) /* the directory itself: moved or deleted, not touched */
                return ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF);
        if (w->absent) /* a name appearing may be the initramfs looked for */
                return ev->mask & (IN_CREATE | IN_MOVED_TO);
        return strcmp(ev->name, d->name) == 0;
}

/* A symlink beside its target shares its directory's watch: the event is
 * each name's there. Events of a watch already dropped match none. */
static bool on_event(const struct inotify_event *ev, void *userdata) {
        InitramfsWatch *w = userdata;
        if (ev->mask & IN_Q_OVERFLOW) {
                w->changed = w->watching;
                return true;
        }
        for (size_t i = 0; i < G_N_ELEMENTS(w->dirs); i++) {
                const Watched *d = &w->dirs[i];
                if (d->wd < 0 || d->wd != ev->wd)
                        continue;
                if (ev->mask & (IN_UNMOUNT | IN_IGNORED))
                        w->gone = true;
                else if (event_changes(w, d, ev))
                        w->changed = true;
        }
        return true;
}

InitramfsWatchState initramfs_watch_poll(InitramfsWatch *w) {
        if (w->fd >= 0) /* those of a watch stopped too: none waits, none wakes the loop again */
                (void) inotify_events_drain(w->fd, on_event, w);
        if (w->changed)
                return INITRAMFS_WATCH_CHANGED;
        if (w->gone)
                return INITRAMFS_WATCH_GONE;
        return w->watching ? INITRAMFS_WATCH_SAME : INITRAMFS_WATCH_NONE;
}

/* On the loop, so that no event waits in the kernel for a question, and
 * the caller hears of a change when it happens */
static int on_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        InitramfsWatch *w = userdata;
        bool before = w->changed;
        if (initramfs_watch_poll(w) == INITRAMFS_WATCH_CHANGED && !before && w->on_change)
                w->on_change(w->userdata);
        return 0;
}

static int watch_fd(InitramfsWatch *w) {
        if (w->fd >= 0)
                return 0;
        int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = sd_event_add_io(w->event, &w->io, fd, EPOLLIN, on_events, w);
        if (r < 0) {
                close(fd);
                return r;
        }
        (void) sd_event_source_set_description(w->io, "initramfs-watch");
        w->fd = fd;
        return 0;
}

static int watch_dir_of(InitramfsWatch *w, Watched *d, const char *path) {
        g_autofree char *dir = g_path_get_dirname(path);
        d->wd = inotify_add_watch(w->fd, dir, WATCH_MASK);
        if (d->wd < 0)
                return -errno;
        d->name = g_path_get_basename(path);
        return 0;
}

/* A directory modified since the writer was asked: a name may have come
 * between its look and the watch. Files' times come from the coarse clock
 * asked_usec is read from: a change after it is never dated before it (one
 * in the same tick before it counts too: one question more). */
static bool dir_changed_since(const char *path, uint64_t asked_usec) {
        g_autofree char *dir = g_path_get_dirname(path);
        struct stat st;
        if (stat(dir, &st) < 0)
                return true;
        return timespec_load(&st.st_mtim) >= asked_usec || timespec_load(&st.st_ctim) >= asked_usec;
}

int initramfs_watch_start(InitramfsWatch *w, const char *path, bool absent, uint64_t asked_usec) {
        initramfs_watch_stop(w);
        if (path[0] != '/')
                return -EINVAL;
        w->absent = absent;
        int r = watch_fd(w);
        if (r >= 0)
                r = watch_dir_of(w, &w->dirs[0], path);
        struct stat st;
        g_autofree char *target = r >= 0 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
        if (target)
                r = watch_dir_of(w, &w->dirs[1], target);
        if (r < 0) {
                log_debug_errno(r, "Cannot watch the directory of %s (%m); it is looked at on each question", path);
                initramfs_watch_stop(w);
                return r;
        }
        w->watching = true;
        if (absent && dir_changed_since(path, asked_usec)) {
                initramfs_watch_stop(w);
                return 1;
        }
        return 0;
}
