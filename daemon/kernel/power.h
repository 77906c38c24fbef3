/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "cycle.h"
#include "devices.h"
#include "power-backend.h"
#include "power-saved.h"

/* The kernel's /sys/power interface: what the mainline backend and the
 * TuxOnIce backend (a patched mainline kernel) share. Every path is
 * relative to the sysfs root fd. */

#define POWER_STATE        "sys/power/state"
#define POWER_MEM_SLEEP    "sys/power/mem_sleep"
#define POWER_DISK         "sys/power/disk"
#define POWER_PM_TEST      "sys/power/pm_test"
#define POWER_WAKEUP_COUNT "sys/power/wakeup_count"
#define POWER_RESUME       "sys/power/resume"
#define POWER_RTC_ALARM    "sys/class/rtc/rtc0/wakealarm"
#define POWER_FREEZE_FS    "sys/power/freeze_filesystems"

typedef struct PowerCaps {
        char **states;          /* "freeze mem disk" */
        char **mem_sleep;       /* NULL when the file is absent */
        char *mem_sleep_current;
        char **disk;
        char *disk_current;
        char **pm_test;
        bool has_rtc;
        bool has_tuxonice;      /* tuxonice_present() */
        char *problem;          /* why a file could not be used, for reasons */
} PowerCaps;

PowerCaps *power_caps_free(PowerCaps *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PowerCaps, power_caps_free)

/* Never fails for a missing or malformed optional file: that feature is
 * then absent and `problem` says why. Fails only when `state` is unusable. */
int power_caps_read(int sysfs_fd, PowerCaps **ret);

/* Whether the kernel freezes file systems itself during suspend and
 * hibernation (freeze_filesystems, since 6.16, set by the administrator):
 * "yes", "no", or "" where the kernel has no such file. Read afresh each
 * time: fridge never writes it. */
const char *power_freeze_filesystems(int sysfs_fd);

/* The reason of "na" for every kind when power_caps_read() failed */
#define POWER_STATE_UNUSABLE "/" POWER_STATE " is missing, unreadable or malformed"

/* What the mainline kernel offers for `kind`; *ret_reason (static or
 * caps-owned) says why when not "yes", "" otherwise. `disk_mode` is the
 * configured hibernate mode. */
PowerAnswer power_can(const PowerCaps *c, SleepKind kind, const char *disk_mode, const char **ret_reason);

/* The word for /sys/power/state. */
const char *power_state_for_kind(SleepKind kind);

/* A cycle's options against the kernel, before the cycle starts (both
 * backends on /sys/power): reads the caps into *ret_caps, or refuses with
 * FRIDGE_ERROR_NOT_SUPPORTED and *ret_message. */
int power_check_read_caps(int sysfs_fd, PowerCaps **ret_caps, char **ret_message);
/* The mem_sleep, pm_test and wake alarm options (and the configured
 * MemSleep for a suspend): 0, or FRIDGE_ERROR_NOT_SUPPORTED with *ret_message. */
int power_check_options(const PowerCaps *caps, const Config *config, const PowerCycle *cycle, char **ret_message);

typedef enum PowerStep {
        POWER_STEP_NONE,
        POWER_STEP_MEM_SLEEP,
        POWER_STEP_RESUME,
        POWER_STEP_DISK,
        POWER_STEP_PM_TEST,
        POWER_STEP_RTC,
        POWER_STEP_WAKEUP_COUNT,
        POWER_STEP_STATE,
        POWER_STEP_BACKEND,      /* one of the backend's own steps: it says which */
} PowerStep;

/* The knobs a cycle sets around a state write another program makes
 * (systemd-sleep, on the logind driver's path). systemd-sleep writes its
 * own modes (HibernateMode=, MemorySleepMode=) before it runs the sleep
 * hooks and never touches pm_test or the RTC alarm, so knobs set from the
 * hook's pre hold for its state write. */
typedef struct PowerKnobs {
        char *mem_sleep;          /* NULL: leave as is */
        char *pm_test;            /* NULL: leave as is */
        uint32_t wake_after_sec;  /* 0: no alarm */
        bool pm_test_set, alarm_set;
} PowerKnobs;

/* 0, or the negative errno of the first step that failed (*ret_step);
 * the others are set all the same, and power_knobs_restore() puts back
 * what was set. Again (with more knobs) is fine: an armed alarm stays. */
int power_knobs_set(int sysfs_fd, PowerKnobs *k, PowerStep *ret_step);
/* Puts the knobs back as `before` (taken before the first was set) has
 * them and clears the alarm that was armed; twice is harmless */
