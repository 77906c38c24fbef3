/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib.h>

#include "timeline.h"

#define T0 1000000ULL /* the cycle's start, CLOCK_MONOTONIC µs */

static Timeline *sample_timeline(void) {
        Timeline *t = NULL;
        g_assert_cmpint(timeline_new(7, "suspend", 1700000000000000ULL, T0, &t), ==, 0);
        timeline_phase(t, "prepare", T0 + 10);
        timeline_phase(t, "flush", T0 + 100);
        timeline_flush_sample(t, 4096, T0 + 100);
        timeline_phase(t, "flush", T0 + 150); /* flushing → handed-over: still one bar */
        timeline_flush_sample(t, 1024, T0 + 200);
        timeline_phase(t, "freeze-early", T0 + 300);
        timeline_cgroup(t, "user.slice/a b;c\\x0a.service", "early", TIMELINE_FREEZE, T0 + 310);
        timeline_cgroup(t, "user.slice/a b;c\\x0a.service", "early", TIMELINE_FROZEN, T0 + 320);
        timeline_cgroup(t, "user.slice/never", "early", TIMELINE_FREEZE, T0 + 311);
        timeline_phase(t, "kernel", T0 + 400);
        timeline_kernel(t, 3000000, "rtc0 on 00:04");
        timeline_phase(t, "thaw", T0 + 500);
        timeline_cgroup(t, "user.slice/a b;c\\x0a.service", "early", TIMELINE_THAWED, T0 + 510);
        timeline_finish(t, "done", T0 + 600);
        return t;
}

static void test_record(void) {
        g_autoptr(Timeline) t = sample_timeline();
        g_assert_cmpuint(t->phases->len, ==, 5);
        TimelinePhase *p = &g_array_index(t->phases, TimelinePhase, 1);
        g_assert_cmpstr(p->name, ==, "flush");
        g_assert_cmpuint(p->start, ==, 100);
        g_assert_cmpuint(p->end, ==, 300);
        p = &g_array_index(t->phases, TimelinePhase, 4);
        g_assert_cmpuint(p->end, ==, 600); /* the finish closes the last */
        g_assert_cmpuint(t->end, ==, 600);

        g_assert_cmpuint(t->cgroups->len, ==, 2);
        TimelineCgroup *c = &g_array_index(t->cgroups, TimelineCgroup, 0);
        g_assert_cmpuint(c->freeze, ==, 310);
        g_assert_cmpuint(c->frozen, ==, 320);
        g_assert_cmpuint(c->thawed, ==, 510);
        c = &g_array_index(t->cgroups, TimelineCgroup, 1);
        g_assert_cmpuint(c->frozen, ==, TIMELINE_NEVER);
        g_assert_cmpuint(c->thawed, ==, TIMELINE_NEVER);
        g_assert_cmpuint(t->slept_usec, ==, 3000000);
        g_assert_cmpstr(t->wake_reason, ==, "rtc0 on 00:04");
        g_assert_cmpstr(t->result, ==, "done");
}

static void test_cgroups_capped(void) {
        g_autoptr(Timeline) t = NULL;
        g_assert_cmpint(timeline_new(1, "suspend", 0, T0, &t), ==, 0);
        for (unsigned i = 0; i < TIMELINE_CGROUPS_MAX + 50; i++) {
                g_autofree char *name = g_strdup_printf("user.slice/s%u.scope", i);
                timeline_cgroup(t, name, "early", TIMELINE_FREEZE, T0 + i);
                timeline_cgroup(t, name, "early", TIMELINE_FROZEN, T0 + i + 1);
        }
        for (unsigned i = 0; i < TIMELINE_CGROUPS_MAX + 50; i++) {
                g_autofree char *name = g_strdup_printf("user.slice/s%u.scope", i);
                timeline_cgroup(t, name, "early", TIMELINE_THAWED, T0 + 5000 + i);
        }
        g_assert_cmpuint(t->cgroups->len, ==, TIMELINE_CGROUPS_MAX);
        g_assert_cmpuint(t->cgroups_dropped, ==, 50);
        /* the index still finds each kept cgroup after the array grew */
        TimelineCgroup *last = &g_array_index(t->cgroups, TimelineCgroup, TIMELINE_CGROUPS_MAX - 1);
        g_assert_cmpuint(last->frozen, ==, TIMELINE_CGROUPS_MAX);
        g_assert_cmpuint(last->thawed, ==, 5000 + TIMELINE_CGROUPS_MAX - 1);
}

