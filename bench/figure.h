/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* One figure against its goal, as a line tools/bench --json and --record
 * read ("GOAL key value unit op goal met|NOT-met"); the human lines stay
 * as they are beside it. */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static inline bool bench_goal(const char *key, double value, const char *unit, const char *op, double goal) {
        bool met = strcmp(op, "<=") == 0 ? value <= goal : value >= goal;
        printf("GOAL %s %.3f %s %s %.3f %s\n", key, value, unit, op, goal, met ? "met" : "NOT-met");
        fflush(stdout);
        return met;
}

/* A figure with no goal of its own (printed so the history keeps it) */
static inline void bench_figure(const char *key, double value, const char *unit) {
        printf("GOAL %s %.3f %s none 0 -\n", key, value, unit);
        fflush(stdout);
}
