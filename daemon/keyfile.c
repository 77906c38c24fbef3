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

/* GKeyFile names no line in its syntax errors, so find the first line it
 * cannot take: administrators fix files by line number. 0 when none. */
unsigned keyfile_syntax_error_line(const char *text) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        bool in_group = false;

        for (unsigned i = 0; lines[i]; i++) {
                g_autofree char *l = g_strstrip(g_strdup(lines[i]));
                if (!*l || *l == '#')
                        continue;
                if (keyfile_line_is_group(l) && g_str_has_suffix(l, "]"))
                        in_group = true;
                else if (!in_group || !keyfile_line_is_key_value(l))
                        return i + 1;
        }
        return 0;
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
