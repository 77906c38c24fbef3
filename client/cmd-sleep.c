/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* suspend / hibernate / hybrid-sleep: subscribe, call Sleep, follow the
 * cycle until its CycleFinished, and let Esc or Ctrl-C cancel it. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "bus-util.h"
#include "cmd.h"
#include "cycle-text.h"
#include "exit-code.h"
#include "i18n.h"
#include "keys.h"
#include "output.h"
#include "polkit-agent.h"
#include "props.h"
#include "report.h"
#include "terminal.h"

typedef enum CancelState {
        CANCEL_NONE,
        CANCEL_WANTED,          /* asked for before Sleep answered */
        CANCEL_SENT,
        CANCEL_ACCEPTED,
        CANCEL_REFUSED,         /* TooLate (or another error): keep waiting */
} CancelState;

typedef struct Cycle {
        const Args *args;
        sd_event *event;
        sd_bus *bus;
        Output out;
        const char *kind;
        uint64_t id;            /* 0 until Sleep answered */
        char *daemon;           /* unique name of the fridged that answered */
        char *phase;
        char *text;
        double progress;
        CancelState cancel;
        bool resumed;
        uint64_t slept_usec;
        char *wake_reason;
        bool agent;             /* polkit's text agent has the terminal until Sleep answers */
} Cycle;

static Cycle *cycle_free(Cycle *c) {
        if (!c)
                return NULL;
        polkit_agent_close();
        terminal_restore();
        /* The bus first: it is attached to the event loop. */
        sd_bus_detach_event(c->bus);
        sd_event_unref(c->event);
        free(c->daemon);
        free(c->phase);
        free(c->text);
        free(c->wake_reason);
        free(c);
        return NULL;
}

static void cycle_freep(Cycle **p) {
        cycle_free(*p);
}

static CycleView cycle_view(const Cycle *c) {
        return (CycleView) {
                .cycle = c->id,
                .kind = c->kind,
                .phase = c->phase,
                .progress = c->progress,
                .text = c->text,
                .cancelling = c->cancel == CANCEL_WANTED || c->cancel == CANCEL_SENT ||
                              c->cancel == CANCEL_ACCEPTED,
        };
}

static void cycle_end(Cycle *c, int exit_code) {
        (void) sd_event_exit(c->event, exit_code);
}

/* A signal is ours once Sleep answered and it comes from the fridged that
 * answered. fridged replies before it emits anything about the new cycle,
 * and sd-bus dispatches in arrival order, so whatever came earlier is
 * about an older cycle and is dropped here. */
static bool from_our_daemon(const Cycle *c, sd_bus_message *m) {
        const char *sender = sd_bus_message_get_sender(m);

        if (c->id == 0)
                return false;
        return !c->daemon || (sender && strcmp(sender, c->daemon) == 0);
}

/* Ends the cycle with a failure that is not fridged's verdict. */
static void cycle_fail(Cycle *c, const char *name, const char *message) {
        output_clear(&c->out);
        fflush(stdout);
        cycle_end(c, report_error(c->args, name, message, EXIT_CODE_FAILED));
}

/* Stop following without a result (second Ctrl-C, SIGTERM). */
static void cycle_abandon(Cycle *c, const char *why) {
        char message[256];

        output_clear(&c->out);
        if (c->id > 0)
                snprintf(message, sizeof(message), _("%s; cycle %llu may still be running (fridgectl cancel %llu)"),
                         why, (unsigned long long) c->id, (unsigned long long) c->id);
        else
                snprintf(message, sizeof(message), "%s", why);
        cycle_end(c, report_error(c->args, "interrupted", message, EXIT_CODE_FAILED));
}

static int on_cancel_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Cycle *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        CycleView v;

        if (!e) {
                c->cancel = CANCEL_ACCEPTED;
                return 0;
        }
        c->cancel = CANCEL_REFUSED;
        v = cycle_view(c);
        output_cancel_refused(&c->out, &v, e->name, e->message);
        return 0;
}

