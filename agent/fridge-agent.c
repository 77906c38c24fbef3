/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridge-agent: a user's view of fridged's cycles. Every cycle it sees is
 * one notification on the session bus, updated as the cycle goes (at most
 * 4 times a second) with a Cancel action while Cancel can still stop the
 * sleep, and turned into the result when the cycle ends.
 */
#include <glib-unix.h>
#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle-watch.h"
#include "fridge-config.h"
#include "jobview.h"
#include "notify.h"
#include "roles.h"
#include "text.h"

#define UPDATE_INTERVAL_USEC (G_USEC_PER_SEC / 4)
/* Where each update costs the banner its Cancel button (renewed updates,
 * GNOME Shell before 46): text that moves on its own, such as a
 * countdown, goes out this seldom; a new phase or percent at once */
#define RENEW_INTERVAL_USEC (5 * G_USEC_PER_SEC)
/* One agent a session: the user unit and the autostart file may both run */
#define AGENT_BUS_NAME "io.fridge.Agent"
#define ACTION_CANCEL "cancel"

typedef struct Agent {
        GMainLoop *loop;
        GDBusConnection *session;       /* borrowed */
        int status;                     /* the exit status: 1 once a bus was lost */
        CycleWatch *watch;
        Notify *notify;
        /* the cycle shown now */
        uint64_t cycle;
        NotifySlot *slot;
        char *kind;
        uint64_t slept_usec;            /* UINT64_MAX until Resumed */
        char *wake_reason;
        char *cancel_refused;           /* why the last Cancel was refused, shown until the cycle ends */
        int64_t last_update;            /* monotonic µs of the last progress update */
        char *shown_step;               /* the phase, percent and Cancel of that update */
        bool renew_updates;             /* the server drops an updated notification's buttons */
        guint update_timer;
        /* where the progress goes */
        ProgressStyle style_setting;    /* the user's: --progress-style= or agent.conf */
        ProgressStyle server_style;     /* the notification server's, by its name */
        guint server_watch;
        GCancellable *server_info;      /* the GetServerInformation call out */
        JobView *job;                   /* this cycle's KDE job view */
        bool job_failed;                /* none could be had: notifications this cycle */
        bool job_ended;                 /* withdrawn past the point of no return */
} Agent;

static void agent_forget_cycle(Agent *a) {
        g_clear_handle_id(&a->update_timer, g_source_remove);
        g_clear_pointer(&a->job, jobview_free);
        a->job_failed = a->job_ended = false;
        g_clear_pointer(&a->slot, notify_slot_unref);
        g_clear_pointer(&a->kind, g_free);
        g_clear_pointer(&a->wake_reason, g_free);
        g_clear_pointer(&a->cancel_refused, g_free);
        g_clear_pointer(&a->shown_step, g_free);
        a->cycle = 0;
        a->slept_usec = UINT64_MAX;
}

static ProgressStyle agent_style(const Agent *a) {
        ProgressStyle s = a->style_setting != PROGRESS_STYLE_AUTO ? a->style_setting : a->server_style;
        return s == PROGRESS_STYLE_JOB_VIEW && a->job_failed ? PROGRESS_STYLE_VALUE : s;
}

static const JobViewOps agent_job_ops;

/* The job view carries the bar, the phase and what it waits on; past the
 * point of no return it is withdrawn, saying why. A cycle that ended
 * early (thawing) keeps it until its result says how it ends
 * (agent_end_job()) */
static void agent_show_job(Agent *a, const AgentCycle *c) {
        if (a->job_ended || (a->job && g_strcmp0(c->state, "thawing") == 0 && !g_str_equal(c->phase, "thaw")))
                return;
        if (!a->job)
                (void) jobview_new(a->session, &agent_job_ops, a, &a->job);
        const char *why = text_no_cancel_reason(c);
        if (why || !c->cancellable) {
                jobview_end(a->job, why ? why : "");
                a->job_ended = true;
                return;
        }
        jobview_update(a->job, text_value(c->progress), text_phase(c), _("Status"),
                       c->progress_text && *c->progress_text ? c->progress_text : text_phase(c));
}

/* What moves the bar on: the phase, the percent, whether Cancel is offered */
static char *agent_step(const AgentCycle *c) {
        return g_strdup_printf("%s %d %d", text_phase(c), text_value(c->progress), (int) c->cancellable);
}

