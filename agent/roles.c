/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The session's user interface by role, held by fridged. */
#include "roles.h"

#include <gio/gunixfdlist.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fridge-config.h"
#include "ui-roles.h"

#define ROLES_CALL_TIMEOUT_MS 5000

/* One role: who serves it now, and fridged's hold of it */
typedef struct Role {
        Roles *owner;
        const char *name;       /* ui_roles' */
        pid_t pid;              /* 0: nobody */
        int fd;                 /* the hold, -1: none */
        guint watch;
        GCancellable *lookup;   /* the owner's pid asked for */
        GCancellable *hold;     /* HoldRole on its way */
} Role;

struct Roles {
        GDBusConnection *session, *system;
        Role roles[G_N_ELEMENTS(ui_roles) - 1];
        guint fridged_watch;
};

static void cancel(GCancellable **c) {
        g_cancellable_cancel(*c);
        g_clear_object(c);
}

/* fridged lets go of the role once the fd is closed */
static void role_release(Role *role) {
        cancel(&role->hold);
        if (role->fd >= 0)
                close(role->fd);
        role->fd = -1;
}

static void on_held(GObject *source, GAsyncResult *res, gpointer userdata) {
        g_autoptr(GUnixFDList) fds = NULL;
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish(G_DBUS_CONNECTION(source), &fds,
                                                                                    res, &e);
        if (g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                return;
        Role *role = userdata;
        gint32 index;
        if (reply)
                g_variant_get(reply, "(h)", &index);
        int fd = reply && fds ? g_unix_fd_list_get(fds, index, &e) : -1;
        if (fd < 0) {
                g_message("fridged keeps no hold of %s (pid %d): %s", role->name, (int) role->pid,
                          e ? e->message : "no fd in its answer");
                return;
        }
        role->fd = fd;
        g_message("fridged holds %s (pid %d) as the session's user interface", role->name, (int) role->pid);
}

/* A lookup on its way is left alone: fridged coming back while the
 * owner's pid is asked must not lose it */
static void role_hold(Role *role) {
        if (role->pid <= 0)
                return;
        role_release(role);
        role->hold = g_cancellable_new();
        g_dbus_connection_call_with_unix_fd_list(role->owner->system, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                                 FRIDGE_INTERFACE, "HoldRole",
                                                 g_variant_new("(su)", role->name, (guint32) role->pid),
                                                 G_VARIANT_TYPE("(h)"), G_DBUS_CALL_FLAGS_NONE,
                                                 ROLES_CALL_TIMEOUT_MS, NULL, role->hold, on_held, role);
}

static void on_pid(GObject *source, GAsyncResult *res, gpointer userdata) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &e);
        if (g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                return;
        Role *role = userdata;
        guint32 pid = 0;
        if (reply)
                g_variant_get(reply, "(u)", &pid);
        else
                g_message("Cannot tell the pid of %s's owner: %s", role->name, e->message);
        role->pid = (pid_t) pid;
        role_hold(role);
}

static void on_appeared(GDBusConnection *c, const char *name, const char *owner, gpointer userdata) {
        Role *role = userdata;
        role_release(role);
        role->pid = 0;
        cancel(&role->lookup);
        role->lookup = g_cancellable_new();
        g_dbus_connection_call(c, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetConnectionUnixProcessID", g_variant_new("(s)", owner), G_VARIANT_TYPE("(u)"),
                               G_DBUS_CALL_FLAGS_NONE, ROLES_CALL_TIMEOUT_MS, role->lookup, on_pid, role);
}

static void on_vanished(GDBusConnection *c, const char *name, gpointer userdata) {
        Role *role = userdata;
        cancel(&role->lookup);
        role_release(role);
        role->pid = 0;
}

/* The compositor: the peer of a connection to $WAYLAND_DISPLAY's socket
 * (a name below $XDG_RUNTIME_DIR, or a path); 0 outside a Wayland session */
static pid_t compositor_pid(void) {
        const char *display = getenv("WAYLAND_DISPLAY"), *dir = getenv("XDG_RUNTIME_DIR");
        if (!display || !*display || (display[0] != '/' && (!dir || !*dir)))
                return 0;
        g_autofree char *path = display[0] == '/' ? g_strdup(display) : g_build_filename(dir, display, NULL);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return 0;
        strcpy(sa.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct ucred cred = { 0 };
        socklen_t len = sizeof(cred);
        bool ok = fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0 &&
                  getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
        if (fd >= 0)
                close(fd);
        return ok ? cred.pid : 0;
}

/* fridged came (back): its holds of the last one are gone */
static void on_fridged(GDBusConnection *c, const char *name, const char *owner, gpointer userdata) {
        Roles *r = userdata;
        for (size_t i = 0; i < G_N_ELEMENTS(r->roles); i++)
                role_hold(&r->roles[i]);
}

int roles_new(GDBusConnection *session, GDBusConnection *system, Roles **ret) {
        Roles *r = g_new0(Roles, 1);
        r->session = g_object_ref(session);
        r->system = g_object_ref(system);
        for (size_t i = 0; i < G_N_ELEMENTS(r->roles); i++) {
                Role *role = &r->roles[i];
                *role = (Role) { .owner = r, .name = ui_roles[i], .fd = -1 };
                if (g_str_equal(role->name, UI_ROLE_COMPOSITOR))
                        role->pid = compositor_pid(); /* held when fridged appears */
                else
                        role->watch = g_bus_watch_name_on_connection(session, role->name,
                                                                     G_BUS_NAME_WATCHER_FLAGS_NONE, on_appeared,
                                                                     on_vanished, role, NULL);
        }
        r->fridged_watch = g_bus_watch_name_on_connection(system, FRIDGE_BUS_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                          on_fridged, NULL, r, NULL);
        *ret = r;
        return 0;
}

Roles *roles_free(Roles *r) {
        if (!r)
                return NULL;
        g_bus_unwatch_name(r->fridged_watch);
        for (size_t i = 0; i < G_N_ELEMENTS(r->roles); i++) {
                if (r->roles[i].watch)
                        g_bus_unwatch_name(r->roles[i].watch);
                cancel(&r->roles[i].lookup);
                role_release(&r->roles[i]);
        }
        g_clear_object(&r->session);
        g_clear_object(&r->system);
        g_free(r);
        return NULL;
}
