/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The org.freedesktop.Notifications client, one call at a time. */
#include "notify.h"

#define NOTIFY_NAME "org.freedesktop.Notifications"
#define NOTIFY_PATH "/org/freedesktop/Notifications"
#define NOTIFY_CALL_TIMEOUT_MS 5000

typedef struct Pending {
        Notify *owner;          /* NULL once the Notify is gone while this call was out */
        NotifySlot *slot;
        bool progress;
        GVariant *params;       /* Notify's arguments but replaces_id, floating no more */
} Pending;

struct Notify {
        GDBusConnection *bus;
        guint action_sub, closed_sub;
        const NotifyOps *ops;
        void *userdata;
        GQueue queue;           /* Pending*: what goes out next */
        Pending *in_flight;
        GCancellable *cancel;
        bool absent_logged;     /* the server's absence was logged; cleared by an answer */
        bool renew_updates;     /* notify_set_renew_updates() */
};

NotifySlot *notify_slot_new(void) {
        return g_atomic_rc_box_new0(NotifySlot);
}

NotifySlot *notify_slot_ref(NotifySlot *s) {
        return g_atomic_rc_box_acquire(s);
}

void notify_slot_unref(NotifySlot *s) {
        if (s)
                g_atomic_rc_box_release(s);
}

static void pending_free(Pending *p) {
        notify_slot_unref(p->slot);
        g_variant_unref(p->params);
        g_free(p);
}

static void on_action(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                      const char *member, GVariant *params, gpointer userdata) {
        Notify *n = userdata;
        uint32_t id;
        const char *key;
        if (!g_variant_is_of_type(params, G_VARIANT_TYPE("(us)")))
                return;
        g_variant_get(params, "(u&s)", &id, &key);
        n->ops->action(n->userdata, id, key);
}

static void on_closed(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                      const char *member, GVariant *params, gpointer userdata) {
        Notify *n = userdata;
        uint32_t id, reason;
        if (!g_variant_is_of_type(params, G_VARIANT_TYPE("(uu)")))
                return;
        g_variant_get(params, "(uu)", &id, &reason);
        n->ops->closed(n->userdata, id, reason);
}

int notify_new(GDBusConnection *session, const NotifyOps *ops, void *userdata, Notify **ret) {
        Notify *n = g_new0(Notify, 1);
        n->bus = g_object_ref(session);
        n->ops = ops;
        n->userdata = userdata;
        n->cancel = g_cancellable_new();
        g_queue_init(&n->queue);
        /* From the notification server only: any client of the session
         * bus may send a signal of that name, and a click means Cancel */
        n->action_sub = g_dbus_connection_signal_subscribe(session, NOTIFY_NAME, NOTIFY_NAME, "ActionInvoked", NOTIFY_PATH,
                                                           NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_action, n, NULL);
        n->closed_sub = g_dbus_connection_signal_subscribe(session, NOTIFY_NAME, NOTIFY_NAME, "NotificationClosed",
                                                           NOTIFY_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_closed, n,
                                                           NULL);
        *ret = n;
        return 0;
}

Notify *notify_free(Notify *n) {
        if (!n)
                return NULL;
        g_cancellable_cancel(n->cancel);
        g_dbus_connection_signal_unsubscribe(n->bus, n->action_sub);
        g_dbus_connection_signal_unsubscribe(n->bus, n->closed_sub);
        g_queue_clear_full(&n->queue, (GDestroyNotify) pending_free);
        /* the call's callback frees it, once cancelled */
        if (n->in_flight)
                n->in_flight->owner = NULL;
        g_clear_object(&n->cancel);
        g_clear_object(&n->bus);
        g_free(n);
        return NULL;
}

static void send_next(Notify *n);

static void close_id(Notify *n, uint32_t id) {
        g_dbus_connection_call(n->bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_NAME, "CloseNotification",
                               g_variant_new("(u)", id), NULL, G_DBUS_CALL_FLAGS_NONE, NOTIFY_CALL_TIMEOUT_MS,
                               n->cancel, NULL, NULL);
}

/* A progress update that crossed the user's dismissal on the way made the
 * server show a new notification: it goes too */
static void close_again(Notify *n, NotifySlot *slot) {
        close_id(n, slot->id);
        slot->id = 0;
}

