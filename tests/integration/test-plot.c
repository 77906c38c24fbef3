/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A cycle's timeline and its picture: a cycle that freezes scratch cgroups
 * (one with a name full of XML's and UTF-8's troubles), GetCycleTimeline's
 * record of it, and `fridgectl plot` drawing it: the SVG parses
 * (xmllint), renders to a PNG of more than one colour (rsvg-convert,
 * ImageMagick) and names every phase the record has. The SVG and the PNG
 * are kept in FRIDGE_ARTIFACT_DIR (meson-logs) to be looked at.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <systemd/sd-bus.h>

#include "freeze-fixture.h"
#include "fridge-config.h"

#define NEVER UINT64_MAX

/* A name full of XML's markup characters and a byte that is not UTF-8 */
static void add_odd(Fixture *f) {
        scratch_spawn(f->s, scratch_add(f->s, "odd<&\"x'\xff.service"), NULL);
}

static uint64_t run_cycle(Fixture *f) {
        /* a sleep of some length: the kernel phase is a bar, not a line */
        harness_control(f->h, "sleep-ms 300");
        uint64_t cycle = freeze_sleep_ok(f->h, "suspend", NULL, NULL, 0);
        freeze_expect_finished(f->h, cycle, "done", "");
        return cycle;
}

typedef struct Record {
        GPtrArray *phases;      /* char *: the names, in order */
        GHashTable *cgroups;    /* name → "stage" */
        unsigned samples;
} Record;

static void record_clear(Record *r) {
        g_clear_pointer(&r->phases, g_ptr_array_unref);
        g_clear_pointer(&r->cgroups, g_hash_table_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Record, record_clear)

static void read_phases(sd_bus_message *m, Record *rec) {
        const char *name;
        uint64_t start, end, last = 0;
        g_assert_cmpint(sd_bus_message_enter_container(m, 'a', "(stt)"), >, 0);
        while (sd_bus_message_read(m, "(stt)", &name, &start, &end) > 0) {
                g_assert_cmpuint(start, >=, last);
                g_assert_cmpuint(end, >=, start);
                g_assert_cmpuint(end, !=, NEVER);
                last = end;
                g_ptr_array_add(rec->phases, g_strdup(name));
        }
        g_assert_cmpint(sd_bus_message_exit_container(m), >=, 0);
}

static void read_cgroups(sd_bus_message *m, Record *rec) {
        const char *name, *stage;
        uint64_t freeze, frozen, thawed;
        g_assert_cmpint(sd_bus_message_enter_container(m, 'a', "(ssttt)"), >, 0);
        while (sd_bus_message_read(m, "(ssttt)", &name, &stage, &freeze, &frozen, &thawed) > 0) {
                g_test_message("cgroup %s (%s): %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                               name, stage, freeze, frozen, thawed);
                g_assert_cmpuint(freeze, <=, frozen);
                g_assert_cmpuint(frozen, <=, thawed);
                g_assert_cmpuint(thawed, !=, NEVER);
                g_hash_table_insert(rec->cgroups, g_strdup(name), g_strdup(stage));
        }
        g_assert_cmpint(sd_bus_message_exit_container(m), >=, 0);
}

/* GetCycleTimeline as root: the record the picture is drawn from */
static void get_record(Harness *h, uint64_t cycle, Record *rec) {
        sd_bus_message *m = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(h, FRIDGE_INTERFACE, "GetCycleTimeline", &m, &err, &msg, "t", cycle) < 0)
                g_error("GetCycleTimeline failed: %s: %s", err, msg);
        *rec = (Record) { .phases = g_ptr_array_new_with_free_func(g_free),
                          .cgroups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free) };
        g_assert_cmpint(sd_bus_message_skip(m, "a{sv}"), >=, 0);
        read_phases(m, rec);
        read_cgroups(m, rec);
        uint64_t at, kib;
        g_assert_cmpint(sd_bus_message_enter_container(m, 'a', "(tt)"), >, 0);
        while (sd_bus_message_read(m, "(tt)", &at, &kib) > 0)
                rec->samples++;
        sd_bus_message_unref(m);
}

static void assert_record(Fixture *f, const Record *rec) {
        static const char *const want[] = { "prepare", "flush", "freeze-early", "flush-again", "freeze-late",
                                            "kernel", "thaw" };
        g_assert_cmpuint(rec->phases->len, ==, G_N_ELEMENTS(want));
        for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
                g_assert_cmpstr(rec->phases->pdata[i], ==, want[i]);
        g_assert_cmpstr(g_hash_table_lookup(rec->cgroups, f->a), ==, "early");
        g_assert_cmpstr(g_hash_table_lookup(rec->cgroups, f->b), ==, "late");
        g_assert_null(g_hash_table_lookup(rec->cgroups, f->c)); /* nofreeze */
        g_autofree char *shown = g_strdup_printf("%s/odd<&\"x'\\xff.service", f->s->root);
        g_assert_cmpstr(g_hash_table_lookup(rec->cgroups, shown), ==, "early");
        /* a sample at each flush's start and end at least */
        g_assert_cmpuint(rec->samples, >=, 4);
}