/* A name as long as anyone nests a delegated subtree is kept shortened,
 * in whole characters, and its events still find it */
static void test_long_name(void) {
        g_autoptr(Timeline) t = NULL;
        g_assert_cmpint(timeline_new(1, "suspend", 0, T0, &t), ==, 0);
        GString *name = g_string_new("user.slice/");
        while (name->len < 4000)
                g_string_append(name, "d\xc3\xa9" "ep/");
        g_string_append(name, "end.service");
        timeline_cgroup(t, name->str, "early", TIMELINE_FREEZE, T0 + 1);
        timeline_cgroup(t, name->str, "early", TIMELINE_FROZEN, T0 + 2);
        timeline_cgroup(t, name->str, "early", TIMELINE_THAWED, T0 + 3);
        g_assert_cmpuint(t->cgroups->len, ==, 1);
        const TimelineCgroup *c = &g_array_index(t->cgroups, TimelineCgroup, 0);
        g_assert_true(g_utf8_validate(c->name, -1, NULL));
        g_assert_cmpint(g_utf8_strlen(c->name, -1), ==, TIMELINE_NAME_MAX + 1);
        g_assert_true(g_str_has_prefix(c->name, "user.slice/d\xc3\xa9" "ep/"));
        g_assert_true(g_str_has_suffix(c->name, "/end.service"));
        g_assert_cmpuint(c->frozen, ==, 2);
        g_assert_cmpuint(c->thawed, ==, 3);
        g_string_free(name, TRUE);
}

/* An hour of 100 ms ticks: the samples stay bounded, span the whole flush
 * evenly and end with the last one taken */
static void test_samples_thinned(void) {
        g_autoptr(Timeline) t = NULL;
        g_assert_cmpint(timeline_new(1, "suspend", 0, T0, &t), ==, 0);
        const unsigned n = 36000;
        for (unsigned i = 0; i < n; i++)
                timeline_flush_sample(t, n - i, T0 + (uint64_t) i * 100000);
        g_assert_cmpuint(t->samples->len, <=, TIMELINE_SAMPLES_MAX);
        g_assert_cmpuint(t->samples->len, >=, TIMELINE_SAMPLES_MAX / 2);
        TimelineSample *first = &g_array_index(t->samples, TimelineSample, 0);
        TimelineSample *end = &g_array_index(t->samples, TimelineSample, t->samples->len - 1);
        g_assert_cmpuint(first->at, ==, 0);
        g_assert_cmpuint(end->at, ==, (uint64_t) (n - 1) * 100000);
        g_assert_cmpuint(end->kib, ==, 1);
        uint64_t step = g_array_index(t->samples, TimelineSample, 1).at;
        for (guint i = 1; i + 1 < t->samples->len; i++)
                g_assert_cmpuint(g_array_index(t->samples, TimelineSample, i).at, ==, i * step);
}

