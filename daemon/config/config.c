/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "config-keys.h"
#include "keyfile.h"
#include "log.h"

/* The table's defaults, through the parsers the files go through */
int config_new_default(Config **ret) {
        Config *c = g_new0(Config, 1);
        for (size_t i = 0; i < config_keys_count; i++) {
                int r = config_key_apply(&config_keys[i], c, config_keys[i].default_value);
                g_assert(r == 0); /* a test holds every default to its key's parser */
        }
        *ret = c;
        return 0;
}

void config_tuxonice_clear(TuxOnIceConfig *t) {
        g_clear_pointer(&t->compressor, g_free);
}

void config_tuxonice_copy(TuxOnIceConfig *dst, const TuxOnIceConfig *src) {
        *dst = *src;
        dst->compressor = g_strdup(src->compressor);
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;
        config_keys_clear(c);
        g_free(c);
        return NULL;
}

/* One key; 0 when applied, -EINVAL when the value is bad (logged), -ENOENT
 * when the key is unknown. */
static int apply_key(Config *c, const char *path, const char *text, const char *group, const char *key,
                     const char *value) {
        const ConfigKey *k = config_key_find(group, key);
        if (!k)
                return -ENOENT;
        if (config_key_apply(k, c, value) == 0)
                return 0;
        g_autofree char *expected = config_key_expected(k);
        log_warning("%s:%u: [%s] %s=%s is not valid: expected %s; ignored", path, keyfile_find_line(text, group, key),
                    group, key, config_key_shows_value(k) ? value : "(not shown)", expected);
        return -EINVAL;
}

unsigned config_apply_text(Config *c, const char *path, const char *text) {
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_autoptr(GError) error = NULL;

        if (!g_key_file_load_from_data(kf, text, (gsize) -1, G_KEY_FILE_NONE, &error)) {
                log_warning("%s:%u: %s; file ignored", path, keyfile_syntax_error_line(text), error->message);
                return 1;
        }

        unsigned problems = 0;
        g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
        for (char **g = groups; *g; g++) {
                g_auto(GStrv) keys = g_key_file_get_keys(kf, *g, NULL, NULL);
                for (char **k = keys; k && *k; k++) {
                        g_autofree char *v = g_key_file_get_value(kf, *g, *k, NULL);
                        g_autofree char *stripped = g_strstrip(g_strdup(v ? v : ""));
                        int r = apply_key(c, path, text, *g, *k, stripped);
                        if (r == -ENOENT)
                                log_warning("%s:%u: unknown key [%s] %s; ignored", path,
                                            keyfile_find_line(text, *g, *k), *g, *k);
                        if (r < 0)
                                problems++;
                }
        }
        return problems;
}

static unsigned apply_file(Config *c, const char *path) {
        g_autofree char *text = NULL;
        g_autoptr(GError) error = NULL;

        gsize len;
        if (!g_file_get_contents(path, &text, &len, &error)) {
                if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
                        return 0;
                log_warning("%s: cannot read: %s; ignored", path, error->message);
                return 1;
        }
        unsigned nul = keyfile_nul_line(text, len);
        if (nul > 0) {
                log_warning("%s:%u: contains a NUL byte; file ignored", path, nul);
                return 1;
        }
        log_debug("Reading %s", path);
        return config_apply_text(c, path, text);
}

static int compare_names(gconstpointer a, gconstpointer b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int config_load(const char *dir, Config **ret, unsigned *ret_problems) {
        g_autoptr(Config) c = NULL;
        int r = config_new_default(&c);
        if (r < 0)
                return r;
        g_autofree char *main_path = g_build_filename(dir, "fridge.conf", NULL);
        unsigned problems = apply_file(c, main_path);

        g_autofree char *dropin_dir = g_build_filename(dir, "fridge.conf.d", NULL);
        g_autoptr(GDir) d = g_dir_open(dropin_dir, 0, NULL);
        if (d) {
                g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
                for (const char *n; (n = g_dir_read_name(d));)
                        if (g_str_has_suffix(n, ".conf"))
                                g_ptr_array_add(names, g_strdup(n));
                g_ptr_array_sort(names, compare_names);
                for (guint i = 0; i < names->len; i++) {
                        g_autofree char *p = g_build_filename(dropin_dir, names->pdata[i], NULL);
                        problems += apply_file(c, p);
                }
        }

        if (ret_problems)
                *ret_problems = problems;
        *ret = g_steal_pointer(&c);
        return 0;
}
