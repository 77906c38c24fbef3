/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What fridge-agent's notifications say, from what fridged reports. Pure:
 * no bus, no clock; the unit test reads it. Bodies are the Notifications
 * spec's markup: fridged's texts (cgroup names) are escaped. */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "image-text.h"

/* A cycle as fridged's properties describe it (all strings owned) */
typedef struct AgentCycle {
        uint64_t id;            /* CycleId */
        char *state;            /* State: idle, queued, running, sleeping, thawing */
        char *kind;             /* Kind: suspend, hibernate, hybrid-sleep */
        char *phase;            /* Phase */
        double progress;        /* Progress, 0..1 */
        char *progress_text;    /* ProgressText */
        bool cancellable;       /* Cancellable */
        char *started_by;       /* StartedBy: bus, hook */
} AgentCycle;

void agent_cycle_clear(AgentCycle *c);
/* True while a cycle runs (State is neither idle nor empty) */
bool agent_cycle_running(const AgentCycle *c);

/* "Suspending…", "Hibernating…", "Hybrid sleep…" */
char *text_summary(const char *kind);
/* The phase in words, what it waits on, and why Cancel is not offered */
char *text_body(const AgentCycle *c);
/* Why Cancel cannot stop the sleep now; NULL when it can */
const char *text_no_cancel_reason(const AgentCycle *c);
/* The `value` hint: Progress as a whole percentage, 0..100 */
int text_value(double progress);
/* The phase in words: a job view's info message */
const char *text_phase(const AgentCycle *c);
/* A bar drawn in text for servers that draw no `value` hint (GNOME
 * Shell): "▰▰▰▰▰▱▱▱▱▱ 48 %" */
char *text_bar(int percent);

/* Where the progress is drawn. No server lists the `value` hint among its
 * capabilities, so the choice follows the server's name
 * (GetServerInformation), unless the user's settings name one. */
typedef enum ProgressStyle {
        PROGRESS_STYLE_AUTO,            /* by the server's name */
        PROGRESS_STYLE_VALUE,           /* the `value` hint: dunst, mako, swaync, xfce4-notifyd */
        PROGRESS_STYLE_TEXT,            /* a text bar in the body: GNOME Shell */
        PROGRESS_STYLE_JOB_VIEW,        /* KDE's job view (org.kde.JobViewServer): Plasma */
        _PROGRESS_STYLE_MAX,
        _PROGRESS_STYLE_INVALID = -1,
} ProgressStyle;

/* "auto", "value", "text", "job-view" */
const char *progress_style_to_string(ProgressStyle s);
ProgressStyle progress_style_from_string(const char *s);
/* The style of a server by its GetServerInformation name and vendor
 * (never AUTO) */
ProgressStyle progress_style_for_server(const char *name, const char *vendor);
/* Whether the server drops the buttons of a notification it updates in
 * place (GNOME Shell before 46): then an update with Cancel goes out as a
 * new notification that takes the old one's place */
bool text_server_drops_updated_actions(const char *name, const char *version);

/* "3.0 s", "2 min 5 s", "1 h 4 min" */
char *text_duration(uint64_t usec);
/* The cycle's end: "Woke up from suspend", "Suspend cancelled" (error
 * Cancelled), "Suspend stopped" (aborted otherwise: a wakeup event),
 * "Suspend failed", "Suspend rehearsed" (a dry run) */
char *text_result_summary(const char *kind, const char *result, const char *error);
/* Slept for how long and what woke it, or why it failed or was cancelled;
 * slept_usec UINT64_MAX: no Resumed came */
char *text_result_body(const char *result, const char *error, const char *message, uint64_t slept_usec,
                       const char *wake_reason);
/* The urgency hint: 2 (critical) for a failure, else 1 */
uint8_t text_result_urgency(const char *result);

/* The image write of cycle `cycle` from one ListCycles entry (a{sv});
 * writer NULL when the entry is another cycle's or tells none */
ImageWrite text_image_write(GVariant *entry, uint64_t cycle);
/* body (markup) with the image write's line under it; a copy of body
 * when there is none */
char *text_body_with_image(const char *body, const ImageWrite *w);
