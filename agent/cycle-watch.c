/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridged's side: the name watched, the properties and the signals. */
#include "cycle-watch.h"

#include "fridge-config.h"

struct CycleWatch {
        GDBusConnection *bus;
        const CycleWatchOps *ops;
        void *userdata;
        guint watch;
        guint props_sub, signals_sub;
        char *owner;                    /* the name's owner, NULL while fridged is away */
        GCancellable *cancel;           /* the GetAll of the owner now */
        GCancellable *cancel_calls;     /* Cancel and ListCycles calls, which may outlive nothing of this */
        bool seen;                      /* fridged was on the bus once: its leaving is worth a line */
        AgentCycle cycle;
};

const AgentCycle *cycle_watch_cycle(const CycleWatch *w) {
        return &w->cycle;
}

static void set_string(char **field, GVariant *v) {
        if (!g_variant_is_of_type(v, G_VARIANT_TYPE_STRING))
                return;
        g_free(*field);
        *field = g_variant_dup_string(v, NULL);
}

static void apply_property(AgentCycle *c, const char *name, GVariant *v) {
        if (g_str_equal(name, "State"))
                set_string(&c->state, v);
        else if (g_str_equal(name, "Kind"))
                set_string(&c->kind, v);
        else if (g_str_equal(name, "Phase"))
                set_string(&c->phase, v);
        else if (g_str_equal(name, "ProgressText"))
                set_string(&c->progress_text, v);
        else if (g_str_equal(name, "StartedBy"))
                set_string(&c->started_by, v);
        else if (g_str_equal(name, "CycleId") && g_variant_is_of_type(v, G_VARIANT_TYPE_UINT64))
                c->id = g_variant_get_uint64(v);
        else if (g_str_equal(name, "Progress") && g_variant_is_of_type(v, G_VARIANT_TYPE_DOUBLE))
                c->progress = g_variant_get_double(v);
        else if (g_str_equal(name, "Cancellable") && g_variant_is_of_type(v, G_VARIANT_TYPE_BOOLEAN))
                c->cancellable = g_variant_get_boolean(v);
}

static void apply_properties(CycleWatch *w, GVariant *dict) {
        GVariantIter it;
        const char *name;
        GVariant *v;
        g_variant_iter_init(&it, dict);
        while (g_variant_iter_loop(&it, "{&sv}", &name, &v))
                apply_property(&w->cycle, name, v);
        if (agent_cycle_running(&w->cycle))
                w->ops->changed(w->userdata, &w->cycle);
}

/* Only the owner of io.fridge.Fridge1 speaks for fridged. A fridged that
 * just took the name reports an earlier one's unfinished cycle at once,
 * possibly before its appearance reached us: the bus says who owns it */
static bool from_fridged(CycleWatch *w, const char *sender) {
        if (w->owner && g_str_equal(sender, w->owner))
                return true;
        g_autoptr(GVariant) r = g_dbus_connection_call_sync(w->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                            "org.freedesktop.DBus", "GetNameOwner",
                                                            g_variant_new("(s)", FRIDGE_BUS_NAME),
                                                            G_VARIANT_TYPE("(s)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL,
                                                            NULL);
        const char *owner = NULL;
        if (r)
                g_variant_get(r, "(&s)", &owner);
        return owner && g_str_equal(owner, sender);
}

static void on_props_changed(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                             const char *member, GVariant *params, gpointer userdata) {
        const char *interface;
        g_autoptr(GVariant) changed = NULL;
        if (!g_variant_is_of_type(params, G_VARIANT_TYPE("(sa{sv}as)")) || !from_fridged(userdata, sender))
                return;
        g_variant_get(params, "(&s@a{sv}@as)", &interface, &changed, NULL);
        if (g_str_equal(interface, FRIDGE_INTERFACE))
                apply_properties(userdata, changed);
}

static void on_signal(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                      const char *member, GVariant *params, gpointer userdata) {
        CycleWatch *w = userdata;
        uint64_t cycle, slept;
        const char *a, *b, *d;
        if (!from_fridged(w, sender))
                return;
        if (g_str_equal(member, "Resumed") && g_variant_is_of_type(params, G_VARIANT_TYPE("(tts)"))) {
                g_variant_get(params, "(tt&s)", &cycle, &slept, &a);
                w->ops->resumed(w->userdata, cycle, slept, a);
        } else if (g_str_equal(member, "CycleFinished") && g_variant_is_of_type(params, G_VARIANT_TYPE("(tsss)"))) {
                g_variant_get(params, "(t&s&s&s)", &cycle, &a, &b, &d);
                w->ops->finished(w->userdata, cycle, a, b, d);
        }
}

static void on_get_all(GObject *source, GAsyncResult *res, gpointer userdata) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &e);
        if (g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                return;
        if (!reply) {
                g_warning("Cannot read fridged's properties: %s", e->message);
                return;
        }
        g_autoptr(GVariant) dict = g_variant_get_child_value(reply, 0);
        apply_properties(userdata, dict);
}

static void forget_owner(CycleWatch *w) {
        if (w->cancel)
                g_cancellable_cancel(w->cancel);
        g_clear_object(&w->cancel);
        g_clear_pointer(&w->owner, g_free);
}

