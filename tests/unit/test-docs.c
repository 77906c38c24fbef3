/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The documentation follows the tables: fridge.conf(5) documents every key
 * of config_keys[] (range, values, default) and no other; fridgectl(1) and
 * the Sleep comment of dbus/io.fridge.Fridge1.xml document every option of
 * sleep_options[] (type, range, values, what it applies to) and no other,
 * and the bash completion offers each flag and its values.
 * A key or option added to a table without its documentation, or left in
 * the documentation after it went, fails here. */
#include <glib.h>
#include <string.h>

#include "config-keys.h"
#include "sleep-options.h"

static char *source_text(const char *relative) {
        const char *root = g_getenv("FRIDGE_SOURCE_DIR");
        g_assert_nonnull(root);
        g_autofree char *path = g_build_filename(root, relative, NULL);
        char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        return text;
}

/* ---- a man page as text: what the reader sees, font macros applied ---- */

typedef struct ManItem {
        char *section; /* .SH or .SS title */
        char *tag;     /* the .TP tag line; NULL: the section's own text */
        GString *body;
} ManItem;

static void man_item_free(gpointer p) {
        ManItem *i = p;
        g_free(i->section);
        g_free(i->tag);
        g_string_free(i->body, TRUE);
        g_free(i);
}

static char *unescape(const char *s) {
        GString *out = g_string_new(NULL);
        for (const char *p = s; *p; p++) {
                if (*p != '\\') {
                        g_string_append_c(out, *p);
                        continue;
                }
                p++;
                if (*p == '-')
                        g_string_append_c(out, '-');
                else if (*p == 'f' && p[1])
                        p++; /* \fR, \fI, \fB */
                else if (*p == '(' && p[1] && p[2]) {
                        g_string_append_c(out, '"'); /* \(lq, \(rq */
                        p += 2;
                } else if (*p != '%' && *p != '&' && *p)
                        g_string_append_c(out, *p);
                if (!*p)
                        break;
        }
        return g_string_free(out, FALSE);
}

/* A line as printed: a font macro's words joined (alternating macros such
 * as .BR join them without spaces), escapes resolved */
static char *man_line(const char *line) {
        if (line[0] != '.')
                return unescape(line);
        const char *sp = strchr(line, ' ');
        g_autofree char *macro = g_strndup(line + 1, sp ? (size_t) (sp - line - 1) : strlen(line + 1));
        g_auto(GStrv) args = NULL;
        if (!sp || !g_shell_parse_argv(sp + 1, NULL, &args, NULL))
                return g_strdup("");
        g_autofree char *joined = g_strjoinv(strlen(macro) == 2 ? "" : " ", args);
        return unescape(joined);
}

/* The items of a page: each section's text and each .TP paragraph */
static GPtrArray *man_items(const char *text) {
        GPtrArray *items = g_ptr_array_new_with_free_func(man_item_free);
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_autofree char *section = NULL;
        ManItem *cur = NULL;
        bool want_tag = false;
        for (char **l = lines; *l; l++) {
                if (g_str_has_prefix(*l, ".\\\""))
                        continue;
                if (g_str_has_prefix(*l, ".SH ") || g_str_has_prefix(*l, ".SS ")) {
                        g_free(section);
                        section = man_line(*l);
                        cur = g_new0(ManItem, 1);
                        *cur = (ManItem) { .section = g_strdup(section), .body = g_string_new(NULL) };
                        g_ptr_array_add(items, cur);
                        continue;
                }
                if (g_str_equal(*l, ".TP")) {
                        want_tag = true;
                        continue;
                }
                if (!cur)
                        continue;
                g_autofree char *printed = man_line(*l);
                if (want_tag) {
                        cur = g_new0(ManItem, 1);
                        *cur = (ManItem) { .section = g_strdup(section), .tag = g_steal_pointer(&printed),
                                           .body = g_string_new(NULL) };
                        g_ptr_array_add(items, cur);
                        want_tag = false;
                        continue;
                }
                if (*printed)
                        g_string_append_printf(cur->body, " %s", printed);
        }
        return items;
}

static const ManItem *man_section_text(GPtrArray *items, const char *section) {
        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                if (!it->tag && g_str_equal(it->section, section))
                        return it;
        }
        return NULL;
}

static void assert_says(const char *where, const char *text, const char *what) {
        if (!strstr(text, what))
                g_error("%s does not say \"%s\":%s", where, what, text);
}

/* ---- fridge.conf(5) and config_keys[] ---- */

static const ConfigKey *config_key_of(const char *section, const char *tag) {
        if (section[0] != '[')
                return NULL;
        g_autofree char *group = g_strndup(section + 1, strlen(section) - 2);
        g_autofree char *name = g_strndup(tag, strcspn(tag, "="));
        return config_key_find(group, name);
}

