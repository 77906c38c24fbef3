/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/inotify.h>

/* One event; false stops the draining (the rest stay queued) */
typedef bool (*InotifyEventHandler)(const struct inotify_event *ev, void *userdata);

/* Reads what the non-blocking inotify fd has queued and hands each event
 * to handler, until none is left or handler says stop. 0: all drained;
 * 1: stopped by handler; -errno: a read failed. */
int inotify_events_drain(int fd, InotifyEventHandler handler, void *userdata);
