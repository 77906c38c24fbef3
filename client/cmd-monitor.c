/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* monitor: print every event of fridged until SIGINT/SIGTERM. For people
 * one line per event, "Member name=value …" with values in JSON notation
 * (quoted, escaped); with --json one object per event. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "bus-dict.h"
#include "bus-json.h"
#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "i18n.h"
#include "json.h"
#include "report.h"

typedef struct SignalFormat {
        const char *member;
        const char *event;              /* the JSON "event", as for a cycle */
        const char *args[4];
} SignalFormat;

static const SignalFormat signal_formats[] = {
        { "SleepImminent", "sleep-imminent", { "cycle", "kind" } },
        { "Resumed",       "resumed",        { "cycle", "slept_usec", "wake_reason" } },
        { "CycleFinished", "finished",       { "cycle", "result", "error", "message" } },
};

typedef struct Monitor {
        const Args *args;
        sd_event *event;
        FILE *out;              /* the line being written */
        JsonOut json;
} Monitor;

/* Starts an event line: {"event":"x" or "Member". */
static void line_begin(Monitor *mon, JsonObject *j, const char *member, const char *event) {
        mon->out = stdout;
        if (mon->args->json) {
                mon->out = json_out_begin(&mon->json, stdout, mon->args->json_format == JSON_FORMAT_PRETTY);
                json_object_begin(j, mon->out);
                json_object_add_string(j, "event", event);
        } else
                fputs(member, stdout);
}

static void line_key(Monitor *mon, JsonObject *j, const char *key) {
        if (mon->args->json)
                json_object_key(j, key);
        else
                fprintf(mon->out, " %s=", key);
}

static void line_end(Monitor *mon, JsonObject *j) {
        if (mon->args->json) {
                json_object_end(j);
                json_out_end(&mon->json);
        } else {
                fputc('\n', stdout);
                fflush(stdout);
        }
        mon->out = stdout;
}

static const SignalFormat *find_format(sd_bus_message *m) {
        for (size_t i = 0; i < ELEMENTSOF(signal_formats); i++)
                if (sd_bus_message_is_signal(m, FRIDGE_INTERFACE, signal_formats[i].member))
                        return &signal_formats[i];
        return NULL;
}

static int on_fridge_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Monitor *mon = userdata;
        const SignalFormat *fmt = find_format(m);
        JsonObject j;

        if (!fmt)
                return 0;       /* a signal newer than this client */
        line_begin(mon, &j, fmt->member, fmt->event);
        for (size_t i = 0; i < ELEMENTSOF(fmt->args) && fmt->args[i]; i++) {
                line_key(mon, &j, fmt->args[i]);
                if (bus_json_write_value(m, mon->out) < 0)
                        fputs("null", mon->out);
        }
        line_end(mon, &j);
        return 0;
}

typedef struct ChangedLine {
        Monitor *mon;
        JsonObject *j;
} ChangedLine;

static int print_entry(sd_bus_message *m, const char *name, void *userdata) {
        ChangedLine *c = userdata;
        line_key(c->mon, c->j, name);
        return bus_json_write_value(m, c->mon->out);
}

/* The changed dictionary, entry by entry, as key=value or a JSON object. */
static int print_changed(Monitor *mon, JsonObject *j, sd_bus_message *m) {
        if (mon->args->json) {
                json_object_key(j, "changed");
                return bus_json_write_value(m, mon->out);
        }
        return bus_dict_read(m, print_entry, &(ChangedLine) { mon, j });
}

/* Always in JSON; for people only when there is something to say. */
static int print_invalidated(Monitor *mon, JsonObject *j, sd_bus_message *m) {
        _cleanup_strv_free_ char **names = NULL;
        int r;

        r = sd_bus_message_read_strv(m, &names);
        if (r < 0)
                return r;
        if (!mon->args->json && (!names || !names[0]))
                return 0;
        line_key(mon, j, "invalidated");
        fputc('[', mon->out);
        for (char **n = names; n && *n; n++) {
                if (n != names)
                        fputc(',', mon->out);
                json_write_string(mon->out, *n);
        }
        fputc(']', mon->out);
        return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Monitor *mon = userdata;
        JsonObject j;
        int r;

        line_begin(mon, &j, "PropertiesChanged", "properties");
        r = sd_bus_message_skip(m, "s");
        if (r >= 0)
                r = print_changed(mon, &j, m);
        if (r >= 0)
                r = print_invalidated(mon, &j, m);
        if (r < 0)
                fputs(mon->args->json ? ",\"malformed\":true" : " (malformed)", mon->out);
        line_end(mon, &j);
        return 0;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Monitor *mon = userdata;
        const char *name, *old_owner, *new_owner;
        JsonObject j;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;
        /* "owner" is fridged's new unique name, "" when it went away. */
        line_begin(mon, &j, "NameOwnerChanged", "owner");
        line_key(mon, &j, "owner");
        json_write_string(mon->out, new_owner);
        line_end(mon, &j);
        return 0;
}

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Monitor *mon = userdata;

        (void) sd_event_exit(mon->event, report_error(mon->args, SD_BUS_ERROR_DISCONNECTED,
                                                      _("lost the connection to the bus"), EXIT_CODE_FAILED));
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Monitor *mon = userdata;

        return sd_event_exit(mon->event, EXIT_CODE_DONE);
}

int cmd_monitor(const Args *a, sd_bus *bus) {
        static const FridgeHandlers handlers = {
                .signal = on_fridge_signal,
                .properties = on_properties_changed,
                .owner = on_owner_changed,
                .disconnected = on_disconnected,
        };
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        Monitor mon = { .args = a, .out = stdout };
        int r;

        r = sd_event_new(&event);
        if (r < 0)
                return report_errno(a, _("cannot set up the event loop"), r);
        mon.event = event;
        r = event_add_exit_signals(event, on_exit_signal, on_exit_signal, &mon);
        if (r < 0)
                return report_errno(a, _("cannot handle SIGINT/SIGTERM"), r);
        r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return report_errno(a, _("cannot attach the bus to the event loop"), r);
        r = bus_add_fridge_matches(bus, &handlers, &mon);
        if (r < 0)
                return report_errno(a, _("cannot subscribe to fridged's signals"), r);

        r = sd_event_loop(event);
        (void) sd_bus_detach_event(bus);
        if (r < 0)
                return report_errno(a, _("event loop failed"), r);
        return r;
}
