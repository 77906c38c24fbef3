/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config-keys.h"

#include <errno.h>
#include <string.h>

#include "cgroups.h"
#include "macro.h"
#include "parse.h"
#include "time-span.h"

/* The offset of `field`, which must be of type T: a key's parser and the
 * field it writes cannot disagree (a compile error, not a stray write) */
#define LANDS(field, T)                                                                  \
        (offsetof(Config, field) +                                                       \
         0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((Config *) 0)->field), T) ? 1 : -1]))

/* An ENUM key writes an int */
G_STATIC_ASSERT(sizeof(SleepDriver) == sizeof(int));
G_STATIC_ASSERT(sizeof(FlushOnTimeout) == sizeof(int));
G_STATIC_ASSERT(sizeof(HibernateWriter) == sizeof(int));
G_STATIC_ASSERT(TUXONICE_IMAGE_SIZE_LIMIT_UNSET == INT32_MIN);

#define U32(g, n, field, lo, hi, def, h)                                                        \
        { .group = g, .name = n, .type = CONFIG_KEY_U32, .offset = LANDS(field, uint32_t), .min = lo, \
          .max = hi, .default_value = def, .help = h }
#define MSEC(g, n, field, lo, hi, def, h)                                                        \
        { .group = g, .name = n, .type = CONFIG_KEY_MSEC, .offset = LANDS(field, uint32_t), .min = lo, \
          .max = hi, .default_value = def, .help = h }
#define ENUM(g, n, field, T, w, def, h)                                                             \
        { .group = g, .name = n, .type = CONFIG_KEY_ENUM, .offset = LANDS(field, T), .words = w, \
          .default_value = def, .help = h }

static const char *const drivers[] = { "auto", "direct", "logind", NULL };
static const char *const mem_sleep_modes[] = { "s2idle", "shallow", "deep", NULL };
static const char *const disk_modes[] = { "platform", "shutdown", "reboot", "suspend", "test_resume", NULL };
static const char *const on_timeout[] = { "fail", "continue", NULL };
static const char *const writers[] = { "kernel", "fridge", NULL };

const ConfigKey config_keys[] = {
        ENUM("Sleep", "Driver", driver, SleepDriver, drivers, "auto", "who writes /sys/power/state"),
        { .group = "Sleep", .name = "MemSleep", .type = CONFIG_KEY_CHOICE, .offset = LANDS(mem_sleep, char *),
          .words = mem_sleep_modes, .empty_ok = TRUE, .default_value = "",
          .help = "Empty: the kernel's current mode" },
        { .group = "Sleep", .name = "HibernateMode", .type = CONFIG_KEY_CHOICE,
          .offset = LANDS(hibernate_mode, char *), .words = disk_modes, .default_value = "platform",
          .help = "/sys/power/disk mode for hibernate" },
        { .group = "Sleep", .name = "ResumeDevice", .type = CONFIG_KEY_DEVICE, .offset = LANDS(resume_device, char *),
          .max = 4096, .default_value = "",
          .help = "the swap partition (path or MAJ:MIN) that hibernation writes to" },
        ENUM("Sleep", "HibernateWriter", hibernate_writer, HibernateWriter, writers, "kernel",
             "who writes the hibernation image: the kernel, or fridge-image-writer (progress and Cancel while "
             "it writes; the kernel's writer where it cannot run)"),
        U32("Sleep", "Retries", retries, 0, 10, "0", "how many more times the kernel phase is tried"),
        MSEC("Sleep", "RetryDelayMs", retry_delay_ms, 0, 60000, "1000",
            "the wait before the first retry, doubled for each later one"),
        MSEC("Sleep", "HookTimeoutMs", hook_timeout_ms, HOOK_TIMEOUT_MIN_MS, HOOK_TIMEOUT_MAX_MS,
            "60000" /* HOOK_TIMEOUT_DEFAULT_MS */,
            "the sleep hook's budget: the pre (the hook's deadline, fridgectl's call and fridged's wait) fits in it, "
            "and a cycle waits as much awake time for the post, before it thaws on its own"),
        MSEC("Sleep", "KernelWatchdogMs", kernel_watchdog_ms, 1000, 3600000, "120000",
            "awake time the state write may take before fridged reports it stuck (it goes on waiting)"),
        MSEC("Sleep", "WriterCancelTimeoutMs", writer_cancel_timeout_ms, 1000, 600000, "10000",
            "awake time fridge-image-writer has to answer a Cancel before fridged hangs up on it and thaws"),
        MSEC("Flush", "TimeoutMs", flush_timeout_ms, FLUSH_TIMEOUT_MIN_MS, FLUSH_TIMEOUT_MAX_MS, "30000",
            "how long writing back dirty data may take"),
        ENUM("Flush", "OnTimeout", flush_on_timeout, FlushOnTimeout, on_timeout, "fail",
             "what a flush that runs out of time does to the cycle"),
        { .group = "Freeze", .name = "Roots", .type = CONFIG_KEY_ROOTS, .offset = LANDS(freeze_roots, char **),
          .default_value = "user.slice", .help = ";-separated cgroup paths relative to the cgroup v2 mount" },
        MSEC("Freeze", "TimeoutMs", freeze_timeout_ms, FREEZE_TIMEOUT_MIN_MS, FREEZE_TIMEOUT_MAX_MS, "10000",
            "how long each freeze stage may take"),
        MSEC("Delay", "TimeoutMs", delay_timeout_ms, 0, DELAY_TIMEOUT_MAX_MS, "5000",
            "how long delay inhibitors may hold up a cycle"),
        U32("Limits", "InhibitorsPerUser", inhibitors_per_user, 1, 1024 /* INHIBITORS_MAX */,
            "64" /* INHIBITORS_PER_USER_DEFAULT */,
            "how many inhibitors and class holds one user (root excepted) may keep, of 1024 in all"),
        U32("Limits", "PendingAuthorizationsPerUser", pending_authorizations_per_user, 1, 64,
            "16" /* POLKIT_PENDING_PER_UID_DEFAULT */,
            "how many calls of one user may wait for polkit's answer at once"),
        U32("Limits", "PendingPlansPerUser", pending_plans_per_user, 1, 64, "16",
            "how many GetPlan calls of one user (root excepted) may wait for a plan at once"),
        U32("History", "MaxCycles", history_max_cycles, 1, 10000, "100",
            "how many past cycles the history keeps (the oldest go first)"),
        /* TuxOnIce's own range for image_size_limit (a long clamped to -2..INT_MAX) */
        { .group = "TuxOnIce", .name = "ImageSizeLimit", .type = CONFIG_KEY_I32,
          .offset = LANDS(tuxonice.image_size_limit, int32_t), .min = -2, .max = INT32_MAX, .empty_ok = TRUE,
          .default_value = "",
          .expected = "empty or a whole number of MiB from -2 to 2147483647 "
                      "(0: no limit, -1: never free memory, -2: free caches only)",
          .help = "MiB; 0 no limit, -1 never free memory, -2 free caches only" },
        { .group = "TuxOnIce", .name = "Compressor", .type = CONFIG_KEY_NAME,
          .offset = LANDS(tuxonice.compressor, char *), .max = TUXONICE_COMPRESSOR_MAX, .default_value = "",
          .expected = "empty, none, or an algorithm name such as lzo (lower case, at most 31 characters)",
          .help = "A crypto API name (lzo, lz4, ...), or none" },
        { .group = "TuxOnIce", .name = "EnableEscape", .type = CONFIG_KEY_TRISTATE,
          .offset = LANDS(tuxonice.enable_escape, int), .default_value = "",
          .help = "Escape at the console aborts the hibernation" },
};