static void send_cancel(Cycle *c) {
        CycleView v;
        int r;

        r = sd_bus_call_method_async(c->bus, NULL, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                     "Cancel", on_cancel_reply, c, "t", c->id);
        if (r < 0) {
                _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;

                sd_bus_error_set_errno(&e, r);
                c->cancel = CANCEL_REFUSED;
                v = cycle_view(c);
                output_cancel_refused(&c->out, &v, e.name, e.message);
                return;
        }
        c->cancel = CANCEL_SENT;
}

/* Esc or the first Ctrl-C: ask once, then wait for CycleFinished. */
static void request_cancel(Cycle *c) {
        CycleView v;

        if (c->cancel != CANCEL_NONE)
                return;
        if (c->id == 0)
                c->cancel = CANCEL_WANTED;      /* sent when the id arrives */
        else
                send_cancel(c);
        if (c->cancel == CANCEL_REFUSED)
                return;
        v = cycle_view(c);
        output_cancelling(&c->out, &v);
}

static void on_cycle_finished(Cycle *c, const char *result, const char *error, const char *message) {
        CycleView v = cycle_view(c);
        CycleOutcome o = {
                .result = result,
                .error = error,
                .message = message,
                .cancel_requested = c->cancel == CANCEL_SENT || c->cancel == CANCEL_ACCEPTED,
                .resumed = c->resumed,
                .slept_usec = c->slept_usec,
                .wake_reason = c->wake_reason,
                .pm_test = c->args->sleep.pm_test,
        };

        /* fridge's image write is the cycle's record: asked of the history */
        if (strcmp(c->kind, "hibernate") == 0 && c->out.mode != OUTPUT_QUIET)
                o.image = history_image_write(c->bus, c->id);

        output_finished(&c->out, &v, &o);
        cycle_end(c, exit_code_for_finished(result, error));
}

static int handle_fridge_signal(Cycle *c, sd_bus_message *m) {
        const char *kind, *wake, *result, *error, *message;
        uint64_t cycle, slept;
        CycleView v;
        int r;

        if (sd_bus_message_is_signal(m, FRIDGE_INTERFACE, "SleepImminent")) {
                r = sd_bus_message_read(m, "ts", &cycle, &kind);
                if (r < 0 || cycle != c->id)
                        return r;
                v = cycle_view(c);
                output_sleep_imminent(&c->out, &v);
        } else if (sd_bus_message_is_signal(m, FRIDGE_INTERFACE, "Resumed")) {
                r = sd_bus_message_read(m, "tts", &cycle, &slept, &wake);
                if (r < 0 || cycle != c->id)
                        return r;
                c->resumed = true;
                c->slept_usec = slept;
                free(c->wake_reason);
                c->wake_reason = strdup(wake);
                v = cycle_view(c);
                output_resumed(&c->out, &v, slept, wake);
        } else if (sd_bus_message_is_signal(m, FRIDGE_INTERFACE, "CycleFinished")) {
                r = sd_bus_message_read(m, "tsss", &cycle, &result, &error, &message);
                if (r < 0 || cycle != c->id)
                        return r;
                on_cycle_finished(c, result, error, message);
        }
        return 0;
}

static int on_fridge_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Cycle *c = userdata;

        if (!from_our_daemon(c, m))
                return 0;
        if (handle_fridge_signal(c, m) < 0)
                fprintf(stderr, _("fridgectl: ignoring a malformed %s signal\n"),
                        strempty(sd_bus_message_get_member(m)));
        return 0;
}

static bool streq_empty(const char *a, const char *b) {
        return strcmp(strempty(a), strempty(b)) == 0;
}

