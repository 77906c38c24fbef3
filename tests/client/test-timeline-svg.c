/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridgectl plot's SVG writer: escaping, a well-formed document, every
 * phase, cgroup and the wake source named. FRIDGE_PLOT_SAMPLE=PATH keeps
 * the sample document (to look at). */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "timeline-svg.h"

static char *escaped(const char *s) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        g_assert_nonnull(f);
        svg_write_escaped(f, s);
        g_assert_cmpint(fclose(f), ==, 0);
        return buf;
}

static void test_escape(void) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "user.slice/a.service", "user.slice/a.service" },
                { "<b>&\"x\"'y'", "&lt;b&gt;&amp;&quot;x&quot;&apos;y&apos;" },
                { "tab\there\nnl", "tab\\x09here\\x0anl" },
                { "bad\xff\xfe utf8 \xc3", "bad\\xff\\xfe utf8 \\xc3" },
                { "overlong \xc0\xaf", "overlong \\xc0\\xaf" },
                { "del\x7f", "del\\x7f" },
                { "nonchar \xef\xbf\xbf", "nonchar \\xef\\xbf\\xbf" },
                { "caf\xc3\xa9 \xe2\x9d\x84", "caf\xc3\xa9 \xe2\x9d\x84" },
                /* fridged's own escapes pass as they are */
                { "user.slice/x\\x0ay", "user.slice/x\\x0ay" },
                { "", "" },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *out = escaped(cases[i].in);
                g_assert_cmpstr(out, ==, cases[i].out);
        }
        g_autofree char *none = escaped(NULL);
        g_assert_cmpstr(none, ==, "");
}

static const PlotPhase phases[] = {
        { "prepare", 0, 1200 },          { "flush", 1200, 180000 },
        { "freeze-early", 180000, 185000 }, { "flush-again", 185000, 190000 },
        { "freeze-late", 190000, 191000 },  { "kernel", 191000, 260000 },
        { "thaw", 260000, 262000 },
};

static const PlotCgroup cgroups[] = {
        { "user.slice/app-<firefox>&.scope", "early", 180100, 181500, 261900 },
        { "user.slice/\xff\x01weird\"name", "early", 180200, PLOT_NEVER, 261800 },
        { "system.slice/fuse-sshfs.service", "late", 190100, 190900, 260100 },
};

static const PlotSample samples[] = {
        { 1200, 420000 }, { 40000, 300000 }, { 90000, 120000 }, { 150000, 8000 }, { 180000, 12 },
        { 185000, 900 }, { 190000, 0 }, /* flush-again */
};

static PlotTimeline sample_timeline(void) {
        return (PlotTimeline) {
                .id = 42, .kind = "suspend", .result = "done", .start_realtime = 1764900000000000ULL,
                .end = 262500, .slept_usec = 3000000, .wake_reason = "rtc0 on 00:04 (rtc_cmos) <alarm>",
                .cgroups_dropped = 3, .phases = phases, .n_phases = G_N_ELEMENTS(phases),
                .cgroups = cgroups, .n_cgroups = G_N_ELEMENTS(cgroups), .samples = samples,
                .n_samples = G_N_ELEMENTS(samples),
        };
}

static char *render(const PlotTimeline *t) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        g_assert_nonnull(f);
        g_assert_cmpint(timeline_svg_write(f, t), ==, 0);
        g_assert_cmpint(fclose(f), ==, 0);
        return buf;
}

/* Well-formed as GMarkup reads it: the text of every <text> collected */
static void on_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer user_data, GError **error) {
        if (g_strcmp0(g_markup_parse_context_get_element(ctx), "text") != 0)
                return;
        g_string_append_len(user_data, text, (gssize) len);
        g_string_append_c(user_data, '\n');
}

static char *parse_texts(const char *svg) {
        static const GMarkupParser parser = { .text = on_text };
        GString *texts = g_string_new("");
        g_autoptr(GError) error = NULL;
        GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, texts, NULL);
        /* GMarkup takes no <?xml?> declaration: skip it */
        const char *body = strstr(svg, "<svg");
        g_assert_nonnull(body);
        gboolean ok = g_markup_parse_context_parse(ctx, body, -1, &error) &&
                      g_markup_parse_context_end_parse(ctx, &error);
        g_assert_no_error(error);
        g_assert_true(ok);
        g_markup_parse_context_free(ctx);
        return g_string_free(texts, FALSE);
}