const size_t config_keys_count = G_N_ELEMENTS(config_keys);

const ConfigKey *config_key_find(const char *group, const char *name) {
        for (size_t i = 0; i < config_keys_count; i++)
                if (strcmp(config_keys[i].group, group) == 0 && strcmp(config_keys[i].name, name) == 0)
                        return &config_keys[i];
        return NULL;
}

/* ---- one parser a type: 0 and the field set, or -EINVAL and it untouched ---- */

static int parse_u32_key(const ConfigKey *k, void *field, const char *value) {
        uint32_t v;
        if (parse_uint32(value, &v) < 0 || v < k->min || v > k->max)
                return -EINVAL;
        *(uint32_t *) field = v;
        return 0;
}

static int parse_msec_key(const ConfigKey *k, void *field, const char *value) {
        uint32_t v;
        if (time_span_parse_u32(value, USEC_PER_MSEC, &v) < 0 || v < k->min || v > k->max)
                return -EINVAL;
        *(uint32_t *) field = v;
        return 0;
}

static int parse_i32_key(const ConfigKey *k, void *field, const char *value) {
        gint64 v;
        if (k->empty_ok && !*value) {
                *(int32_t *) field = INT32_MIN;
                return 0;
        }
        if (!g_ascii_string_to_signed(value, 10, k->min, k->max, &v, NULL))
                return -EINVAL;
        *(int32_t *) field = (int32_t) v;
        return 0;
}

static int parse_enum_key(const ConfigKey *k, void *field, const char *value) {
        for (int i = 0; k->words[i]; i++)
                if (strcmp(value, k->words[i]) == 0) {
                        *(int *) field = i;
                        return 0;
                }
        return -EINVAL;
}

static void set_string(void *field, const char *value) {
        char **dst = field;
        g_free(*dst);
        *dst = *value ? g_strdup(value) : NULL;
}

static int parse_choice_key(const ConfigKey *k, void *field, const char *value) {
        if (!(k->empty_ok && !*value) && !g_strv_contains(k->words, value))
                return -EINVAL;
        set_string(field, value);
        return 0;
}

