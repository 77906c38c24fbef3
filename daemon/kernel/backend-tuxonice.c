/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The TuxOnIce backend: hibernation through sys/power/tuxonice's
 * do_hibernate, its settings applied first. The rest of the kernel phase
 * (the alarm, the wakeup_count handshake) is the mainline kernel's. */
#include <errno.h>
#include <inttypes.h>

#include "fileio.h"
#include "power-backend.h"
#include "power.h"
#include "tuxonice.h"

typedef enum TuxOnIceStep {
        TUXONICE_STEP_NONE,
        TUXONICE_STEP_SETTINGS,
        TUXONICE_STEP_HIBERNATE,
        TUXONICE_STEP_LAST_RESULT,
        TUXONICE_STEP_ABORTED,  /* do_hibernate ran, last_result says it aborted */
} TuxOnIceStep;

typedef struct TuxOnIceRequest {
        PowerSysfsRequest sys;
        TuxOnIceConfig config;
        TuxOnIceStep step;          /* which one, when sys.failed_step is POWER_STEP_BACKEND */
        const char *failed_setting; /* the file of TUXONICE_STEP_SETTINGS */
        uint64_t result;            /* last_result after do_hibernate */
} TuxOnIceRequest;

/* pm_test is the mainline kernel's test mode: such a cycle stays there */
static bool tuxonice_serves(SleepKind kind, bool pm_test) {
        return kind == SLEEP_HIBERNATE && !pm_test;
}

/* TuxOnIce hibernates by itself, whatever state and disk offer, and has
 * its own allocator and resume setting: no swap pre-flight. It still
 * lives in a kernel whose /sys/power must be usable. */
static PowerAnswer tuxonice_can(const PowerContext *ctx, SleepKind kind, char **ret_reason) {
        g_autoptr(PowerCaps) caps = NULL;
        if (power_caps_read(ctx->sysfs_fd, &caps) < 0) {
                *ret_reason = g_strdup(POWER_STATE_UNUSABLE);
                return POWER_ANSWER_NA;
        }
        *ret_reason = NULL;
        return POWER_ANSWER_YES;
}

static int tuxonice_check(const PowerContext *ctx, const PowerCycle *cycle, char **ret_set_resume,
                          char **ret_message) {
        g_autoptr(PowerCaps) caps = NULL;
        int r = power_check_read_caps(ctx->sysfs_fd, &caps, ret_message);
        if (r != 0)
                return r;
        return power_check_options(caps, ctx->config, cycle, ret_message);
}

static void tuxonice_free(PowerRequest *r) {
        TuxOnIceRequest *t = (TuxOnIceRequest *) r;
        power_sysfs_request_clear(&t->sys);
        config_tuxonice_clear(&t->config);
        g_free(t);
}

static int tuxonice_prepare(const PowerContext *ctx, PowerCycle *cycle, PowerRequest **ret) {
        TuxOnIceRequest *t = g_new0(TuxOnIceRequest, 1);
        t->sys.base.backend = &power_backend_tuxonice;
        int e = power_sysfs_request_init(&t->sys, ctx->sysfs_fd, cycle);
        if (e < 0) {
                tuxonice_free(&t->sys.base);
                return e;
        }
        config_tuxonice_copy(&t->config, &ctx->config->tuxonice);
        t->sys.base.entry_file = TUXONICE_DO_HIBERNATE;
        t->sys.base.entry_value = "1";
        *ret = &t->sys.base;
        return 0;
}

static int apply_settings(PowerSysfsRequest *r) {
        TuxOnIceRequest *t = (TuxOnIceRequest *) r;
        int e = tuxonice_apply(r->sysfs_fd, &t->config, &t->failed_setting);
        if (e < 0)
                t->step = TUXONICE_STEP_SETTINGS;
        return e;
}

/* The point of no return: do_hibernate returns after resume, or after an
 * abort that only last_result tells of */
