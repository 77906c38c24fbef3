/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd-sleep's own settings (systemd-sleep.conf(5)) that meet the knobs
 * fridge sets on the logind driver's path. systemd-sleep writes
 * /sys/power/disk (HibernateMode=) and, from v254, /sys/power/mem_sleep
 * (MemorySleepMode=) before it runs the sleep hooks, so fridge's knobs,
 * set from the hook's pre, come after them and hold; but the state word
 * it writes (SuspendState=) is its own. */

#include <glib.h>

typedef struct SystemdSleepConf {
        char **suspend_state;           /* SuspendState=, in order */
        char *suspend_state_origin;     /* the file that set it, NULL: systemd's default */
} SystemdSleepConf;

/* sleep.conf and sleep.conf.d under `root` (/ on a real system): the main
 * file from etc, run, usr/local/lib or usr/lib (the first found), then the
 * drop-ins of those directories in name order (a name in an earlier
 * directory hides the later ones). Each file is read as systemd reads
 * it (systemd-ini.h). */
int systemd_sleep_conf_load(const char *root, SystemdSleepConf **ret);
SystemdSleepConf *systemd_sleep_conf_free(SystemdSleepConf *c);

/* One file's text, as systemd's own parser reads it (systemd_ini_parse) */
int systemd_sleep_conf_apply_text(SystemdSleepConf *c, const char *text, const char *origin);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SystemdSleepConf, systemd_sleep_conf_free)

/* The word systemd-sleep writes to /sys/power/state for a suspend: the
 * first of SuspendState= that the kernel offers (`offered`), NULL if none */
const char *systemd_sleep_suspend_state(const SystemdSleepConf *c, char *const *offered);
