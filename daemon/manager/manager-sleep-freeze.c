/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: systemd-sleep's own freeze of user.slice (systemd >= 256),
 * which comes before fridge's hook and would make its staged freeze moot.
 * Whether it would happen is read from the unit files once systemd's
 * version is known (and whenever SleepFreeze is read), never on a cycle's
 * path; whether it did happen is one read of each freeze root's
 * cgroup.events when the hook's pre comes. */
#include "manager-internal.h"

#include <string.h>

#include "cgroups.h"
#include "log.h"
#include "sleep-freeze.h"

void manager_set_systemd_version(Manager *m, unsigned version) {
        m->systemd_version = version;
        g_autofree char *status = manager_sleep_freeze_status(m);
        if (!g_str_has_prefix(status, "affected:")) {
                log_info("systemd-sleep's own freeze of user sessions: %s", status);
                return;
        }
        g_autofree char *msg = g_strdup_printf("%s; fridge cannot keep the user interface awake while it freezes "
                                               "in stages: set " SLEEP_FREEZE_ENV "=false for these services",
                                               status);
        g_autofree char *field = g_strdup_printf("FRIDGE_SYSTEMD_VERSION=%u", version);
        log_struct_event(LOG_WARNING, FRIDGE_MESSAGE_SLEEP_FREEZE, msg, field, NULL);
}

char *manager_sleep_freeze_status(const Manager *m) {
        return sleep_freeze_status(m->sleep_conf_root, m->systemd_version);
}

void cycle_add_warning(Cycle *c, char *warning) {
        guint n = c->warnings ? g_strv_length(c->warnings) : 0;
        c->warnings = g_renew(char *, c->warnings, n + 2);
        c->warnings[n] = warning;
        c->warnings[n + 1] = NULL;
}

void manager_check_sleep_frozen(Manager *m) {
        Cycle *c = m->cycle;
        if (m->cgroup_fd < 0)
                return;
        for (char **root = c->settings->freeze_roots; root && *root; root++) {
                bool frozen = false;
                if (freezer_cgroup_frozen(m->cgroup_fd, *root, &frozen) < 0 || !frozen)
                        continue;
                g_autofree char *shown = cgroups_escape(*root);
                char *warning = g_strdup_printf("%s was frozen already when the sleep hook's pre came (systemd-sleep "
                                                "freezes user sessions itself unless " SLEEP_FREEZE_ENV "=false): "
                                                "fridge could not freeze it in stages nor keep its user interface "
                                                "awake", shown);
                g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT ": %s", c->id, warning);
                g_autofree char *field = g_strdup_printf("FRIDGE_CGROUP=%s", shown);
                log_struct_event(LOG_WARNING, FRIDGE_MESSAGE_SLEEP_FREEZE, msg, field, NULL);
                cycle_add_warning(c, warning);
        }
}
