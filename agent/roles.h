/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The session's user interface by role: the processes that own the names
 * of ui-roles.h on the session bus, and the Wayland compositor, reported
 * to fridged (HoldRole) so that they stay running through a cycle however
 * their units and programs are called (GNOME's notification proxy runs as
 * gjs in a bus-activated unit). Each report is held while the agent keeps
 * its fd: a name's new owner is reported anew, a vanished one let go, and
 * all of them again when fridged comes back. */

#include <gio/gio.h>

typedef struct Roles Roles;

int roles_new(GDBusConnection *session, GDBusConnection *system, Roles **ret);
Roles *roles_free(Roles *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Roles, roles_free)
