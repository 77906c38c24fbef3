/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "cgroups.h"
#include "keyfile.h"
#include "log.h"
#include "parse.h"

int config_new_default(Config **ret) {
        Config *c = g_new0(Config, 1);
        c->driver = DRIVER_AUTO;
        c->hibernate_mode = g_strdup("platform");
        c->retries = 0;
        c->retry_delay_ms = 1000;
        c->flush_timeout_ms = 30000;
        c->flush_on_timeout = FLUSH_ON_TIMEOUT_FAIL;
        c->freeze_roots = g_strsplit("user.slice", ";", -1);
        c->freeze_timeout_ms = 10000;
        c->delay_timeout_ms = 5000;
        c->hook_timeout_ms = 120000;
        c->tuxonice = (TuxOnIceConfig) { .image_size_limit = TUXONICE_IMAGE_SIZE_LIMIT_UNSET, .enable_escape = -1 };
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
        g_free(c->mem_sleep);
        g_free(c->hibernate_mode);
        g_free(c->resume_device);
        g_strfreev(c->freeze_roots);
        config_tuxonice_clear(&c->tuxonice);
        g_free(c);
        return NULL;
}



typedef struct KeyContext {
        const char *path;
        const char *text;
        const char *group;
        const char *key;
} KeyContext;

static void bad_value(const KeyContext *k, const char *value, const char *expected) {
        log_warning("%s:%u: [%s] %s=%s is not valid: expected %s; ignored", k->path,
                    keyfile_find_line(k->text, k->group, k->key), k->group, k->key, value, expected);
}

static int set_uint(const KeyContext *k, const char *value, uint32_t min, uint32_t max, uint32_t *dst) {
        uint32_t v;
        if (parse_uint32(value, &v) < 0 || v < min || v > max) {
                g_autofree char *expected = g_strdup_printf("a whole number from %u to %u", min, max);
                bad_value(k, value, expected);
                return -EINVAL;
        }
        *dst = v;
        return 0;
}

static int set_choice(const KeyContext *k, const char *value, const char *const *choices, gboolean allow_empty,
                      char **dst) {
        if ((allow_empty && !*value) || g_strv_contains(choices, value)) {
                g_free(*dst);
                *dst = *value ? g_strdup(value) : NULL;
                return 0;
        }
        g_autofree char *list = g_strjoinv("|", (char **) choices);
        g_autofree char *expected = g_strdup_printf("%s%s", allow_empty ? "empty or " : "", list);
        bad_value(k, value, expected);
        return -EINVAL;
}

static int set_enum(const KeyContext *k, const char *value, const char *const *choices, int *dst) {
        for (int i = 0; choices[i]; i++)
                if (strcmp(value, choices[i]) == 0) {
                        *dst = i;
                        return 0;
                }
        g_autofree char *list = g_strjoinv("|", (char **) choices);
        bad_value(k, value, list);
        return -EINVAL;
}

static int set_roots(const KeyContext *k, const char *value, char ***dst) {
        g_auto(GStrv) roots = g_strsplit(value, ";", -1);
        g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func(g_free);
        for (char **r = roots; *r; r++) {
                g_strstrip(*r);
                if (!**r)
                        continue;
                /* UTF-8 as well: a root is logged and sent over the bus */
                if (!cgroups_path_is_valid(*r) || !g_utf8_validate(*r, -1, NULL)) {
                        bad_value(k, value, "cgroup paths relative to the cgroup mount, without ..");
                        return -EINVAL;
                }
                g_ptr_array_add(kept, g_strdup(*r));
        }
        g_ptr_array_add(kept, NULL);
        g_strfreev(*dst);
        *dst = (char **) g_ptr_array_free(g_steal_pointer(&kept), FALSE);
        return 0;
}

/* TuxOnIce's own range for image_size_limit (a long clamped to -2..INT_MAX) */
static int set_image_size_limit(const KeyContext *k, const char *value, int32_t *dst) {
        gint64 v;
        if (!*value) {
                *dst = TUXONICE_IMAGE_SIZE_LIMIT_UNSET;
                return 0;
        }
        if (!g_ascii_string_to_signed(value, 10, -2, INT32_MAX, &v, NULL)) {
                bad_value(k, value, "empty or a whole number of MiB from -2 to 2147483647 "
                                      "(0: no limit, -1: never free memory, -2: free caches only)");
                return -EINVAL;
        }
        *dst = (int32_t) v;
        return 0;
}

/* A crypto API algorithm name, as TuxOnIce's compression/algorithm holds */
static bool compressor_is_valid(const char *s) {
        static const char ok[] = "abcdefghijklmnopqrstuvwxyz0123456789-_";
        size_t n = strlen(s);
        return n > 0 && n <= TUXONICE_COMPRESSOR_MAX && g_ascii_isalnum(*s) && strspn(s, ok) == n;
}

