/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "log.h"

#define TIMELINE_VERSION 1

static void phase_clear(void *p) {
        g_free(((TimelinePhase *) p)->name);
}

static void cgroup_clear(void *p) {
        TimelineCgroup *c = p;
        g_free(c->name);
        g_free(c->stage);
}

static Timeline *timeline_alloc(void) {
        Timeline *t = g_new0(Timeline, 1);
        t->phases = g_array_new(FALSE, TRUE, sizeof(TimelinePhase));
        g_array_set_clear_func(t->phases, phase_clear);
        t->cgroups = g_array_new(FALSE, TRUE, sizeof(TimelineCgroup));
        g_array_set_clear_func(t->cgroups, cgroup_clear);
        /* by the whole name (a kept one may be shortened) */
        t->cgroup_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        t->samples = g_array_new(FALSE, TRUE, sizeof(TimelineSample));
        t->sample_stride = 1;
        t->end = TIMELINE_NEVER;
        t->result = g_strdup("");
        t->wake_reason = g_strdup("");
        return t;
}

int timeline_new(uint64_t id, const char *kind, uint64_t start_realtime, uint64_t start_monotonic,
                 Timeline **ret) {
        Timeline *t = timeline_alloc();
        t->id = id;
        t->kind = g_strdup(kind);
        t->start_realtime = start_realtime;
        t->start_monotonic = start_monotonic;
        *ret = t;
        return 0;
}

Timeline *timeline_free(Timeline *t) {
        if (!t)
                return NULL;
        g_hash_table_unref(t->cgroup_index);
        g_array_unref(t->phases);
        g_array_unref(t->cgroups);
        g_array_unref(t->samples);
        g_free(t->kind);
        g_free(t->result);
        g_free(t->wake_reason);
        g_free(t);
        return NULL;
}

/* A clock read before the start (a caller's stale stamp) counts as the start */
static uint64_t offset(const Timeline *t, uint64_t monotonic) {
        return monotonic > t->start_monotonic ? monotonic - t->start_monotonic : 0;
}

static TimelinePhase *phase_open(Timeline *t) {
        if (t->phases->len == 0)
                return NULL;
        TimelinePhase *p = &g_array_index(t->phases, TimelinePhase, t->phases->len - 1);
        return p->end == TIMELINE_NEVER ? p : NULL;
}

void timeline_phase(Timeline *t, const char *name, uint64_t monotonic) {
        uint64_t at = offset(t, monotonic);
        TimelinePhase *open = phase_open(t);
        if (open && name && g_str_equal(open->name, name))
                return;
        if (open)
                open->end = at;
        /* Retries are bounded ([Sleep] Retries= ≤ 10), so this is a guard, not a policy */
        if (!name || t->phases->len >= TIMELINE_PHASES_MAX)
                return;
        TimelinePhase p = { .name = g_strdup(name), .start = at, .end = TIMELINE_NEVER };
        g_array_append_val(t->phases, p);
}

static TimelineCgroup *cgroup_find(Timeline *t, const char *name) {
        guint i = GPOINTER_TO_UINT(g_hash_table_lookup(t->cgroup_index, name));
        return i > 0 ? &g_array_index(t->cgroups, TimelineCgroup, i - 1) : NULL;
}

/* A cgroup frozen again (a retry's stage) keeps its first freeze and its last thaw */
static TimelineCgroup *cgroup_add(Timeline *t, const char *name, const char *stage) {
        if (t->cgroups->len >= TIMELINE_CGROUPS_MAX) {
                t->cgroups_dropped++;
                return NULL;
        }
        /* A name is as long as anyone nests their delegated subtree: the
         * picture needs its start and its end */
        g_autofree char *shown = NULL;
        glong chars = g_utf8_validate(name, -1, NULL) ? g_utf8_strlen(name, -1) : 0;
        if (chars > TIMELINE_NAME_MAX) {
                /* whole characters: the name goes out on D-Bus */
                g_autofree char *head = g_utf8_substring(name, 0, TIMELINE_NAME_MAX / 2);
                g_autofree char *tail = g_utf8_substring(name, chars - TIMELINE_NAME_MAX / 2, chars);
                shown = g_strconcat(head, "…", tail, NULL);
        } else
                shown = g_strdup(name);
        TimelineCgroup c = { .name = g_steal_pointer(&shown), .stage = g_strdup(stage ? stage : ""),
                             .freeze = TIMELINE_NEVER, .frozen = TIMELINE_NEVER, .thawed = TIMELINE_NEVER };
        g_array_append_val(t->cgroups, c);
        g_hash_table_insert(t->cgroup_index, g_strdup(name), GUINT_TO_POINTER(t->cgroups->len));
        return &g_array_index(t->cgroups, TimelineCgroup, t->cgroups->len - 1);
}

