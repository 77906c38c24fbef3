/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reference pages follow what they describe: io.fridge.Fridge1(5)
 * documents every method, signal and property of the XML contract (with
 * its arguments as the XML declares them), every Sleep option and every
 * polkit action of the policy, and no other; fridged(8) documents every
 * option of fridged_options[] and every polkit action; fridge-agent(1)
 * every option fridge-agent --help lists; the journal catalog has one
 * entry for every MESSAGE_ID of daemon/util/log.h. Something added without
 * its documentation, or documented after it went, fails here. (The errors
 * are test-fridge-error's, the config keys and fridgectl test-docs'.) */
#include <glib.h>
#include <stdbool.h>
#include <string.h>

#include "fridged-options.h"
#include "man-page.h"
#include "sleep-options.h"

/* Fails unless the two sets are equal, naming what only one has */
static void assert_same_set(GPtrArray *code, const char *code_where, GPtrArray *docs, const char *docs_where) {
        for (guint i = 0; i < code->len; i++)
                if (!g_ptr_array_find_with_equal_func(docs, code->pdata[i], g_str_equal, NULL))
                        g_error("%s lacks \"%s\", which %s has", docs_where, (char *) code->pdata[i], code_where);
        for (guint i = 0; i < docs->len; i++)
                if (!g_ptr_array_find_with_equal_func(code, docs->pdata[i], g_str_equal, NULL))
                        g_error("%s documents \"%s\", which %s does not have", docs_where, (char *) docs->pdata[i],
                                code_where);
}

/* Group 1 of every match of `pattern` in `text` */
static GPtrArray *matches(const char *pattern, GRegexCompileFlags flags, const char *text) {
        GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GRegex) re = g_regex_new(pattern, flags, 0, NULL);
        g_assert_nonnull(re);
        g_autoptr(GMatchInfo) mi = NULL;
        for (g_regex_match(re, text, 0, &mi); g_match_info_matches(mi); g_match_info_next(mi, NULL))
                g_ptr_array_add(a, g_match_info_fetch(mi, 1));
        return a;
}

/* The tags of a section's .TP paragraphs */
static GPtrArray *section_tags(GPtrArray *items, const char *section) {
        GPtrArray *tags = g_ptr_array_new_with_free_func(g_free);
        bool found = false;
        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                if (!g_str_equal(it->section, section))
                        continue;
                found = true;
                if (it->tag)
                        g_ptr_array_add(tags, g_strdup(it->tag));
        }
        if (!found)
                g_error("no section \"%s\"", section);
        return tags;
}

static const ManItem *tagged(GPtrArray *items, const char *section, const char *tag) {
        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                if (it->tag && g_str_equal(it->section, section) && g_str_equal(it->tag, tag))
                        return it;
        }
        return NULL;
}

/* ---- the XML contract's members, rendered as the page's tags ---- */

typedef struct Members {
        GPtrArray *methods, *signals, *properties; /* the tags */
        GPtrArray *quiet;  /* properties that send no PropertiesChanged */
        GString *cur;      /* the member being read */
        GPtrArray *cur_set;
        bool first_arg;
} Members;

static const char *attr(const char **names, const char **values, const char *name) {
        for (; *names; names++, values++)
                if (g_str_equal(*names, name))
                        return *values;
        return NULL;
}

