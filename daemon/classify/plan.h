/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* The plan: which cgroups to write cgroup.freeze on, in which stage. A pure
 * function of (tree, classes), so it is unit-tested without a kernel. */

/* In the order of precedence when rules of several classes match a cgroup
 * (classes.c): the later wins. ui ranks above nofreeze although neither is
 * frozen by a stage: a cgroup that carries the user interface is kept
 * running for the same reason either way, but only "ui" tells the plan's
 * reader that the screen (or the caller's terminal) depends on it, and it
 * never freezes anything a nofreeze rule would have kept running. Both
 * rank above late and early: keeping a cgroup running that some rule wants
 * running is the safe mistake, freezing the display the unsafe one. */
typedef enum CgroupClass {
        CLASS_EARLY,
        CLASS_LATE,
        CLASS_NOFREEZE,
        CLASS_UI,           /* draws or carries the user interface: never frozen by a stage, the
                             * kernel's freezer takes it at the state write */
        _CLASS_MAX,
        _CLASS_INVALID = -1,
} CgroupClass;

const char *cgroup_class_to_string(CgroupClass c);   /* "early" | "late" | "nofreeze" | "ui" */
CgroupClass cgroup_class_from_string(const char *s); /* _CLASS_INVALID when unknown */

/* One cgroup of the input tree, already classified. */
typedef struct PlanNode {
        char *path;           /* relative to the cgroup mount: "user.slice/app.service" */
        CgroupClass class;    /* the class of this cgroup's own processes */
        char *reason;         /* why, for people: "default", "config /etc/…:3", "FUSE server of /mnt/x" */
        bool has_processes;   /* cgroup.procs is not empty */
        bool skipped;         /* could not be read (gone, unreadable): never frozen, nor any ancestor whole */
        GPtrArray *children;  /* PlanNode*, owned */
} PlanNode;

int plan_node_new(const char *path, CgroupClass class, const char *reason, bool has_processes, PlanNode **ret);
/* Adds child (taken) to parent; returns child. */
PlanNode *plan_node_add_child(PlanNode *parent, PlanNode *child);
/* Marks n skipped, with why for its reason ("cannot be read: …"). */
void plan_node_skip(PlanNode *n, const char *why);
/* Frees n and its subtree, however deep, without recursion. */
PlanNode *plan_node_free(PlanNode *n);
/* An array that owns the nodes it holds. */
GPtrArray *plan_node_array_new(void);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlanNode, plan_node_free)

/* Made by plan_build(): the strings live in the entry's own block, never freed
 * or replaced apart from it */
typedef struct PlanEntry {
        char *cgroup;        /* relative path */
        char *unit;          /* the cgroup's basename when it names a unit (*.service, *.scope, …), else "" */
        CgroupClass class;   /* CLASS_NOFREEZE when skipped */
        bool skipped;        /* could not be read: reported, never frozen */
        char *reason;
} PlanEntry;

typedef struct Plan {
        GPtrArray *entries;  /* PlanEntry*, in freeze order: every early, then every late, then nofreeze,
                              * then ui, then the skipped ones */
        unsigned n_early;
        unsigned n_late;
        unsigned n_ui;
        unsigned n_skipped;
} Plan;

Plan *plan_free(Plan *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Plan, plan_free)

/* Reduces the tree to the fewest cgroups to write. The roots are the freeze
 * roots (a forest). Only cgroups with processes, and leaves, decide whether
 * a subtree is uniform: an empty inner cgroup takes no side. A subtree that
 * is uniform is one entry at its top; a mixed one is split into its
 * children. An inner cgroup of a mixed subtree that has processes of its
 * own cannot be frozen without its children: it is listed as nofreeze with
 * a reason that says so (or as ui, with its own reason, when it is ui). A skipped node is listed as skipped and makes
 * every ancestor mixed, so none of them is frozen whole: their other
 * children are frozen one by one. Entries within a class are in path
 * order. Neither the depth nor the width of the tree is limited: the
 * walk keeps its own stack. */
Plan *plan_build(PlanNode *const *roots, size_t n_roots);

/* The unit name of a cgroup path: its basename when it ends in .service,
 * .scope, .slice, .socket, .mount, .swap, .target, .timer or .path, else "". */
const char *plan_unit_of(const char *cgroup_path);

/* An entry's class as GetPlan and the log name it: "skipped" for a
 * skipped one, else cgroup_class_to_string(). */
const char *plan_entry_class_name(const PlanEntry *e);
