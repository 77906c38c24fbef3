/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "power-backend.h"

#include <errno.h>

#include "util.h"

const char *power_answer_to_string(PowerAnswer a) {
        static const char *const names[_POWER_ANSWER_MAX] = {
                [POWER_ANSWER_YES] = "yes",
                [POWER_ANSWER_NO] = "no",
                [POWER_ANSWER_NA] = "na",
        };
        return a >= 0 && a < _POWER_ANSWER_MAX ? names[a] : "na";
}

static const PowerBackend *const builtin_backends[] = {
        &power_backend_tuxonice,
        &power_backend_userspace,
        &power_backend_mainline,
        NULL,
};

static bool usable(const PowerBackend *b, const PowerContext *ctx) {
        if (!b->unusable)
                return true;
        g_autofree char *why = b->unusable(ctx);
        return !why;
}

const PowerBackend *power_backend_select(const PowerContext *ctx, SleepKind kind, bool pm_test) {
        for (const PowerBackend *const *b = ctx->backends ? ctx->backends : builtin_backends; *b; b++)
                if ((*b)->serves(kind, pm_test) && (*b)->probe(ctx) && usable(*b, ctx))
                        return *b;
        return NULL;
}

bool power_backend_writes_image(const PowerBackend *b) {
        return b && b->cancel;
}

const char *power_backend_hibernate_writer(const PowerContext *ctx, char **ret_reason) {
        const PowerBackend *b = power_backend_select(ctx, SLEEP_HIBERNATE, false);
        *ret_reason = NULL;
        /* the writer's own check (writer-verdict.h): it would give the image back to the kernel */
        if (b == &power_backend_userspace && ctx->image_writer_refusal) {
                *ret_reason = g_strdup(ctx->image_writer_refusal);
                return "kernel";
        }
        if (b == &power_backend_userspace)
                return "fridge";
        if (ctx->config && ctx->config->hibernate_writer == HIBERNATE_WRITER_FRIDGE)
                *ret_reason = b == &power_backend_tuxonice
                                      ? g_strdup("TuxOnIce is in this kernel: it writes the image")
                                      : power_backend_userspace.unusable(ctx);
        return b == &power_backend_tuxonice ? "tuxonice" : "kernel";
}

PowerAnswer power_backend_can(const PowerContext *ctx, SleepKind kind, char **ret_reason) {
        const PowerBackend *b = power_backend_select(ctx, kind, false);
        *ret_reason = NULL;
        if (!b) {
                *ret_reason = g_strdup("no power backend serves it");
                return POWER_ANSWER_NA;
        }
        PowerAnswer a = b->can(ctx, kind, ret_reason);
        if (a == POWER_ANSWER_YES)
                g_clear_pointer(ret_reason, g_free);
        return a;
}

char **power_backend_supported_kinds(const PowerContext *ctx) {
        g_autoptr(GPtrArray) kinds = g_ptr_array_new();
        for (int k = 0; k < _SLEEP_KIND_MAX; k++) {
                g_autofree char *reason = NULL;
                if (power_backend_can(ctx, (SleepKind) k, &reason) != POWER_ANSWER_NA)
                        g_ptr_array_add(kinds, g_strdup(sleep_kind_to_string((SleepKind) k)));
        }
        g_ptr_array_add(kinds, NULL);
        return (char **) g_ptr_array_free(g_steal_pointer(&kinds), FALSE);
}

/* Asks the backend a real sleep of the kind uses, as fridged always did:
 * a pm_test hibernation on a TuxOnIce kernel is checked as TuxOnIce's
 * (its options, pm_test among them, against /sys/power), though the
 * mainline kernel runs it. Selecting with pm_test here would refuse such
 * a cycle up front when the mainline kernel lacks disk, which today
 * fails only in the kernel phase. */
int power_backend_check(const PowerContext *ctx, const PowerCycle *cycle, char **ret_set_resume,
                        char **ret_message) {
        const PowerBackend *b = power_backend_select(ctx, cycle->kind, false);
        *ret_set_resume = NULL;
        if (!b) {
                *ret_message = g_strdup("no power backend serves it");
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        return b->check(ctx, cycle, ret_set_resume, ret_message);
}

int power_request_new(const PowerContext *ctx, PowerCycle *cycle, PowerRequest **ret) {
        const PowerBackend *b = power_backend_select(ctx, cycle->kind, cycle->pm_test != NULL);
        if (!b)
                return -EOPNOTSUPP;
        PowerRequest *r = NULL;
        int e = b->prepare(ctx, cycle, &r);
        if (e < 0)
                return e;
        r->backend = b;
        *ret = r;
        return 0;
}

PowerRequest *power_request_free(PowerRequest *r) {
        if (r)
                r->backend->free(r);
        return NULL;
}

int power_request_enter(void *request) {
        PowerRequest *r = request;
        return r->backend->enter(r);
}

int power_request_finish(void *request) {
        PowerRequest *r = request;
        return r->backend->finish ? r->backend->finish(r) : 0;
}

void power_request_free_void(void *request) {
        power_request_free(request);
}

void power_request_restore_after_abort(const PowerRequest *r) {
        if (r->backend->restore_after_abort)
                r->backend->restore_after_abort(r);
}

CycleResult power_request_describe_failure(const PowerRequest *r, FridgeError *ret_error, char **ret_message) {
        return r->backend->describe_failure(r, ret_error, ret_message);
}

const char *power_request_transient(const PowerRequest *r) {
        return r->backend->transient ? r->backend->transient(r) : NULL;
}

char *power_request_summary(const PowerRequest *r) {
        return r->backend->summary ? r->backend->summary(r) : g_strdup(r->backend->name);
}

char *power_request_notes(const PowerRequest *r) {
        return r->backend->notes ? r->backend->notes(r) : NULL;
}

PowerImageWrite power_request_image_write(const PowerRequest *r) {
        PowerImageWrite w = {};
        if (r->backend->image_write)
                r->backend->image_write(r, &w);
        return w;
}

const char *power_request_backend_name(const PowerRequest *r) {
        return r->backend->name;
}

int power_request_cancel(PowerRequest *r) {
        return r->backend->cancel ? r->backend->cancel(r) : -EINPROGRESS;
}

void power_request_abandon(PowerRequest *r) {
        if (r->backend->abandon)
                r->backend->abandon(r);
}

bool power_request_progress(const PowerRequest *r, double *ret_fraction, char **ret_text) {
        if (!r->backend->progress)
                return false;
        *ret_fraction = r->backend->progress(r, ret_text);
        return true;
}
