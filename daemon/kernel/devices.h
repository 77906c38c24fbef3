/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

/* Wakeup sources: which one woke the machine is the one whose event count
 * moved across the state write. The sources come from libudev (subsystem
 * `wakeup`: attributes name and event_count, the parent device and its
 * driver), so tests give a umockdev testbed; a sysfs root other than /
 * (the simulated kernel) adds its own SYSFS/sys/class/wakeup; pm_wakeup_irq and
 * suspend_stats/last_failed_{dev,errno} are read below SYSFS/sys/power. */

typedef struct WakeupSnapshot WakeupSnapshot;

/* Never fails: a kernel without the class gives an empty snapshot. */
WakeupSnapshot *devices_wakeup_snapshot(int sysfs_fd);
WakeupSnapshot *devices_wakeup_snapshot_free(WakeupSnapshot *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WakeupSnapshot, devices_wakeup_snapshot_free)

/* The wake reason, in the format dbus/io.fridge.Fridge1.xml documents for
 * LastWakeReason:
 *   SOURCES[; irq N][; last failed device: DEV (errno E)]
 * SOURCES are the sources whose event_count grew from `before` to `after`,
 * the largest increase first, each as "NAME[ on PARENT][ (DRIVER)]"
 * ("rtc0 on 00:04 (rtc_cmos), PNP0C0C:00 (button)"), or "unknown" when none
 * did. The irq is pm_wakeup_irq after the sleep; the failure is shown when
 * suspend_stats changed across it. */
char *devices_wake_reason(const WakeupSnapshot *before, const WakeupSnapshot *after);