static void agent_show_progress(Agent *a) {
        const AgentCycle *c = cycle_watch_cycle(a->watch);
        if (!a->slot || c->id != a->cycle || !agent_cycle_running(c))
                return;
        ProgressStyle style = agent_style(a);
        a->last_update = g_get_monotonic_time();
        g_free(a->shown_step);
        a->shown_step = agent_step(c);
        if (style == PROGRESS_STYLE_JOB_VIEW) {
                agent_show_job(a, c);
                return;
        }
        const char *const cancel[] = { ACTION_CANCEL, _("Cancel"), NULL };
        g_autofree char *summary = text_summary(c->kind);
        g_autofree char *text = text_body(c);
        g_autofree char *refused = a->cancel_refused ? g_markup_escape_text(a->cancel_refused, -1) : NULL;
        g_autofree char *body = refused ? g_strdup_printf(_("%s\nCancel was refused: %s"), text, refused)
                                        : g_strdup(text);
        if (style == PROGRESS_STYLE_TEXT) {
                /* first: a GNOME Shell banner shows one line of the body
                 * until it is hovered, and that line is the bar */
                g_autofree char *bar = text_bar(text_value(c->progress));
                g_autofree char *with_bar = g_strdup_printf("%s\n%s", bar, body);
                g_free(body);
                body = g_steal_pointer(&with_bar);
        }
        NotifyRequest req = {
                .summary = summary, .body = body, .actions = c->cancellable ? cancel : NULL,
                .value = style == PROGRESS_STYLE_VALUE ? text_value(c->progress) : -1, .urgency = 1,
                .expire_ms = 0, .progress = true,
        };
        notify_show(a->notify, a->slot, &req);
}

static void on_job_cancel(void *userdata) {
        Agent *a = userdata;
        g_message("Cancel of cycle %" G_GUINT64_FORMAT " asked for (the job view's stop button)", a->cycle);
        cycle_watch_cancel(a->watch, a->cycle);
}

static void on_job_failed(void *userdata, const char *why) {
        Agent *a = userdata;
        g_message("No job view (%s); the progress goes to a notification", why);
        a->job_failed = true;
        g_clear_pointer(&a->job, jobview_free);
        agent_show_progress(a);
}

static const JobViewOps agent_job_ops = {
        .cancel = on_job_cancel,
        .failed = on_job_failed,
};

static gboolean on_update_timer(gpointer userdata) {
        Agent *a = userdata;
        a->update_timer = 0;
        agent_show_progress(a);
        return G_SOURCE_REMOVE;
}

/* The least time between two updates: longer where an update costs the
 * banner its buttons and the bar has not moved on */
static int64_t agent_update_interval(Agent *a) {
        if (!a->renew_updates || !a->shown_step)
                return UPDATE_INTERVAL_USEC;
        g_autofree char *step = agent_step(cycle_watch_cycle(a->watch));
        return g_str_equal(step, a->shown_step) ? RENEW_INTERVAL_USEC : UPDATE_INTERVAL_USEC;
}

/* Throttled: the latest state goes out at most every agent_update_interval() */
static void agent_schedule_update(Agent *a) {
        int64_t interval = agent_update_interval(a);
        if (a->update_timer && interval == RENEW_INTERVAL_USEC)
                return;
        g_clear_handle_id(&a->update_timer, g_source_remove);
        int64_t due = a->last_update ? a->last_update + interval : 0;
        int64_t now = g_get_monotonic_time();
        if (due <= now) {
                agent_show_progress(a);
                return;
        }
        a->update_timer = g_timeout_add((guint) ((due - now + 999) / 1000), on_update_timer, a);
}

static void on_changed(void *userdata, const AgentCycle *c) {
        Agent *a = userdata;
        if (c->id != a->cycle) {
                agent_forget_cycle(a);
                a->cycle = c->id;
                a->slot = notify_slot_new();
                a->kind = g_strdup(c->kind);
                a->last_update = 0;
        }
        agent_schedule_update(a);
}

static void on_resumed(void *userdata, uint64_t cycle, uint64_t slept_usec, const char *wake_reason) {
        Agent *a = userdata;
        if (cycle != a->cycle)
                return;
        a->slept_usec = slept_usec;
        g_free(a->wake_reason);
        a->wake_reason = g_strdup(wake_reason);
}

/* A finished cycle's notification, waiting for its image figures */
typedef struct Finished {
        Agent *agent;
        NotifySlot *slot;
        char *summary, *body;
        int urgency;
} Finished;

