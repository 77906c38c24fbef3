/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* The /sys/power knobs a cycle may change, as they were before it set the
 * first of them: every restore puts back these, the cycle's own after its
 * state write (or when it ends early) and a restart's after a crash. While
 * the knobs may differ from them, they are also in <state dir>/kernel
 * (written and fsynced before the first knob, removed once they are back),
 * so a fridged killed meanwhile is undone by the next start or by
 * `fridged --thaw-all`:
 *
 *   fridge-kernel 1
 *   pm_test none
 *   mem_sleep deep
 *   disk platform
 *   wakealarm 0
 *
 * A knob whose file is absent or unreadable has no line; "wakealarm 0" is
 * there only when the cycle arms the RTC alarm (restoring clears it). */
typedef struct PowerSaved {
        char *pm_test;          /* NULL: no such knob (or unreadable) */
        char *mem_sleep;
        char *disk;
        bool alarm;             /* the cycle arms the RTC alarm */
} PowerSaved;

/* The current pm_test, mem_sleep and disk modes below sysfs_fd */
PowerSaved *power_saved_read(int sysfs_fd, bool alarm);
PowerSaved *power_saved_copy(const PowerSaved *s);
PowerSaved *power_saved_free(PowerSaved *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PowerSaved, power_saved_free)

/* Writes back each mode that differs now (what the cycle did not change is
 * not written; NULL: none) and clears the RTC alarm when `clear_alarm`.
 * A knob that cannot be written is logged and skipped; the first such
 * failure is returned (a knob this kernel does not have is no failure). */
int power_saved_put_back(int sysfs_fd, const PowerSaved *s, bool clear_alarm);

/* <state dir>/kernel */
int power_saved_write(int state_fd, const PowerSaved *s);
/* Puts back what the file records, logs each knob and the whole, then
 * removes it.
 * 1 when there was a file, 0 when none, <0 when it could not be read or
 * removed (a knob that cannot be written is logged and skipped). */
int power_saved_restore(int state_fd, int sysfs_fd);
/* Once the knobs are back */
int power_saved_remove(int state_fd);