static int set_compressor(const KeyContext *k, const char *value, char **dst) {
        if (*value && !compressor_is_valid(value)) {
                bad_value(k, value, "empty, none, or an algorithm name such as lzo (lower case, at most 31 characters)");
                return -EINVAL;
        }
        g_free(*dst);
        *dst = *value ? g_strdup(value) : NULL;
        return 0;
}

/* A device path or MAJ:MIN, matched against /proc/swaps later: only text
 * that can be one, so that what is logged and compared is plain UTF-8 */
static int set_resume_device(const KeyContext *k, const char *value, char **dst) {
        bool ok = strlen(value) <= 4096 && g_utf8_validate(value, -1, NULL);
        for (const unsigned char *p = (const unsigned char *) value; ok && *p; p++)
                ok = *p >= 0x20 && *p != 0x7f;
        if (!ok) {
                bad_value(k, "(not shown)", "empty, a device path or MAJ:MIN (UTF-8, no control characters)");
                return -EINVAL;
        }
        g_free(*dst);
        *dst = *value ? g_strdup(value) : NULL;
        return 0;
}

/* -1 for empty: the kernel's setting stays */
static int set_tristate(const KeyContext *k, const char *value, int *dst) {
        static const char *const yes[] = { "yes", "true", "on", "1", NULL };
        static const char *const no[] = { "no", "false", "off", "0", NULL };
        if (!*value)
                *dst = -1;
        else if (g_strv_contains(yes, value))
                *dst = 1;
        else if (g_strv_contains(no, value))
                *dst = 0;
        else {
                bad_value(k, value, "empty, yes or no");
                return -EINVAL;
        }
        return 0;
}

static const char *const mem_sleep_modes[] = { "s2idle", "shallow", "deep", NULL };
static const char *const disk_modes[] = { "platform", "shutdown", "reboot", "suspend", "test_resume", NULL };
static const char *const drivers[] = { "auto", "direct", "logind", NULL };
static const char *const on_timeout[] = { "fail", "continue", NULL };

/* One key; returns 0 when applied, -EINVAL when the value is bad, -ENOENT
 * when the key is unknown. */
static int apply_key(Config *c, const KeyContext *k, const char *v) {
        const char *g = k->group, *key = k->key;
        int e;

#define IS(G, K) (strcmp(g, G) == 0 && strcmp(key, K) == 0)
        if (IS("Sleep", "Driver")) {
                e = (int) c->driver;
                int r = set_enum(k, v, drivers, &e);
                c->driver = (SleepDriver) e;
                return r;
        }
        if (IS("Sleep", "MemSleep"))
                return set_choice(k, v, mem_sleep_modes, TRUE, &c->mem_sleep);
        if (IS("Sleep", "HibernateMode"))
                return set_choice(k, v, disk_modes, FALSE, &c->hibernate_mode);
        if (IS("Sleep", "ResumeDevice"))
                return set_resume_device(k, v, &c->resume_device);
        if (IS("Sleep", "HookTimeoutMs"))
                return set_uint(k, v, HOOK_TIMEOUT_MIN_MS, HOOK_TIMEOUT_MAX_MS, &c->hook_timeout_ms);
        if (IS("Sleep", "Retries"))
                return set_uint(k, v, 0, 10, &c->retries);
        if (IS("Sleep", "RetryDelayMs"))
                return set_uint(k, v, 0, 60000, &c->retry_delay_ms);
        if (IS("Flush", "TimeoutMs"))
                return set_uint(k, v, FLUSH_TIMEOUT_MIN_MS, FLUSH_TIMEOUT_MAX_MS, &c->flush_timeout_ms);
        if (IS("Flush", "OnTimeout")) {
                e = (int) c->flush_on_timeout;
                int r = set_enum(k, v, on_timeout, &e);
                c->flush_on_timeout = (FlushOnTimeout) e;
                return r;
        }
        if (IS("Freeze", "Roots"))
                return set_roots(k, v, &c->freeze_roots);
        if (IS("Freeze", "TimeoutMs"))
                return set_uint(k, v, FREEZE_TIMEOUT_MIN_MS, FREEZE_TIMEOUT_MAX_MS, &c->freeze_timeout_ms);
        if (IS("Delay", "TimeoutMs"))
                return set_uint(k, v, 0, DELAY_TIMEOUT_MAX_MS, &c->delay_timeout_ms);
        if (IS("TuxOnIce", "ImageSizeLimit"))
                return set_image_size_limit(k, v, &c->tuxonice.image_size_limit);
        if (IS("TuxOnIce", "Compressor"))
                return set_compressor(k, v, &c->tuxonice.compressor);
        if (IS("TuxOnIce", "EnableEscape"))
                return set_tristate(k, v, &c->tuxonice.enable_escape);
#undef IS
        return -ENOENT;
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
                        KeyContext ctx = { .path = path, .text = text, .group = *g, .key = *k };
                        g_autofree char *v = g_key_file_get_value(kf, *g, *k, NULL);
                        g_autofree char *stripped = g_strstrip(g_strdup(v ? v : ""));
                        int r = apply_key(c, &ctx, stripped);
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