void timeline_cgroup(Timeline *t, const char *name, const char *stage, TimelineCgroupEvent ev,
                     uint64_t monotonic) {
        uint64_t at = offset(t, monotonic);
        TimelineCgroup *c = cgroup_find(t, name);
        if (!c && ev != TIMELINE_FREEZE)
                return; /* dropped at its freeze */
        if (!c && !(c = cgroup_add(t, name, stage)))
                return;
        switch (ev) {
        case TIMELINE_FREEZE:
                if (c->freeze == TIMELINE_NEVER)
                        c->freeze = at;
                break;
        case TIMELINE_FROZEN:
                if (c->frozen == TIMELINE_NEVER)
                        c->frozen = at;
                break;
        case TIMELINE_THAWED:
                c->thawed = at;
                break;
        }
}

/* Every other sample goes, the first stays; from now on one in twice as many is kept */
static void samples_thin(Timeline *t) {
        GArray *s = t->samples;
        guint n = 0;
        for (guint i = 0; i < s->len; i += 2)
                g_array_index(s, TimelineSample, n++) = g_array_index(s, TimelineSample, i);
        g_array_set_size(s, n);
        t->sample_stride *= 2;
}

void timeline_flush_sample(Timeline *t, uint64_t kib, uint64_t monotonic) {
        TimelineSample s = { .at = offset(t, monotonic), .kib = kib };
        bool on_stride = t->samples_seen++ % t->sample_stride == 0;
        /* The newest sample is always there (the flush's end), off the stride or not */
        if (t->last_provisional)
                g_array_index(t->samples, TimelineSample, t->samples->len - 1) = s;
        else {
                if (t->samples->len >= TIMELINE_SAMPLES_MAX)
                        samples_thin(t);
                g_array_append_val(t->samples, s);
        }
        t->last_provisional = !on_stride;
}

void timeline_kernel(Timeline *t, uint64_t slept_usec, const char *wake_reason) {
        t->slept_usec = slept_usec;
        g_free(t->wake_reason);
        t->wake_reason = g_strdup(wake_reason ? wake_reason : "");
}

void timeline_image(Timeline *t, uint64_t raw_bytes, uint64_t written_bytes, uint64_t usec) {
        t->image_raw_bytes = raw_bytes;
        t->image_written_bytes = written_bytes;
        t->image_usec = usec;
}

void timeline_finish(Timeline *t, const char *result, uint64_t monotonic) {
        timeline_phase(t, NULL, monotonic);
        t->end = offset(t, monotonic);
        g_free(t->result);
        t->result = g_strdup(result);
}

/* ---- the key file ---- */

static char *time_text(uint64_t v) {
        return v == TIMELINE_NEVER ? g_strdup("-") : g_strdup_printf("%" PRIu64, v);
}

static void set_time(GKeyFile *kf, const char *group, const char *key, uint64_t v) {
        g_autofree char *text = time_text(v);
        g_key_file_set_value(kf, group, key, text);
}

/* One column of a table: a list with a value per row */
static void set_times(GKeyFile *kf, const char *group, const char *key, GArray *rows, size_t field) {
        g_autoptr(GPtrArray) l = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < rows->len; i++) {
                const char *row = rows->data + (size_t) i * g_array_get_element_size(rows);
                g_ptr_array_add(l, time_text(*(const uint64_t *) (row + field)));
        }
        g_key_file_set_string_list(kf, group, key, (const char *const *) l->pdata, l->len);
}

static void set_strings(GKeyFile *kf, const char *group, const char *key, GArray *rows, size_t field) {
        g_autofree const char **l = g_new0(const char *, rows->len + 1);
        for (guint i = 0; i < rows->len; i++)
                l[i] = *(char *const *) (rows->data + (size_t) i * g_array_get_element_size(rows) + field);
        g_key_file_set_string_list(kf, group, key, l, rows->len);
}

