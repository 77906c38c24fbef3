/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "systemd-sleep.h"

#include "conf-files.h"
#include "log.h"
#include "macro.h"
#include "systemd-ini.h"

/* systemd's operations and the keys that allow them (sleep-config.c) */
static const char *const op_names[_SYSTEMD_SLEEP_OP_MAX] = { "suspend", "hibernate", "hybrid-sleep",
                                                              "suspend-then-hibernate" };
static const char *const allow_keys[_SYSTEMD_SLEEP_OP_MAX] = { "AllowSuspend", "AllowHibernation",
                                                                "AllowHybridSleep", "AllowSuspendThenHibernate" };

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

/* config_parse_tristate(): a boolean in any case, or empty for the
 * default; anything else is logged and ignored, as systemd-sleep does */
static void set_allow(SystemdSleepConf *c, int op, const char *value, const char *origin, unsigned line) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on", NULL };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off", NULL };
        int v = !*value ? -1 : -2;
        for (int i = 0; v == -2 && yes[i]; i++)
                v = g_ascii_strcasecmp(value, yes[i]) == 0 ? 1 : g_ascii_strcasecmp(value, no[i]) == 0 ? 0 : v;
        if (v == -2) {
                log_warning("%s:%u: %s=%s is not a boolean; ignored, as systemd-sleep does", origin, line,
                            allow_keys[op], value);
                return;
        }
        c->allow[op] = v;
        g_free(c->allow_origin[op]);
        c->allow_origin[op] = v < 0 ? NULL : g_strdup_printf("%s:%u", origin, line);
}

static void assign(const char *section, const char *key, const char *value, const char *origin, unsigned line,
                   void *userdata) {
        SystemdSleepConf *c = userdata;
        if (g_strcmp0(section, "Sleep") != 0)
                return;
        if (g_str_equal(key, "SuspendState"))
                set_suspend_state(c, value, origin);
        for (int op = 0; op < _SYSTEMD_SLEEP_OP_MAX; op++)
                if (g_str_equal(key, allow_keys[op]))
                        set_allow(c, op, value, origin, line);
}

int systemd_sleep_conf_apply_text(SystemdSleepConf *c, const char *text, const char *origin) {
        return systemd_ini_parse(text, origin, assign, c);
}

static SystemdSleepConf *systemd_sleep_conf_new(void) {
        SystemdSleepConf *c = g_new0(SystemdSleepConf, 1);
        set_suspend_state(c, "", NULL);
        for (int op = 0; op < _SYSTEMD_SLEEP_OP_MAX; op++)
                c->allow[op] = -1;
        return c;
}

int systemd_sleep_conf_load(const char *root, SystemdSleepConf **ret) {
        g_autoptr(SystemdSleepConf) c = systemd_sleep_conf_new();
        _cleanup_strv_free_ char **dirs = NULL;
        int r = conf_search_dirs(root, "systemd", &dirs);
        if (r >= 0)
                r = systemd_ini_parse_conf(dirs, "sleep.conf", "sleep.conf.d", false, assign, c);
        if (r < 0)
                return r;
        *ret = g_steal_pointer(&c);
        return 0;
}

SystemdSleepConf *systemd_sleep_conf_free(SystemdSleepConf *c) {
        if (!c)
                return NULL;
        g_strfreev(c->suspend_state);
        g_free(c->suspend_state_origin);
        for (int op = 0; op < _SYSTEMD_SLEEP_OP_MAX; op++)
                g_free(c->allow_origin[op]);
        g_free(c);
        return NULL;
}

const char *systemd_sleep_suspend_state(const SystemdSleepConf *c, char *const *offered) {
        for (char **s = c->suspend_state; s && *s; s++)
                if (**s && offered && g_strv_contains((const char *const *) offered, *s))
                        return *s;
        return NULL;
}

/* As sleep-config.c: each allowed unless set to no; hybrid-sleep and
 * suspend-then-hibernate, when not set, as suspend and hibernation both */
bool systemd_sleep_allowed(const SystemdSleepConf *c, SystemdSleepOp op, char **ret_reason) {
        int why = op;
        bool allowed = c->allow[op] != 0;
        if (c->allow[op] < 0 && (op == SYSTEMD_SLEEP_HYBRID_SLEEP || op == SYSTEMD_SLEEP_SUSPEND_THEN_HIBERNATE)) {
                why = c->allow[SYSTEMD_SLEEP_SUSPEND] == 0 ? SYSTEMD_SLEEP_SUSPEND : SYSTEMD_SLEEP_HIBERNATE;
                allowed = c->allow[why] != 0;
        }
        if (allowed)
                return true;
        if (ret_reason)
                *ret_reason = g_strdup_printf("Sleep mode \"%s\" is disabled by configuration (%s=no in %s)",
                                              op_names[op], allow_keys[why], c->allow_origin[why]);
        return false;
}

SystemdSleepOp systemd_sleep_op_from_string(const char *s) {
        for (int op = 0; op < _SYSTEMD_SLEEP_OP_MAX; op++)
                if (g_strcmp0(s, op_names[op]) == 0)
                        return op;
        return _SYSTEMD_SLEEP_OP_INVALID;
}