static void on_start(GMarkupParseContext *ctx, const char *el, const char **names, const char **values,
                     gpointer userdata, GError **error) {
        Members *m = userdata;
        const char *name = attr(names, values, "name");
        if (g_str_equal(el, "method") || g_str_equal(el, "signal")) {
                g_string_printf(m->cur, "%s(", name);
                m->cur_set = g_str_equal(el, "method") ? m->methods : m->signals;
                m->first_arg = true;
        } else if (g_str_equal(el, "arg") && m->cur_set) {
                const char *dir = attr(names, values, "direction");
                g_string_append_printf(m->cur, "%s%s%s%s %s", m->first_arg ? "" : ", ",
                                       m->cur_set == m->methods ? (dir ? dir : "in") : "",
                                       m->cur_set == m->methods ? " " : "", attr(names, values, "type"), name);
                m->first_arg = false;
        } else if (g_str_equal(el, "property")) {
                const char *access = attr(names, values, "access");
                g_string_printf(m->cur, "%s %s %s",
                                g_str_equal(access, "read") ? "readonly" : g_str_equal(access, "write") ? "writeonly" : "readwrite",
                                attr(names, values, "type"), name);
                g_ptr_array_add(m->properties, g_strdup(m->cur->str));
        } else if (g_str_equal(el, "annotation") &&
                   g_str_equal(name, "org.freedesktop.DBus.Property.EmitsChangedSignal") &&
                   !g_str_equal(attr(names, values, "value"), "true"))
                g_ptr_array_add(m->quiet, g_strdup(m->cur->str));
}

static void on_end(GMarkupParseContext *ctx, const char *el, gpointer userdata, GError **error) {
        Members *m = userdata;
        if ((g_str_equal(el, "method") || g_str_equal(el, "signal")) && m->cur_set) {
                g_string_append_c(m->cur, ')');
                g_ptr_array_add(m->cur_set, g_strdup(m->cur->str));
                m->cur_set = NULL;
        }
}

static Members xml_members(void) {
        g_autofree char *xml = source_text("dbus/io.fridge.Fridge1.xml");
        Members m = { g_ptr_array_new_with_free_func(g_free), g_ptr_array_new_with_free_func(g_free),
                      g_ptr_array_new_with_free_func(g_free), g_ptr_array_new_with_free_func(g_free),
                      g_string_new(NULL) };
        static const GMarkupParser parser = { .start_element = on_start, .end_element = on_end };
        g_autoptr(GMarkupParseContext) ctx = g_markup_parse_context_new(&parser, 0, &m, NULL);
        /* GMarkup takes no DOCTYPE: parse from <node> */
        const char *node = strstr(xml, "<node>");
        g_assert_nonnull(node);
        g_autoptr(GError) e = NULL;
        if (!g_markup_parse_context_parse(ctx, node, -1, &e) || !g_markup_parse_context_end_parse(ctx, &e))
                g_error("dbus/io.fridge.Fridge1.xml: %s", e->message);
        g_string_free(m.cur, TRUE);
        g_assert_cmpuint(m.methods->len, >, 0);
        g_assert_cmpuint(m.properties->len, >, 0);
        return m;
}

static void test_members(void) {
        Members m = xml_members();
        g_autofree char *text = source_text("man/io.fridge.Fridge1.5");
        g_autoptr(GPtrArray) items = man_items(text);
        const char *const sections[] = { "METHODS", "SIGNALS", "PROPERTIES" };
        GPtrArray *const sets[] = { m.methods, m.signals, m.properties };
        for (size_t i = 0; i < G_N_ELEMENTS(sections); i++) {
                g_autoptr(GPtrArray) tags = section_tags(items, sections[i]);
                g_autofree char *where = g_strdup_printf("io.fridge.Fridge1(5)'s %s", sections[i]);
                assert_same_set(sets[i], "dbus/io.fridge.Fridge1.xml", tags, where);
        }
        /* a client must know which properties it has to read again */
        for (guint i = 0; i < m.properties->len; i++) {
                const char *p = m.properties->pdata[i];
                const ManItem *it = tagged(items, "PROPERTIES", p);
                bool quiet = g_ptr_array_find_with_equal_func(m.quiet, p, g_str_equal, NULL);
                if (quiet != (strstr(it->body->str, "no PropertiesChanged") != NULL))
                        g_error("io.fridge.Fridge1(5) on %s: the XML says it %s PropertiesChanged; the page says%s", p,
                                quiet ? "sends no" : "sends", it->body->str);
        }
        g_ptr_array_unref(m.methods);
        g_ptr_array_unref(m.signals);
        g_ptr_array_unref(m.properties);
        g_ptr_array_unref(m.quiet);
}

