/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* The fixture of the freezing tests (test-freeze, test-blockers, test-plot): scratch
 * cgroups a.service (early), b.service (late by classes.d), c.service
 * (nofreeze) with real processes and a writer in a.service, under a scratch
 * freeze root, and the real fridged on a private bus over fakesys. */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"
#include "scratch.h"

typedef struct Fixture {
        Harness *h;
        Scratch *s;
        const char *a, *b, *c; /* early by default, late by config, nofreeze by config */
        char *fuse_mount;      /* unmounted in teardown, whatever happened */
        char *writer_file;     /* what a.service's writer appends to */
        const char *stuck_comm; /* the fsync blocker's name (prctl); NULL: the test's own */
} Fixture;

typedef struct CaseOptions {
        const char *classes;      /* NULL: classes_conf */
        bool slowfs;
        const char *extra_config; /* appended to fridge.conf */
        const char *const *fakesys_args;
        bool unit_capabilities;   /* fridged with the installed unit's capabilities only */
        bool open_bus;            /* clients as uid 65534 */
        const char *polkit_table; /* NULL: no polkit on the bus */
} CaseOptions;

void freeze_fixture_setup(Fixture *f, gconstpointer data);
void freeze_fixture_teardown(Fixture *f, gconstpointer data);
#define SKIP_IF_UNSET(f) do { if (!(f)->h) return; } while (0)

uint64_t freeze_sleep_ok(Harness *h, const char *kind, const char *k1, const char *t1, int v1);
/* error NULL: any */
void freeze_expect_finished(Harness *h, uint64_t cycle, const char *result, const char *error);
void freeze_assert_none_frozen(Fixture *f);
/* Waits (bounded) until slowfs shows its control file on f->fuse_mount */
void freeze_wait_fuse_mount(Fixture *f);
/* Unmounts f->fuse_mount with fusermount3 and reaps its server */
void freeze_fuse_unmount(Fixture *f, pid_t server);
char *freeze_fridged_log(Harness *h);
/* Position of `needle` in the log; fails when absent */
gsize freeze_log_pos(const char *log, const char *needle);

/* GetPlan's rows */
typedef struct PlanRow {
        char *cgroup, *unit, *class, *reason;
} PlanRow;
/* PlanRow*, owning */
GPtrArray *freeze_get_plan(Harness *h);
/* The row of `cgroup`; fails when there is none */
const PlanRow *freeze_plan_find(GPtrArray *rows, const char *cgroup, int *ret_index);
