/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "systemd-ini.h"

#include <errno.h>
#include <string.h>

#include "log.h"
#include "util.h"

/* The next logical line from *p: a trailing backslash joins the next
 * physical line, as systemd's parser does; NULL at the end */
static char *next_line(const char **p) {
        if (!**p)
                return NULL;
        g_autoptr(GString) line = g_string_new(NULL);
        for (;;) {
                const char *nl = strchr(*p, '\n');
                size_t n = nl ? (size_t) (nl - *p) : strlen(*p);
                g_string_append_len(line, *p, n);
                *p += n + (nl ? 1 : 0);
                if (line->len == 0 || line->str[line->len - 1] != '\\')
                        break;
                line->str[line->len - 1] = ' ';
                if (!nl)
                        break;
        }
        return g_string_free(g_steal_pointer(&line), FALSE);
}

static int parse_line(char *line, char **section, const char *origin, SystemdIniAssign assign, void *userdata) {
        g_strstrip(line);
        if (!*line || *line == '#' || *line == ';')
                return 0;
        size_t n = strlen(line);
        if (*line == '[') {
                if (line[n - 1] != ']')
                        return -EINVAL;
                g_free(*section);
                *section = g_strndup(line + 1, n - 2);
                return 0;
        }
        char *eq = strchr(line, '=');
        if (!eq)
                return -EINVAL;
        *eq = '\0';
        assign(*section, g_strstrip(line), g_strstrip(eq + 1), origin, userdata);
        return 0;
}

int systemd_ini_parse(const char *text, const char *origin, SystemdIniAssign assign, void *userdata) {
        g_autofree char *section = NULL;
        unsigned no = 0;
        for (char *line; (line = next_line(&text)); g_free(line)) {
                no++;
                if (parse_line(line, &section, origin, assign, userdata) < 0) {
                        log_warning("%s:%u: not a section, a comment or KEY=VALUE; as systemd does, "
                                    "the rest of the file is not read", origin, no);
                        g_free(line);
                        return -EINVAL;
                }
        }
        return 0;
}

int systemd_ini_parse_file(const char *path, SystemdIniAssign assign, void *userdata) {
        g_autofree char *text = NULL;
        g_autoptr(GError) error = NULL;
        if (!g_file_get_contents(path, &text, NULL, &error)) {
                if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
                        return -ENOENT;
                log_warning("%s: cannot read it: %s; skipped", path, error->message);
                return -EIO;
        }
        return systemd_ini_parse(text, path, assign, userdata);
}

GPtrArray *systemd_ini_dropins(const char *root, const char *const *dirs, const char *subdir) {
        g_autoptr(GHashTable) by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        for (int i = 0; dirs[i]; i++) {
                g_autofree char *path = g_build_filename(root, dirs[i], subdir, NULL);
                g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
                if (!d)
                        continue;
                for (const char *n; (n = g_dir_read_name(d));)
                        if (g_str_has_suffix(n, ".conf") && !g_hash_table_contains(by_name, n))
                                g_hash_table_insert(by_name, g_strdup(n), g_build_filename(path, n, NULL));
        }
        g_autoptr(GPtrArray) names = hash_table_sorted_keys(by_name);
        GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < names->len; i++)
                g_ptr_array_add(paths, g_strdup(g_hash_table_lookup(by_name, names->pdata[i])));
        return paths;
}
