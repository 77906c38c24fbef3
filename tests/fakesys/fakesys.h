/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What fakesys.c (the FUSE side, options, main) and fakesys-kernel.c (the
 * simulated kernel and the control commands) share. See README.md.
 */
#pragma once

#include <glib.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

/* K_STAT: read-only statistics (0444), changed only by the simulated kernel
 * and control commands. */
enum kind {
        K_WORDS, K_STATE, K_WAKEUP_COUNT, K_UINT, K_RESUME, K_BOOL, K_WAKEALARM, K_STAT,
        K_TOI_HIBERNATE, K_TOI_LONG, K_TOI_UL, K_TOI_BIT, K_TOI_STRING,
};

enum {
        F_STATE, F_MEM_SLEEP, F_DISK, F_PM_TEST, F_WAKEUP_COUNT, F_IMAGE_SIZE,
        F_RESUME, F_FREEZE_TIMEOUT, F_SYNC_ON_SUSPEND, F_WAKEALARM,
        F_WAKEUP_IRQ, F_FAILED_DEV, F_FAILED_ERRNO,
        /* the RTC's wakeup source: what fridged names as the wake source */
        F_RTC_SOURCE_NAME, F_RTC_SOURCE_COUNT,
        /* power/tuxonice, only with --tuxonice */
        F_TOI_DO_HIBERNATE, F_TOI_LAST_RESULT, F_TOI_IMAGE_SIZE_LIMIT, F_TOI_ALGORITHM,
        F_TOI_COMPRESSION, F_TOI_ENABLE_ESCAPE, F_TOI_VERSION,
        /* read-only files a test adds with --file (block devices' sysfs
         * attributes: dev/block/MAJ:MIN/dm/uuid) */
        F_EXTRA_FIRST, N_FILES = F_EXTRA_FIRST + 8
};
#define F_TOI_FIRST F_TOI_DO_HIBERNATE

/* Node ids kept in fuse_file_info.fh; sysfs files use their F_* index. */
enum { NODE_NONE = -1, NODE_CONTROL = 100, NODE_LOG, NODE_DIR };

#define VALUE_MAX 256
#define FAKESYS_RTC_IRQ "8"

struct sysfile {
        const char *path;       /* relative to sys/ */
        enum kind kind;
        unsigned long long max; /* K_UINT upper bound */
        long long min, smax;    /* K_TOI_LONG bounds: TuxOnIce clamps to them */
        mode_t mode;            /* 0: 0644 */
        bool present;
        char value[VALUE_MAX];  /* what a read shows, without the "\n" */
        long delay_ms;          /* delay-write */
        bool held;              /* hold-write */
        bool wakeup_on_write;   /* one-shot wakeup-on-write */
};

/* All simulated kernel state, under one mutex. Blocking happens only in
 * pthread_cond_(timed)wait on fakesys.cond, which releases the mutex, so a
 * sleeping state write never blocks reads, other writes or control. */
struct fakesys_state {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        GString *log;
        unsigned wakeup_count;
        bool check_enabled;     /* a wakeup_count write succeeded ... */
        unsigned saved_count;   /* ... with this count */
        unsigned wake_gen;      /* bumped by every wakeup event */
        long long alarm;        /* RTC alarm, epoch seconds; 0 = not armed */
        long sleep_ms;
        long pm_test_delay_ms;
        int fail_errno;
        long fail_count;
        unsigned long long toi_fail_result; /* toi-fail-result */
        long toi_fail_count;
        bool in_transition;     /* a state write is in progress */
        bool quitting;
        time_t started;
};

extern struct sysfile fakesys_files[N_FILES];
extern struct fakesys_state fakesys;

/* fakesys-kernel.c; all but fakesys_node_of and fakesys_parse_ull with
 * fakesys.lock held */
/* The F_* index or NODE_* id of a path in the mount, NODE_NONE if none */
int fakesys_node_of(const char *path);
/* Strict decimal up to max (sysfs rejects what strtoul would take) */
bool fakesys_parse_ull(const char *s, unsigned long long max, unsigned long long *out);
/* One write to a sys/ file: its kernel rule and one log line; 0 or errno */
int fakesys_sys_write(struct sysfile *f, const char *val);
/* Control commands, one a line; 0 or the errno of the first bad one */
int fakesys_control_write(const char *text);
/* A fired RTC alarm disarms itself, as the hardware's does */
void fakesys_expire_alarm(void);
/* Refresh the shown values of wakeup_count and wakealarm from the state */
void fakesys_render_count(void);
void fakesys_render_alarm(void);