/* ---- Sleep's options ---- */

static void test_sleep_options(void) {
        g_autofree char *text = source_text("man/io.fridge.Fridge1.5");
        g_autoptr(GPtrArray) items = man_items(text);
        g_autoptr(GPtrArray) tags = section_tags(items, "SLEEP OPTIONS");
        g_autoptr(GPtrArray) table = g_ptr_array_new_with_free_func(g_free);
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                g_autofree char *tag = g_strdup_printf("%s (%c)", s->name, (char) s->type);
                g_ptr_array_add(table, g_strdup(tag));
                const ManItem *it = tagged(items, "SLEEP OPTIONS", tag);
                if (!it)
                        continue; /* assert_same_set names it */
                g_autofree char *where = g_strdup_printf("io.fridge.Fridge1(5) on %s", s->name);
                const char *body = it->body->str;
                g_autofree char *with = s->requires ? g_strdup_printf("only with %s", s->requires) : NULL;
                assert_sleep_option_says(where, body, s, with);
        }
        assert_same_set(table, "sleep_options[] (common/sleep-options.c)", tags,
                        "io.fridge.Fridge1(5)'s SLEEP OPTIONS");
}

/* ---- polkit's actions ---- */

static GPtrArray *policy_actions(void) {
        g_autofree char *policy = source_text("polkit/io.fridge.Fridge1.policy.in");
        GPtrArray *a = matches("<action id=\"([^\"]+)\"", 0, policy);
        g_assert_cmpuint(a->len, >, 0);
        return a;
}

/* The action names a text mentions (io.fridge.word, not the bus name), once each */
static GPtrArray *mentioned_actions(const char *text) {
        g_autoptr(GPtrArray) all = matches("\\b(io\\.fridge\\.[a-z][a-z-]*[a-z])", 0, text);
        GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < all->len; i++)
                if (!g_ptr_array_find_with_equal_func(a, all->pdata[i], g_str_equal, NULL))
                        g_ptr_array_add(a, g_strdup(all->pdata[i]));
        return a;
}

static void test_polkit_actions(void) {
        g_autoptr(GPtrArray) actions = policy_actions();
        const char *const policy = "polkit/io.fridge.Fridge1.policy.in";

        g_autofree char *api = source_text("man/io.fridge.Fridge1.5");
        g_autoptr(GPtrArray) api_items = man_items(api);
        g_autoptr(GPtrArray) tags = section_tags(api_items, "AUTHORIZATION");
        assert_same_set(actions, policy, tags, "io.fridge.Fridge1(5)'s AUTHORIZATION");

        g_autofree char *daemon = source_text("man/fridged.8");
        g_autoptr(GPtrArray) daemon_items = man_items(daemon);
        const ManItem *auth = man_section_text(daemon_items, "AUTHORIZATION");
        g_assert_nonnull(auth);
        g_autoptr(GPtrArray) named = mentioned_actions(auth->body->str);
        assert_same_set(actions, policy, named, "fridged(8)'s AUTHORIZATION");
}

/* ---- fridged(8) and fridged_options[] ---- */

/* A tag as --help would write it: braces around choices dropped */
static char *plain_tag(const char *tag) {
        GString *s = g_string_new(NULL);
        for (const char *p = tag; *p; p++)
                if (*p != '{' && *p != '}')
                        g_string_append_c(s, *p);
        return g_string_free(s, FALSE);
}

static void test_fridged_options(void) {
        g_autofree char *text = source_text("man/fridged.8");
        g_autoptr(GPtrArray) items = man_items(text);
        g_autoptr(GPtrArray) raw = section_tags(items, "OPTIONS");
        g_autoptr(GPtrArray) tags = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < raw->len; i++)
                g_ptr_array_add(tags, plain_tag(raw->pdata[i]));
        g_autoptr(GPtrArray) table = g_ptr_array_new_with_free_func(g_free);
        for (size_t i = 0; i < fridged_options_count; i++) {
                const FridgedOption *o = &fridged_options[i];
                g_autofree char *shortopt = o->id < 0x100 ? g_strdup_printf("-%c, ", o->id) : g_strdup("");
                g_ptr_array_add(table, g_strdup_printf("%s--%s%s%s", shortopt, o->name, o->metavar ? "=" : "",
                                                       o->metavar ? o->metavar : ""));
        }
        assert_same_set(table, "fridged_options[] (daemon/config/fridged-options.c)", tags,
                        "fridged(8)'s OPTIONS");
}

