/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sleep-freeze.h"

#include <errno.h>
#include <string.h>

#include "systemd-ini.h"

const char *const sleep_freeze_services[] = {
        "systemd-suspend.service", "systemd-hibernate.service", "systemd-hybrid-sleep.service",
        "systemd-suspend-then-hibernate.service", NULL,
};

/* systemd's unit search path, most important first */
static const char *const unit_dirs[] = {
        "etc/systemd/system", "run/systemd/system", "usr/local/lib/systemd/system", "usr/lib/systemd/system",
        "lib/systemd/system", NULL,
};

typedef struct EnvState {
        char *value;
        char *origin;
} EnvState;

/* Environment=: words of VAR=VALUE, quoted as a shell would; an empty
 * value clears what came before. A word systemd could not read is
 * skipped, as systemd skips it. */
static void assign(const char *section, const char *key, const char *value, const char *origin,
                   G_GNUC_UNUSED unsigned line, void *userdata) {
        EnvState *st = userdata;
        if (g_strcmp0(section, "Service") != 0 || !g_str_equal(key, "Environment"))
                return;
        if (!*value) {
                g_clear_pointer(&st->value, g_free);
                g_clear_pointer(&st->origin, g_free);
                return;
        }
        g_auto(GStrv) words = NULL;
        if (!g_shell_parse_argv(value, NULL, &words, NULL))
                return;
        for (char **w = words; *w; w++)
                if (g_str_has_prefix(*w, SLEEP_FREEZE_ENV "=")) {
                        g_free(st->value);
                        st->value = g_strdup(*w + strlen(SLEEP_FREEZE_ENV "="));
                        g_free(st->origin);
                        st->origin = g_strdup(origin);
                }
}

int sleep_freeze_env(const char *root, const char *service, char **ret_value, char **ret_origin) {
        EnvState st = {};
        g_auto(GStrv) dirs = g_new0(char *, G_N_ELEMENTS(unit_dirs));
        for (size_t i = 0; unit_dirs[i]; i++)
                dirs[i] = g_build_filename(root, unit_dirs[i], NULL);
        g_autofree char *subdir = g_strconcat(service, ".d", NULL);
        int r = systemd_ini_parse_conf(dirs, service, subdir, true, assign, &st);
        if (r < 0)
                return r;
        *ret_value = st.value;
        *ret_origin = st.origin;
        return 0;
}

bool sleep_freeze_value_freezes(const char *value) {
        static const char *const no[] = { "0", "no", "n", "false", "f", "off", NULL };
        if (!value)
                return true;
        for (int i = 0; no[i]; i++)
                if (g_ascii_strcasecmp(value, no[i]) == 0)
                        return false;
        return true;
}

char *sleep_freeze_status(const char *root, unsigned version) {
        if (version == 0)
                return g_strdup("unknown: systemd's version could not be read");
        if (version < SLEEP_FREEZE_SINCE_VERSION)
                return g_strdup_printf("not affected: systemd %u does not freeze user sessions before the sleep "
                                       "hooks (from %u it does)", version, SLEEP_FREEZE_SINCE_VERSION);
        g_autoptr(GString) bad = g_string_new(NULL);
        for (int i = 0; sleep_freeze_services[i]; i++) {
                g_autofree char *value = NULL, *origin = NULL;
                if (sleep_freeze_env(root, sleep_freeze_services[i], &value, &origin) < 0)
                        continue; /* no such service: systemd-sleep never runs for it */
                if (!sleep_freeze_value_freezes(value))
                        continue;
                if (value)
                        g_string_append_printf(bad, "%s%s (" SLEEP_FREEZE_ENV "=%s from %s)", bad->len ? ", " : "",
                                               sleep_freeze_services[i], value, origin);
                else
                        g_string_append_printf(bad, "%s%s (" SLEEP_FREEZE_ENV " not set: fridge's drop-in is "
                                               "missing or cleared)", bad->len ? ", " : "", sleep_freeze_services[i]);
        }
        if (bad->len == 0)
                return g_strdup_printf("prevented: systemd %u would freeze user sessions before the sleep hooks; "
                                       "every sleep service has " SLEEP_FREEZE_ENV "=false", version);
        return g_strdup_printf("affected: systemd %u freezes all of user.slice before fridge's sleep hook for %s",
                               version, bad->str);
}