static void finished_free(Finished *f) {
        notify_slot_unref(f->slot);
        g_free(f->summary);
        g_free(f->body);
        g_free(f);
}

static void finished_show(const ImageWrite *image, void *userdata) {
        Finished *f = userdata;
        if (image) {
                g_autofree char *body = text_body_with_image(f->body, image);
                NotifyRequest req = {
                        .summary = f->summary, .body = body, .value = -1, .urgency = f->urgency, .expire_ms = -1,
                };
                notify_show(f->agent->notify, f->slot, &req);
        }
        finished_free(f);
}

/* The result replaces the cycle's notification; a cycle never seen
 * running (one that ended at once, or an earlier fridged's Interrupted
 * one) gets a notification of its own */
/* Cancelled, the view goes as a job the user stopped does (Plasma drops
 * it); failed, it says why; woken, it is done */
static void agent_end_job(Agent *a, const char *result, const char *error, const char *message) {
        if (!a->job || a->job_ended)
                return;
        if (g_str_has_suffix(error, ".Cancelled"))
                jobview_cancelled(a->job);
        else
                jobview_end(a->job, g_str_equal(result, "failed") ? message : "");
        a->job_ended = true;
}

static void on_finished(void *userdata, uint64_t cycle, const char *result, const char *error,
                        const char *message) {
        Agent *a = userdata;
        if (cycle == a->cycle)
                agent_end_job(a, result, error, message);
        if (cycle != a->cycle) {
                agent_forget_cycle(a);
                a->slot = notify_slot_new();
                a->kind = g_strdup(cycle_watch_cycle(a->watch)->kind);
        } else if (a->slot && a->slot->dismissed && g_str_equal(result, "done")) {
                agent_forget_cycle(a);
                return;
        }
        Finished *f = g_new(Finished, 1);
        *f = (Finished) { a, notify_slot_ref(a->slot), text_result_summary(a->kind, result, error),
                          text_result_body(result, error, message, a->slept_usec, a->wake_reason),
                          text_result_urgency(result) };
        /* fridge's image write: its figures are the cycle's record */
        if (g_strcmp0(a->kind, "hibernate") == 0)
                cycle_watch_image_write(a->watch, cycle, finished_show, f);
        else
                finished_show(&(ImageWrite) {}, f);
        agent_forget_cycle(a);
}

/* A notification that went on saying "Suspending…" would lie: the next
 * fridged reports how the cycle ended (Interrupted) */
static void on_vanished(void *userdata) {
        Agent *a = userdata;
        if (!a->slot)
                return;
        g_clear_handle_id(&a->update_timer, g_source_remove);
        g_autofree char *summary = text_summary(a->kind);
        NotifyRequest req = {
                .summary = summary, .body = _("fridged stopped during the cycle; waiting for it to come back"),
                .value = -1, .urgency = 1, .expire_ms = 0, .progress = true,
        };
        notify_show(a->notify, a->slot, &req);
}

/* The user pressed Cancel and nothing stopped: the notification says why */
static void on_cancel_refused(void *userdata, uint64_t cycle, const char *message) {
        Agent *a = userdata;
        if (cycle != a->cycle)
                return;
        g_free(a->cancel_refused);
        a->cancel_refused = g_strdup(message);
        agent_schedule_update(a);
}

static void on_action(void *userdata, uint32_t id, const char *key) {
        Agent *a = userdata;
        if (!a->slot || a->slot->id != id || !g_str_equal(key, ACTION_CANCEL))
                return;
        g_message("Cancel of cycle %" G_GUINT64_FORMAT " asked for", a->cycle);
        cycle_watch_cancel(a->watch, a->cycle);
}

/* A dismissed notification stays away for the rest of the cycle; only a
 * cycle that did not sleep as asked is worth showing again */
static void on_closed(void *userdata, uint32_t id, uint32_t reason) {
        Agent *a = userdata;
        if (!a->slot || a->slot->id != id || id == 0)
                return;
        if (reason == NOTIFY_CLOSED_DISMISSED)
                g_message("The user dismissed cycle %" G_GUINT64_FORMAT "'s notification", a->cycle);
        notify_slot_closed(a->notify, a->slot, reason);
}

/* ---- the notification server: who it is decides where the progress goes ---- */

