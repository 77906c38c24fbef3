/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "timeline-svg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "i18n.h"
#include "macro.h"
#include "utf8.h"

/* The page: the axis is AXIS_WIDTH px whatever the cycle's length, as
 * systemd-analyze plot's is for a boot; labels go right of their bars */
#define X0 20.0
#define AXIS_WIDTH 1000.0
#define LABEL_ROOM 300.0     /* at least; the longest label widens the page */
#define CHAR_WIDTH 7.0       /* a generous guess at 12px: a label is never cut */
#define ROW 18.0
#define BAR 14.0
#define FLUSH_HEIGHT 100.0
#define FONT "font-family:DejaVu Sans,Verdana,sans-serif"

typedef struct Plot {
        FILE *f;
        const PlotTimeline *t;
        uint64_t span;          /* µs the axis covers */
        double y;               /* the next row's top */
        double body_top;        /* where the grid starts */
        double right;           /* the right end of the widest text so far */
} Plot;

static const struct {
        const char *name, *color;
} phase_colors[] = {
        { "queued", "#c8c8c8" },       { "prepare", "#9fc5e8" },     { "flush", "#6fa8dc" },
        { "freeze-early", "#76d7c4" }, { "flush-again", "#3d85c6" }, { "freeze-late", "#45b39d" },
        { "kernel", "#8e7cc3" },       { "retry", "#f6b26b" },       { "thaw", "#e69138" },
};

static const char *phase_color(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(phase_colors); i++)
                if (strcmp(name, phase_colors[i].name) == 0)
                        return phase_colors[i].color;
        return "#999999";
}

static void write_byte_escape(FILE *f, unsigned char c) {
        fprintf(f, "\\x%02x", c);
}

/* XML 1.0 has no way to carry control characters, U+FFFE or U+FFFF, even
 * as references: those, and bytes that are not UTF-8, become \xNN, the
 * escape fridged itself uses for cgroup names */
void svg_write_escaped(FILE *f, const char *s) {
        while (s && *s) {
                uint32_t cp;
                size_t len = utf8_decode(s, &cp);
                bool bad = len == 0 || cp < 0x20 || cp == 0x7f || cp == 0xfffe || cp == 0xffff;
                if (bad) {
                        size_t n = len ? len : 1;
                        for (size_t i = 0; i < n; i++)
                                write_byte_escape(f, (unsigned char) s[i]);
                        s += n;
                        continue;
                }
                switch (cp) {
                case '&':  fputs("&amp;", f); break;
                case '<':  fputs("&lt;", f); break;
                case '>':  fputs("&gt;", f); break;
                case '"':  fputs("&quot;", f); break;
                case '\'': fputs("&apos;", f); break;
                default:   fwrite(s, 1, len, f);
                }
                s += len;
        }
}

void plot_format_usec(uint64_t usec, char *buf, size_t size) {
        if (usec == 0)
                snprintf(buf, size, "0");
        else if (usec < 1000)
                snprintf(buf, size, "%" PRIu64 " µs", usec);
        else if (usec < USEC_PER_SEC)
                snprintf(buf, size, "%.1f ms", (double) usec / 1000.0);
        else if (usec < 60 * USEC_PER_SEC)
                snprintf(buf, size, "%.2f s", (double) usec / (double) USEC_PER_SEC);
        else
                snprintf(buf, size, "%" PRIu64 " min %" PRIu64 " s", usec / (uint64_t) (60 * USEC_PER_SEC),
                         usec / (uint64_t) USEC_PER_SEC % 60);
}

static void format_kib(uint64_t kib, char *buf, size_t size) {
        if (kib < 1024)
                snprintf(buf, size, "%" PRIu64 " KiB", kib);
        else if (kib < 1024 * 1024)
                snprintf(buf, size, "%.1f MiB", (double) kib / 1024.0);
        else
                snprintf(buf, size, "%.2f GiB", (double) kib / (1024.0 * 1024.0));
}

static double x_of(const Plot *p, uint64_t usec) {
        if (usec > p->span)
                usec = p->span;
        return X0 + AXIS_WIDTH * (double) usec / (double) p->span;
}

static uint64_t max_time(uint64_t a, uint64_t b) {
        return b != PLOT_NEVER && b > a ? b : a;
}