void power_knobs_restore(int sysfs_fd, PowerKnobs *k, const PowerSaved *before);
void power_knobs_clear(PowerKnobs *k);

/* A kernel phase through /sys/power: the mainline backend's request, and
 * the start of the TuxOnIce backend's (which shares its steps). */
typedef struct PowerSysfsRequest {
        PowerRequest base;
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
        PowerSaved *before;      /* owned: the knobs before the cycle, put back after the state write */

        /* results */
        PowerStep failed_step;
        int error;               /* negative errno of the failed step */
        uint64_t entered_usec;   /* CLOCK_REALTIME at the state write */
        /* from a write that returned 0 to power_sysfs_finish() */
        WakeupSnapshot *sources_before; /* owned: the sources' counts before the write */
        bool alarm_set;          /* the alarm to clear */
} PowerSysfsRequest;

/* The fields every /sys/power cycle sets: the fd, the state word for the
 * kind, pm_test, resume, the alarm, the wakeup_count handshake (whose
 * sources it takes from `cycle`) and a copy of the knobs from before the
 * cycle (read now when it has none). Fails only when the fd cannot be
 * duplicated. */
int power_sysfs_request_init(PowerSysfsRequest *r, int sysfs_fd, PowerCycle *cycle);
void power_sysfs_request_clear(PowerSysfsRequest *r);

/* A backend's own part of the kernel phase: 0 or the negative errno, with
 * failed_step POWER_STEP_BACKEND and the backend's note of which step. */
typedef int (*PowerSysfsHook)(PowerSysfsRequest *r);

/* Runs `before` (NULL: nothing), selects modes, arms the alarm, writes
 * wakeup_count back, then `write` (NULL: the state write: the point of no
 * return). When a step failed it puts the knobs back as r->before has
 * them and clears the alarm; after a write that returned 0 (the resume)
 * that is left to power_sysfs_finish(), once the loop has thawed.
 * Returns 0 or the failed step's negative errno (also in r->error /
 * r->failed_step). */
int power_sysfs_enter(PowerSysfsRequest *r, PowerSysfsHook before, PowerSysfsHook write);
/* PowerBackend.finish of both backends: the wake reason (the sources that
 * moved across the write), then the knobs put back and the alarm cleared */
int power_sysfs_finish(PowerRequest *base);
/* The state write itself, for a `write` hook that falls back to it: its
 * failure keeps POWER_STEP_STATE */
int power_sysfs_write_state(PowerSysfsRequest *r);

/* A growth of CLOCK_BOOTTIME - CLOCK_MONOTONIC smaller than this is the
 * jitter of reading two clocks, not a suspend the kernel counted */
#define POWER_SUSPEND_COUNTED_USEC (10 * 1000)
/* Time asleep across a state write, from both clocks before and after it:
 * the growth of CLOCK_BOOTTIME - CLOCK_MONOTONIC where the kernel counted
 * a suspend (the monotonic clock stopped), otherwise how long the write
 * blocked (s2idle without suspended timekeeping, pm_test, fakesys). */
uint64_t power_slept_usec(uint64_t boot0, uint64_t mono0, uint64_t boot1, uint64_t mono1);

/* For a stop while the state write is pending (the worker will never get
 * to its own clean-up): puts the knobs back as r->before has them and
 * clears the RTC alarm. Reads only the fields the worker never changes. Takes any request that starts with a
 * PowerSysfsRequest, so both backends use it as theirs. */
void power_sysfs_restore_after_abort(const PowerRequest *r);

/* How a failed mainline step ends the cycle: a spoiled wakeup_count
 * handshake is an abort for a wakeup event, any other refusal the kernel's
 * failure. Not for POWER_STEP_BACKEND. */
CycleResult power_sysfs_describe_failure(const PowerSysfsRequest *r, FridgeError *ret_error, char **ret_message);
/* "the kernel refused to <action>[ <what>]: <error>" */
char *power_refused_message(const char *action, const char *what, int error);

/* A wakeup event or a busy kernel (EBUSY from the state write): why trying
 * again later may work, or NULL. As above, any request that starts with a
 * PowerSysfsRequest. */
const char *power_sysfs_transient(const PowerRequest *r);

/* "mem", "disk, pm_test devices", with `via` (" through TuxOnIce") after the state */
char *power_sysfs_summary(const PowerSysfsRequest *r, const char *via);

/* Reads wakeup_count (may block in the kernel while events are in
 * progress, hence for workers). */
int power_read_wakeup_count(int sysfs_fd, uint32_t *ret);

const char *power_step_to_string(PowerStep s);
