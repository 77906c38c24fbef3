/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "classes.h"
#include "detect-cache.h"
#include "plan.h"

/* Gives every cgroup under the freeze roots a class and a reason, by the
 * design's precedence: exemptions → the caller's ui cgroups → built-in
 * exemptions → runtime SetClass overrides and HoldClass holds → classes.d
 * rules (Units= and Cgroups= inherited by descendants, Processes= not; of
 * several that match, the higher class) → detection → early. The result feeds plan_build(). */

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
        GHashTable *ui;            /* cgroup path → reason (char*): class ui (the caller, its terminal) */
        GHashTable *overrides;     /* unit name or cgroup path → ClassChoice* (SetClass) */
        GHashTable *holds;         /* cgroup path → ClassChoice* (HoldClass) */
        bool detect;               /* run FUSE / sync detection */
        bool no_fuse;              /* no FUSE connection exists: no fd table is read for /dev/fuse */
        DetectCache *cache;        /* may be NULL: what fd tables held, kept from walk to walk */
        const char *fuse_connections; /* detect_fuse_connections()'s, part of the cache's token; may be NULL */
        GHashTable *private_reasons; /* filled, may be NULL: who may read a detection's details (detect.h) */
        /* Tests: called after each cgroup is read, before its children are
         * (to remove or spoil one mid-walk); NULL in fridged */
        void (*after_read)(const char *path, void *userdata);
        void *after_read_userdata;
} ClassifyInput;

/* The system's own plumbing, never frozen: init.scope, journald, logind,
 * udevd and the system bus in system.slice, and each user's manager
 * (user.slice/user-UID.slice/user@UID.service/init.scope) and session bus
 * (dbus.service or dbus-broker.service in one of that manager's slices).
 * Matched by place: a cgroup elsewhere merely named like one is frozen as
 * its class says. Returns what it is, for the reason, or NULL. */
const char *classify_builtin_exemption(const char *path);

/* Scans the roots (missing roots are skipped) into classified trees, of
 * any depth and width. A cgroup that vanishes or cannot be read is a
 * skipped node (PlanNode.skipped), logged, never a failure. */
int classify_tree(const ClassifyInput *in, GPtrArray **ret_roots /* PlanNode* */);

/* A deep copy of a table of ClassChoice*, for handing to a worker thread. */
GHashTable *classify_copy_choices(GHashTable *t);