static int parse_roots_key(const ConfigKey *k, void *field, const char *value) {
        g_auto(GStrv) roots = g_strsplit(value, ";", -1);
        g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func(g_free);
        for (char **r = roots; *r; r++) {
                g_strstrip(*r);
                if (!**r)
                        continue;
                /* UTF-8 as well: a root is logged and sent over the bus */
                if (!cgroups_path_is_valid(*r) || !g_utf8_validate(*r, -1, NULL))
                        return -EINVAL;
                g_ptr_array_add(kept, g_strdup(*r));
        }
        g_ptr_array_add(kept, NULL);
        char ***dst = field;
        g_strfreev(*dst);
        *dst = (char **) g_ptr_array_free(g_steal_pointer(&kept), FALSE);
        return 0;
}

/* A crypto API algorithm name, as TuxOnIce's compression/algorithm holds */
static int parse_name_key(const ConfigKey *k, void *field, const char *value) {
        static const char ok[] = "abcdefghijklmnopqrstuvwxyz0123456789-_";
        size_t n = strlen(value);
        if (n > 0 && (n > (size_t) k->max || !g_ascii_isalnum(*value) || strspn(value, ok) != n))
                return -EINVAL;
        set_string(field, value);
        return 0;
}

/* A device path or MAJ:MIN, matched against /proc/swaps later: only text
 * that can be one, so that what is logged and compared is plain UTF-8 */
static int parse_device_key(const ConfigKey *k, void *field, const char *value) {
        if (strlen(value) > (size_t) k->max || !g_utf8_validate(value, -1, NULL))
                return -EINVAL;
        for (const unsigned char *p = (const unsigned char *) value; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        return -EINVAL;
        set_string(field, value);
        return 0;
}

/* -1 for empty: the kernel's setting stays */
static int parse_tristate_key(const ConfigKey *k, void *field, const char *value) {
        static const char *const yes[] = { "yes", "true", "on", "1", NULL };
        static const char *const no[] = { "no", "false", "off", "0", NULL };
        int *dst = field;
        if (!*value)
                *dst = -1;
        else if (g_strv_contains(yes, value))
                *dst = 1;
        else if (g_strv_contains(no, value))
                *dst = 0;
        else
                return -EINVAL;
        return 0;
}

typedef struct ConfigKeyTypeInfo {
        int (*parse)(const ConfigKey *k, void *field, const char *value);
        const char *expected; /* NULL: said from the key's range or words */
        gboolean hides_value;
} ConfigKeyTypeInfo;

static const ConfigKeyTypeInfo key_types[_CONFIG_KEY_TYPE_MAX] = {
        [CONFIG_KEY_U32] = { parse_u32_key },
        [CONFIG_KEY_MSEC] = { parse_msec_key },
        [CONFIG_KEY_I32] = { parse_i32_key },
        [CONFIG_KEY_ENUM] = { parse_enum_key },
        [CONFIG_KEY_CHOICE] = { parse_choice_key },
        [CONFIG_KEY_ROOTS] = { parse_roots_key, "cgroup paths relative to the cgroup mount, without .." },
        [CONFIG_KEY_NAME] = { parse_name_key, "empty or a name of lower-case letters, digits, - and _" },
        [CONFIG_KEY_DEVICE] = { parse_device_key, "empty, a device path or MAJ:MIN (UTF-8, no control characters)",
                                TRUE },
        [CONFIG_KEY_TRISTATE] = { parse_tristate_key, "empty, yes or no" },
};

int config_key_apply(const ConfigKey *k, Config *c, const char *value) {
        g_return_val_if_fail(k->type < _CONFIG_KEY_TYPE_MAX, -EINVAL);
        return key_types[k->type].parse(k, (char *) c + k->offset, value);
}

char *config_key_expected(const ConfigKey *k) {
        if (k->expected)
                return g_strdup(k->expected);
        if (key_types[k->type].expected)
                return g_strdup(key_types[k->type].expected);
        const char *empty = k->empty_ok ? "empty or " : "";
        if (k->type == CONFIG_KEY_MSEC) {
                char lo[64], hi[64];
                return g_strdup_printf("%s from %s to %s (a bare number is milliseconds)", TIME_SPAN_FORMS,
                                       time_span_format_ms((uint64_t) k->min, lo, sizeof(lo)),
                                       time_span_format_ms((uint64_t) k->max, hi, sizeof(hi)));
        }
        if (k->words) {
                g_autofree char *list = g_strjoinv("|", (char **) k->words);
                return g_strdup_printf("%s%s", empty, list);
        }
        return g_strdup_printf("%sa whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, empty, k->min,
                               k->max);
}

void config_keys_clear(Config *c) {
        for (size_t i = 0; i < config_keys_count; i++) {
                void *field = (char *) c + config_keys[i].offset;
                switch (config_keys[i].type) {
                case CONFIG_KEY_CHOICE:
                case CONFIG_KEY_NAME:
                case CONFIG_KEY_DEVICE:
                        g_clear_pointer((char **) field, g_free);
                        break;
                case CONFIG_KEY_ROOTS:
                        g_clear_pointer((char ***) field, g_strfreev);
                        break;
                default:
                        break;
                }
        }
}

gboolean config_key_shows_value(const ConfigKey *k) {
        return !key_types[k->type].hides_value;
}