/* Moves the changed Phase/Progress/ProgressText into c; true if shown. */
static bool apply_properties(Cycle *c, FridgeProps *p, uint32_t seen, bool *ret_phase_changed) {
        bool phase_changed = (seen & PROP_PHASE) && !streq_empty(p->phase, c->phase);

        if (seen & PROP_PHASE) {
                free(c->phase);
                c->phase = TAKE_PTR(p->phase);
        }
        if (seen & PROP_PROGRESS)
                c->progress = p->progress;
        if (seen & PROP_PROGRESS_TEXT) {
                free(c->text);
                c->text = TAKE_PTR(p->progress_text);
        }
        *ret_phase_changed = phase_changed;
        /* An empty phase means idle again: the final line says the rest. */
        if (!c->phase || !*c->phase)
                return false;
        return phase_changed || (seen & (PROP_PROGRESS | PROP_PROGRESS_TEXT));
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(fridge_props_done) FridgeProps p = {};
        Cycle *c = userdata;
        bool phase_changed;
        uint32_t seen;
        CycleView v;

        if (!from_our_daemon(c, m))
                return 0;
        if (sd_bus_message_skip(m, "s") < 0 || fridge_props_read(m, &p, &seen) < 0) {
                fprintf(stderr, _("fridgectl: ignoring a malformed %s signal\n"), "PropertiesChanged");
                return 0;
        }
        if ((seen & PROP_CYCLE_ID) && p.cycle_id != c->id)
                return 0;       /* about another cycle */
        if (!apply_properties(c, &p, seen, &phase_changed))
                return 0;
        v = cycle_view(c);
        output_update(&c->out, &v, phase_changed);
        return 0;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Cycle *c = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;
        /* Before Sleep answers, a vanished fridged fails the call itself. */
        if (c->id == 0 || !c->daemon || strcmp(old_owner, c->daemon) != 0)
                return 0;
        cycle_fail(c, SD_BUS_ERROR_NAME_HAS_NO_OWNER, _("fridged went away"));
        return 0;
}

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        cycle_fail(userdata, SD_BUS_ERROR_DISCONNECTED, _("lost the connection to the bus"));
        return 0;
}

static int on_sigint(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Cycle *c = userdata;

        /* The first Ctrl-C cancels; a second one means "stop waiting". */
        if (c->cancel == CANCEL_NONE)
                request_cancel(c);
        else
                cycle_abandon(c, _("interrupted"));
        return 0;
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        /* Whoever terminates us did not ask to cancel the cycle. */
        cycle_abandon(userdata, _("terminated"));
        return 0;
}

static int on_stdin(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char buf[64];
        ssize_t n;

        n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0)     /* EOF or a hung-up terminal: stop listening */
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (keys_have_lone_escape(buf, (size_t) n))
                request_cancel(userdata);
        return 0;
}

static int setup_keys(Cycle *c);

static int on_sleep_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Cycle *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        const char *sender;
        char what[64];
        CycleView v;
        int r;

        if (c->agent) {
                polkit_agent_close();
                c->agent = false;
                r = setup_keys(c);
                if (r < 0) {
                        cycle_end(c, report_errno(c->args, _("cannot set up the terminal"), r));
                        return 0;
                }
        }
        if (e) {
                output_clear(&c->out);
                /* Translators: %s is the command: suspend, hibernate or hybrid-sleep */
                snprintf(what, sizeof(what), _("cannot %s"), c->kind);
                cycle_end(c, report_call_error(c->args, what, e));
                return 0;
        }
        r = sd_bus_message_read(m, "t", &c->id);
        if (r < 0 || c->id == 0) {
                cycle_fail(c, SD_BUS_ERROR_INVALID_SIGNATURE, _("fridged sent an invalid reply to Sleep"));
                return 0;
        }
        sender = sd_bus_message_get_sender(m);
        if (sender && !(c->daemon = strdup(sender))) {
                cycle_end(c, report_errno(c->args, _("cannot follow the cycle"), -ENOMEM));
                return 0;
        }

        v = cycle_view(c);
        output_started(&c->out, &v);
        if (c->cancel == CANCEL_WANTED)
                send_cancel(c);
        return 0;
}

