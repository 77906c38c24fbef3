/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "cycle.h"
#include "devices.h"
#include "hibernate.h"
#include "power-saved.h"

/* How a cycle gets into and out of sleep, behind one interface: the
 * manager asks which backend serves a cycle and then talks to the request
 * that backend prepared, never to the backend by name. Built in: the
 * mainline /sys/power (backend-mainline.c) and TuxOnIce
 * (backend-tuxonice.c). A user-space hibernation backend (the image
 * written through /dev/snapshot) fits the same shape: its enter is long
 * work that can report progress and be cancelled, hence the two hooks at
 * the end of PowerBackend, NULL for the kernel's own backends. */

typedef struct PowerBackend PowerBackend;

typedef enum PowerAnswer {
        POWER_ANSWER_YES,
        POWER_ANSWER_NO,        /* offered, but not usable as configured or as things stand */
        POWER_ANSWER_NA,        /* this kernel does not offer it */
        _POWER_ANSWER_MAX,
} PowerAnswer;

/* "yes", "no", "na": the words of CanSuspend and its siblings */
const char *power_answer_to_string(PowerAnswer a);

/* Where the kernel is, and the configuration it is driven by */
typedef struct PowerContext {
        int sysfs_fd;
        int proc_fd;
        const Config *config;
        /* NULL-terminated, in the order of preference; NULL: the built-in ones */
        const PowerBackend *const *backends;
        HibernateCache *hibernate;      /* NULL: every pre-flight from scratch */
        const char *image_writer_socket; /* where fridge-image-writer listens; NULL: nowhere */
        const char *image_writer_refusal; /* why it said it cannot write an image; NULL: it can, or unasked */
        uint64_t call;                  /* the call asking (see hibernate_check()); 0: none */
        const struct PowerCaps *caps;   /* what the kernel offers, read for this call; NULL: read it */
} PowerContext;

/* What a cycle asks of the kernel phase: the cycle's own options, not yet
 * merged with the configuration (the backend knows which apply to it) */
typedef struct PowerCycle {
        SleepKind kind;
        const char *pm_test;            /* the mainline kernel's test mode; NULL: a real sleep */
        const char *mem_sleep;          /* the MemSleep option; NULL: the configured one */
        uint32_t wake_after_sec;        /* 0: no alarm */
        /* for prepare only */
        const PowerSaved *before;       /* the knobs before the cycle, to put back; NULL: as they are now */
        const char *set_resume;         /* what check returned in *ret_set_resume */
        bool have_wakeup_count;
        uint32_t wakeup_count;
        WakeupSnapshot *count_sources;  /* prepare takes it: the sources' counts when wakeup_count was read */
} PowerCycle;

/* One kernel phase. A backend's own request starts with this (its first
 * member); the manager reads only these fields, and only once enter has
 * returned. */
typedef struct PowerRequest {
        const PowerBackend *backend;
        uint64_t slept_usec;            /* how long the machine slept: power_slept_usec() */
        uint64_t returned_usec;         /* CLOCK_MONOTONIC when the blocking write returned */
        char *wake_reason;              /* the wakeup sources that moved; NULL: unknown */
        /* The write that is the point of no return, named when it does not
         * return: set by prepare and never changed, so the loop may read
         * them while enter runs (borrowed) */
        const char *entry_file;         /* relative to the sysfs root: "sys/power/state" */
        const char *entry_value;        /* "mem" */
} PowerRequest;

/* Who wrote a hibernation image, and what it took: the backend's account
 * of its kernel phase, kept with the cycle's result (history, ListCycles) */
typedef struct PowerImageWrite {
        const char *writer;             /* "fridge" or "kernel" (fridge's could not run); NULL: none */
        uint64_t raw_bytes;             /* the image before compression; 0: not reported */
        uint64_t written_bytes;         /* what went to the swap */
        uint64_t usec;                  /* the write's time */
        uint64_t done_bytes, total_bytes; /* the last progress: how far a stopped write got */
} PowerImageWrite;

struct PowerBackend {
        const char *name;
        /* Whether it is the one for a cycle of `kind` (pm_test: a test run) */
        bool (*serves)(SleepKind kind, bool pm_test);
        /* Whether this kernel has it: from ctx->caps when they were read */
        bool (*probe)(const PowerContext *ctx);
        /* Why it cannot serve as configured and as things stand (owned), so
         * that the next backend does; NULL: it can. A NULL hook: always. */
        char *(*unusable)(const PowerContext *ctx);
        /* For CanSuspend and its siblings; *ret_reason (owned) is set, to
         * NULL for "yes" */
        PowerAnswer (*can)(const PowerContext *ctx, SleepKind kind, char **ret_reason);
        /* Before anything is flushed or frozen: 0, or a refusal with
         * *ret_message: FRIDGE_ERROR_NOT_SUPPORTED (this kernel cannot run
         * the cycle) or FRIDGE_ERROR_HIBERNATE_NOT_READY (a hibernation
         * image has nowhere to go, or the next boot would not find it). *ret_set_resume: the MAJ:MIN for sys/power/resume
         * the cycle must write, or NULL; it comes back in PowerCycle. */
        int (*check)(const PowerContext *ctx, const PowerCycle *cycle, char **ret_set_resume, char **ret_message);
        int (*prepare)(const PowerContext *ctx, PowerCycle *cycle, PowerRequest **ret);
        /* On the worker thread: touches nothing but the request. 0 when
         * the machine slept and resumed, else a negative errno, and
         * describe_failure says what happened. */
        int (*enter)(PowerRequest *r);
        /* On a worker thread too, after enter returned 0 and the loop has
         * thawed what it froze (what the user waits for comes first): what
         * is read and put back after the resume (wake_reason, the knobs).
         * Touches nothing but the request; NULL: enter did it all. */
        int (*finish)(PowerRequest *r);
        /* From the loop, while enter is blocked for good (fridged stops):
         * what enter would have put back afterwards. Reads only what enter
         * never changes. */
        void (*restore_after_abort)(const PowerRequest *r);
        /* After enter failed: how the cycle ends, and the message saying why */
        CycleResult (*describe_failure)(const PowerRequest *r, FridgeError *ret_error, char **ret_message);
        /* After enter failed: why trying again shortly may work, or NULL */
        const char *(*transient)(const PowerRequest *r);
        /* What the progress text says while enter runs: "mem, pm_test devices" */
        char *(*summary)(const PowerRequest *r);
        /* After enter succeeded: what the backend wants logged, or NULL */
        char *(*notes)(const PowerRequest *r);
        /* The image write's account (*ret zeroed first): after enter
         * returned, done or not, and from the loop while enter runs (how far
         * a write the cycle stops got). NULL: the backend writes no image of
         * its own. */
        void (*image_write)(const PowerRequest *r, PowerImageWrite *ret);
        void (*free)(PowerRequest *r);

