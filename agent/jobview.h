/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A cycle in KDE's job view (org.kde.JobViewServer at /JobViewServer, its
 * views org.kde.JobViewV2): the bar Plasma draws for file copies, with a
 * stop button. Plasma's notifications draw no `value` hint, so there the
 * progress goes here. The view lives as long as the connection that asked
 * for it; calls go out in order on that connection, and what is set before
 * the server has answered goes out once it has. */

#include <gio/gio.h>

typedef struct JobView JobView;

typedef struct JobViewOps {
        /* The stop button: the view's cancelRequested */
        void (*cancel)(void *userdata);
        /* No view could be had (no job view server, or its error): the
         * caller shows the progress another way */
        void (*failed)(void *userdata, const char *why);
} JobViewOps;

/* Asks for a view that can be stopped */
int jobview_new(GDBusConnection *session, const JobViewOps *ops, void *userdata, JobView **ret);
/* Terminates the view, if it is still there, with no message */
JobView *jobview_free(JobView *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(JobView, jobview_free)

/* The bar (0..100), the phase (the info message) and what the cycle does
 * or waits on (description field 0, under `label`) */
void jobview_update(JobView *v, int percent, const char *info, const char *label, const char *status);
/* Withdraws the view, saying why (terminate's message); no update goes
 * out after it */
void jobview_end(JobView *v, const char *message);
/* Ends the view as stopped by its user (the error KIO calls
 * ERR_USER_CANCELED, which Plasma shows no failure for) */
void jobview_cancelled(JobView *v);
