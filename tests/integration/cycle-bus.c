/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whole cycles, part 2: the bus contract (argument checks, NotSupported,
 * the introspection against the shipped XML, progress reporting, GetPlan's
 * calls during a build).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cycle.h"
#include "fridge-config.h"

/* ---------------------------------------------------------------- 9 */

static void check_invalid(Harness *h, GString *failures, const char *what, int r,
                          char *err, char *msg, const char *names) {
        if (r == 0) {
                g_string_append_printf(failures, "  %s: the call succeeded\n", what);
        } else if (!g_str_equal(err, INVALID_ARGS)) {
                g_string_append_printf(failures, "  %s: expected InvalidArgs, got %s: %s\n", what, err, msg);
        } else if (!strstr(msg, names)) {
                g_string_append_printf(failures, "  %s: the message '%s' does not name '%s'\n", what, msg, names);
        } else {
                g_test_message("%s -> %s: %s", what, err, msg);
        }
        g_free(err);
        g_free(msg);

        g_autofree char *log = log_text(h);
        if (*log)
                g_string_append_printf(failures, "  %s: the fakesys log is not empty:\n%s", what, log);
        g_autofree char *state = harness_get_string(h, "State");
        if (!g_str_equal(state, "idle"))
                g_string_append_printf(failures, "  %s: State is '%s', not idle\n", what, state);
}

#define INVALID(what, names, kind, ...)                                                         \
        G_STMT_START {                                                                          \
                char *_e = NULL, *_m = NULL;                                                    \
                uint64_t _c = 0;                                                                \
                int _r = harness_sleep(h, kind, &_c, &_e, &_m, __VA_ARGS__);                    \
                if (_r == 0) {                                                                  \
                        /* do not leave a cycle running into the next check */                 \
                        harness_wait_finished(h, _c, 15000, NULL, NULL, NULL);                  \
                }                                                                               \
                check_invalid(h, failures, what, _r, _e, _m, names);                            \
        } G_STMT_END

void test_invalid_args(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_autoptr(GString) failures = g_string_new(NULL);

        INVALID("kind \"nap\"", "kind", "nap", NULL);
        INVALID("unknown option \"bogus\"", "bogus", "suspend", "bogus", "b", 1, NULL);
        INVALID("dry-run as a string", "dry-run", "suspend", "dry-run", "s", "yes", NULL);
        INVALID("wake-after-sec 0", "wake-after-sec", "suspend", "wake-after-sec", "u", 0u, NULL);
        INVALID("wake-after-sec as int32", "wake-after-sec", "suspend", "wake-after-sec", "i", 3, NULL);
        INVALID("flush-timeout-ms 5", "flush-timeout-ms", "suspend", "flush-timeout-ms", "u", 5u, NULL);
        INVALID("flush-timeout-ms 99999999", "flush-timeout-ms", "suspend",
                "flush-timeout-ms", "u", 99999999u, NULL);
        INVALID("mem-sleep \"deeper\"", "mem-sleep", "suspend", "mem-sleep", "s", "deeper", NULL);
        INVALID("pm-test \"all\"", "pm-test", "suspend", "pm-test", "s", "all", NULL);
        INVALID("mem-sleep with hibernate", "mem-sleep", "hibernate", "mem-sleep", "s", "deep", NULL);

        g_assert_cmpuint(harness_get_u64(h, "CycleId"), ==, 0);
        if (failures->len)
                g_error("bad arguments were not refused as the contract says:\n%s", failures->str);
}

void test_not_supported(Fixture *f, gconstpointer data) {
        const char *const args[] = { "--states=freeze mem", NULL };
        HarnessOptions o = { .fakesys_args = args };
        Harness *h = f->h = harness_new(&o);
        char *err = NULL, *msg = NULL;
        uint64_t cycle = 0;

        int r = harness_sleep(h, "hibernate", &cycle, &err, &msg, NULL);
        if (r == 0)
                harness_wait_finished(h, cycle, 15000, NULL, NULL, NULL);
        expect_error("Sleep hibernate without disk", r, err, msg, ERR("NotSupported"));
        g_test_message("hibernate -> %s: %s", err, msg);
        g_free(err);
        g_free(msg);

        g_autofree char *log = log_text(h);
        g_assert_cmpstr(log, ==, "");
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_cmpstr(state, ==, "idle");
}

/* ---------------------------------------------------------------- 10 */