static void on_server_info(GObject *source, GAsyncResult *res, gpointer userdata) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) r = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &e);
        if (g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                return;
        Agent *a = userdata;
        const char *name = NULL, *vendor = NULL, *version = NULL, *spec = NULL;
        if (r)
                g_variant_get(r, "(&s&s&s&s)", &name, &vendor, &version, &spec);
        a->server_style = progress_style_for_server(name, vendor);
        bool renew = a->renew_updates = text_server_drops_updated_actions(name, version);
        notify_set_renew_updates(a->notify, renew);
        if (renew)
                g_message("%s drops the buttons of a notification it updates: each update is a new one", name);
        if (r)
                g_message("Notification server %s (%s %s): progress as %s%s", name, vendor, version,
                          progress_style_to_string(a->server_style),
                          a->style_setting != PROGRESS_STYLE_AUTO ? ", but the settings say otherwise" : "");
        else
                g_message("The notification server does not say who it is (%s): progress as %s", e->message,
                          progress_style_to_string(a->server_style));
}

static void on_server_appeared(GDBusConnection *c, const char *name, const char *owner, gpointer userdata) {
        Agent *a = userdata;
        g_cancellable_cancel(a->server_info);
        g_clear_object(&a->server_info);
        a->server_info = g_cancellable_new();
        g_dbus_connection_call(c, name, "/org/freedesktop/Notifications", name, "GetServerInformation", NULL,
                               G_VARIANT_TYPE("(ssss)"), G_DBUS_CALL_FLAGS_NONE, 5000, a->server_info,
                               on_server_info, a);
}

static void on_server_vanished(GDBusConnection *c, const char *name, gpointer userdata) {
        Agent *a = userdata;
        a->server_style = PROGRESS_STYLE_VALUE;
        a->renew_updates = false;
        notify_set_renew_updates(a->notify, false);
}

static const NotifyOps agent_notify_ops = {
        .action = on_action,
        .closed = on_closed,
};

static const CycleWatchOps agent_watch_ops = {
        .changed = on_changed,
        .resumed = on_resumed,
        .finished = on_finished,
        .vanished = on_vanished,
        .cancel_refused = on_cancel_refused,
};

static gboolean on_term(gpointer userdata) {
        g_main_loop_quit(userdata);
        return G_SOURCE_CONTINUE;
}

/* Without its buses the agent is of no use: it exits 1, and the user
 * unit's Restart=on-failure brings it back */
static void on_bus_closed(GDBusConnection *c, gboolean remote_peer_vanished, GError *e, gpointer userdata) {
        Agent *a = userdata;
        g_message("Lost a bus connection: %s", e ? e->message : "closed");
        a->status = 1;
        g_main_loop_quit(a->loop);
}

/* fridge's catalog; FRIDGE_LOCALEDIR only for the tests, which point it at
 * the build tree's po/ (never when set-uid) */
static void i18n_init(void) {
#if ENABLE_NLS
        const char *dir = secure_getenv("FRIDGE_LOCALEDIR");
        (void) bindtextdomain(GETTEXT_PACKAGE, dir && *dir ? dir : LOCALEDIR);
        (void) bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
        (void) textdomain(GETTEXT_PACKAGE);
#endif
}

static GDBusConnection *bus_get(GBusType type, const char *which) {
        g_autoptr(GError) e = NULL;
        GDBusConnection *c = g_bus_get_sync(type, NULL, &e);
        if (!c)
                /* Translators: the bus, system or session; D-Bus's message */
                g_printerr(_("fridge-agent: cannot connect to the %s bus: %s\n"), which, e->message);
        else
                g_dbus_connection_set_exit_on_close(c, FALSE);
        return c;
}

/* 0: this one runs; 1: another agent has the name already */
static int own_name(GDBusConnection *session) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) r = g_dbus_connection_call_sync(
                session, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                g_variant_new("(su)", AGENT_BUS_NAME, 4 /* DBUS_NAME_FLAG_DO_NOT_QUEUE */), G_VARIANT_TYPE("(u)"),
                G_DBUS_CALL_FLAGS_NONE, -1, NULL, &e);
        if (!r) {
                g_printerr(_("fridge-agent: cannot own %s: %s\n"), AGENT_BUS_NAME, e->message);
                return -1;
        }
        uint32_t reply;
        g_variant_get(r, "(u)", &reply);
        return reply == 1 /* DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER */ ? 0 : 1;
}

/* $XDG_CONFIG_HOME/fridge/agent.conf's [Progress] Style=: a bad file or
 * value is said and the choice stays automatic */
