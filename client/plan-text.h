/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `fridgectl plan` as pure functions of GetPlan's entries: the table for
 * people and the JSON array, so their layout is unit-tested. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One GetPlan entry; the strings are borrowed (from the reply). */
typedef struct PlanEntry {
        const char *cgroup;
        const char *unit;               /* "" when the cgroup names no unit */
        const char *class_name;         /* early|late|nofreeze|ui|skipped */
        const char *reason;
} PlanEntry;

/* A longer cgroup keeps its tail (the part that tells cgroups apart) behind
 * a leading "…", so the column is at most this wide. */
#define PLAN_CGROUP_MAX_COLUMNS 60

typedef struct PlanCounts {
        size_t early;
        size_t late;
        size_t nofreeze;
        size_t ui;                      /* kept running for the user interface */
        size_t skipped;                 /* could not be read: never frozen */
} PlanCounts;

PlanCounts plan_count(const PlanEntry *entries, size_t n);

/* "3 early, 2 late, 1 never frozen, 2 ui (kept running for the user
 * interface)" (no newline; the ui part only when there are some), then ", 1 skipped
 * (cannot be read)" when some are. Other classes are not counted. malloc'd, NULL on OOM. */
char *plan_summary_line(const PlanEntry *entries, size_t n);

/* The CGROUP cell: control characters and broken UTF-8 become '?', and
 * more than PLAN_CGROUP_MAX_COLUMNS columns become "…" plus the tail.
 * malloc'd, NULL on OOM. */
char *plan_cgroup_cell(const char *cgroup);

/* fridged hides another user's process from a caller other than root (pid
 * 0, the command and mount point FRIDGE_PLAN_HIDDEN): whether a reason of
 * the plan does, and the table's last line when one does */
bool plan_has_hidden(const PlanEntry *entries, size_t n);

/* The whole table: a header line (CGROUP, UNIT, CLASS, REASON), one line
 * per entry, then the summary line (and a note on FRIDGE_PLAN_HIDDEN when
 * plan_has_hidden()); every line ends in '\n'. Columns are
 * as wide as their widest cell and two spaces apart; REASON is last and
 * never cut; an empty cell shows "-". Without legend (--no-legend) the
 * entries' lines only. malloc'd, NULL on OOM. */
char *plan_format_table(const PlanEntry *entries, size_t n, bool legend);

/* [{"cgroup":…,"unit":…,"class":…,"reason":…},…] without a newline. */
void plan_write_json(FILE *f, const PlanEntry *entries, size_t n);
