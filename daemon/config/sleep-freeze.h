/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* From v256, systemd-sleep freezes all of user.slice itself before it runs
 * the sleep hooks, unless its service's environment has
 * SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=false: fridge's drop-ins
 * (systemd-units/sleep-freeze.conf) set that for the four sleep services.
 * This finds out, from the unit files as systemd would read them, whether
 * that still holds: another drop-in may override fridge's. */

#include <glib.h>
#include <stdbool.h>

#define SLEEP_FREEZE_ENV "SYSTEMD_SLEEP_FREEZE_USER_SESSIONS"
#define SLEEP_FREEZE_SINCE_VERSION 256u

/* The services whose systemd-sleep freezes, NULL-terminated */
extern const char *const sleep_freeze_services[];

/* The value of SLEEP_FREEZE_ENV that `service` runs with under `root` (/
 * on a real system): its unit file (the first of /etc, /run,
 * /usr/local/lib, /usr/lib, /lib systemd/system), then its drop-ins
 * (service.d/\*.conf in name order, /etc's masking the same name below),
 * Environment= as systemd reads it (an empty one clears the list).
 * *ret_value NULL: not set; *ret_origin: the file that set it. -ENOENT
 * when no unit file is there. */
int sleep_freeze_env(const char *root, const char *service, char **ret_value, char **ret_origin);

/* Whether systemd-sleep freezes with this value (NULL: unset), as its
 * getenv_bool() reads it: anything but a false boolean freezes */
bool sleep_freeze_value_freezes(const char *value);

/* What systemd `version` (0: unknown) does to user.slice before fridge's
 * hook, in one line: "not affected: …", "prevented: …", "affected: …"
 * (naming each service and the file at fault) or "unknown: …". g_free(). */
char *sleep_freeze_status(const char *root, unsigned version);
