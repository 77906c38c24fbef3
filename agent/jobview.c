/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* KDE's job view: one org.kde.JobViewV2 a cycle. */
#include "jobview.h"

#include <stdbool.h>

#define JOBVIEW_NAME "org.kde.JobViewServer"
#define JOBVIEW_PATH "/JobViewServer"
#define JOBVIEW_SERVER_IFACE "org.kde.JobViewServer"
#define JOBVIEW_IFACE "org.kde.JobViewV2"
#define JOBVIEW_CALL_TIMEOUT_MS 5000
#define JOBVIEW_KILLABLE 0x0001
#define JOBVIEW_ERR_USER_CANCELED 1     /* KIO::ERR_USER_CANCELED */

typedef struct Update {
        int percent;
        char *info, *label, *status;
} Update;

struct JobView {
        GDBusConnection *bus;
        const JobViewOps *ops;
        void *userdata;
        GCancellable *cancel;
        char *path;             /* NULL until requestView answered */
        guint cancel_sub;
        Update pending;         /* the latest update while there is no path yet */
        bool have_pending;
        char *end_message;      /* jobview_end() before the path: sent with it */
        bool end_cancelled;     /* jobview_cancelled() before the path */
        bool ended;
};

static void update_clear(Update *u) {
        g_clear_pointer(&u->info, g_free);
        g_clear_pointer(&u->label, g_free);
        g_clear_pointer(&u->status, g_free);
}

static void call(JobView *v, const char *method, GVariant *args) {
        g_dbus_connection_call(v->bus, JOBVIEW_NAME, v->path, JOBVIEW_IFACE, method, args, NULL,
                               G_DBUS_CALL_FLAGS_NONE, JOBVIEW_CALL_TIMEOUT_MS, NULL, NULL, NULL);
}

static void send_update(JobView *v, const Update *u) {
        call(v, "setPercent", g_variant_new("(u)", (guint32) u->percent));
        call(v, "setInfoMessage", g_variant_new("(s)", u->info));
        call(v, "setDescriptionField", g_variant_new("(uss)", 0, u->label, u->status));
}

static void send_end(JobView *v, const char *message) {
        if (v->end_cancelled)
                call(v, "setError", g_variant_new("(u)", (guint32) JOBVIEW_ERR_USER_CANCELED));
        call(v, "terminate", g_variant_new("(s)", message));
        g_dbus_connection_signal_unsubscribe(v->bus, v->cancel_sub);
        v->cancel_sub = 0;
}

static void on_cancel_requested(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                                const char *member, GVariant *params, gpointer userdata) {
        JobView *v = userdata;
        if (!v->ended)
                v->ops->cancel(v->userdata);
}

static void on_view(GObject *source, GAsyncResult *res, gpointer userdata) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &e);
        if (g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                return; /* jobview_free() came first */
        JobView *v = userdata;
        if (!reply) {
                v->ops->failed(v->userdata, e->message);
                return;
        }
        g_variant_get(reply, "(o)", &v->path);
        /* From the job view server only: a click on stop means Cancel */
        v->cancel_sub = g_dbus_connection_signal_subscribe(v->bus, JOBVIEW_NAME, JOBVIEW_IFACE, "cancelRequested",
                                                           v->path, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                           on_cancel_requested, v, NULL);
        if (v->have_pending)
                send_update(v, &v->pending);
        if (v->end_message)
                send_end(v, v->end_message);
}

int jobview_new(GDBusConnection *session, const JobViewOps *ops, void *userdata, JobView **ret) {
        JobView *v = g_new0(JobView, 1);
        v->bus = g_object_ref(session);
        v->ops = ops;
        v->userdata = userdata;
        v->cancel = g_cancellable_new();
        g_dbus_connection_call(session, JOBVIEW_NAME, JOBVIEW_PATH, JOBVIEW_SERVER_IFACE, "requestView",
                               g_variant_new("(ssi)", "fridge", "system-suspend", JOBVIEW_KILLABLE),
                               G_VARIANT_TYPE("(o)"), G_DBUS_CALL_FLAGS_NONE, JOBVIEW_CALL_TIMEOUT_MS, v->cancel,
                               on_view, v);
        *ret = v;
        return 0;
}

JobView *jobview_free(JobView *v) {
        if (!v)
                return NULL;
        g_cancellable_cancel(v->cancel);
        if (v->path && !v->ended)
                send_end(v, "");
        if (v->cancel_sub)
                g_dbus_connection_signal_unsubscribe(v->bus, v->cancel_sub);
        update_clear(&v->pending);
        g_free(v->end_message);
        g_free(v->path);
        g_clear_object(&v->cancel);
        g_clear_object(&v->bus);
        g_free(v);
        return NULL;
}

void jobview_update(JobView *v, int percent, const char *info, const char *label, const char *status) {
        if (v->ended)
                return;
        Update u = { .percent = percent, .info = g_strdup(info), .label = g_strdup(label),
                     .status = g_strdup(status) };
        if (v->path) {
                send_update(v, &u);
                update_clear(&u);
                return;
        }
        update_clear(&v->pending);
        v->pending = u;
        v->have_pending = true;
}

void jobview_end(JobView *v, const char *message) {
        if (v->ended)
                return;
        v->ended = true;
        if (v->path)
                send_end(v, message);
        else
                v->end_message = g_strdup(message);
}

void jobview_cancelled(JobView *v) {
        if (v->ended)
                return;
        v->end_cancelled = true;
        jobview_end(v, "");
}
