/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "plan.h"

/* classes.d: [Early], [Late], [NoFreeze] groups with Units= (globs on unit
 * names, i.e. cgroup basenames) and Cgroups= (globs on paths relative to
 * the cgroup mount), ;-separated. */

typedef struct ClassRule {
        CgroupClass class;
        bool on_path;        /* Cgroups= (true) or Units= (false) */
        char *glob;
        char *source;        /* "PATH:LINE" for reasons and messages */
} ClassRule;

typedef struct ClassRules {
        GPtrArray *rules;    /* ClassRule* */
} ClassRules;

int class_rules_new(ClassRules **ret);
ClassRules *class_rules_free(ClassRules *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ClassRules, class_rules_free)
/* A deep copy, for a worker thread; NULL gives an empty set */
ClassRules *class_rules_copy(const ClassRules *r);

/* Loads DIR/\*.conf of each dir in `dirs` (NULL-terminated, e.g.
 * {"/usr/lib/fridge/classes.d", "/etc/fridge/classes.d"}); a file of the same
 * name in a later dir replaces the earlier one; files in name order. A bad
 * file (syntax error, unknown group or key, bad glob, a Cgroups= path with
 * ".." or a leading "/") is logged with its path and line and skipped as a
 * whole; the rest apply. *ret_problems counts skipped files. */
int class_rules_load(const char *const *dirs, ClassRules **ret, unsigned *ret_problems);

/* One file's text; returns 0 or -EINVAL (then nothing of it was added). */
int class_rules_add_text(ClassRules *r, const char *path, const char *text);

/* The class the rules give a cgroup itself (not its ancestors): when rules
 * of several classes match, nofreeze beats late beats early. Returns false
 * when none matches; *ret_source is the matching rule's "PATH:LINE". */
bool class_rules_match(const ClassRules *r, const char *cgroup_path, const char *unit, CgroupClass *ret_class,
                       const char **ret_source);

/* fnmatch-style glob without FNM_PATHNAME for units; with it for paths. */
bool class_glob_match(const char *glob, const char *s, bool path);