/* Canonical description of one interface: "method Sleep" -> "in s kind, ...". */
typedef struct IfaceParse {
        const char *want_iface;
        bool in_iface;
        int skip_depth;             /* >0 while inside an element we ignore */
        char *member_key;           /* "method X", "signal X" */
        GString *member_args;
        GHashTable *members;        /* key -> description */
        GPtrArray *dups;
} IfaceParse;

static const char *attr(const char **names, const char **values, const char *name) {
        for (int i = 0; names[i]; i++)
                if (g_str_equal(names[i], name))
                        return values[i];
        return NULL;
}

static void add_member(IfaceParse *p, char *key, char *desc) {
        if (g_hash_table_contains(p->members, key)) {
                g_ptr_array_add(p->dups, g_strdup(key));
                g_free(key);
                g_free(desc);
                return;
        }
        g_hash_table_insert(p->members, key, desc);
}

static void on_start(GMarkupParseContext *ctx, const char *element, const char **names,
                     const char **values, gpointer user_data, GError **error) {
        IfaceParse *p = user_data;

        if (p->skip_depth > 0) {
                p->skip_depth++;
                return;
        }
        if (g_str_equal(element, "interface")) {
                const char *n = attr(names, values, "name");
                if (g_strcmp0(n, p->want_iface) == 0)
                        p->in_iface = true;
                else
                        p->skip_depth = 1;
                return;
        }
        if (!p->in_iface)
                return;
        if (g_str_equal(element, "method") || g_str_equal(element, "signal")) {
                p->member_key = g_strdup_printf("%s %s", element, attr(names, values, "name"));
                p->member_args = g_string_new(NULL);
        } else if (g_str_equal(element, "arg") && p->member_key) {
                const char *type = attr(names, values, "type");
                const char *name = attr(names, values, "name");
                const char *dir = attr(names, values, "direction");
                bool method = g_str_has_prefix(p->member_key, "method ");
                if (p->member_args->len)
                        g_string_append(p->member_args, ", ");
                if (method)
                        g_string_append_printf(p->member_args, "%s ", dir ? dir : "in");
                g_string_append_printf(p->member_args, "%s %s", type ? type : "?", name ? name : "(unnamed)");
        } else if (g_str_equal(element, "property")) {
                add_member(p, g_strdup_printf("property %s", attr(names, values, "name")),
                           g_strdup_printf("type %s, access %s", attr(names, values, "type"),
                                           attr(names, values, "access")));
        }
        /* annotations and anything else: ignored */
}

static void on_end(GMarkupParseContext *ctx, const char *element, gpointer user_data, GError **error) {
        IfaceParse *p = user_data;

        if (p->skip_depth > 0) {
                p->skip_depth--;
                return;
        }
        if (g_str_equal(element, "interface")) {
                p->in_iface = false;
        } else if ((g_str_equal(element, "method") || g_str_equal(element, "signal")) && p->member_key) {
                add_member(p, g_steal_pointer(&p->member_key),
                           g_strdup_printf("(%s)", p->member_args->str));
                g_string_free(p->member_args, TRUE);
                p->member_args = NULL;
        }
}

static GHashTable *parse_interface(const char *xml, const char *what, GString *failures) {
        static const GMarkupParser parser = { .start_element = on_start, .end_element = on_end };
        IfaceParse p = {
                .want_iface = FRIDGE_INTERFACE,
                .members = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                .dups = g_ptr_array_new_with_free_func(g_free),
        };
        g_autoptr(GError) e = NULL;
        GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, &p, NULL);

        if (!g_markup_parse_context_parse(ctx, xml, -1, &e) || !g_markup_parse_context_end_parse(ctx, &e))
                g_error("cannot parse the %s XML: %s", what, e->message);
        g_markup_parse_context_free(ctx);
        for (guint i = 0; i < p.dups->len; i++)
                g_string_append_printf(failures, "  %s: %s is declared twice\n", what,
                                       (char *) g_ptr_array_index(p.dups, i));
        g_ptr_array_unref(p.dups);
        g_free(p.member_key);
        if (p.member_args)
                g_string_free(p.member_args, TRUE);
        if (g_hash_table_size(p.members) == 0)
                g_string_append_printf(failures, "  %s: no interface %s at all\n", what, FRIDGE_INTERFACE);
        return p.members;
}