static ProgressStyle settings_style(void) {
        g_autofree char *path = g_build_filename(g_get_user_config_dir(), "fridge", "agent.conf", NULL);
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_autoptr(GError) e = NULL;
        if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &e)) {
                if (!g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT))
                        g_warning("%s: %s; the progress style is chosen by the notification server", path,
                                  e->message);
                return PROGRESS_STYLE_AUTO;
        }
        g_autofree char *v = g_key_file_get_string(kf, "Progress", "Style", NULL);
        if (!v)
                return PROGRESS_STYLE_AUTO;
        ProgressStyle s = progress_style_from_string(g_strstrip(v));
        if (s < 0)
                g_warning("%s: [Progress] Style=%s is not auto, value, text or job-view; the progress style is "
                          "chosen by the notification server", path, v);
        return s < 0 ? PROGRESS_STYLE_AUTO : s;
}

static int parse_args(int argc, char **argv, ProgressStyle *ret_style) {
        gboolean version = FALSE;
        g_autofree char *style = NULL;
        const GOptionEntry entries[] = {
                { "version", 0, 0, G_OPTION_ARG_NONE, &version, N_("Print the version and exit"), NULL },
                { "progress-style", 0, 0, G_OPTION_ARG_STRING, &style,
                  N_("Where the progress is drawn: auto, value, text or job-view"), N_("STYLE") },
                {},
        };
        g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
        g_option_context_set_summary(ctx, _("Shows fridge's sleep cycles as desktop notifications, with Cancel."));
        g_option_context_add_main_entries(ctx, entries, GETTEXT_PACKAGE);
        g_autoptr(GError) e = NULL;
        if (!g_option_context_parse(ctx, &argc, &argv, &e)) {
                g_printerr("fridge-agent: %s\n", e->message);
                return 2;
        }
        if (argc > 1) {
                g_printerr(_("fridge-agent: unexpected argument '%s'\n"), argv[1]);
                return 2;
        }
        if (version) {
                printf("fridge-agent %s\n", FRIDGE_VERSION);
                return 0;
        }
        *ret_style = style ? progress_style_from_string(style) : settings_style();
        if (*ret_style < 0) {
                g_printerr(_("fridge-agent: --progress-style=%s: expected auto, value, text or job-view\n"), style);
                return 2;
        }
        return -1;
}

int main(int argc, char **argv) {
        setlocale(LC_ALL, "");
        i18n_init();
        ProgressStyle style = PROGRESS_STYLE_AUTO;
        int r = parse_args(argc, argv, &style);
        if (r >= 0)
                return r;

        g_autoptr(GDBusConnection) system = bus_get(G_BUS_TYPE_SYSTEM, "system");
        g_autoptr(GDBusConnection) session = system ? bus_get(G_BUS_TYPE_SESSION, "session") : NULL;
        if (!session)
                return 1;
        r = own_name(session);
        if (r != 0) {
                if (r > 0)
                        g_message("Another fridge-agent runs in this session (%s is taken); exiting", AGENT_BUS_NAME);
                return r < 0 ? 1 : 0;
        }

        Agent a = { .loop = g_main_loop_new(NULL, FALSE), .slept_usec = UINT64_MAX, .session = session,
                    .style_setting = style, .server_style = PROGRESS_STYLE_VALUE };
        g_signal_connect(system, "closed", G_CALLBACK(on_bus_closed), &a);
        g_signal_connect(session, "closed", G_CALLBACK(on_bus_closed), &a);
        (void) notify_new(session, &agent_notify_ops, &a, &a.notify);
        a.server_watch = g_bus_watch_name_on_connection(session, "org.freedesktop.Notifications",
                                                        G_BUS_NAME_WATCHER_FLAGS_NONE, on_server_appeared,
                                                        on_server_vanished, &a, NULL);
        (void) cycle_watch_new(system, &agent_watch_ops, &a, &a.watch);
        g_autoptr(Roles) roles = NULL;
        (void) roles_new(session, system, &roles);
        g_unix_signal_add(SIGTERM, on_term, a.loop);
        g_unix_signal_add(SIGINT, on_term, a.loop);
        g_main_loop_run(a.loop);

        g_signal_handlers_disconnect_by_data(system, &a);
        g_signal_handlers_disconnect_by_data(session, &a);
        agent_forget_cycle(&a);
        g_bus_unwatch_name(a.server_watch);
        g_cancellable_cancel(a.server_info);
        g_clear_object(&a.server_info);
        cycle_watch_free(a.watch);
        notify_free(a.notify);
        g_main_loop_unref(a.loop);
        return a.status;
}