static void assert_same(const Timeline *a, const Timeline *b) {
        g_assert_cmpuint(a->id, ==, b->id);
        g_assert_cmpstr(a->kind, ==, b->kind);
        g_assert_cmpstr(a->result, ==, b->result);
        g_assert_cmpuint(a->start_realtime, ==, b->start_realtime);
        g_assert_cmpuint(a->end, ==, b->end);
        g_assert_cmpuint(a->phases->len, ==, b->phases->len);
        for (guint i = 0; i < a->phases->len; i++) {
                TimelinePhase *x = &g_array_index(a->phases, TimelinePhase, i);
                TimelinePhase *y = &g_array_index(b->phases, TimelinePhase, i);
                g_assert_cmpstr(x->name, ==, y->name);
                g_assert_cmpuint(x->start, ==, y->start);
                g_assert_cmpuint(x->end, ==, y->end);
        }
        g_assert_cmpuint(a->cgroups->len, ==, b->cgroups->len);
        for (guint i = 0; i < a->cgroups->len; i++) {
                TimelineCgroup *x = &g_array_index(a->cgroups, TimelineCgroup, i);
                TimelineCgroup *y = &g_array_index(b->cgroups, TimelineCgroup, i);
                g_assert_cmpstr(x->name, ==, y->name);
                g_assert_cmpstr(x->stage, ==, y->stage);
                g_assert_cmpuint(x->freeze, ==, y->freeze);
                g_assert_cmpuint(x->frozen, ==, y->frozen);
                g_assert_cmpuint(x->thawed, ==, y->thawed);
        }
        g_assert_cmpuint(a->cgroups_dropped, ==, b->cgroups_dropped);
        g_assert_cmpuint(a->samples->len, ==, b->samples->len);
        for (guint i = 0; i < a->samples->len; i++) {
                g_assert_cmpuint(g_array_index(a->samples, TimelineSample, i).at, ==,
                                 g_array_index(b->samples, TimelineSample, i).at);
                g_assert_cmpuint(g_array_index(a->samples, TimelineSample, i).kib, ==,
                                 g_array_index(b->samples, TimelineSample, i).kib);
        }
        g_assert_cmpuint(a->slept_usec, ==, b->slept_usec);
        g_assert_cmpstr(a->wake_reason, ==, b->wake_reason);
        g_assert_cmpuint(a->image_raw_bytes, ==, b->image_raw_bytes);
        g_assert_cmpuint(a->image_written_bytes, ==, b->image_written_bytes);
        g_assert_cmpuint(a->image_usec, ==, b->image_usec);
}

static GKeyFile *through_text(GKeyFile *kf) {
        g_autofree char *text = g_key_file_to_data(kf, NULL, NULL);
        GKeyFile *back = g_key_file_new();
        g_assert_true(g_key_file_load_from_data(back, text, -1, G_KEY_FILE_NONE, NULL));
        return back;
}

static void test_round_trip(void) {
        g_autoptr(Timeline) t = sample_timeline();
        g_autoptr(GKeyFile) kf = g_key_file_new();
        /* the history's own group stays as it was */
        g_key_file_set_string(kf, "Cycle", "Result", "done");
        timeline_to_keyfile(t, kf);
        g_autoptr(GKeyFile) text = through_text(kf);
        g_autoptr(Timeline) back = NULL;
        g_assert_cmpint(timeline_from_keyfile(text, &back), ==, 0);
        assert_same(t, back);
        g_autofree char *other = g_key_file_get_string(text, "Cycle", "Result", NULL);
        g_assert_cmpstr(other, ==, "done");

        /* an empty timeline too (a cycle that ended before its first phase) */
        g_autoptr(Timeline) empty = NULL;
        g_assert_cmpint(timeline_new(2, "hibernate", 5, T0, &empty), ==, 0);
        g_autoptr(GKeyFile) kf2 = g_key_file_new();
        timeline_to_keyfile(empty, kf2);
        g_autoptr(GKeyFile) text2 = through_text(kf2);
        g_autoptr(Timeline) back2 = NULL;
        g_assert_cmpint(timeline_from_keyfile(text2, &back2), ==, 0);
        assert_same(empty, back2);
}

/* fridge's image write comes back; a file without it (older, or a
 * suspend) loads with none */