void test_introspection(Fixture *f, gconstpointer data) {
        const char *path = harness_env("INTROSPECTION_XML");
        g_autofree char *contract = NULL;
        g_autoptr(GError) e = NULL;
        sd_bus_message *reply = NULL;
        char *err = NULL, *msg = NULL;
        const char *live = NULL;

        if (!path) {
                skip("INTROSPECTION_XML is not set");
                return;
        }
        if (!g_file_get_contents(path, &contract, NULL, &e))
                g_error("read %s: %s", path, e->message);

        Harness *h = f->h = harness_new(NULL);
        if (harness_call(h, "org.freedesktop.DBus.Introspectable", "Introspect", &reply, &err, &msg, NULL) < 0)
                g_error("Introspect: %s: %s", err, msg);
        g_assert_cmpint(sd_bus_message_read(reply, "s", &live), >, 0);

        g_autoptr(GString) failures = g_string_new(NULL);
        g_autoptr(GHashTable) want = parse_interface(contract, "contract", failures);
        g_autoptr(GHashTable) got = parse_interface(live, "live", failures);
        g_autoptr(GList) keys = g_list_sort(g_hash_table_get_keys(want), (GCompareFunc) strcmp);
        for (GList *k = keys; k; k = k->next) {
                const char *w = g_hash_table_lookup(want, k->data);
                const char *g = g_hash_table_lookup(got, k->data);
                if (!g)
                        g_string_append_printf(failures, "  missing in fridged: %s %s\n", (char *) k->data, w);
                else if (!g_str_equal(w, g))
                        g_string_append_printf(failures, "  %s differs:\n    contract: %s\n    fridged:  %s\n",
                                               (char *) k->data, w, g);
        }
        g_autoptr(GList) extra = g_list_sort(g_hash_table_get_keys(got), (GCompareFunc) strcmp);
        for (GList *k = extra; k; k = k->next)
                if (!g_hash_table_contains(want, k->data))
                        g_string_append_printf(failures, "  not in the contract: %s %s\n", (char *) k->data,
                                               (char *) g_hash_table_lookup(got, k->data));

        g_test_message("compared %u members of %s", g_hash_table_size(want), FRIDGE_INTERFACE);
        if (failures->len) {
                g_test_message("live introspection:\n%s", live);
                sd_bus_message_unref(reply);
                g_error("fridged's %s differs from %s:\n%s", FRIDGE_INTERFACE, path, failures->str);
        }
        sd_bus_message_unref(reply);
}

/* ---------------------------------------------------------------- 11 */

static const char *const phase_order[] = {
        "prepare", "flush", "freeze-early", "flush-again", "freeze-late", "kernel", "thaw", NULL,
};

static int phase_rank(const char *phase) {
        for (int i = 0; phase_order[i]; i++)
                if (g_str_equal(phase_order[i], phase))
                        return i;
        return -1;
}

