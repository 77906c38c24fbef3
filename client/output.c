/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "output.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exit-code.h"
#include "fridge-error.h"
#include "i18n.h"
#include "json.h"
#include "macro.h"
#include "progress-bar.h"
#include "terminal.h"

#define CLEAR_LINE "\r\033[K"

static OutputMode mode_pick(const Args *a) {
        if (a->quiet)
                return OUTPUT_QUIET;
        if (a->json)
                return OUTPUT_JSON;
        if (!a->no_progress && isatty(STDOUT_FILENO))
                return OUTPUT_TTY;
        return OUTPUT_PLAIN;
}

Output output_pick(const Args *a) {
        return (Output) { .mode = mode_pick(a), .json_pretty = a->json_format == JSON_FORMAT_PRETTY };
}

/* Every event line is flushed at once: a reader at the other end of a
 * pipe follows the cycle as it happens, not when the buffer fills. */
static void line_done(void) {
        fputc('\n', stdout);
        fflush(stdout);
}

static void json_begin(Output *o, JsonObject *j, const char *event, uint64_t cycle) {
        json_object_begin(j, json_out_begin(&o->json, stdout, o->json_pretty));
        json_object_add_string(j, "event", event);
        json_object_add_u64(j, "cycle", cycle);
}

static void json_end(Output *o, JsonObject *j) {
        json_object_end(j);
        json_out_end(&o->json);
}

static void draw_bar(Output *o, const CycleView *v) {
        _cleanup_free_ char *label = NULL, *line = NULL;

        if (v->cancelling)
                label = strdup(_("cancelling…"));
        else if ((v->phase && *v->phase) || (v->text && *v->text))
                label = cycle_label(v->phase, v->text);
        else
                label = strdup(strempty(v->kind));
        line = progress_bar_render(v->progress, label, terminal_columns(STDOUT_FILENO));
        if (!line)
                return;
        fputs(CLEAR_LINE, stdout);
        fputs(line, stdout);
        fflush(stdout);
        o->bar_shown = true;
}

/* A whole line for people; on a terminal it replaces the bar. */
static void print_line(Output *o, const char *text) {
        if (o->bar_shown)
                fputs(CLEAR_LINE, stdout);
        o->bar_shown = false;
        fputs(text, stdout);
        line_done();
}

void output_clear(Output *o) {
        if (!o->bar_shown)
                return;
        fputs(CLEAR_LINE, stdout);
        fflush(stdout);
        o->bar_shown = false;
}

/* On a terminal the bar; in JSON the event, with the kind when asked. */
static void bar_or_event(Output *o, const CycleView *v, const char *event, bool with_kind) {
        JsonObject j;

        if (o->mode == OUTPUT_TTY)
                draw_bar(o, v);
        if (o->mode != OUTPUT_JSON)
                return;
        json_begin(o, &j, event, v->cycle);
        if (with_kind)
                json_object_add_string(&j, "kind", v->kind);
        json_end(o, &j);
}

void output_started(Output *o, const CycleView *v) {
        bar_or_event(o, v, "started", true);
}

void output_update(Output *o, const CycleView *v, bool phase_changed) {
        JsonObject j;

        switch (o->mode) {
        case OUTPUT_TTY:
                draw_bar(o, v);
                break;
        case OUTPUT_PLAIN:
                if (phase_changed && v->phase && *v->phase) {
                        /* Translators: %s is the phase's name, as fridged says it */
                        printf(_("phase %s"), v->phase);
                        line_done();
                }
                break;
        case OUTPUT_JSON:
                json_begin(o, &j, phase_changed ? "phase" : "progress", v->cycle);
                json_object_add_string(&j, "phase", v->phase);
                json_object_add_double(&j, "progress", v->progress);
                json_object_add_string(&j, "text", v->text);
                json_end(o, &j);
                break;
        case OUTPUT_QUIET:
                break;
        }
}

