/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mainline backend: the state written to /sys/power/state, modes from
 * mem_sleep and disk, the image to the swap that resume names. */
#include <errno.h>

#include "hibernate.h"
#include "power-backend.h"
#include "power.h"

/* The catch-all: where it lacks something, can and check say what */
static bool mainline_serves(SleepKind kind, bool pm_test) {
        return true;
}

static bool mainline_probe(const PowerContext *ctx) {
        return true;
}

/* Whether the kernel writes an image to swap and looks for it through
 * /sys/power/resume: a pm_test run stops before the image is written */
static bool writes_image(SleepKind kind, bool pm_test) {
        return !pm_test && (kind == SLEEP_HIBERNATE || kind == SLEEP_HYBRID);
}

static PowerAnswer mainline_can(const PowerContext *ctx, SleepKind kind, char **ret_reason) {
        g_autoptr(PowerCaps) read = NULL;
        const char *reason;
        if (!ctx->caps && power_caps_read(ctx->sysfs_fd, &read) < 0) {
                *ret_reason = g_strdup(POWER_STATE_UNUSABLE);
                return POWER_ANSWER_NA;
        }
        PowerAnswer a = power_can(ctx->caps ? ctx->caps : read, kind, ctx->config->hibernate_mode, &reason);
        if (a != POWER_ANSWER_YES || !writes_image(kind, false)) {
                *ret_reason = a == POWER_ANSWER_YES ? NULL : g_strdup(reason);
                return a;
        }
        g_autoptr(HibernateTarget) t = hibernate_check(ctx->sysfs_fd, ctx->proc_fd, ctx->config->resume_device,
                                                        ctx->hibernate, ctx->call);
        *ret_reason = g_steal_pointer(&t->reason);
        return *ret_reason ? POWER_ANSWER_NO : POWER_ANSWER_YES;
}

static int mainline_check(const PowerContext *ctx, const PowerCycle *cycle, char **ret_set_resume,
                          char **ret_message) {
        g_autoptr(PowerCaps) caps = NULL;
        const char *reason;
        int r = power_check_read_caps(ctx->sysfs_fd, &caps, ret_message);
        if (r != 0)
                return r;
        if (power_can(caps, cycle->kind, ctx->config->hibernate_mode, &reason) != POWER_ANSWER_YES) {
                *ret_message = g_strdup(reason);
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        r = power_check_options(caps, ctx->config, cycle, ret_message);
        if (r != 0 || !writes_image(cycle->kind, cycle->pm_test != NULL))
                return r;
        /* Nowhere to write the image, or the next boot would not look for it */
        g_autoptr(HibernateTarget) t = hibernate_check(ctx->sysfs_fd, ctx->proc_fd, ctx->config->resume_device,
                                                        ctx->hibernate, ctx->call);
        if (t->reason) {
                *ret_message = g_steal_pointer(&t->reason);
                return FRIDGE_ERROR_HIBERNATE_NOT_READY;
        }
        *ret_set_resume = g_steal_pointer(&t->set_resume);
        return 0;
}

static void mainline_free(PowerRequest *r) {
        PowerSysfsRequest *s = (PowerSysfsRequest *) r;
        power_sysfs_request_clear(s);
        g_free(s);
}

static int mainline_prepare(const PowerContext *ctx, PowerCycle *cycle, PowerRequest **ret) {
        PowerSysfsRequest *r = g_new0(PowerSysfsRequest, 1);
        r->base.backend = &power_backend_mainline;
        int e = power_sysfs_request_init(r, ctx->sysfs_fd, cycle);
        if (e < 0) {
                mainline_free(&r->base);
                return e;
        }
        if (cycle->kind == SLEEP_SUSPEND)
                r->mem_sleep = g_strdup(cycle->mem_sleep ? cycle->mem_sleep : ctx->config->mem_sleep);
        else if (cycle->kind == SLEEP_HIBERNATE)
                r->disk_mode = g_strdup(ctx->config->hibernate_mode);
        else
                r->disk_mode = g_strdup("suspend");
        *ret = &r->base;
        return 0;
}

static int mainline_enter(PowerRequest *r) {
        return power_sysfs_enter((PowerSysfsRequest *) r, NULL, NULL);
}

static CycleResult mainline_describe_failure(const PowerRequest *r, FridgeError *ret_error, char **ret_message) {
        return power_sysfs_describe_failure((const PowerSysfsRequest *) r, ret_error, ret_message);
}

static char *mainline_summary(const PowerRequest *r) {
        return power_sysfs_summary((const PowerSysfsRequest *) r, NULL);
}

const PowerBackend power_backend_mainline = {
        .name = "mainline",
        .serves = mainline_serves,
        .probe = mainline_probe,
        .can = mainline_can,
        .check = mainline_check,
        .prepare = mainline_prepare,
        .enter = mainline_enter,
        .finish = power_sysfs_finish,
        .restore_after_abort = power_sysfs_restore_after_abort,
        .describe_failure = mainline_describe_failure,
        .transient = power_sysfs_transient,
        .summary = mainline_summary,
        .free = mainline_free,
};