static void test_fridge_conf_5(void) {
        g_autofree char *text = source_text("man/fridge.conf.5");
        g_autoptr(GPtrArray) items = man_items(text);
        g_autofree bool *documented = g_new0(bool, config_keys_count);

        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                if (!it->tag || it->section[0] != '[')
                        continue; /* [Group] sections hold the keys; CLASSES has its own */
                const ConfigKey *k = config_key_of(it->section, it->tag);
                if (!k)
                        g_error("fridge.conf(5) documents %s %s, which fridged does not know", it->section, it->tag);
                documented[k - config_keys] = true;

                g_autofree char *where = g_strdup_printf("fridge.conf(5) on [%s] %s", k->group, k->name);
                g_autofree char *all = g_strdup_printf("%s %s", it->tag, it->body->str);
                if (k->type == CONFIG_KEY_U32 || k->type == CONFIG_KEY_MSEC) {
                        g_autofree char *range = g_strdup_printf("%" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, k->min,
                                                                 k->max);
                        assert_says(where, all, range);
                }
                for (const char *const *w = k->words; w && *w; w++)
                        assert_says(where, all, *w);
                if (*k->default_value) {
                        g_autofree char *value = g_regex_escape_string(k->default_value, -1);
                        g_autofree char *pattern = g_strdup_printf("[Dd]efault:? %s\\b", value);
                        if (!g_regex_match_simple(pattern, all, 0, 0))
                                g_error("%s does not give the default %s:%s", where, k->default_value, all);
                } else {
                        const ManItem *sec = man_section_text(items, it->section);
                        if (!strstr(all, "Empty (the default)") && !(sec && strstr(sec->body->str, "Empty (the default)")))
                                g_error("%s does not say that empty is the default:%s", where, all);
                }
        }
        for (size_t i = 0; i < config_keys_count; i++)
                if (!documented[i])
                        g_error("fridge.conf(5) lacks [%s] %s", config_keys[i].group, config_keys[i].name);
}

/* ---- fridgectl(1) and sleep_options[] ---- */

#define SLEEP_SECTION "Options for suspend, hibernate and hybrid-sleep"

static void test_fridgectl_1(void) {
        g_autofree char *text = source_text("man/fridgectl.1");
        g_autoptr(GPtrArray) items = man_items(text);
        g_autofree bool *documented = g_new0(bool, sleep_options_count);

        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                if (!it->tag || !g_str_equal(it->section, SLEEP_SECTION))
                        continue;
                g_assert_true(g_str_has_prefix(it->tag, "--"));
                const char *flag = it->tag + 2;
                const SleepOption *s = sleep_option_by_flag(flag, strcspn(flag, "="));
                if (!s)
                        g_error("fridgectl(1) documents %s, which is not a Sleep option", it->tag);
                documented[s - sleep_options] = true;

                g_autofree char *want_tag = g_strdup_printf("--%s%s%s", s->flag, s->metavar ? "=" : "",
                                                            s->metavar ? s->metavar : "");
                g_assert_cmpstr(it->tag, ==, want_tag);
                g_autofree char *where = g_strdup_printf("fridgectl(1) on --%s", s->flag);
                const char *body = it->body->str;
                assert_says(where, body, s->name); /* the D-Bus name */
                if (s->type == SLEEP_OPTION_UINT) {
                        g_autofree char *range = g_strdup_printf("%u to %u", s->min, s->max);
                        assert_says(where, body, range);
                }
                for (const char *const *w = s->words; w && *w; w++)
                        assert_says(where, body, *w);
                if (s->only_kind) {
                        g_autofree char *only = g_strdup_printf("%s only", s->only_kind);
                        assert_says(where, body, only);
                }
                if (s->requires) {
                        g_autofree char *with = g_strdup_printf("--%s", sleep_option_by_name(s->requires)->flag);
                        assert_says(where, body, with);
                }
                if (s->fallback) {
                        g_autofree char *def = g_strdup_printf("default %s", s->fallback);
                        assert_says(where, body, def);
                }
        }
        for (size_t i = 0; i < sleep_options_count; i++)
                if (!documented[i])
                        g_error("fridgectl(1) lacks --%s in \"" SLEEP_SECTION "\"", sleep_options[i].flag);
}

/* ---- the D-Bus contract's Sleep comment and sleep_options[] ---- */