/* The axis ends at the cycle's end, or at the last thing seen while it runs */
static uint64_t plot_span(const PlotTimeline *t) {
        uint64_t m = max_time(1, t->end);
        for (size_t i = 0; i < t->n_phases; i++)
                m = max_time(max_time(m, t->phases[i].start), t->phases[i].end);
        for (size_t i = 0; i < t->n_cgroups; i++)
                m = max_time(max_time(max_time(m, t->cgroups[i].freeze), t->cgroups[i].frozen), t->cgroups[i].thawed);
        for (size_t i = 0; i < t->n_samples; i++)
                m = max_time(m, t->samples[i].at);
        return m;
}

/* 1, 2 or 5 times a power of ten: about ten ticks on the axis */
static uint64_t tick_step(uint64_t span) {
        uint64_t step = 1;
        for (;;) {
                static const uint64_t mult[] = { 1, 2, 5 };
                for (size_t i = 0; i < ELEMENTSOF(mult); i++)
                        if (span / (step * mult[i]) <= 10)
                                return step * mult[i];
                step *= 10;
        }
}

static void text(Plot *p, double x, double y, const char *cls, const char *s) {
        double right = x + CHAR_WIDTH * (double) strlen(s);
        if (right > p->right)
                p->right = right;
        fprintf(p->f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", cls, x, y);
        svg_write_escaped(p->f, s);
        fputs("</text>\n", p->f);
}

static void rect(Plot *p, uint64_t from, uint64_t to, double y, double h, const char *fill) {
        double x = x_of(p, from), w = x_of(p, to) - x;
        /* an instant still shows */
        fprintf(p->f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>\n", x, y,
                w < 1.0 ? 1.0 : w, h, fill);
}

static void heading(Plot *p, const char *s) {
        p->y += 10;
        text(p, X0, p->y + 12, "h", s);
        p->y += ROW;
}

static double header_height(void) {
        return 64.0;
}

static double body_height(const PlotTimeline *t) {
        double h = 24.0;                                        /* the axis' labels */
        h += 10 + ROW + (double) t->n_phases * ROW;             /* phases */
        h += 10 + ROW + FLUSH_HEIGHT + 8;                       /* flush */
        h += 10 + ROW + (double) (t->n_cgroups > 0 ? t->n_cgroups : 1) * ROW;
        return h + 8;
}

static void write_start(FILE *f, double width, double height) {
        fprintf(f,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\">\n"
                "<style>\n"
                "  text { " FONT "; font-size:12px; fill:#202020; }\n"
                "  text.t { font-size:18px; font-weight:bold; }\n"
                "  text.h { font-size:13px; font-weight:bold; }\n"
                "  text.a { font-size:10px; fill:#606060; }\n"
                "  line.g { stroke:#dddddd; stroke-width:1; }\n"
                "</style>\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
                width, height, width, height);
}

static void write_header(Plot *p) {
        const PlotTimeline *t = p->t;
        char title[512], line[1024], took[32], slept[32], started[64];

        snprintf(started, sizeof(started), "%s", _("at an unknown time"));
        /* Translators: the cycle's id, kind (suspend, …) and result (done, failed, …) */
        snprintf(title, sizeof(title), _("fridge cycle %llu: %s, %s"), (unsigned long long) t->id, t->kind,
                 *t->result ? t->result : _("running"));
        text(p, X0, 26, "t", title);
        if (t->start_realtime > 0) {
                time_t sec = (time_t) (t->start_realtime / USEC_PER_SEC);
                struct tm tm;
                if (localtime_r(&sec, &tm))
                        strftime(started, sizeof(started), "%Y-%m-%d %H:%M:%S %Z", &tm);
        }
        plot_format_usec(t->end == PLOT_NEVER ? p->span : t->end, took, sizeof(took));
        plot_format_usec(t->slept_usec, slept, sizeof(slept));
        snprintf(line, sizeof(line),
                 t->end == PLOT_NEVER ? _("started %s; so far %s awake; slept %s; wake source: %s")
                                      : _("started %s; took %s awake; slept %s; wake source: %s"),
                 started, took, t->slept_usec ? slept : _("no time"), *t->wake_reason ? t->wake_reason : _("none"));
        text(p, X0, 46, "s", line);
}

static void write_grid(Plot *p, double bottom) {
        uint64_t step = tick_step(p->span);
        /* counted, not summed: near 2^64 (a damaged record) `at` would wrap */
        uint64_t ticks = p->span / step;
        for (uint64_t k = 0, at = 0; k <= ticks; k++, at = k * step) {
                char label[32];
                double x = x_of(p, at);
                plot_format_usec(at, label, sizeof(label));
                fprintf(p->f, "<line class=\"g\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>\n", x,
                        p->body_top + 14, x, bottom);
                text(p, x, p->body_top + 10, "a", label);
        }
        p->y = p->body_top + 24.0;
}

/* The writing of the image, in the kernel phase's label: "; image 78.0
 * MiB written as 13.7 MiB, 65 MiB/s"; nothing without fridge's write */
static void image_label(const PlotTimeline *t, char *buf, size_t size) {
        if (t->image_raw_bytes == 0 || t->image_usec == 0)
                return;
        double raw = (double) t->image_raw_bytes / (1024.0 * 1024.0);
        /* Translators: MiB before and after compression, MiB per second */
        snprintf(buf, size, _("; image %.1f MiB written as %.1f MiB, %.0f MiB/s"), raw,
                 (double) t->image_written_bytes / (1024.0 * 1024.0), raw / ((double) t->image_usec / 1e6));
}

static void write_phases(Plot *p) {
        const PlotTimeline *t = p->t;
        heading(p, _("Phases"));
        for (size_t i = 0; i < t->n_phases; i++) {
                const PlotPhase *ph = &t->phases[i];
                uint64_t end = ph->end == PLOT_NEVER ? p->span : ph->end;
                char took[32], label[1024];
                rect(p, ph->start, end, p->y + 2, BAR, phase_color(ph->name));
                plot_format_usec(end > ph->start ? end - ph->start : 0, took, sizeof(took));
                int n = snprintf(label, sizeof(label), ph->end == PLOT_NEVER ? _("%s (%s, running)") : "%s (%s)",
                                 ph->name, took);
                /* CLOCK_MONOTONIC stood still: the sleep is said, not drawn */
                if (strcmp(ph->name, "kernel") == 0 && n > 0 && (size_t) n < sizeof(label)) {
                        char slept[32];
                        plot_format_usec(t->slept_usec, slept, sizeof(slept));
                        n += snprintf(label + n, sizeof(label) - (size_t) n, _(": slept %s, wake source: %s"),
                                      t->slept_usec ? slept : _("no time"),
                                      *t->wake_reason ? t->wake_reason : _("none"));
                        if (n > 0 && (size_t) n < sizeof(label))
                                image_label(t, label + n, sizeof(label) - (size_t) n);
                }
                text(p, x_of(p, end) + 4, p->y + 13, "l", label);
                p->y += ROW;
        }
}

/* The end of the flush phase `at` falls in; PLOT_NEVER: none does */
static uint64_t flush_phase_end(const PlotTimeline *t, uint64_t at) {
        for (size_t i = 0; i < t->n_phases; i++) {
                const PlotPhase *ph = &t->phases[i];
                if (strncmp(ph->name, "flush", 5) == 0 && ph->start <= at && at <= ph->end)
                        return ph->end;
        }
        return PLOT_NEVER;
}

/* One area per flush: nothing was measured between the two */
static void write_flush_area(Plot *p, size_t from, size_t to, uint64_t max, double base) {
        const PlotSample *s = p->t->samples;
        fprintf(p->f, "<path fill=\"#6fa8dc\" fill-opacity=\"0.45\" stroke=\"#1c4587\" stroke-width=\"1.5\" "
                      "d=\"M%.2f %.1f", x_of(p, s[from].at), base);
        for (size_t i = from; i < to; i++)
                fprintf(p->f, " L%.2f %.1f", x_of(p, s[i].at),
                        base - (max ? FLUSH_HEIGHT * (double) s[i].kib / (double) max : 0));
        fprintf(p->f, " L%.2f %.1f Z\"/>\n", x_of(p, s[to - 1].at), base);
}

static void write_flush(Plot *p) {
        const PlotTimeline *t = p->t;
        uint64_t max = 0;
        char size[32], title[160];
        for (size_t i = 0; i < t->n_samples; i++)
                max = t->samples[i].kib > max ? t->samples[i].kib : max;
        format_kib(max, size, sizeof(size));
        snprintf(title, sizeof(title), _("Flush: Dirty + Writeback (peak %s)"), size);
        heading(p, title);
        double base = p->y + FLUSH_HEIGHT;
        fprintf(p->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#808080\"/>\n", X0, base,
                X0 + AXIS_WIDTH, base);
        if (t->n_samples == 0)
                text(p, X0 + 4, base - 4, "l", _("no flush samples"));
        else {
                size_t from = 0;
                for (size_t i = 1; i <= t->n_samples; i++)
                        if (i == t->n_samples || t->samples[i].at > flush_phase_end(t, t->samples[i - 1].at)) {
                                write_flush_area(p, from, i, max, base);
                                from = i;
                        }
                text(p, X0 + AXIS_WIDTH + 4, p->y + 10, "a", size);
                text(p, X0 + AXIS_WIDTH + 4, base, "a", "0");
        }
        p->y = base + 8;
}

static void write_cgroup(Plot *p, const PlotCgroup *c) {
        uint64_t thawed = c->thawed == PLOT_NEVER ? p->span : c->thawed;
        char label[4096], froze[32], held[32];
        if (c->frozen == PLOT_NEVER) {
                rect(p, c->freeze, thawed, p->y + 2, BAR, "#e06666");
                /* Translators: the cgroup, its stage (early or late) */
                snprintf(label, sizeof(label), _("%s (%s): never seen frozen"), c->name, c->stage);
        } else {
                rect(p, c->freeze, c->frozen, p->y + 2, BAR, "#a4c2f4");
                rect(p, c->frozen, thawed, p->y + 2, BAR, "#3c78d8");
                plot_format_usec(c->frozen > c->freeze ? c->frozen - c->freeze : 0, froze, sizeof(froze));
                plot_format_usec(thawed > c->frozen ? thawed - c->frozen : 0, held, sizeof(held));
                snprintf(label, sizeof(label),
                         c->thawed == PLOT_NEVER ? _("%s (%s): froze in %s, frozen %s and still")
                                                 : _("%s (%s): froze in %s, frozen %s"),
                         c->name, c->stage, froze, held);
        }
        text(p, x_of(p, thawed) + 4, p->y + 13, "l", label);
        p->y += ROW;
}

static void write_cgroups(Plot *p) {
        const PlotTimeline *t = p->t;
        char title[192];
        if (t->cgroups_dropped > 0)
                snprintf(title, sizeof(title), _("Cgroups: %zu frozen, and %u more not recorded"), t->n_cgroups,
                         (unsigned) t->cgroups_dropped);
        else
                snprintf(title, sizeof(title), _("Cgroups: %zu frozen"), t->n_cgroups);
        heading(p, title);
        if (t->n_cgroups == 0) {
                text(p, X0 + 4, p->y + 13, "l", _("nothing was frozen"));
                p->y += ROW;
        }
        for (size_t i = 0; i < t->n_cgroups; i++)
                write_cgroup(p, &t->cgroups[i]);
}

static void write_legend(Plot *p) {
        static const struct {
                const char *color, *label;
        } keys[] = {
                { "#a4c2f4", N_("freezing (cgroup.freeze written)") },
                { "#3c78d8", N_("frozen (cgroup.events)") },
                { "#e06666", N_("never seen frozen") },
                { "#6fa8dc", N_("dirty data") },
        };
        double x = X0;
        p->y += 8;
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, p->y,
                        keys[i].color);
                const char *label = _(keys[i].label);
                text(p, x + 16, p->y + 11, "l", label);
                x += 24 + 7.0 * (double) strlen(label);
        }
}

/* The page is as wide as its widest label: the body is drawn first */
int timeline_svg_write(FILE *f, const PlotTimeline *t) {
        _cleanup_free_ char *body = NULL;
        size_t len = 0;
        FILE *b = open_memstream(&body, &len);
        if (!b)
                return -ENOMEM;
        Plot p = { .f = b, .t = t, .span = plot_span(t), .right = X0 + AXIS_WIDTH + LABEL_ROOM };
        double height = header_height() + body_height(t) + 36;

        write_header(&p);
        p.body_top = header_height();
        write_grid(&p, header_height() + body_height(t));
        write_phases(&p);
        write_flush(&p);
        write_cgroups(&p);
        write_legend(&p);
        if (fclose(b) != 0)
                return -ENOMEM;
        write_start(f, p.right + 20, height);
        fwrite(body, 1, len, f);
        fputs("</svg>\n", f);
        return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}
