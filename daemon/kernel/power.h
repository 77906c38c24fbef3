/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "cycle.h"
#include "devices.h"

/* The kernel's /sys/power interface (mainline backend). Every path is
 * relative to the sysfs root fd. */

#define POWER_STATE        "sys/power/state"
#define POWER_MEM_SLEEP    "sys/power/mem_sleep"
#define POWER_DISK         "sys/power/disk"
#define POWER_PM_TEST      "sys/power/pm_test"
#define POWER_WAKEUP_COUNT "sys/power/wakeup_count"
#define POWER_RESUME       "sys/power/resume"
#define POWER_RTC_ALARM    "sys/class/rtc/rtc0/wakealarm"

typedef struct PowerCaps {
        char **states;          /* "freeze mem disk" */
        char **mem_sleep;       /* NULL when the file is absent */
        char *mem_sleep_current;
        char **disk;
        char *disk_current;
        char **pm_test;
        bool has_rtc;
        bool tuxonice;          /* hibernation goes through sys/power/tuxonice */
        char *problem;          /* why a file could not be used, for reasons */
} PowerCaps;

void power_caps_free(PowerCaps *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PowerCaps, power_caps_free)

/* Never fails for a missing or malformed optional file: that feature is
 * then absent and `problem` says why. Fails only when `state` is unusable. */
int power_caps_read(int sysfs_fd, PowerCaps **ret);

/* "yes" | "no" | "na"; *ret_reason (static or caps-owned) says why when not
 * "yes". `disk_mode` is the configured hibernate mode. */
const char *power_can(const PowerCaps *c, SleepKind kind, const char *disk_mode, const char **ret_reason);

/* The word for /sys/power/state. */
const char *power_state_for_kind(SleepKind kind);

typedef enum PowerStep {
        POWER_STEP_NONE,
        POWER_STEP_MEM_SLEEP,
        POWER_STEP_RESUME,
        POWER_STEP_DISK,
        POWER_STEP_PM_TEST,
        POWER_STEP_RTC,
        POWER_STEP_WAKEUP_COUNT,
        POWER_STEP_STATE,
        POWER_STEP_TUXONICE_SETTINGS,
        POWER_STEP_TUXONICE_HIBERNATE,
        POWER_STEP_TUXONICE_LAST_RESULT,
        POWER_STEP_TUXONICE_ABORTED,  /* do_hibernate ran, last_result says it aborted */
} PowerStep;

/* One kernel phase, run on a worker thread: it touches nothing but itself. */
typedef struct PowerRequest {
        int sysfs_fd;            /* owned (a dup) */
        char *state;
        char *mem_sleep;         /* NULL: leave as is */
        char *disk_mode;         /* NULL: leave as is */
        char *pm_test;           /* NULL: leave as is */
        char *resume;            /* MAJ:MIN for sys/power/resume, NULL: leave as is */
        uint32_t wake_after_sec; /* 0: no alarm */
        bool write_wakeup_count;
        uint32_t wakeup_count;
        WakeupSnapshot *count_sources; /* owned: the sources' counts when wakeup_count was read */
        bool tuxonice;           /* do_hibernate instead of the state write */
        TuxOnIceConfig tuxonice_config;

        /* what the kernel had before, put back after the state write */
        char *saved_mem_sleep;
        char *saved_disk_mode;

        /* results */
        PowerStep failed_step;
        int error;               /* negative errno of the failed step */
        const char *failed_setting; /* the TuxOnIce file of POWER_STEP_TUXONICE_SETTINGS */
        uint64_t tuxonice_result; /* last_result after do_hibernate */
        uint64_t slept_usec;
        uint64_t entered_usec;   /* CLOCK_REALTIME at the state write */
        uint64_t returned_usec;  /* CLOCK_MONOTONIC when the state write returned */
        char *wake_reason;       /* the wakeup sources that moved, or "unknown" */
} PowerRequest;

void power_request_free(PowerRequest *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PowerRequest, power_request_free)

/* Selects modes (or applies the TuxOnIce settings), arms the alarm, writes
 * wakeup_count back, then the state (or TuxOnIce's do_hibernate);
 * restores pm_test and clears the alarm whatever happened. Returns 0 or the
 * failed step's negative errno (also in r->error / r->failed_step). */
int power_enter(void *request);

/* For a stop while the state write is pending (the worker will never get
 * to its own clean-up): puts pm_test and the RTC alarm back. Reads only the
 * fields the worker never changes. */
void power_restore_after_abort(int sysfs_fd, const PowerRequest *r);

/* Reads wakeup_count (may block in the kernel while events are in
 * progress, hence for workers). */
int power_read_wakeup_count(int sysfs_fd, uint32_t *ret);

const char *power_step_to_string(PowerStep s);
