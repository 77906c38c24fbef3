/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "classes.h"
#include "plan.h"

/* Gives every cgroup under the freeze roots a class and a reason, by the
 * design's precedence: built-in exemptions → runtime SetClass overrides and
 * HoldClass holds → classes.d rules (inherited by descendants) → detection
 * → early. The result feeds plan_build(). */

typedef struct ClassChoice {
        CgroupClass class;
        char *reason;
        bool runtime; /* from SetClass: outranks the classes.d rules of descendants */
} ClassChoice;

int class_choice_new(CgroupClass class, const char *reason, ClassChoice **ret);
ClassChoice *class_choice_free(ClassChoice *c);
/* path or unit → ClassChoice*, both owned by the table */
GHashTable *class_choice_table_new(void);

typedef struct ClassifyInput {
        int cgroup_fd;
        int proc_fd;
        char **roots;              /* freeze roots, relative */
        const ClassRules *rules;   /* may be NULL */
        GHashTable *exempt;        /* cgroup path → reason (char*): never frozen */
        GHashTable *overrides;     /* unit name or cgroup path → ClassChoice* (SetClass) */
        GHashTable *holds;         /* cgroup path → ClassChoice* (HoldClass) */
        bool detect;               /* run FUSE / sync detection */
        GHashTable *private_reasons; /* filled, may be NULL: who may read a detection's details (detect.h) */
} ClassifyInput;

/* Basenames that are never frozen wherever they are: the system's own
 * plumbing, without which nothing could wake up or log. */
bool classify_is_builtin_exempt(const char *unit);

/* Scans the roots (missing roots are skipped) into classified trees. */
int classify_tree(const ClassifyInput *in, GPtrArray **ret_roots /* PlanNode* */);

/* A deep copy of a table of ClassChoice*, for handing to a worker thread. */
GHashTable *classify_copy_choices(GHashTable *t);
