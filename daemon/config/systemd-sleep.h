/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd-sleep's own settings (systemd-sleep.conf(5)) that meet the knobs
 * fridge sets on the logind driver's path. systemd-sleep writes
 * /sys/power/disk (HibernateMode=) and, from v254, /sys/power/mem_sleep
 * (MemorySleepMode=) before it runs the sleep hooks, so fridge's knobs,
 * set from the hook's pre, come after them and hold; but the state word
 * it writes (SuspendState=) is its own. */

#include <glib.h>
#include <stdbool.h>

/* systemd's sleep operations, in SleepKind's order for the first three */
typedef enum SystemdSleepOp {
        SYSTEMD_SLEEP_SUSPEND,
        SYSTEMD_SLEEP_HIBERNATE,
        SYSTEMD_SLEEP_HYBRID_SLEEP,
        SYSTEMD_SLEEP_SUSPEND_THEN_HIBERNATE,
        _SYSTEMD_SLEEP_OP_MAX,
        _SYSTEMD_SLEEP_OP_INVALID = -1,
} SystemdSleepOp;

typedef struct SystemdSleepConf {
        char **suspend_state;           /* SuspendState=, in order */
        char *suspend_state_origin;     /* the file that set it, NULL: systemd's default */
        int allow[_SYSTEMD_SLEEP_OP_MAX];            /* AllowSuspend= ...: -1 not set, 0, 1 */
        char *allow_origin[_SYSTEMD_SLEEP_OP_MAX];   /* "PATH:LINE" of the assignment in effect */
} SystemdSleepConf;

/* sleep.conf and sleep.conf.d under `root` (/ on a real system), found as
 * systemd finds them (conf-files.h: etc, run, usr/local/lib, usr/lib;
 * masked drop-ins skipped). Each file is read as systemd reads it
 * (systemd-ini.h). */
int systemd_sleep_conf_load(const char *root, SystemdSleepConf **ret);
SystemdSleepConf *systemd_sleep_conf_free(SystemdSleepConf *c);

/* One file's text, as systemd's own parser reads it (systemd_ini_parse) */
int systemd_sleep_conf_apply_text(SystemdSleepConf *c, const char *text, const char *origin);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SystemdSleepConf, systemd_sleep_conf_free)

/* The word systemd-sleep writes to /sys/power/state for a suspend: the
 * first of SuspendState= that the kernel offers (`offered`), NULL if none */
const char *systemd_sleep_suspend_state(const SystemdSleepConf *c, char *const *offered);

/* Whether systemd-sleep.conf's Allow*= keys let systemd do `op` (as
 * systemd's sleep-config.c decides); if not, *ret_reason (owned by the
 * caller) says so as systemd does and names the key and its file:line */
bool systemd_sleep_allowed(const SystemdSleepConf *c, SystemdSleepOp op, char **ret_reason);
SystemdSleepOp systemd_sleep_op_from_string(const char *s);
