/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

#include "plan.h"

/* classes.d: [Early], [Late], [NoFreeze], [UI] groups with Units= (globs on
 * unit names, i.e. cgroup basenames), Cgroups= (globs on paths relative to
 * the cgroup mount), Processes= (globs on a process's command name or
 * its executable's basename) and Commands= ("NAME ARG": a Processes= glob,
 * a space, and a glob one of the process's arguments must match: gjs runs
 * GNOME's notification proxy and many applications), ;-separated. */

typedef enum ClassRuleOn {
        RULE_ON_UNIT,        /* Units= */
        RULE_ON_PATH,        /* Cgroups= */
        RULE_ON_PROCESS,     /* Processes=: a cgroup's own processes, never inherited */
        RULE_ON_COMMAND,     /* Commands=: as Processes=, and one argument */
        _RULE_ON_MAX,
} ClassRuleOn;

typedef struct ClassRule {
        CgroupClass class;
        ClassRuleOn on;
        char *glob;
        char *arg_glob;      /* Commands=' argument glob, else NULL */
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

/* Loads DIR/\*.conf of each dir in `dirs` (NULL-terminated, highest
 * priority first, e.g. {"/etc/fridge/classes.d", "/usr/lib/fridge/classes.d"});
 * a file of the same name in an earlier dir hides the later one, an empty
 * or /dev/null one masks (conf-files.h); files in name order. A bad
 * file (syntax error, unknown group or key, bad glob, a Cgroups= path with
 * ".." or a leading "/") is logged with its path and line and skipped as a
 * whole; the rest apply. *ret_problems counts skipped files. */
int class_rules_load(const char *const *dirs, ClassRules **ret, unsigned *ret_problems);

/* One file's text; returns 0 or -EINVAL (then nothing of it was added). */
int class_rules_add_text(ClassRules *r, const char *path, const char *text);

/* The class the Units= and Cgroups= rules give a cgroup itself (not its
 * ancestors): when rules of several classes match, the later CgroupClass
 * wins (ui, nofreeze, late, early; plan.h says why). Returns false when
 * none matches; *ret_source is the matching rule's "PATH:LINE". */
bool class_rules_match(const ClassRules *r, const char *cgroup_path, const char *unit, CgroupClass *ret_class,
                       const char **ret_source);

/* One process of a cgroup as Processes= sees it */
typedef struct ClassProcess {
        pid_t pid;
        const char *comm;    /* /proc/PID/comm, borrowed */
        const char *exe;     /* basename of /proc/PID/exe, borrowed; NULL when unreadable */
        char *const *args;   /* its arguments after argv[0], borrowed; NULL when not read */
} ClassProcess;

/* Whether any rule is a Processes= or Commands= one (else no process
 * need be read) */
bool class_rules_have_processes(const ClassRules *r);

/* Whether a Commands= rule names p's command or executable: only then
 * are its arguments read (/proc/PID/cmdline) */
bool class_rules_want_args(const ClassRules *r, const ClassProcess *p);

/* The best Processes= rule that matches one of `procs` (its comm or its
 * exe), ranked as class_rules_match() ranks; *ret_index is the first
 * process it matches, *ret_n_class how many of `procs` a Processes= rule
 * of that class matches. Returns false when none matches. */
bool class_rules_match_processes(const ClassRules *r, const ClassProcess *procs, size_t n_procs,
                                 CgroupClass *ret_class, const char **ret_source, size_t *ret_index,
                                 size_t *ret_n_class);

/* fnmatch-style glob without FNM_PATHNAME for units; with it for paths. */
bool class_glob_match(const char *glob, const char *s, bool path);
