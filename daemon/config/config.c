/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "conf-files.h"
#include "config-keys.h"
#include "keyfile.h"
#include "log.h"
#include "macro.h"

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

int config_load(char *const *dirs, Config **ret, unsigned *ret_problems) {
        g_autoptr(Config) c = NULL;
        int r = config_new_default(&c);
        if (r < 0)
                return r;
        _cleanup_(conf_files_freep) ConfFiles *files = NULL;
        r = conf_files_list(dirs, "fridge.conf", "fridge.conf.d", &files);
        if (r < 0)
                return r;
        unsigned problems = 0;
        for (size_t i = 0; i < files->n; i++) {
                const ConfFile *f = &files->files[i];
                if (f->error < 0) {
                        log_warning("%s: cannot list: %s; ignored", f->path, g_strerror(-f->error));
                        problems++;
                } else if (f->masked)
                        log_debug("%s is masked", f->path);
                else
                        problems += apply_file(c, f->path);
        }
        if (ret_problems)
                *ret_problems = problems;
        *ret = g_steal_pointer(&c);
        return 0;
}