void output_sleep_imminent(Output *o, const CycleView *v) {
        JsonObject j;

        if (o->mode != OUTPUT_JSON)
                return;         /* the "kernel" phase already says it */
        json_begin(o, &j, "sleep-imminent", v->cycle);
        json_object_add_string(&j, "kind", v->kind);
        json_end(o, &j);
}

void output_resumed(Output *o, const CycleView *v, uint64_t slept_usec, const char *wake_reason) {
        _cleanup_free_ char *line = NULL;
        JsonObject j;

        switch (o->mode) {
        case OUTPUT_TTY:
        case OUTPUT_QUIET:
                break;          /* the final line carries it */
        case OUTPUT_PLAIN:
                line = cycle_resumed_line(slept_usec, wake_reason);
                if (line)
                        print_line(o, line);
                break;
        case OUTPUT_JSON:
                json_begin(o, &j, "resumed", v->cycle);
                json_object_add_u64(&j, "slept_usec", slept_usec);
                json_object_add_string(&j, "wake_reason", wake_reason);
                json_end(o, &j);
                break;
        }
}

void output_cancelling(Output *o, const CycleView *v) {
        if (o->mode == OUTPUT_PLAIN)
                print_line(o, _("cancelling…"));
        bar_or_event(o, v, "cancel-requested", false);
}

void output_cancel_refused(Output *o, const CycleView *v, const char *error, const char *message) {
        _cleanup_free_ char *line = NULL;
        JsonObject j;

        if (o->mode == OUTPUT_JSON) {
                json_begin(o, &j, "cancel-refused", v->cycle);
                json_object_add_string(&j, "error", error);
                json_object_add_string(&j, "message", message);
                json_end(o, &j);
                return;
        }
        if (o->mode == OUTPUT_QUIET)
                return;
        if (error && strcmp(error, fridge_error_name(FRIDGE_ERROR_TOO_LATE)) == 0)
                line = strdup(_("too late to cancel: the system is going to sleep"));
        else if (asprintf(&line, _("cannot cancel: %s: %s"), error_short_name(error), strempty(message)) < 0)
                line = NULL;
        if (line)
                print_line(o, line);
        if (o->mode == OUTPUT_TTY)
                draw_bar(o, v);
}

/* ListCycles' image-* keys, when there was a write */
static void json_add_image(JsonObject *j, const ImageWrite *w) {
        if (isempty(w->writer))
                return;
        json_object_add_string(j, "image-writer", w->writer);
        json_object_add_u64(j, "image-raw-bytes", w->raw_bytes);
        json_object_add_u64(j, "image-written-bytes", w->written_bytes);
        json_object_add_u64(j, "image-usec", w->usec);
        json_object_add_u64(j, "image-done-bytes", w->done_bytes);
        json_object_add_u64(j, "image-total-bytes", w->total_bytes);
}

void output_finished(Output *o, const CycleView *v, const CycleOutcome *outcome) {
        _cleanup_free_ char *line = NULL, *image = NULL;
        JsonObject j;

        if (o->mode == OUTPUT_JSON) {
                json_begin(o, &j, "finished", v->cycle);
                json_object_add_string(&j, "result", outcome->result);
                json_object_add_string(&j, "error", outcome->error);
                json_object_add_string(&j, "message", outcome->message);
                json_add_image(&j, &outcome->image);
                json_end(o, &j);
                return;
        }
        if (o->mode == OUTPUT_QUIET)
                return;
        line = cycle_final_line(outcome);
        image = image_write_line(&outcome->image);
        if (!outcome->result || strcmp(outcome->result, "failed") != 0) {
                print_line(o, line ? line : strempty(outcome->result));
                if (image)
                        print_line(o, image);
                return;
        }
        /* Why a cycle failed is an error: stderr, the bar gone first */
        output_clear(o);
        fflush(stdout);
        fprintf(stderr, "%s\n", line ? line : strempty(outcome->result));
        if (image)
                fprintf(stderr, "%s\n", image);
}
