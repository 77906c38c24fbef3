/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

/* Wakeup sources: which one woke the machine is the one whose event count
 * moved across the state write. Read from SYSFS/sys/class/wakeup/\* (name,
 * event_count), so tests can give a simulated tree. */

typedef struct WakeupSnapshot WakeupSnapshot;

/* Never fails: a kernel without the class gives an empty snapshot. */
WakeupSnapshot *devices_wakeup_snapshot(int sysfs_fd);
void devices_wakeup_snapshot_free(WakeupSnapshot *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WakeupSnapshot, devices_wakeup_snapshot_free)

/* The sources whose event_count grew from `before` to `after`, the largest
 * increase first, as "rtc0, PNP0C0C:00"; "unknown" when none did. */
char *devices_wake_reason(const WakeupSnapshot *before, const WakeupSnapshot *after);
