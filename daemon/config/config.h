/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "fridge-limits.h"

typedef enum SleepDriver {
        DRIVER_AUTO,
        DRIVER_DIRECT,
        DRIVER_LOGIND,
} SleepDriver;

/* Who writes a hibernation image: the kernel (the state write "disk"), or
 * fridge-image-writer through /dev/snapshot, with progress and Cancel */
typedef enum HibernateWriter {
        HIBERNATE_WRITER_KERNEL,
        HIBERNATE_WRITER_FRIDGE,
} HibernateWriter;

typedef enum FlushOnTimeout {
        FLUSH_ON_TIMEOUT_FAIL,
        FLUSH_ON_TIMEOUT_CONTINUE,
} FlushOnTimeout;

/* [TuxOnIce]: written to sys/power/tuxonice before each hibernation that
 * goes through it. Each setting is optional: unset keeps the kernel's. */
#define TUXONICE_IMAGE_SIZE_LIMIT_UNSET INT32_MIN
#define TUXONICE_COMPRESSOR_MAX 31 /* TuxOnIce's toi_compressor_name[32] */

typedef struct TuxOnIceConfig {
        /* MiB, as TuxOnIce's image_size_limit: 0 no limit, -1 never free
         * memory for the image, -2 free caches only */
        int32_t image_size_limit;
        char *compressor;         /* a crypto API name; "none": no compression */
        int enable_escape;        /* -1: keep, else 0 or 1 */
} TuxOnIceConfig;

void config_tuxonice_clear(TuxOnIceConfig *t);
void config_tuxonice_copy(TuxOnIceConfig *dst, const TuxOnIceConfig *src);

typedef struct Config {
        SleepDriver driver;
        char *mem_sleep;      /* NULL: the kernel's current mode */
        char *hibernate_mode; /* /sys/power/disk mode for hibernate */
        char *resume_device;  /* NULL: keep the kernel's */
        HibernateWriter hibernate_writer;
        uint32_t retries;
        uint32_t retry_delay_ms;
        uint32_t flush_timeout_ms;
        FlushOnTimeout flush_on_timeout;
        char **freeze_roots;
        uint32_t freeze_timeout_ms;
        uint32_t delay_timeout_ms;
        uint32_t hook_timeout_ms; /* awake time a hook cycle waits for the other hook */
        uint32_t kernel_watchdog_ms; /* awake time the state write may take before it is reported stuck */
        uint32_t writer_cancel_timeout_ms; /* awake time the image writer has to answer a Cancel */
        uint32_t inhibitors_per_user;             /* and class holds, root excepted */
        uint32_t pending_authorizations_per_user; /* calls waiting for polkit at once */
        uint32_t pending_plans_per_user;          /* GetPlan calls waiting for a build, root excepted */
        uint32_t history_max_cycles;              /* past cycles kept in the state directory */
        TuxOnIceConfig tuxonice;
} Config;

int config_new_default(Config **ret);
Config *config_free(Config *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Config, config_free)

/* Reads the first DIR/fridge.conf of `dirs` (highest priority first, as
 * conf_fridge_dirs() gives them), then the DIR/fridge.conf.d/\*.conf of
 * all of them in name order (conf-files.h: a name in a higher dir hides
 * the lower, an empty or /dev/null one masks), later keys winning. A bad
 * file, group, key or value is logged with its path and line and skipped:
 * the rest applies and defaults stand in. *ret_problems, if given, counts
 * what was skipped (a reload refuses a configuration with any). */
int config_load(char *const *dirs, Config **ret, unsigned *ret_problems);

/* The same for one file's text (for tests and the fuzzer); `path` is only
 * used in messages. */
unsigned config_apply_text(Config *c, const char *path, const char *text);