static void on_notify_reply(GObject *source, GAsyncResult *res, gpointer userdata) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &e);
        Pending *p = userdata;
        Notify *n = p->owner;
        if (!n) {
                pending_free(p); /* notify_free() left it to us */
                return;
        }
        n->in_flight = NULL;
        if (reply) {
                if (n->absent_logged)
                        g_message("The notification server answers again");
                n->absent_logged = false;
                g_variant_get(reply, "(u)", &p->slot->id);
                if (p->progress && p->slot->dismissed)
                        close_again(n, p->slot);
        } else if (!n->absent_logged) {
                /* Once: without a server every update would fail the same way */
                g_message("No notification shown (%s); waiting for a notification server", e->message);
                n->absent_logged = true;
        }
        pending_free(p);
        send_next(n);
}

static void send_next(Notify *n) {
        if (n->in_flight || g_queue_is_empty(&n->queue))
                return;
        Pending *p = n->in_flight = g_queue_pop_head(&n->queue);
        const char *app, *icon, *summary, *body;
        g_autoptr(GVariant) actions = NULL, hints = NULL;
        int32_t expire;
        g_variant_get(p->params, "(&s&s&s&s@as@a{sv}i)", &app, &icon, &summary, &body, &actions, &hints, &expire);
        uint32_t replaces = p->slot->id;
        if (n->renew_updates && replaces) {
                /* closed first: GNOME Shell 43 shows a queued banner only
                 * when something happens after the one shown was hidden,
                 * and the new Notify is that something. Every update: one
                 * in place after a click (Cancel) would not show at all */
                close_id(n, replaces);
                replaces = 0;
        }
        GVariant *args = g_variant_new("(sus" "ss@as@a{sv}i)", app, replaces, icon, summary, body, actions,
                                       hints, expire);
        g_dbus_connection_call(n->bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_NAME, "Notify", args, G_VARIANT_TYPE("(u)"),
                               G_DBUS_CALL_FLAGS_NONE, NOTIFY_CALL_TIMEOUT_MS, n->cancel, on_notify_reply, p);
}

static GVariant *request_params(const NotifyRequest *req) {
        GVariantBuilder hints;
        g_variant_builder_init(&hints, G_VARIANT_TYPE("a{sv}"));
        if (req->value >= 0)
                g_variant_builder_add(&hints, "{sv}", "value", g_variant_new_int32(req->value));
        g_variant_builder_add(&hints, "{sv}", "urgency", g_variant_new_byte(req->urgency));
        g_variant_builder_add(&hints, "{sv}", "desktop-entry", g_variant_new_string("fridge-agent"));
        g_variant_builder_add(&hints, "{sv}", "category", g_variant_new_string("device"));
        /* GNOME Shell would otherwise drop it when Cancel is pressed, and
         * the cycle's result would pop up as a new one */
        if (req->progress)
                g_variant_builder_add(&hints, "{sv}", "resident", g_variant_new_boolean(TRUE));
        const char *const none[] = { NULL };
        GVariant *actions = g_variant_new_strv(req->actions ? req->actions : none, -1);
        return g_variant_ref_sink(g_variant_new("(ssss@asa{sv}i)", "fridge", "system-suspend", req->summary,
                                                req->body, actions, &hints, req->expire_ms));
}

void notify_set_renew_updates(Notify *n, bool renew) {
        n->renew_updates = renew;
}

void notify_show(Notify *n, NotifySlot *slot, const NotifyRequest *req) {
        if (req->progress && slot->dismissed)
                return;
        /* A progress update nobody saw yet is stale once a newer one comes */
        GList *tail = g_queue_peek_tail_link(&n->queue);
        if (tail && ((Pending *) tail->data)->slot == slot && ((Pending *) tail->data)->progress) {
                pending_free(tail->data);
                g_queue_delete_link(&n->queue, tail);
        }
        Pending *p = g_new0(Pending, 1);
        p->owner = n;
        p->slot = notify_slot_ref(slot);
        p->progress = req->progress;
        p->params = request_params(req);
        g_queue_push_tail(&n->queue, p);
        send_next(n);
}

static void drop_queued_progress(Notify *n, NotifySlot *slot) {
        for (GList *l = n->queue.head; l;) {
                GList *next = l->next;
                Pending *p = l->data;
                if (p->slot == slot && p->progress) {
                        pending_free(p);
                        g_queue_delete_link(&n->queue, l);
                }
                l = next;
        }
}

void notify_slot_closed(Notify *n, NotifySlot *slot, uint32_t reason) {
        slot->id = 0;
        if (reason != NOTIFY_CLOSED_DISMISSED)
                return;
        slot->dismissed = true;
        drop_queued_progress(n, slot);
}
