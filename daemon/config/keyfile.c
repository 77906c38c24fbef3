/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "keyfile.h"

#include <glib.h>
#include <stdbool.h>
#include <string.h>

/* GKeyFile's lines as it sees them: leading white space does not count. */
bool keyfile_line_is_group(const char *l) {
        return l[0] == '[' && strchr(l, ']');
}

bool keyfile_line_is_key_value(const char *l) {
        const char *eq = strchr(l, '=');
        return eq && eq != l && l[0] != '[';
}

static bool keyfile_loads(const char *text, gsize len) {
        g_autoptr(GKeyFile) kf = g_key_file_new();
        return g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, NULL);
}

/* GKeyFile names no line in its syntax errors, so find the first line it
 * cannot take: administrators fix files by line number. GKeyFile parses
 * line by line and stops at the first bad one, so a prefix of whole lines
 * fails exactly when it holds that line: bisect on the prefixes, which asks
 * GKeyFile itself (its rules for group and key names are subtle) and stays
 * quick on a huge file. 0 when the text loads. */
unsigned keyfile_syntax_error_line(const char *text) {
        g_autoptr(GArray) ends = g_array_new(FALSE, FALSE, sizeof(gsize)); /* after each line's '\n' */
        for (const char *p = text; *p; p++)
                if (*p == '\n')
                        g_array_append_val(ends, (gsize) { (gsize) (p - text) + 1 });
        gsize total = strlen(text);
        if (ends->len == 0 || g_array_index(ends, gsize, ends->len - 1) != total)
                g_array_append_val(ends, total);
        if (keyfile_loads(text, total))
                return 0;

        guint lo = 0, hi = ends->len - 1; /* the first failing prefix ends at line index hi */
        while (lo < hi) {
                guint mid = lo + (hi - lo) / 2;
                if (keyfile_loads(text, g_array_index(ends, gsize, mid)))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return hi + 1;
}

unsigned keyfile_nul_line(const char *text, size_t len) {
        const char *nul = memchr(text, '\0', len);
        if (!nul)
                return 0;
        unsigned line = 1;
        for (const char *p = text; p < nul; p++)
                line += *p == '\n';
        return line;
}

/* The line of [group] when key is NULL, else of the key's last assignment
 * in that group (the one GKeyFile keeps). 0 when not found. */
unsigned keyfile_find_line(const char *text, const char *group, const char *key) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_autofree char *header = g_strdup_printf("[%s]", group);
        bool in_group = false;
        unsigned found = 0;

        for (unsigned i = 0; lines[i]; i++) {
                g_autofree char *l = g_strstrip(g_strdup(lines[i]));
                if (l[0] == '[') {
                        in_group = strcmp(l, header) == 0;
                        if (in_group && !key && !found)
                                found = i + 1;
                } else if (in_group && key && g_str_has_prefix(l, key)) {
                        const char *rest = l + strlen(key);
                        rest += strspn(rest, " \t");
                        if (*rest == '=')
                                found = i + 1;
                }
        }
        return found;
}