static void test_image_round_trip(void) {
        g_autoptr(Timeline) t = sample_timeline();
        g_autoptr(GKeyFile) plain = g_key_file_new();
        timeline_to_keyfile(t, plain);
        g_assert_false(g_key_file_has_key(plain, "Kernel", "ImageRawBytes", NULL));

        timeline_image(t, 81788928, 14365491, 1200000);
        g_autoptr(GKeyFile) kf = g_key_file_new();
        timeline_to_keyfile(t, kf);
        g_autoptr(GKeyFile) text = through_text(kf);
        g_autoptr(Timeline) back = NULL;
        g_assert_cmpint(timeline_from_keyfile(text, &back), ==, 0);
        assert_same(t, back);
        g_assert_cmpuint(back->image_raw_bytes, ==, 81788928);

        g_autoptr(Timeline) none = NULL;
        g_assert_cmpint(timeline_from_keyfile(plain, &none), ==, 0);
        g_assert_cmpuint(none->image_raw_bytes, ==, 0);
        g_assert_cmpuint(none->image_usec, ==, 0);

        /* one that is there must be a number */
        g_key_file_set_value(text, "Kernel", "ImageUsec", "soon");
        g_autoptr(Timeline) bad = NULL;
        g_assert_cmpint(timeline_from_keyfile(text, &bad), ==, -EBADMSG);
}

/* Each edit of a good file must be refused */
static void test_malformed(void) {
        static const struct {
                const char *group, *key, *value; /* value NULL: the key removed */
        } edits[] = {
                { "Timeline", "Version", "2" },
                { "Timeline", "Id", NULL },
                { "Timeline", "Id", "-1" },
                { "Timeline", "StartRealtimeUsec", "12x" },
                { "Timeline", "Kind", NULL },
                { "Phases", "Names", NULL },
                { "Phases", "StartUsec", "1;2;" },
                { "Phases", "EndUsec", "1;2;3;4;banana;" },
                { "Cgroups", "Stages", "early;" },
                { "Cgroups", "FrozenUsec", "1;" },
                { "Cgroups", "Names", "a;a;" },
                { "Cgroups", "Dropped", "" },
                { "Flush", "KiB", "1;2;3;" },
                { "Flush", "AtUsec", "99999999999999999999999;1;" },
                { "Kernel", "WakeReason", NULL },
        };
        g_autoptr(Timeline) t = sample_timeline();
        for (size_t i = 0; i < G_N_ELEMENTS(edits); i++) {
                g_autoptr(GKeyFile) kf = g_key_file_new();
                timeline_to_keyfile(t, kf);
                if (edits[i].value)
                        g_key_file_set_value(kf, edits[i].group, edits[i].key, edits[i].value);
                else
                        g_assert_true(g_key_file_remove_key(kf, edits[i].group, edits[i].key, NULL));
                g_autoptr(Timeline) back = NULL;
                g_test_message("[%s] %s=%s", edits[i].group, edits[i].key, edits[i].value);
                g_assert_cmpint(timeline_from_keyfile(kf, &back), ==, -EBADMSG);
                g_assert_null(back);
        }

        /* more phases than a timeline keeps */
        g_autoptr(GKeyFile) kf = g_key_file_new();
        timeline_to_keyfile(t, kf);
        g_autoptr(GString) many = g_string_new("");
        for (unsigned i = 0; i <= TIMELINE_PHASES_MAX; i++)
                g_string_append(many, "flush;");
        g_key_file_set_value(kf, "Phases", "Names", many->str);
        g_autoptr(Timeline) back = NULL;
        g_assert_cmpint(timeline_from_keyfile(kf, &back), ==, -EBADMSG);

        /* a name that is not UTF-8 */
        g_autoptr(GKeyFile) bad = g_key_file_new();
        timeline_to_keyfile(t, bad);
        g_key_file_set_value(bad, "Kernel", "WakeReason", "\xff\xfe");
        g_assert_cmpint(timeline_from_keyfile(bad, &back), ==, -EBADMSG);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/timeline/record", test_record);
        g_test_add_func("/timeline/cgroups-capped", test_cgroups_capped);
        g_test_add_func("/timeline/long-name", test_long_name);
        g_test_add_func("/timeline/samples-thinned", test_samples_thinned);
        g_test_add_func("/timeline/round-trip", test_round_trip);
        g_test_add_func("/timeline/malformed", test_malformed);
        g_test_add_func("/timeline/image-round-trip", test_image_round_trip);
        return g_test_run();
}