void timeline_to_keyfile(const Timeline *t, GKeyFile *kf) {
        g_key_file_set_integer(kf, "Timeline", "Version", TIMELINE_VERSION);
        set_time(kf, "Timeline", "Id", t->id);
        g_key_file_set_string(kf, "Timeline", "Kind", t->kind);
        g_key_file_set_string(kf, "Timeline", "Result", t->result);
        set_time(kf, "Timeline", "StartRealtimeUsec", t->start_realtime);
        set_time(kf, "Timeline", "EndUsec", t->end);

        set_strings(kf, "Phases", "Names", t->phases, G_STRUCT_OFFSET(TimelinePhase, name));
        set_times(kf, "Phases", "StartUsec", t->phases, G_STRUCT_OFFSET(TimelinePhase, start));
        set_times(kf, "Phases", "EndUsec", t->phases, G_STRUCT_OFFSET(TimelinePhase, end));

        set_strings(kf, "Cgroups", "Names", t->cgroups, G_STRUCT_OFFSET(TimelineCgroup, name));
        set_strings(kf, "Cgroups", "Stages", t->cgroups, G_STRUCT_OFFSET(TimelineCgroup, stage));
        set_times(kf, "Cgroups", "FreezeUsec", t->cgroups, G_STRUCT_OFFSET(TimelineCgroup, freeze));
        set_times(kf, "Cgroups", "FrozenUsec", t->cgroups, G_STRUCT_OFFSET(TimelineCgroup, frozen));
        set_times(kf, "Cgroups", "ThawedUsec", t->cgroups, G_STRUCT_OFFSET(TimelineCgroup, thawed));
        set_time(kf, "Cgroups", "Dropped", t->cgroups_dropped);

        set_times(kf, "Flush", "AtUsec", t->samples, G_STRUCT_OFFSET(TimelineSample, at));
        set_times(kf, "Flush", "KiB", t->samples, G_STRUCT_OFFSET(TimelineSample, kib));

        set_time(kf, "Kernel", "SleptUsec", t->slept_usec);
        g_key_file_set_string(kf, "Kernel", "WakeReason", t->wake_reason);
        if (t->image_raw_bytes == 0)
                return;
        set_time(kf, "Kernel", "ImageRawBytes", t->image_raw_bytes);
        set_time(kf, "Kernel", "ImageWrittenBytes", t->image_written_bytes);
        set_time(kf, "Kernel", "ImageUsec", t->image_usec);
}

/* Reads a file that may be damaged or written by hand: the first problem
 * is named, the rest are only counted as bad */
typedef struct Reader {
        GKeyFile *kf;
        bool bad;
} Reader;

static void reader_bad(Reader *r, const char *group, const char *key, const char *what) {
        if (!r->bad)
                log_warning("Malformed cycle timeline: [%s] %s %s", group, key, what);
        r->bad = true;
}

static bool parse_time(const char *s, uint64_t *ret) {
        guint64 v;
        if (g_str_equal(s, "-")) {
                *ret = TIMELINE_NEVER;
                return true;
        }
        if (!g_ascii_string_to_unsigned(s, 10, 0, TIMELINE_NEVER - 1, &v, NULL))
                return false;
        *ret = v;
        return true;
}

static uint64_t get_time(Reader *r, const char *group, const char *key) {
        g_autofree char *v = g_key_file_get_value(r->kf, group, key, NULL);
        uint64_t t = 0;
        if (!v)
                reader_bad(r, group, key, "is missing");
        else if (!parse_time(v, &t))
                reader_bad(r, group, key, "is not a whole number (or - for never)");
        return t;
}

static char *get_string(Reader *r, const char *group, const char *key) {
        char *v = g_key_file_get_string(r->kf, group, key, NULL);
        if (!v)
                reader_bad(r, group, key, "is missing or not UTF-8");
        return v ? v : g_strdup("");
}

/* A column: `*n` rows (at most `max`); the first column of a table sets `*n` */
static char **get_list(Reader *r, const char *group, const char *key, gsize max, gsize *n) {
        gsize len = 0;
        g_auto(GStrv) l = g_key_file_get_string_list(r->kf, group, key, &len, NULL);
        if (!l && !g_key_file_has_key(r->kf, group, key, NULL)) {
                reader_bad(r, group, key, "is missing");
                return NULL;
        }
        if (*n != G_MAXSIZE && len != *n) {
                reader_bad(r, group, key, "has a different number of entries than the group's other lists");
                return NULL;
        }
        if (len > max) {
                reader_bad(r, group, key, "has more entries than a timeline keeps");
                return NULL;
        }
        *n = len;
        return l ? g_steal_pointer(&l) : g_new0(char *, 1);
}