static int do_hibernate(PowerSysfsRequest *r) {
        TuxOnIceRequest *t = (TuxOnIceRequest *) r;
        int e = write_file_at(r->sysfs_fd, TUXONICE_DO_HIBERNATE, "1");
        if (e < 0) {
                t->step = TUXONICE_STEP_HIBERNATE;
                return e;
        }
        e = tuxonice_read_result(r->sysfs_fd, &t->result);
        if (e < 0) {
                t->step = TUXONICE_STEP_LAST_RESULT;
                return e;
        }
        if (tuxonice_result_failed(t->result)) {
                t->step = TUXONICE_STEP_ABORTED;
                return -ECANCELED;
        }
        return 0;
}

static int tuxonice_enter(PowerRequest *r) {
        return power_sysfs_enter((PowerSysfsRequest *) r, apply_settings, do_hibernate);
}

static CycleResult tuxonice_describe_failure(const PowerRequest *r, FridgeError *ret_error, char **ret_message) {
        const TuxOnIceRequest *t = (const TuxOnIceRequest *) r;
        if (t->sys.failed_step != POWER_STEP_BACKEND)
                return power_sysfs_describe_failure(&t->sys, ret_error, ret_message);

        switch (t->step) {
        case TUXONICE_STEP_ABORTED: {
                CycleResult result = tuxonice_result_outcome(t->result, ret_error);
                g_autofree char *why = tuxonice_describe_result(t->result);
                *ret_message = g_strdup_printf("TuxOnIce aborted the hibernation: %s (last_result 0x%" PRIx64 ")",
                                               why, t->result);
                return result;
        }
        case TUXONICE_STEP_SETTINGS:
                *ret_message = power_refused_message("apply the TuxOnIce setting", t->failed_setting, t->sys.error);
                break;
        case TUXONICE_STEP_HIBERNATE:
                *ret_message = power_refused_message("start a TuxOnIce hibernation with", TUXONICE_DO_HIBERNATE,
                                                     t->sys.error);
                break;
        case TUXONICE_STEP_LAST_RESULT:
                *ret_message = power_refused_message("give TuxOnIce's result in", TUXONICE_LAST_RESULT,
                                                     t->sys.error);
                break;
        default:
                *ret_message = power_refused_message("hibernate through TuxOnIce", NULL, t->sys.error);
                break;
        }
        *ret_error = FRIDGE_ERROR_KERNEL;
        return RESULT_FAILED;
}

static char *tuxonice_summary(const PowerRequest *r) {
        return power_sysfs_summary((const PowerSysfsRequest *) r, " through TuxOnIce");
}

/* Bits without TOI_ABORTED: a cycle that went on, with something to say */
static char *tuxonice_notes(const PowerRequest *r) {
        const TuxOnIceRequest *t = (const TuxOnIceRequest *) r;
        if (!t->result)
                return NULL;
        g_autofree char *notes = tuxonice_describe_result(t->result);
        return g_strdup_printf("TuxOnIce hibernated with notes: %s", notes);
}

/* What the call read, when it did: every property of a GetAll asks */
static bool tuxonice_probe(const PowerContext *ctx) {
        return ctx->caps ? ctx->caps->has_tuxonice : tuxonice_present(ctx->sysfs_fd);
}

const PowerBackend power_backend_tuxonice = {
        .name = "tuxonice",
        .serves = tuxonice_serves,
        .probe = tuxonice_probe,
        .can = tuxonice_can,
        .check = tuxonice_check,
        .prepare = tuxonice_prepare,
        .enter = tuxonice_enter,
        .finish = power_sysfs_finish,
        .restore_after_abort = power_sysfs_restore_after_abort,
        .describe_failure = tuxonice_describe_failure,
        .transient = power_sysfs_transient,
        .summary = tuxonice_summary,
        .notes = tuxonice_notes,
        .free = tuxonice_free,
};