/* ---- fridge-agent(1) and what fridge-agent --help lists ---- */

static void test_agent_options(void) {
        const char *agent = g_getenv("FRIDGE_AGENT");
        g_assert_nonnull(agent);
        const char *argv[] = { agent, "--help", NULL };
        g_autofree char *out = NULL;
        g_autoptr(GError) e = NULL;
        int status;
        g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "LC_ALL", "C", TRUE);
        if (!g_spawn_sync(NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status, &e))
                g_error("cannot run %s: %s", agent, e->message);
        g_assert_true(g_spawn_check_wait_status(status, NULL));

        /* GOption's lines: "  -h, --help   Show help options" */
        g_autoptr(GPtrArray) options = matches("^  ((-[a-zA-Z], )?--[a-z][a-z-]*(=[A-Z]+)?) ", G_REGEX_MULTILINE, out);
        g_assert_cmpuint(options->len, >, 1);

        g_autofree char *text = source_text("man/fridge-agent.1");
        g_autoptr(GPtrArray) items = man_items(text);
        g_autoptr(GPtrArray) tags = section_tags(items, "OPTIONS");
        assert_same_set(options, "fridge-agent --help", tags, "fridge-agent(1)'s OPTIONS");
}

/* ---- the journal catalog and daemon/util/log.h's MESSAGE_IDs ---- */

static void test_catalog(void) {
        g_autofree char *log_h = source_text("daemon/util/log.h");
        g_autoptr(GPtrArray) ids = matches("^#define FRIDGE_MESSAGE_\\w+ +\"([0-9a-f]{32})\"$", G_REGEX_MULTILINE, log_h);
        g_assert_cmpuint(ids->len, >, 0);

        g_autofree char *catalog = source_text("data/fridge.catalog");
        g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func(g_free);
        g_auto(GStrv) parts = g_regex_split_simple("^-- ", catalog, G_REGEX_MULTILINE, 0);
        for (char **p = parts + 1; *p; p++) {
                g_autofree char *id = g_strndup(*p, strcspn(*p, "\n"));
                if (!g_regex_match_simple("^[0-9a-f]{32}$", id, 0, 0))
                        g_error("data/fridge.catalog: \"-- %s\" is not a MESSAGE_ID in lower-case hex", id);
                if (g_ptr_array_find_with_equal_func(entries, id, g_str_equal, NULL))
                        g_error("data/fridge.catalog has two entries for %s", id);
                g_autofree char *where = g_strdup_printf("data/fridge.catalog's entry %s", id);
                assert_says(where, *p, "\nSubject: ");
                assert_says(where, *p, "\nDefined-By: fridge\n");
                /* the headers end at the first empty line; a body follows */
                const char *body = strstr(*p, "\n\n");
                if (!body || !g_regex_match_simple("\\S", body, 0, 0))
                        g_error("%s has no text", where);
                g_ptr_array_add(entries, g_steal_pointer(&id));
        }
        assert_same_set(ids, "daemon/util/log.h", entries, "data/fridge.catalog");
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/docs-api/members", test_members);
        g_test_add_func("/docs-api/sleep-options", test_sleep_options);
        g_test_add_func("/docs-api/polkit-actions", test_polkit_actions);
        g_test_add_func("/docs-api/fridged-options", test_fridged_options);
        g_test_add_func("/docs-api/agent-options", test_agent_options);
        g_test_add_func("/docs-api/catalog", test_catalog);
        return g_test_run();
}
