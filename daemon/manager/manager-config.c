/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The configuration the manager runs by: its reload, and what systemd's own
 * sleep.conf says about the sleeps fridge would drive through it. */
#include "manager-internal.h"

#include <errno.h>

#include "log.h"
#include "systemd-sleep.h"

void manager_load_rules(Manager *m) {
        unsigned problems = 0;
        if (!m->class_dirs || class_rules_load((const char *const *) m->class_dirs, &m->rules, &problems) < 0)
                (void) class_rules_new(&m->rules); /* cannot fail */
        if (problems > 0)
                log_warning("%u classes.d files were skipped; see above", problems);
}

/* All or nothing: a configuration with anything wrong in it, or classes.d,
 * changes nothing. A running cycle goes on by the settings it resolved when
 * it started (cycle-settings.h) and the plan it made then. */
int manager_reload(Manager *m, Config *config, unsigned config_problems) {
        g_autoptr(Config) c = config;
        g_autoptr(ClassRules) rules = NULL;
        unsigned problems = 0;
        int r = m->class_dirs ? class_rules_load((const char *const *) m->class_dirs, &rules, &problems)
                              : class_rules_new(&rules);
        if (r < 0)
                return log_error_errno(r, "Reload failed: cannot read classes.d: %m; nothing changed");
        if (config_problems + problems > 0) {
                log_error("Reload refused: %u problems in fridge.conf and %u in classes.d (see above); the "
                          "configuration in effect is unchanged", config_problems, problems);
                return -EINVAL;
        }
        config_free(m->config);
        m->config = g_steal_pointer(&c);
        class_rules_free(m->rules);
        m->rules = g_steal_pointer(&rules);
        if (m->history)
                history_set_max_cycles(m->history, m->config->history_max_cycles);
        log_info("Reloaded the configuration%s", m->cycle ? "; the running cycle keeps the settings it started with"
                                                           : "");
        return 0;
}

/* systemd-sleep refuses what its Allow*= keys rule out, whoever asks: so
 * does fridge, for a Sleep and in CanSuspend and the others, as logind
 * answers for systemd's own */
int manager_check_sleep_allowed(Manager *m, SleepKind kind, char **ret_message) {
        g_autoptr(SystemdSleepConf) sc = NULL;
        if (systemd_sleep_conf_load(m->sleep_conf_root, &sc) < 0)
                return 0;
        G_STATIC_ASSERT((int) SLEEP_SUSPEND == (int) SYSTEMD_SLEEP_SUSPEND);
        G_STATIC_ASSERT((int) SLEEP_HIBERNATE == (int) SYSTEMD_SLEEP_HIBERNATE);
        G_STATIC_ASSERT((int) SLEEP_HYBRID == (int) SYSTEMD_SLEEP_HYBRID_SLEEP);
        return systemd_sleep_allowed(sc, (SystemdSleepOp) kind, ret_message) ? 0 : FRIDGE_ERROR_NOT_SUPPORTED;
}

/* On logind's path systemd-sleep writes the state word (SuspendState=):
 * a mem_sleep mode means nothing unless that word is mem */
int manager_check_systemd_sleep(Manager *m, SleepKind kind, const CycleOptions *o, char **ret_message) {
        const char *mode = o->mem_sleep ? o->mem_sleep : m->config->mem_sleep;
        g_autoptr(PowerCaps) caps = NULL;
        if (kind != SLEEP_SUSPEND || !mode || power_caps_read(m->sysfs_fd, &caps) < 0)
                return 0;
        g_autoptr(SystemdSleepConf) sc = NULL;
        int r = systemd_sleep_conf_load(m->sleep_conf_root, &sc);
        if (r < 0)
                return r;
        const char *word = systemd_sleep_suspend_state(sc, caps->states);
        if (g_strcmp0(word, "mem") == 0)
                return 0;
        g_autofree char *states = g_strjoinv(" ", sc->suspend_state);
        *ret_message = g_strdup_printf("mem-sleep %s%s needs 'mem' in /sys/power/state, but systemd-sleep, which "
                                       "logind sleeps through, writes '%s' (SuspendState=%s in %s); put mem first in "
                                       "SuspendState= or set [Sleep] Driver=direct in fridge.conf",
                                       mode, o->mem_sleep ? "" : " ([Sleep] MemSleep=)",
                                       word ? word : "nothing the kernel offers", states,
                                       sc->suspend_state_origin ? sc->suspend_state_origin : "systemd's default");
        return FRIDGE_ERROR_NOT_SUPPORTED;
}

