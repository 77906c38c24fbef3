/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "man-page.h"

#include <stdbool.h>
#include <string.h>

char *source_text(const char *relative) {
        const char *root = g_getenv("FRIDGE_SOURCE_DIR");
        g_assert_nonnull(root);
        g_autofree char *path = g_build_filename(root, relative, NULL);
        char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        return text;
}

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
GPtrArray *man_items(const char *text) {
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

const ManItem *man_section_text(GPtrArray *items, const char *section) {
        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                if (!it->tag && g_str_equal(it->section, section))
                        return it;
        }
        return NULL;
}

void assert_says(const char *where, const char *text, const char *what) {
        if (!strstr(text, what))
                g_error("%s does not say \"%s\":%s", where, what, text);
}

void assert_sleep_option_says(const char *where, const char *body, const SleepOption *s, const char *requires) {
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
        if (requires)
                assert_says(where, body, requires);
        if (s->fallback) {
                g_autofree char *def = g_strdup_printf("default %s", s->fallback);
                assert_says(where, body, def);
        }
}