static uint64_t *get_times(Reader *r, const char *group, const char *key, gsize n) {
        g_auto(GStrv) l = get_list(r, group, key, n, &n);
        if (!l)
                return NULL;
        g_autofree uint64_t *v = g_new0(uint64_t, n + 1);
        for (gsize i = 0; i < n; i++)
                if (!parse_time(l[i], &v[i])) {
                        reader_bad(r, group, key, "holds a value that is not a whole number (or - for never)");
                        return NULL;
                }
        return g_steal_pointer(&v);
}

static void read_phases(Reader *r, Timeline *t) {
        gsize n = G_MAXSIZE;
        g_auto(GStrv) names = get_list(r, "Phases", "Names", TIMELINE_PHASES_MAX, &n);
        if (!names)
                return;
        g_autofree uint64_t *start = get_times(r, "Phases", "StartUsec", n);
        g_autofree uint64_t *end = get_times(r, "Phases", "EndUsec", n);
        for (gsize i = 0; start && end && i < n; i++) {
                TimelinePhase p = { .name = g_strdup(names[i]), .start = start[i], .end = end[i] };
                g_array_append_val(t->phases, p);
        }
}

static void read_cgroups(Reader *r, Timeline *t) {
        gsize n = G_MAXSIZE;
        g_auto(GStrv) names = get_list(r, "Cgroups", "Names", TIMELINE_CGROUPS_MAX, &n);
        if (!names)
                return;
        g_auto(GStrv) stages = get_list(r, "Cgroups", "Stages", n, &n);
        g_autofree uint64_t *freeze = get_times(r, "Cgroups", "FreezeUsec", n);
        g_autofree uint64_t *frozen = get_times(r, "Cgroups", "FrozenUsec", n);
        g_autofree uint64_t *thawed = get_times(r, "Cgroups", "ThawedUsec", n);
        uint64_t dropped = get_time(r, "Cgroups", "Dropped");
        t->cgroups_dropped = dropped > G_MAXUINT ? G_MAXUINT : (unsigned) dropped;
        for (gsize i = 0; stages && freeze && frozen && thawed && i < n; i++) {
                if (cgroup_find(t, names[i])) {
                        reader_bad(r, "Cgroups", "Names", "names a cgroup twice");
                        return;
                }
                TimelineCgroup *c = cgroup_add(t, names[i], stages[i]);
                c->freeze = freeze[i];
                c->frozen = frozen[i];
                c->thawed = thawed[i];
        }
}

static void read_samples(Reader *r, Timeline *t) {
        gsize n = G_MAXSIZE;
        g_auto(GStrv) at = get_list(r, "Flush", "AtUsec", TIMELINE_SAMPLES_MAX, &n);
        if (!at)
                return;
        g_autofree uint64_t *times = get_times(r, "Flush", "AtUsec", n);
        g_autofree uint64_t *kib = get_times(r, "Flush", "KiB", n);
        for (gsize i = 0; times && kib && i < n; i++) {
                TimelineSample s = { .at = times[i], .kib = kib[i] };
                g_array_append_val(t->samples, s);
        }
}

int timeline_from_keyfile(GKeyFile *kf, Timeline **ret) {
        Reader r = { .kf = kf };
        g_autoptr(Timeline) t = timeline_alloc();

        uint64_t version = get_time(&r, "Timeline", "Version");
        if (!r.bad && version != TIMELINE_VERSION)
                reader_bad(&r, "Timeline", "Version", "is not 1");
        t->id = get_time(&r, "Timeline", "Id");
        g_free(t->result);
        t->kind = get_string(&r, "Timeline", "Kind");
        t->result = get_string(&r, "Timeline", "Result");
        t->start_realtime = get_time(&r, "Timeline", "StartRealtimeUsec");
        t->end = get_time(&r, "Timeline", "EndUsec");
        read_phases(&r, t);
        read_cgroups(&r, t);
        read_samples(&r, t);
        t->slept_usec = get_time(&r, "Kernel", "SleptUsec");
        g_free(t->wake_reason);
        t->wake_reason = get_string(&r, "Kernel", "WakeReason");
        if (g_key_file_has_key(kf, "Kernel", "ImageRawBytes", NULL)) /* an older file has none */
                timeline_image(t, get_time(&r, "Kernel", "ImageRawBytes"), get_time(&r, "Kernel", "ImageWrittenBytes"),
                               get_time(&r, "Kernel", "ImageUsec"));
        if (r.bad)
                return -EBADMSG;
        *ret = g_steal_pointer(&t);
        return 0;
}