static void test_document(void) {
        PlotTimeline t = sample_timeline();
        g_autofree char *svg = render(&t);
        const char *keep = g_getenv("FRIDGE_PLOT_SAMPLE");
        if (keep)
                g_assert_true(g_file_set_contents(keep, svg, -1, NULL));
        g_assert_true(g_str_has_prefix(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
        g_assert_true(g_utf8_validate(svg, -1, NULL));
        g_autofree char *texts = parse_texts(svg);

        for (size_t i = 0; i < G_N_ELEMENTS(phases); i++) {
                g_autofree char *label = g_strdup_printf("\n%s (", phases[i].name);
                g_assert_nonnull(strstr(texts, label));
        }
        /* the entities come back as the names' own characters */
        g_assert_nonnull(strstr(texts, "user.slice/app-<firefox>&.scope (early): froze in 1.4 ms"));
        g_assert_nonnull(strstr(texts, "user.slice/\\xff\\x01weird\"name (early): never seen frozen"));
        g_assert_nonnull(strstr(texts, "system.slice/fuse-sshfs.service (late)"));
        g_assert_nonnull(strstr(texts, "kernel (69.0 ms): slept 3.00 s, wake source: rtc0 on 00:04 (rtc_cmos) <alarm>"));
        g_assert_nonnull(strstr(texts, "fridge cycle 42: suspend, done"));
        g_assert_nonnull(strstr(texts, "Cgroups: 3 frozen, and 3 more not recorded"));
        g_assert_nonnull(strstr(texts, "Flush: Dirty + Writeback (peak 410.2 MiB)"));
        /* one area a flush: no line across the freeze between them */
        g_auto(GStrv) paths = g_strsplit(svg, "<path ", -1);
        g_assert_cmpuint(g_strv_length(paths), ==, 3);
}

/* fridge's image write labels the kernel phase with its sizes and speed */
static void test_image_write(void) {
        PlotTimeline t = sample_timeline();
        t.kind = "hibernate";
        t.image_raw_bytes = 78 * 1048576ULL;
        t.image_written_bytes = 14365491;
        t.image_usec = 1200000;
        g_autofree char *svg = render(&t);
        g_autofree char *texts = parse_texts(svg);
        g_assert_nonnull(strstr(texts, "wake source: rtc0 on 00:04 (rtc_cmos) <alarm>; image 78.0 MiB written as "
                                       "13.7 MiB, 65 MiB/s"));
        /* without it, nothing is said */
        PlotTimeline none = sample_timeline();
        g_autofree char *plain = render(&none);
        g_assert_null(strstr(plain, "MiB/s"));
}

/* A cycle still running, with nothing frozen and no flush yet */
static void test_running_empty(void) {
        static const PlotPhase one[] = { { "prepare", 0, PLOT_NEVER } };
        PlotTimeline t = { .id = 1, .kind = "hibernate", .result = "", .end = PLOT_NEVER, .wake_reason = "",
                           .phases = one, .n_phases = 1 };
        g_autofree char *svg = render(&t);
        g_autofree char *texts = parse_texts(svg);
        g_assert_nonnull(strstr(texts, "fridge cycle 1: hibernate, running"));
        g_assert_nonnull(strstr(texts, "prepare (1 µs, running)"));
        g_assert_nonnull(strstr(texts, "nothing was frozen"));
        g_assert_nonnull(strstr(texts, "no flush samples"));
}

/* A damaged record: times just short of 2^64 (a time axis summed tick by
 * tick would wrap and never end) */
static void test_huge_span(void) {
        static const PlotPhase one[] = { { "prepare", 0, UINT64_MAX - 2 } };
        PlotTimeline t = { .id = 1, .kind = "suspend", .result = "done", .end = UINT64_MAX - 2, .wake_reason = "",
                           .phases = one, .n_phases = 1 };
        g_autofree char *svg = render(&t);
        g_assert_true(g_str_has_suffix(g_strchomp(svg), "</svg>"));
}

static void test_format_usec(void) {
        static const struct {
                uint64_t usec;
                const char *text;
        } cases[] = {
                { 0, "0" }, { 999, "999 µs" }, { 1000, "1.0 ms" }, { 12345, "12.3 ms" },
                { 1000000, "1.00 s" }, { 59990000, "59.99 s" }, { 65000000, "1 min 5 s" },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                char buf[32];
                plot_format_usec(cases[i].usec, buf, sizeof(buf));
                g_assert_cmpstr(buf, ==, cases[i].text);
        }
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/timeline-svg/escape", test_escape);
        g_test_add_func("/timeline-svg/document", test_document);
        g_test_add_func("/timeline-svg/running-empty", test_running_empty);
        g_test_add_func("/timeline-svg/format-usec", test_format_usec);
        g_test_add_func("/timeline-svg/huge-span", test_huge_span);
        g_test_add_func("/timeline-svg/image-write", test_image_write);
        return g_test_run();
}
