/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Everything a cycle obeys, resolved once when it starts from the Sleep
 * options and the configuration: nothing reads the live configuration
 * after that, so a later reload cannot change a running cycle. The first
 * journal entry of a cycle lists these, and so does `fridgectl status`. */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

typedef struct CycleOptions CycleOptions;

/* Who writes /sys/power/state for a cycle */
typedef enum CycleDriver {
        CYCLE_DRIVER_DIRECT,    /* fridged, from its worker */
        CYCLE_DRIVER_HOOK,      /* systemd-sleep, between the hook's pre and post */
        CYCLE_DRIVER_LOGIND,    /* as HOOK, after fridged asked logind to sleep */
        _CYCLE_DRIVER_MAX,
} CycleDriver;

const char *cycle_driver_to_string(CycleDriver d);

typedef struct CycleSettings {
        CycleDriver driver;
        bool dry_run;
        bool queue;
        bool ignore_inhibitors;    /* authorized: fridge's block inhibitors are not asked */
        char *pm_test;             /* NULL: none */
        char *mem_sleep;           /* NULL: the kernel's current mode */
        char *hibernate_mode;
        HibernateWriter hibernate_writer;
        uint32_t wake_after_sec;   /* 0: no alarm */
        uint32_t queue_timeout_ms;
        uint32_t delay_timeout_ms;
        uint32_t flush_timeout_ms;
        FlushOnTimeout flush_on_timeout;
        uint32_t freeze_timeout_ms;
        uint32_t hook_timeout_ms;
        uint32_t kernel_watchdog_ms;
        uint32_t writer_cancel_timeout_ms;
        uint32_t retries;
        uint32_t retry_delay_ms;
        char **freeze_roots;
        TuxOnIceConfig tuxonice;
} CycleSettings;

/* `opts` may be NULL (a hook cycle has none); mem_sleep only applies to suspend */
int cycle_settings_new(const Config *config, const CycleOptions *opts, CycleDriver driver, bool suspend,
                       CycleSettings **ret);
CycleSettings *cycle_settings_free(CycleSettings *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CycleSettings, cycle_settings_free)

/* "name=value" in a fixed order: the CycleSettings property (as
 * systemd's Environment=) and, joined, the journal's FRIDGE_SETTINGS */
char **cycle_settings_strv(const CycleSettings *s);
/* "name=value name=value ..." */
char *cycle_settings_describe(const CycleSettings *s);