/* Each option given, as the table types it */
static int append_options(sd_bus_message *m, const Args *a) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        for (size_t i = 0; r >= 0 && i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                const void *field = sleep_option_field_const(&a->sleep, s);

                if (!sleep_option_is_set(&a->sleep, s))
                        continue;
                switch (s->type) {
                case SLEEP_OPTION_BOOL:
                        r = sd_bus_message_append(m, "{sv}", s->name, "b", (int) *(const bool *) field);
                        break;
                case SLEEP_OPTION_STRING:
                        r = sd_bus_message_append(m, "{sv}", s->name, "s", *(char *const *) field);
                        break;
                case SLEEP_OPTION_UINT:
                        r = sd_bus_message_append(m, "{sv}", s->name, "u", *(const uint32_t *) field);
                        break;
                }
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* Asynchronous, so that Ctrl-C still works while fridged waits for polkit
 * to ask the user; a Cancel wanted meanwhile is sent with the reply. */
static int call_sleep(Cycle *c) {
        _cleanup_bus_message_ sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(c->bus, &m, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                           "Sleep");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", c->kind);
        if (r < 0)
                return r;
        r = append_options(m, c->args);
        if (r < 0)
                return r;
        return sd_bus_call_async(c->bus, NULL, m, on_sleep_reply, c, 0);
}

static int setup_keys(Cycle *c) {
        int r;

        if (c->out.mode != OUTPUT_TTY)
                return 0;
        r = terminal_enter_keys_mode(STDIN_FILENO);
        if (r <= 0)
                return r;
        return sd_event_add_io(c->event, NULL, STDIN_FILENO, EPOLLIN, on_stdin, c);
}

static int cycle_new(const Args *a, sd_bus *bus, Cycle **ret) {
        _cleanup_(cycle_freep) Cycle *c = NULL;
        int r;

        c = calloc(1, sizeof(Cycle));
        if (!c)
                return -ENOMEM;
        c->args = a;
        c->bus = bus;
        c->kind = command_sleep_kind(a->command);
        c->out = output_pick(a);

        r = sd_event_new(&c->event);
        if (r < 0)
                return r;
        r = sd_bus_attach_event(bus, c->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

int cmd_sleep(const Args *a, sd_bus *bus) {
        static const FridgeHandlers handlers = {
                .signal = on_fridge_signal,
                .properties = on_properties_changed,
                .owner = on_owner_changed,
                .disconnected = on_disconnected,
        };
        _cleanup_(cycle_freep) Cycle *c = NULL;
        int r;

        r = cycle_new(a, bus, &c);
        if (r < 0)
                return report_errno(a, _("cannot set up the event loop"), r);
        /* Subscribe first: the cycle's first signal may follow the reply
         * immediately. */
        r = bus_add_fridge_matches(bus, &handlers, c);
        if (r < 0)
                return report_errno(a, _("cannot subscribe to fridged's signals"), r);
        r = event_add_exit_signals(c->event, on_sigint, on_sigterm, c);
        if (r < 0)
                return report_errno(a, _("cannot handle SIGINT/SIGTERM"), r);
        /* Only a person at a terminal can answer a polkit prompt. With
         * polkit's text agent asking for a password there, the keys wait
         * for Sleep's answer: until then the terminal is the agent's. */
        c->agent = polkit_agent_open(bus, !a->no_ask_password);
        if (!c->agent) {
                r = setup_keys(c);
                if (r < 0)
                        return report_errno(a, _("cannot set up the terminal"), r);
        }
        r = call_sleep(c);
        if (r < 0) {
                terminal_restore();
                return report_errno(a, _("cannot call Sleep"), r);
        }

        r = sd_event_loop(c->event);
        terminal_restore();
        if (r < 0)
                return report_errno(a, _("event loop failed"), r);
        return r;
}
