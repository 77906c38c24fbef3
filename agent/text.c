/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What fridge-agent's notifications say. */
#include "text.h"

#include <glib.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#define USEC_PER_SEC UINT64_C(1000000)

void agent_cycle_clear(AgentCycle *c) {
        g_clear_pointer(&c->state, g_free);
        g_clear_pointer(&c->kind, g_free);
        g_clear_pointer(&c->phase, g_free);
        g_clear_pointer(&c->progress_text, g_free);
        g_clear_pointer(&c->started_by, g_free);
        *c = (AgentCycle) {};
}

bool agent_cycle_running(const AgentCycle *c) {
        return c->state && *c->state && !g_str_equal(c->state, "idle");
}

/* Whole sentences for each kind, so that a translation need not build
 * them from a noun */
static const struct {
        const char *kind, *going, *woke, *cancelled, *stopped, *rehearsed, *failed;
} kinds[] = {
        { "suspend", N_("Suspending…"), N_("Woke up from suspend"), N_("Suspend cancelled"),
          N_("Suspend stopped"), N_("Suspend rehearsed"), N_("Suspend failed") },
        { "hibernate", N_("Hibernating…"), N_("Woke up from hibernation"), N_("Hibernation cancelled"),
          N_("Hibernation stopped"), N_("Hibernation rehearsed"), N_("Hibernation failed") },
        { "hybrid-sleep", N_("Hybrid sleep…"), N_("Woke up from hybrid sleep"), N_("Hybrid sleep cancelled"),
          N_("Hybrid sleep stopped"), N_("Hybrid sleep rehearsed"), N_("Hybrid sleep failed") },
};

static unsigned kind_index(const char *kind) {
        for (unsigned i = 0; i < G_N_ELEMENTS(kinds); i++)
                if (g_strcmp0(kind, kinds[i].kind) == 0)
                        return i;
        return 0; /* a kind this agent does not know yet: it sleeps all the same */
}

char *text_summary(const char *kind) {
        return g_strdup(_(kinds[kind_index(kind)].going));
}

/* The Phase property in words; "queued" has no phase */
static const char *phase_words(const AgentCycle *c) {
        static const struct { const char *phase, *words; } phases[] = {
                { "prepare",      N_("Preparing") },
                { "flush",        N_("Writing data to disk") },
                { "freeze-early", N_("Freezing applications") },
                { "flush-again",  N_("Writing the last data to disk") },
                { "freeze-late",  N_("Freezing services") },
                { "kernel",       N_("Going to sleep") },
                { "thaw",         N_("Waking up") },
                { "retry",        N_("Waiting to try again") },
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(phases); i++)
                if (g_strcmp0(c->phase, phases[i].phase) == 0)
                        return _(phases[i].words);
        if (g_strcmp0(c->state, "queued") == 0)
                return _("Waiting for what blocks sleep");
        return _("Starting");
}

const char *text_phase(const AgentCycle *c) {
        return phase_words(c);
}

const char *text_no_cancel_reason(const AgentCycle *c) {
        if (c->cancellable)
                return NULL;
        if (g_strcmp0(c->started_by, "hook") == 0)
                return _("The sleep was started by the system and cannot be stopped.");
        if (g_strcmp0(c->state, "thawing") == 0 || g_strcmp0(c->phase, "thaw") == 0)
                return NULL; /* over already (cancelled, failed, woken): nothing to stop */
        return _("It can no longer be cancelled: the system is past the point of no return.");
}

char *text_body(const AgentCycle *c) {
        GString *s = g_string_new(phase_words(c));
        if (c->progress_text && *c->progress_text) {
                g_autofree char *escaped = g_markup_escape_text(c->progress_text, -1);
                g_string_append_printf(s, ": %s", escaped);
        }
        const char *why = text_no_cancel_reason(c);
        if (why)
                g_string_append_printf(s, "\n%s", why);
        return g_string_free(s, FALSE);
}

