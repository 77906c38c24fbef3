/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "systemd-sleep.h"

#include "systemd-ini.h"

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

static void assign(const char *section, const char *key, const char *value, const char *origin, void *userdata) {
        if (g_strcmp0(section, "Sleep") == 0 && g_str_equal(key, "SuspendState"))
                set_suspend_state(userdata, value, origin);
}

int systemd_sleep_conf_apply_text(SystemdSleepConf *c, const char *text, const char *origin) {
        return systemd_ini_parse(text, origin, assign, c);
}

int systemd_sleep_conf_load(const char *root, SystemdSleepConf **ret) {
        g_autoptr(SystemdSleepConf) c = g_new0(SystemdSleepConf, 1);
        set_suspend_state(c, "", NULL);
        for (int i = 0; conf_dirs[i]; i++) {
                g_autofree char *main_path = g_build_filename(root, conf_dirs[i], "systemd", "sleep.conf", NULL);
                if (g_file_test(main_path, G_FILE_TEST_EXISTS)) {
                        (void) systemd_ini_parse_file(main_path, assign, c);
                        break;
                }
        }
        g_autoptr(GPtrArray) dropins = systemd_ini_dropins(root, conf_dirs, "systemd/sleep.conf.d");
        for (guint i = 0; i < dropins->len; i++)
                (void) systemd_ini_parse_file(dropins->pdata[i], assign, c);
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