static char *artifact(const char *name) {
        const char *dir = g_getenv("FRIDGE_ARTIFACT_DIR");
        return g_build_filename(dir ? dir : g_get_tmp_dir(), name, NULL);
}

/* argv[0] a program on PATH */
static int run_tool(char **argv, char **ret_out) {
        g_autofree char *path = g_find_program_in_path(argv[0]);
        g_assert_nonnull(path);
        argv[0] = path;
        int status = harness_run(argv, 60000, ret_out);
        g_test_message("%s: status %d", argv[0], status);
        return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The tools the picture is checked with; NULL when all are there */
static const char *missing_tool(void) {
        static const char *const tools[] = { "xmllint", "rsvg-convert", "identify" };
        for (size_t i = 0; i < G_N_ELEMENTS(tools); i++) {
                g_autofree char *p = g_find_program_in_path(tools[i]);
                if (!p)
                        return tools[i];
        }
        return NULL;
}

static char *plot(Harness *h, uint64_t cycle, const char *svg_path) {
        g_autofree char *addr = g_strdup_printf("--bus-address=%s", h->bus_address);
        g_autofree char *id = g_strdup_printf("%" G_GUINT64_FORMAT, cycle);
        char *argv[] = { (char *) harness_env("FRIDGECTL"), addr, (char *) "plot", id, NULL };
        g_autofree char *svg = NULL;
        g_assert_cmpint(run_tool(argv, &svg), ==, 0);
        g_assert_true(g_file_set_contents(svg_path, svg, -1, NULL));
        g_test_message("kept %s", svg_path);
        return g_steal_pointer(&svg);
}

static void assert_picture(const char *svg_path, const char *png_path) {
        char *lint[] = { (char *) "xmllint", (char *) "--noout", (char *) svg_path, NULL };
        g_assert_cmpint(run_tool(lint, NULL), ==, 0);
        char *render[] = { (char *) "rsvg-convert", (char *) svg_path, (char *) "-o", (char *) png_path, NULL };
        g_assert_cmpint(run_tool(render, NULL), ==, 0);
        char *colours[] = { (char *) "identify", (char *) "-format", (char *) "%k", (char *) png_path, NULL };
        g_autofree char *n = NULL;
        g_assert_cmpint(run_tool(colours, &n), ==, 0);
        g_test_message("%s has %s colours", png_path, n);
        g_assert_cmpint(atoi(n), >, 1);
}

static void test_plot(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *tool = missing_tool();
        if (!harness_env("FRIDGECTL") || tool) {
                g_autofree char *why = g_strdup_printf("%s is not there", tool ? tool : "FRIDGECTL");
                g_test_skip(why);
                return;
        }
        add_odd(f);
        uint64_t cycle = run_cycle(f);
        g_auto(Record) rec = {};
        get_record(f->h, cycle, &rec);
        assert_record(f, &rec);

        g_autofree char *svg_path = artifact("plot-cycle.svg"), *png_path = artifact("plot-cycle.png");
        g_autofree char *svg = plot(f->h, cycle, svg_path);
        assert_picture(svg_path, png_path);
        /* every phase of the record has its bar's label */
        for (guint i = 0; i < rec.phases->len; i++) {
                g_autofree char *label = g_strdup_printf(">%s (", (char *) rec.phases->pdata[i]);
                if (!strstr(svg, label))
                        g_error("the SVG does not name phase %s", (char *) rec.phases->pdata[i]);
        }
        /* the odd name, escaped for XML, its bad byte as fridged sends it */
        g_assert_nonnull(strstr(svg, "/odd&lt;&amp;&quot;x&apos;\\xff.service (early)"));
        g_assert_nonnull(strstr(svg, "/b.service (late)"));

        /* without CYCLE: the last one */
        g_autofree char *last = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 30000, &last, "plot", NULL, NULL), ==, 0);
        g_assert_cmpstr(last, ==, svg);
}