void test_progress(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .slowfs = true };

        if (!need_slowfs())
                return;
        Harness *h = f->h = harness_new(&o);
        harness_slowfs_make_dirty(h, 4 * 1024 * 1024);
        /* ~1 MiB per FUSE write: 4 writes of 400 ms make a flush of ~1.6 s
         * (where syncfs() waits for FUSE writeback at all) */
        harness_slowfs_control(h, "write-delay-ms 400");

        guint first = h->signals->len;
        uint64_t cycle = SLEEP_OK(h, "suspend", NULL);
        assert_finished(h, cycle, 60000, "done", "", NULL);
        g_autofree char *stats = harness_slowfs_stats(h);
        g_test_message("slowfs stats after the cycle: %s", stats);

        g_autoptr(GString) failures = g_string_new(NULL);
        g_autoptr(GString) phases = g_string_new(NULL);
        g_autoptr(GArray) progress_only = g_array_new(FALSE, FALSE, sizeof(int64_t));
        double last_progress = -1;
        int last_rank = -1, n_progress = 0, n_repeated = 0;
        g_autofree char *last_phase = NULL;
        bool seen[G_N_ELEMENTS(phase_order)] = { false };

        for (guint i = first; i < h->signals->len; i++) {
                HarnessSignal *s = g_ptr_array_index(h->signals, i);
                g_autoptr(GPtrArray) ch = harness_parse_props_changed(s);
                bool only_progress = ch->len > 0;

                for (guint j = 0; j < ch->len; j++) {
                        HarnessPropChange *c = g_ptr_array_index(ch, j);
                        if (!g_str_equal(c->name, "Progress") && !g_str_equal(c->name, "ProgressText"))
                                only_progress = false;
                        if (g_str_equal(c->name, "Progress")) {
                                n_progress++;
                                if (c->type != 'd')
                                        g_string_append_printf(failures, "  Progress has type %c\n", c->type);
                                else if (c->d < 0 || c->d > 1)
                                        g_string_append_printf(failures, "  Progress %g outside 0..1\n", c->d);
                                else if (c->d < last_progress)
                                        g_string_append_printf(failures, "  Progress went down: %g -> %g\n",
                                                               last_progress, c->d);
                                if (c->type == 'd')
                                        last_progress = c->d;
                        } else if (g_str_equal(c->name, "Phase") && c->type == 's' && *c->s) {
                                int rank = phase_rank(c->s);
                                /* fridged sends only what changed: the same value again is a defect */
                                if (g_strcmp0(c->s, last_phase) == 0) {
                                        n_repeated++;
                                        g_string_append_printf(failures, "  Phase '%s' sent again unchanged\n", c->s);
                                        continue;
                                }
                                g_free(last_phase);
                                last_phase = g_strdup(c->s);
                                g_string_append_printf(phases, "%s%s", phases->len ? " " : "", c->s);
                                if (rank < 0)
                                        g_string_append_printf(failures, "  unknown Phase '%s'\n", c->s);
                                else if (seen[rank])
                                        g_string_append_printf(failures, "  Phase '%s' entered twice\n", c->s);
                                else if (rank < last_rank)
                                        g_string_append_printf(failures, "  Phase '%s' after '%s'\n", c->s,
                                                               phase_order[last_rank]);
                                if (rank >= 0) {
                                        seen[rank] = true;
                                        last_rank = MAX(last_rank, rank);
                                }
                        }
                }
                if (only_progress)
                        g_array_append_val(progress_only, s->time_usec);
        }
        for (int i = 0; phase_order[i]; i++)
                if (!seen[i])
                        g_string_append_printf(failures, "  Phase '%s' never announced\n", phase_order[i]);

        /* the most progress-only PropertiesChanged within any 1 s window */
        guint max_in_window = 0;
        for (guint i = 0; i < progress_only->len; i++) {
                int64_t t0 = g_array_index(progress_only, int64_t, i);
                guint n = 0;
                for (guint j = i; j < progress_only->len && g_array_index(progress_only, int64_t, j) < t0 + G_USEC_PER_SEC; j++)
                        n++;
                max_in_window = MAX(max_in_window, n);
        }
        g_test_message("phases: %s (%d repeated Phase values); %d Progress changes, "
                       "%u progress-only signals, at most %u in 1 s",
                       phases->str, n_repeated, n_progress, progress_only->len, max_in_window);
        if (max_in_window > 12)
                g_string_append_printf(failures, "  %u progress-only PropertiesChanged within 1 s (> 12)\n",
                                       max_in_window);
        if (n_progress == 0)
                g_string_append(failures, "  no Progress change at all\n");
        if (failures->len)
                g_error("progress reporting breaks the contract:\n%s", failures->str);
}

/* ---------------------------------------------------------------- GetPlan */

static int on_plan_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        unsigned *answered = userdata;
        if (sd_bus_message_is_method_error(m, NULL))
                g_error("GetPlan failed: %s", sd_bus_message_get_error(m)->message);
        (*answered)++;
        return 0;
}

static bool all_answered(Harness *h, void *userdata) {
        return *(unsigned *) userdata == 8;
}

/* GetPlan is built on a worker, one build at a time: calls made during a
 * build wait for the next one, and each is answered; a caller that leaves
 * before its answer harms nobody */
void test_get_plan_concurrent(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        sd_bus *gone = NULL;
        g_assert_cmpint(sd_bus_new(&gone), >=, 0);
        g_assert_cmpint(sd_bus_set_address(gone, h->bus_address), >=, 0);
        g_assert_cmpint(sd_bus_set_bus_client(gone, true), >=, 0);
        g_assert_cmpint(sd_bus_start(gone), >=, 0);
        g_assert_cmpint(sd_bus_call_method_async(gone, NULL, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                                 "GetPlan", NULL, NULL, NULL), >=, 0);
        g_assert_cmpint(sd_bus_flush(gone), >=, 0);
        gone = sd_bus_flush_close_unref(gone);

        unsigned answered = 0;
        sd_bus_slot *slots[8] = {};
        for (int i = 0; i < 8; i++)
                g_assert_cmpint(sd_bus_call_method_async(h->bus, &slots[i], FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                                         FRIDGE_INTERFACE, "GetPlan", on_plan_reply, &answered,
                                                         NULL), >=, 0);
        if (!harness_process_until(h, 15000, all_answered, &answered))
                g_error("%u of 8 GetPlan calls answered within 15 s", answered);
        for (int i = 0; i < 8; i++)
                sd_bus_slot_unref(slots[i]);
        /* and fridged is still all there */
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_cmpstr(state, ==, "idle");
}
