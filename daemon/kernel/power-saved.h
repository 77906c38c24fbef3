/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* <state dir>/kernel: the /sys/power knobs a kernel phase may change, as
 * they were before it, written (and fsynced) before the phase and removed
 * after it, so a fridged killed inside the phase is undone by the next
 * start or by `fridged --thaw-all`:
 *
 *   fridge-kernel 1
 *   pm_test none
 *   mem_sleep deep
 *   disk platform
 *   wakealarm 0
 *
 * A knob whose file is absent or unreadable has no line; "wakealarm 0" is
 * there only when the cycle arms the RTC alarm (restoring clears it). */

/* Records the current pm_test, mem_sleep and disk modes below sysfs_fd. */
int power_saved_write(int state_fd, int sysfs_fd, bool alarm);
/* Puts back what the file records, logs each knob and the whole, then
 * removes it.
 * 1 when there was a file, 0 when none, <0 when it could not be read or
 * removed (a knob that cannot be written is logged and skipped). */
int power_saved_restore(int state_fd, int sysfs_fd);
/* After a kernel phase that restored the knobs itself. */
int power_saved_remove(int state_fd);
