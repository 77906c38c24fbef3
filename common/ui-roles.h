/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The roles that make a process part of a session's user interface, found
 * by fridge-agent on the session's bus (the owner of each name) and in the
 * session (its Wayland compositor) and held as ui by fridged (HoldRole):
 * a notification server or GNOME's notification proxy in a bus-activated
 * unit is ui by what it does, not by what it is called. One list for both:
 * fridged takes no other role. */

#define UI_ROLE_COMPOSITOR "compositor"

static const char *const ui_roles[] = {
        "org.freedesktop.Notifications",        /* the notification server: the progress and its Cancel */
        "org.kde.JobViewServer",                /* KDE's job view: Plasma's progress bar */
        "org.kde.kuiserver",                    /* its older name */
        "org.freedesktop.portal.Desktop",       /* the portals: dialogs the session may need */
        "org.a11y.Bus",                         /* the accessibility bus: screen readers */
        UI_ROLE_COMPOSITOR,                     /* the Wayland compositor: the screen itself */
        NULL,
};
