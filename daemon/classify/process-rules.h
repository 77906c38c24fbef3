/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

#include "classes.h"

/* classes.d's Processes= against the processes of one cgroup: an X11
 * session without user units runs Xorg in session-N.scope with every
 * application, so a unit name cannot say which cgroup holds the display. */

/* The reason of a cgroup that a Processes= rule at `source` ("PATH:LINE")
 * classed by the process `name` (pid); for a class that is not frozen,
 * `n_others` (the processes no rule of that class matched) are said to
 * stay running with it. */
char *process_rules_reason(const char *source, CgroupClass class, const char *name, pid_t pid, size_t n_others);

/* The basename of an exe link's target, without " (deleted)" (a binary
 * replaced by an upgrade still names its process); NULL for NULL or "". */
char *process_rules_exe_name(const char *target);

/* Reads the cgroup's processes (their comm and exe) and matches them.
 * Returns 1 with the class and the reason (g_free) when a rule matches,
 * 0 when none does, <0 when cgroup.procs cannot be read. Processes that
 * vanish meanwhile are left out. The reason, which names another user's
 * process, is filed in private_reasons (detect.h; may be NULL). */
int process_rules_match_cgroup(const ClassRules *rules, int cgroup_fd, int proc_fd, const char *cgroup_path,
                               GHashTable *private_reasons, CgroupClass *ret_class, char **ret_reason);