int text_value(double progress) {
        if (!(progress > 0.0)) /* NaN too */
                return 0;
        if (progress >= 1.0)
                return 100;
        return (int) floor(progress * 100.0);
}

#define TEXT_BAR_CELLS 10

char *text_bar(int percent) {
        int p = CLAMP(percent, 0, 100);
        int full = p * TEXT_BAR_CELLS / 100;
        GString *s = g_string_new(NULL);
        for (int i = 0; i < TEXT_BAR_CELLS; i++)
                g_string_append(s, i < full ? "▰" : "▱");
        g_string_append_printf(s, " %d %%", p);
        return g_string_free(s, FALSE);
}

static const char *const style_names[_PROGRESS_STYLE_MAX] = {
        [PROGRESS_STYLE_AUTO] = "auto",
        [PROGRESS_STYLE_VALUE] = "value",
        [PROGRESS_STYLE_TEXT] = "text",
        [PROGRESS_STYLE_JOB_VIEW] = "job-view",
};

const char *progress_style_to_string(ProgressStyle s) {
        return s >= 0 && s < _PROGRESS_STYLE_MAX ? style_names[s] : NULL;
}

ProgressStyle progress_style_from_string(const char *s) {
        for (int i = 0; s && i < _PROGRESS_STYLE_MAX; i++)
                if (g_str_equal(s, style_names[i]))
                        return (ProgressStyle) i;
        return _PROGRESS_STYLE_INVALID;
}

/* What each desktop's notification server calls itself, as measured
 * (../shared/DESKTOP-NOTES.md); anyone else is taken to draw the hint */
ProgressStyle progress_style_for_server(const char *name, const char *vendor) {
        static const struct { const char *name, *vendor; ProgressStyle style; } servers[] = {
                { "gnome-shell", NULL,  PROGRESS_STYLE_TEXT },
                { "Plasma",      NULL,  PROGRESS_STYLE_JOB_VIEW },
                { NULL,          "KDE", PROGRESS_STYLE_JOB_VIEW },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(servers); i++)
                if ((servers[i].name && g_strcmp0(name, servers[i].name) == 0) ||
                    (servers[i].vendor && g_strcmp0(vendor, servers[i].vendor) == 0))
                        return servers[i].style;
        return PROGRESS_STYLE_VALUE;
}

/* GNOME Shell 43's notification daemon updates with clear: true, which
 * empties the notification's actions before it adds them again, and the
 * banner on screen rebuilds its buttons from the emptied list; 46 rebuilt
 * the message tray (actions are signalled one by one) */
bool text_server_drops_updated_actions(const char *name, const char *version) {
        if (g_strcmp0(name, "gnome-shell") != 0)
                return false;
        size_t digits = version ? strspn(version, "0123456789") : 0;
        if (digits == 0 || digits > 6)
                return true; /* unknown: renewing costs a redraw, dropping Cancel costs the cycle */
        return g_ascii_strtoull(version, NULL, 10) < 46;
}

char *text_duration(uint64_t usec) {
        uint64_t s = usec / USEC_PER_SEC;
        if (s < 60)
                return g_strdup_printf("%.1f s", (double) usec / USEC_PER_SEC);
        if (s < 3600)
                return s % 60 ? g_strdup_printf("%" G_GUINT64_FORMAT " min %" G_GUINT64_FORMAT " s", s / 60, s % 60)
                              : g_strdup_printf("%" G_GUINT64_FORMAT " min", s / 60);
        uint64_t min = s / 60 % 60;
        if (s < 86400)
                return min ? g_strdup_printf("%" G_GUINT64_FORMAT " h %" G_GUINT64_FORMAT " min", s / 3600, min)
                           : g_strdup_printf("%" G_GUINT64_FORMAT " h", s / 3600);
        return g_strdup_printf("%" G_GUINT64_FORMAT " d %" G_GUINT64_FORMAT " h", s / 86400, s / 3600 % 24);
}

