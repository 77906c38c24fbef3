/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "systemd-sleep.h"

#include <errno.h>
#include <string.h>

#include "log.h"
#include "util.h"

/* The order systemd searches its configuration directories in */
static const char *const conf_dirs[] = { "etc", "run", "usr/local/lib", "usr/lib", NULL };

#define SUSPEND_STATE_DEFAULT "mem standby freeze"

/* The words of a list setting; an empty assignment (no words) resets it to
 * systemd's default, as its parser does */
static void set_suspend_state(SystemdSleepConf *c, const char *value, const char *origin) {
        g_auto(GStrv) words = g_strsplit_set(value, " \t", -1);
        GPtrArray *a = g_ptr_array_new();
        for (char **w = words; *w; w++)
                if (**w)
                        g_ptr_array_add(a, g_strdup(*w));
        if (a->len == 0) {
                g_ptr_array_free(a, TRUE);
                set_suspend_state(c, SUSPEND_STATE_DEFAULT, NULL);
                return;
        }
        g_ptr_array_add(a, NULL);
        g_strfreev(c->suspend_state);
        c->suspend_state = (char **) g_ptr_array_free(a, FALSE);
        g_free(c->suspend_state_origin);
        c->suspend_state_origin = g_strdup(origin);
}

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

/* One line: a comment (# or ;), a section, or KEY=VALUE; -EINVAL for
 * anything else, which makes systemd stop reading that file */
static int apply_line(SystemdSleepConf *c, char *line, char **section, const char *origin) {
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
        if (g_strcmp0(*section, "Sleep") == 0 && g_str_equal(g_strstrip(line), "SuspendState"))
                set_suspend_state(c, g_strstrip(eq + 1), origin);
        return 0;
}

int systemd_sleep_conf_apply_text(SystemdSleepConf *c, const char *text, const char *origin) {
        g_autofree char *section = NULL;
        unsigned no = 0;
        for (char *line; (line = next_line(&text)); g_free(line)) {
                no++;
                if (apply_line(c, line, &section, origin) < 0) {
                        log_warning("%s:%u: not a section, a comment or KEY=VALUE; as systemd-sleep does, "
                                    "the rest of the file is not read", origin, no);
                        g_free(line);
                        return -EINVAL;
                }
        }
        return 0;
}

static void apply_file(SystemdSleepConf *c, const char *path) {
        g_autofree char *text = NULL;
        g_autoptr(GError) error = NULL;
        if (!g_file_get_contents(path, &text, NULL, &error)) {
                if (!g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
                        log_warning("%s: cannot read systemd-sleep's settings: %s; skipped", path, error->message);
                return;
        }
        (void) systemd_sleep_conf_apply_text(c, text, path);
}

static void add_dropins(GHashTable *by_name, const char *root, const char *dir) {
        g_autofree char *path = g_build_filename(root, dir, "systemd", "sleep.conf.d", NULL);
        g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
        if (!d)
                return;
        for (const char *n; (n = g_dir_read_name(d));)
                if (g_str_has_suffix(n, ".conf") && !g_hash_table_contains(by_name, n))
                        g_hash_table_insert(by_name, g_strdup(n), g_build_filename(path, n, NULL));
}

int systemd_sleep_conf_load(const char *root, SystemdSleepConf **ret) {
        g_autoptr(SystemdSleepConf) c = g_new0(SystemdSleepConf, 1);
        set_suspend_state(c, "", NULL);
        for (int i = 0; conf_dirs[i]; i++) {
                g_autofree char *main_path = g_build_filename(root, conf_dirs[i], "systemd", "sleep.conf", NULL);
                if (g_file_test(main_path, G_FILE_TEST_EXISTS)) {
                        apply_file(c, main_path);
                        break;
                }
        }
        g_autoptr(GHashTable) by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        for (int i = 0; conf_dirs[i]; i++)
                add_dropins(by_name, root, conf_dirs[i]);
        g_autoptr(GPtrArray) names = hash_table_sorted_keys(by_name);
        for (guint i = 0; i < names->len; i++)
                apply_file(c, g_hash_table_lookup(by_name, names->pdata[i]));
        *ret = g_steal_pointer(&c);
        return 0;
}

SystemdSleepConf *systemd_sleep_conf_free(SystemdSleepConf *c) {
        if (!c)
                return NULL;
        g_strfreev(c->suspend_state);
        g_free(c->suspend_state_origin);
        g_free(c);
        return NULL;
}

const char *systemd_sleep_suspend_state(const SystemdSleepConf *c, char *const *offered) {
        for (char **s = c->suspend_state; s && *s; s++)
                if (**s && offered && g_strv_contains((const char *const *) offered, *s))
                        return *s;
        return NULL;
}
