/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session-names.h"

bool session_name_has_owner(GDBusConnection *session, const char *name) {
        g_autoptr(GVariant) r = g_dbus_connection_call_sync(session, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                            "org.freedesktop.DBus", "NameHasOwner",
                                                            g_variant_new("(s)", name), G_VARIANT_TYPE("(b)"),
                                                            G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL);
        gboolean has = FALSE;
        if (r)
                g_variant_get(r, "(b)", &has);
        return has;
}