        /* Hooks for a backend whose enter is long user-space work (writing
         * the image itself); NULL for the kernel's own. cancel runs on the
         * loop and makes enter return -ECANCELED soon; progress, also on
         * the loop, reads what enter publishes in its request (0.0 to 1.0,
         * and a text for the progress property). */
        int (*cancel)(PowerRequest *r);
        double (*progress)(const PowerRequest *r, char **ret_text);
        /* On the loop, after a cancel that returned 1 went unanswered for
         * the cycle's WriterCancelTimeoutMs of awake time: stop waiting for
         * the work, so enter returns -ECANCELED soon whatever it does */
        void (*abandon)(PowerRequest *r);
};

/* The built-in backends, in the order of preference */
extern const PowerBackend power_backend_tuxonice;
extern const PowerBackend power_backend_mainline;
extern const PowerBackend power_backend_userspace;

/* The first backend of ctx that serves the cycle and is present: as today,
 * TuxOnIce hibernates when it is there (unless pm_test asks for a test
 * run of the mainline kernel), the mainline kernel does everything else.
 * NULL only for a table without a catch-all. */
const PowerBackend *power_backend_select(const PowerContext *ctx, SleepKind kind, bool pm_test);

/* Whether the backend's kernel phase reports progress and takes Cancel */
bool power_backend_writes_image(const PowerBackend *b);

/* Who would write a hibernation image: "fridge" (fridge-image-writer),
 * "kernel" or "tuxonice". *ret_reason (owned): why fridge's writer is not
 * the one when the configuration asks for it, else NULL. */
const char *power_backend_hibernate_writer(const PowerContext *ctx, char **ret_reason);

/* The answer of the backend a real cycle of `kind` would use. *ret_reason
 * (owned) is NULL for "yes". */
PowerAnswer power_backend_can(const PowerContext *ctx, SleepKind kind, char **ret_reason);

/* The kinds whose answer is "yes" or "no" (offered by this kernel) */
char **power_backend_supported_kinds(const PowerContext *ctx);

/* The check (see PowerBackend.check) of the backend a real sleep of the
 * kind uses, whatever pm_test says (see power-backend.c) */
int power_backend_check(const PowerContext *ctx, const PowerCycle *cycle, char **ret_set_resume,
                        char **ret_message);

/* The selected backend's request for the cycle's kernel phase */
int power_request_new(const PowerContext *ctx, PowerCycle *cycle, PowerRequest **ret);
PowerRequest *power_request_free(PowerRequest *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PowerRequest, power_request_free)

/* The request's backend, for the worker (a WorkerFunc and WorkerFreeFunc) */
int power_request_enter(void *request);
/* After enter returned 0: the backend's finish (a WorkerFunc too) */
int power_request_finish(void *request);
void power_request_free_void(void *request);

void power_request_restore_after_abort(const PowerRequest *r);
CycleResult power_request_describe_failure(const PowerRequest *r, FridgeError *ret_error, char **ret_message);
const char *power_request_transient(const PowerRequest *r);
char *power_request_summary(const PowerRequest *r);
char *power_request_notes(const PowerRequest *r);
/* The backend's image_write, or a zeroed one */
PowerImageWrite power_request_image_write(const PowerRequest *r);
const char *power_request_backend_name(const PowerRequest *r);

/* While enter runs, from the loop. Cancel: 0 when enter will return
 * -ECANCELED soon, 1 when it was asked to stop and only enter's return
 * will tell whether it did (an image writer that may have frozen user
 * space, fridged included, before fridged read the Cancel: the machine
 * slept), -EINPROGRESS when the backend cannot stop it (the kernel's own:
 * the state write is the point of no return). Progress:
 * false when the backend reports none. */
int power_request_cancel(PowerRequest *r);
/* Stop waiting for a work that a cancel (1) did not stop; no-op for a
 * backend without the hook, or once enter has its result */
void power_request_abandon(PowerRequest *r);
bool power_request_progress(const PowerRequest *r, double *ret_fraction, char **ret_text);
