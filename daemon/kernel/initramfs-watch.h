/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* Whether the initramfs fridge-image-writer looked at is still the file
 * it looked at, told by inotify on its directory (and on the directory of
 * the file a symlink leads to) instead of a stat at each question: a stat
 * of /boot/... would mount an automounted /boot again every time.
 *
 * A file the writer found changes when that name is written, replaced,
 * renamed, removed or has its attributes changed; reads (the writer's
 * own) are not changes. Where the writer found none, any name appearing or
 * changing in the directory may be the one. An unmount of the directory's
 * file system (an automount expiring) ends the watch without a change.
 * A file system mounted over the directory later is not seen: the
 * caller's time limit bounds that. */

typedef struct InitramfsWatch InitramfsWatch;

typedef enum InitramfsWatchState {
        INITRAMFS_WATCH_NONE,           /* not watching: the caller looks itself */
        INITRAMFS_WATCH_SAME,
        INITRAMFS_WATCH_CHANGED,
        INITRAMFS_WATCH_GONE,           /* unmounted: no longer told */
} InitramfsWatchState;

/* on_change: called on the loop when a change is seen there */
typedef void (*InitramfsWatchChanged)(void *userdata);

InitramfsWatch *initramfs_watch_new(sd_event *e, InitramfsWatchChanged on_change, void *userdata);
InitramfsWatch *initramfs_watch_free(InitramfsWatch *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(InitramfsWatch, initramfs_watch_free)

/* Watches the absolute path, which the writer found (absent false) or did
 * not. asked_usec (CLOCK_REALTIME_COARSE): when the writer was asked; for an
 * absent file, a directory modified since then is a change already.
 * 1: changed already (no watch is left); 0: watching; -errno: cannot
 * watch (said at debug level), and the state is INITRAMFS_WATCH_NONE. */
int initramfs_watch_start(InitramfsWatch *w, const char *path, bool absent, uint64_t asked_usec);
void initramfs_watch_stop(InitramfsWatch *w);

/* Takes what inotify has queued, and says where that leaves the watch */
InitramfsWatchState initramfs_watch_poll(InitramfsWatch *w);