static void on_appeared(GDBusConnection *c, const char *name, const char *owner, gpointer userdata) {
        CycleWatch *w = userdata;
        forget_owner(w);
        if (w->seen)
                g_message("fridged is back on the bus (%s)", owner);
        w->seen = true;
        w->owner = g_strdup(owner);
        w->cancel = g_cancellable_new();
        g_dbus_connection_call(c, owner, FRIDGE_OBJECT_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                               g_variant_new("(s)", FRIDGE_INTERFACE), G_VARIANT_TYPE("(a{sv})"),
                               G_DBUS_CALL_FLAGS_NONE, -1, w->cancel, on_get_all, w);
}

static void on_vanished(GDBusConnection *c, const char *name, gpointer userdata) {
        CycleWatch *w = userdata;
        forget_owner(w);
        agent_cycle_clear(&w->cycle);
        if (!w->seen)
                return;
        g_message("fridged left the bus; waiting for it to come back");
        w->ops->vanished(w->userdata);
}

int cycle_watch_new(GDBusConnection *system, const CycleWatchOps *ops, void *userdata, CycleWatch **ret) {
        CycleWatch *w = g_new0(CycleWatch, 1);
        w->bus = g_object_ref(system);
        w->ops = ops;
        w->userdata = userdata;
        w->cancel_calls = g_cancellable_new();
        /* By the well-known name, so that the bus routes a new owner's
         * first signals to us at once; from_fridged() checks the sender */
        w->props_sub = g_dbus_connection_signal_subscribe(system, FRIDGE_BUS_NAME, "org.freedesktop.DBus.Properties",
                                                          "PropertiesChanged", FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                                          G_DBUS_SIGNAL_FLAGS_NONE, on_props_changed, w, NULL);
        w->signals_sub = g_dbus_connection_signal_subscribe(system, FRIDGE_BUS_NAME, FRIDGE_INTERFACE, NULL,
                                                            FRIDGE_OBJECT_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                            on_signal, w, NULL);
        w->watch = g_bus_watch_name_on_connection(system, FRIDGE_BUS_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                  on_appeared, on_vanished, w, NULL);
        *ret = w;
        return 0;
}

CycleWatch *cycle_watch_free(CycleWatch *w) {
        if (!w)
                return NULL;
        g_bus_unwatch_name(w->watch);
        g_dbus_connection_signal_unsubscribe(w->bus, w->props_sub);
        g_dbus_connection_signal_unsubscribe(w->bus, w->signals_sub);
        forget_owner(w);
        g_cancellable_cancel(w->cancel_calls);
        g_clear_object(&w->cancel_calls);
        agent_cycle_clear(&w->cycle);
        g_clear_object(&w->bus);
        g_free(w);
        return NULL;
}

typedef struct CancelCall {
        CycleWatch *watch;
        uint64_t cycle;
} CancelCall;

static void on_cancel_reply(GObject *source, GAsyncResult *res, gpointer userdata) {
        g_autofree CancelCall *call = userdata;
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &e);
        if (reply) {
                g_message("Cycle %" G_GUINT64_FORMAT " cancelled", call->cycle);
                return;
        }
        g_autofree char *remote = g_dbus_error_get_remote_error(e);
        g_dbus_error_strip_remote_error(e);
        g_message("Cancel of cycle %" G_GUINT64_FORMAT " refused: %s%s%s", call->cycle, e->message,
                  remote ? " " : "", remote ? remote : "");
        if (!g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                call->watch->ops->cancel_refused(call->watch->userdata, call->cycle, e->message);
}

/* A password prompt may take the user a while */
void cycle_watch_cancel(CycleWatch *w, uint64_t cycle) {
        CancelCall *call = g_new(CancelCall, 1);
        *call = (CancelCall) { w, cycle };
        g_dbus_connection_call(w->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "Cancel",
                               g_variant_new("(t)", cycle), NULL, G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION,
                               G_MAXINT, w->cancel_calls, on_cancel_reply, call);
}

typedef struct ImageCall {
        uint64_t cycle;
        CycleWatchImageFunc done;
        void *userdata;
} ImageCall;

static void on_list_cycles_reply(GObject *source, GAsyncResult *res, gpointer data) {
        g_autofree ImageCall *call = data;
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) r = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &e);
        /* The watch is gone: the caller only lets go of what it holds */
        if (g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
                call->done(NULL, call->userdata);
                return;
        }
        if (e)
                g_message("No image figures for cycle %" G_GUINT64_FORMAT ": %s", call->cycle, e->message);
        g_autoptr(GVariant) cycles = r ? g_variant_get_child_value(r, 0) : NULL;
        g_autoptr(GVariant) entry = cycles && g_variant_n_children(cycles) > 0 ? g_variant_get_child_value(cycles, 0)
                                                                                : NULL;
        ImageWrite image = entry ? text_image_write(entry, call->cycle) : (ImageWrite) {};
        call->done(&image, call->userdata);
}

/* Asynchronous: the notifications of the next cycle must not wait on it */
void cycle_watch_image_write(CycleWatch *w, uint64_t cycle, CycleWatchImageFunc done, void *userdata) {
        ImageCall *call = g_new(ImageCall, 1);
        *call = (ImageCall) { cycle, done, userdata };
        g_dbus_connection_call(w->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "ListCycles",
                               g_variant_new("(u)", 1u), G_VARIANT_TYPE("(aa{sv})"), G_DBUS_CALL_FLAGS_NONE, 1000,
                               w->cancel_calls, on_list_cycles_reply, call);
}