/* A D-Bus error name's last dotted component: io.fridge.Fridge1.Error.NAME → NAME */
static const char *error_short(const char *error) {
        const char *dot = error ? strrchr(error, '.') : NULL;
        return dot ? dot + 1 : error ? error : "";
}

char *text_result_summary(const char *kind, const char *result, const char *error) {
        unsigned k = kind_index(kind);
        if (g_strcmp0(result, "done") == 0)
                return g_strdup(_(kinds[k].woke));
        if (g_strcmp0(result, "aborted") == 0)
                return g_strdup(g_str_has_suffix(error ? error : "", ".Cancelled") ? _(kinds[k].cancelled)
                                                                                  : _(kinds[k].stopped));
        if (g_strcmp0(result, "dry-run") == 0)
                return g_strdup(_(kinds[k].rehearsed));
        return g_strdup(_(kinds[k].failed));
}

char *text_result_body(const char *result, const char *error, const char *message, uint64_t slept_usec,
                       const char *wake_reason) {
        g_autofree char *msg = g_markup_escape_text(message ? message : "", -1);
        if (g_strcmp0(result, "done") == 0) {
                g_autofree char *wake = g_markup_escape_text(wake_reason && *wake_reason ? wake_reason : _("unknown"),
                                                             -1);
                if (slept_usec == UINT64_MAX)
                        return g_strdup_printf(_("The machine is awake again; woken by %s."), wake);
                g_autofree char *d = text_duration(slept_usec);
                /* Translators: how long, as "1 h 5 min"; what woke the machine */
                return g_strdup_printf(_("Slept for %s; woken by %s."), d, wake);
        }
        if (g_strcmp0(result, "dry-run") == 0)
                return g_strdup(_("A dry run: everything was frozen and thawed, and the machine did not sleep."));
        if (g_strcmp0(result, "aborted") == 0 && g_str_equal(error_short(error), "Cancelled"))
                /* Translators: fridged's reason (English), else "by request" */
                return g_strdup_printf(_("Cancelled: %s. Everything runs again."), *msg ? msg : _("by request"));
        /* Translators: the error's name (as FreezeTimeout), fridged's reason (English) */
        return g_strdup_printf(_("%s: %s. Everything runs again."), *error_short(error) ? error_short(error) : _("Failed"),
                               *msg ? msg : _("no reason given"));
}

uint8_t text_result_urgency(const char *result) {
        return g_strcmp0(result, "failed") == 0 ? 2 : 1;
}

ImageWrite text_image_write(GVariant *entry, uint64_t cycle) {
        static const struct {
                const char *key;
                size_t offset;
        } numbers[] = {
                { "image-raw-bytes", G_STRUCT_OFFSET(ImageWrite, raw_bytes) },
                { "image-written-bytes", G_STRUCT_OFFSET(ImageWrite, written_bytes) },
                { "image-usec", G_STRUCT_OFFSET(ImageWrite, usec) },
                { "image-done-bytes", G_STRUCT_OFFSET(ImageWrite, done_bytes) },
                { "image-total-bytes", G_STRUCT_OFFSET(ImageWrite, total_bytes) },
        };
        ImageWrite w = {};
        guint64 id = 0;
        const char *writer = NULL;
        if (!g_variant_lookup(entry, "id", "t", &id) || id != cycle ||
            !g_variant_lookup(entry, "image-writer", "&s", &writer))
                return w;
        w.writer = image_writer_name(writer);
        for (size_t i = 0; i < G_N_ELEMENTS(numbers); i++)
                (void) g_variant_lookup(entry, numbers[i].key, "t", G_STRUCT_MEMBER_P(&w, numbers[i].offset));
        return w;
}

char *text_body_with_image(const char *body, const ImageWrite *w) {
        g_autofree char *line = image_write_line(w); /* malloc'd: same allocator as GLib's */
        if (!line)
                return g_strdup(body);
        g_autofree char *escaped = g_markup_escape_text(line, -1);
        return g_strdup_printf("%s\n%s", body, escaped);
}