static void test_dbus_contract(void) {
        g_autofree char *text = source_text("dbus/io.fridge.Fridge1.xml");
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_autoptr(GRegex) start = g_regex_new("^ {8}([a-z][a-z-]*) +([a-z]) +(.*)$", 0, 0, NULL);
        g_autofree bool *documented = g_new0(bool, sleep_options_count);
        bool in_options = false;
        const SleepOption *cur = NULL;
        GString *desc = g_string_new(NULL);

        for (char **l = lines; *l; l++) {
                if (strstr(*l, "options (every key optional")) {
                        in_options = true;
                        continue;
                }
                if (!in_options)
                        continue;
                g_autoptr(GMatchInfo) m = NULL;
                bool is_start = g_regex_match(start, *l, 0, &m);
                bool is_more = !is_start && g_str_has_prefix(*l, "                             ");
                if ((is_start || !is_more) && cur) {
                        g_autofree char *where = g_strdup_printf("the Sleep comment on %s", cur->name);
                        if (cur->type == SLEEP_OPTION_UINT) {
                                g_autofree char *range = g_strdup_printf("%u..%u", cur->min, cur->max);
                                assert_says(where, desc->str, range);
                        }
                        if (cur->words) {
                                char words[256];
                                assert_says(where, desc->str, sleep_option_words(cur, "|", words, sizeof(words)));
                        }
                        if (cur->only_kind) {
                                g_autofree char *only = g_strdup_printf("(%s only)", cur->only_kind);
                                assert_says(where, desc->str, only);
                        }
                        if (cur->requires) {
                                g_autofree char *with = g_strdup_printf("only with %s", cur->requires);
                                assert_says(where, desc->str, with);
                        }
                        if (cur->fallback) {
                                g_autofree char *def = g_strdup_printf("default %s", cur->fallback);
                                assert_says(where, desc->str, def);
                        }
                        cur = NULL;
                }
                if (is_start) {
                        g_autofree char *name = g_match_info_fetch(m, 1);
                        g_autofree char *type = g_match_info_fetch(m, 2);
                        cur = sleep_option_by_name(name);
                        if (!cur)
                                g_error("the Sleep comment documents option %s, which fridged does not take", name);
                        g_assert_cmpint(type[0], ==, (char) cur->type);
                        documented[cur - sleep_options] = true;
                        g_autofree char *rest = g_match_info_fetch(m, 3);
                        g_string_assign(desc, rest);
                } else if (is_more && cur) {
                        g_autofree char *more = g_strstrip(g_strdup(*l));
                        g_string_append_printf(desc, " %s", more);
                } else if (!is_more)
                        break;
        }
        g_string_free(desc, TRUE);
        g_assert_true(in_options);
        for (size_t i = 0; i < sleep_options_count; i++)
                if (!documented[i])
                        g_error("the Sleep comment of dbus/io.fridge.Fridge1.xml lacks option %s", sleep_options[i].name);
}

/* ---- the bash completion and sleep_options[] ---- */

static void test_completion(void) {
        g_autofree char *text = source_text("completion/fridgectl");
        const char *start = strstr(text, "local opts_sleep='");
        g_assert_nonnull(start);
        start += strlen("local opts_sleep='");
        g_autofree char *list = g_strndup(start, strcspn(start, "'"));
        g_auto(GStrv) words = g_regex_split_simple("\\s+", g_strstrip(list), 0, 0);
        g_assert_cmpuint(g_strv_length(words), ==, sleep_options_count);
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                g_autofree char *word = g_strdup_printf("--%s%s", s->flag, s->metavar ? "=" : "");
                if (!g_strv_contains((const char *const *) words, word))
                        g_error("completion/fridgectl's opts_sleep lacks %s", word);
                if (s->words) {
                        g_autofree char *joined = g_strjoinv(" ", (char **) s->words);
                        g_autofree char *values = g_strdup_printf("--%s) values='%s'", s->flag, joined);
                        assert_says("completion/fridgectl", text, values);
                }
        }
}

/* The reader of the docs finds what it checks: a page without the section
 * would pass every loop above */
static void test_parsers_find_items(void) {
        g_autoptr(GPtrArray) items = man_items(".SH \"[Sleep]\"\n.TP\n.BR Driver= { auto | direct }\nWho, "
                                               "\\-1 to 2.\nDefault:\n.BR auto .\n");
        g_assert_cmpuint(items->len, ==, 2);
        const ManItem *it = items->pdata[1];
        g_assert_cmpstr(it->section, ==, "[Sleep]");
        g_assert_cmpstr(it->tag, ==, "Driver={auto|direct}");
        g_assert_cmpstr(it->body->str, ==, " Who, -1 to 2. Default: auto.");
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/docs/parsers-find-items", test_parsers_find_items);
        g_test_add_func("/docs/fridge-conf-5", test_fridge_conf_5);
        g_test_add_func("/docs/fridgectl-1", test_fridgectl_1);
        g_test_add_func("/docs/dbus-contract", test_dbus_contract);
        g_test_add_func("/docs/completion", test_completion);
        return g_test_run();
}
