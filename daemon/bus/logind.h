/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "cycle.h"

/* The logind driver's bus side: while org.freedesktop.login1 is on the bus,
 * a `delay` inhibitor is held so that logind tells fridged before any
 * sleep (PrepareForSleep); the lock is let go when that comes and taken
 * again after the resume. It also holds the block inhibitor that mirrors
 * fridge's own. It decides nothing: the manager does. */

typedef struct Logind Logind;

/* PrepareForSleep(start), called before the lock is released (start) or
 * taken again (!start). */
typedef void (*LogindPrepareFunc)(void *userdata, bool start);
/* The answer to logind_sleep(): r < 0 with logind's error message when it
 * refused. */
typedef void (*LogindSleepDoneFunc)(void *userdata, int r, const char *message);

int logind_new(sd_bus *bus, LogindPrepareFunc on_prepare, void *userdata, Logind **ret);
Logind *logind_free(Logind *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Logind, logind_free)

/* Whether org.freedesktop.login1 has an owner, as last seen. */
bool logind_present(const Logind *l);
/* Whether the delay inhibitor is held now. */
bool logind_holds_lock(const Logind *l);

/* Holds one logind block inhibitor for sleep (who "fridge", this why)
 * while `why` is not NULL, so that logind's own sleeps honour fridge's
 * block inhibitors; a new why takes a new inhibitor before the old one is
 * closed. Taken again when logind comes back; logind absent or refusing
 * is logged as a warning. */
void logind_set_block(Logind *l, const char *why);

/* Asks logind to Suspend/Hibernate/HybridSleep (not interactively);
 * `done` is called with its answer, unless logind_free() comes first. */
int logind_sleep(Logind *l, SleepKind kind, bool ignore_inhibitors, LogindSleepDoneFunc done, void *userdata);