static void test_no_such_cycle(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 30000, &out, "--json", "plot", NULL), ==, 4);
        g_assert_nonnull(strstr(out, "no cycle has run"));
        uint64_t cycle = run_cycle(f);
        g_autofree char *id = g_strdup_printf("%" G_GUINT64_FORMAT, cycle + 1);
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_call(f->h, FRIDGE_INTERFACE, "GetCycleTimeline", NULL, &err, &msg, "t", cycle + 1),
                        <, 0);
        g_assert_cmpstr(err, ==, "io.fridge.Fridge1.Error.NoSuchCycle");
        g_assert_nonnull(strstr(msg, "neither running nor kept in the history"));
        g_assert_cmpint(harness_fridgectl(f->h, 30000, NULL, "plot", id, NULL), ==, 4);
}

static bool timeline_kept(Harness *h, uint64_t cycle) {
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(h, FRIDGE_INTERFACE, "GetCycleTimeline", NULL, &err, &msg, "t", cycle) >= 0)
                return true;
        g_assert_cmpstr(err, ==, "io.fridge.Fridge1.Error.NoSuchCycle");
        return false;
}

/* Memory holds the last 8, whatever ran before */
static void restart_fridged(Harness *h) {
        harness_kill_fridged(h, SIGTERM);
        harness_restart_fridged(h);
}

/* Past the last 8 kept in memory the history answers, after a restart
 * too; past the history's bound (MaxCycles=9 here) nothing does */
static void test_older_from_history(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t first = 0, cycle = 0;
        for (int i = 0; i < 10; i++) {
                g_autofree char *err = NULL, *msg = NULL, *res = NULL;
                if (harness_sleep(f->h, "suspend", &cycle, &err, &msg, "dry-run", "b", 1, NULL) < 0)
                        g_error("Sleep failed: %s: %s", err, msg);
                g_assert_true(harness_wait_finished(f->h, cycle, 20000, &res, NULL, NULL));
                g_assert_cmpstr(res, ==, "dry-run");
                first = first ? first : cycle;
        }
        for (int round = 0; round < 2; round++) {
                g_assert_false(timeline_kept(f->h, first));
                for (uint64_t c = first + 1; c <= cycle; c++)
                        g_assert_true(timeline_kept(f->h, c));
                if (round == 0)
                        restart_fridged(f->h); /* nothing in memory: all from the history */
        }
        /* the history's copy is the whole picture */
        g_autofree char *id = g_strdup_printf("%" G_GUINT64_FORMAT, first + 1);
        g_autofree char *svg = NULL;
        g_assert_cmpint(harness_fridgectl(f->h, 20000, &svg, "plot", id, NULL), ==, 0);
        g_assert_nonnull(strstr(svg, "freeze-early"));
        g_assert_nonnull(strstr(svg, "</svg>"));
}

/* Another user sees a cycle root started only when polkit allows
 * io.fridge.history (as ListCycles shows it), asked without interaction;
 * an id no cycle has is refused the same way, so that probing ids does not
 * tell which are someone else's */
static void test_hidden_from_others(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = run_cycle(f);
        g_autofree char *id = g_strdup_printf("%" G_GUINT64_FORMAT, cycle);
        g_autofree char *missing = g_strdup_printf("%" G_GUINT64_FORMAT, cycle + 1);
        const char *const args[] = { "plot", id, NULL };
        harness_expect_denied_as_nobody(f->h, args, "io.fridge.history");
        const char *const probe[] = { "plot", missing, NULL };
        harness_expect_denied_as_nobody(f->h, probe, "io.fridge.history");
}

static void test_shown_with_history_action(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        uint64_t cycle = run_cycle(f);
        g_autofree char *id = g_strdup_printf("%" G_GUINT64_FORMAT, cycle);
        const char *const args[] = { "plot", id, NULL };
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl_nobody_exit(f->h, &out, args), ==, 0);
        g_assert_nonnull(strstr(out, "</svg>"));
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
#define ADD(name, fn, data) \
        g_test_add("/plot/" name, Fixture, data, freeze_fixture_setup, fn, freeze_fixture_teardown)
        /* io.fridge.sleep is no longer what shows another user's cycle */
        static const CaseOptions nobody_denied = { .open_bus = true,
                                                   .polkit_table = "io.fridge.sleep 65534 yes\nio.fridge.history 65534 no\n" };
        static const CaseOptions nobody_sleeps = { .open_bus = true,
                                                   .polkit_table = "io.fridge.history 65534 yes\n" };
        static const CaseOptions history_nine = { .extra_config = "[History]\nMaxCycles=9\n" };
        ADD("svg", test_plot, NULL);
        ADD("no-such-cycle", test_no_such_cycle, NULL);
        ADD("older-from-history", test_older_from_history, &history_nine);
        ADD("hidden-from-others", test_hidden_from_others, &nobody_denied);
        ADD("shown-with-history-action", test_shown_with_history_action, &nobody_sleeps);
        return g_test_run();
}
