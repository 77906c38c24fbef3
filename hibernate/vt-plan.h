/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Which virtual terminal fridge-image-writer --console=vt draws on,
 * decided from what the kernel said without touching a terminal
 * (unit-tested); image-vt.c asks the kernel and switches. */

#include <stdbool.h>

/* The kernel's MAX_NR_CONSOLES: VTs are tty1 .. tty63 */
#define VT_PLAN_MAX 63

/* /sys/class/tty/tty0/active's "ttyN" (one trailing newline allowed): N,
 * 1 .. 63; -EINVAL for anything else (a serial "ttyS0", "tty0", "tty64") */
int vt_parse_active(const char *s);

/* What was seen before the freeze */
typedef struct VtSeen {
        int active;       /* the VT in front (sysfs, else VT_GETSTATE); 0: unknown */
        int free_vt;      /* VT_OPENQRY's answer: the first VT nobody has open; <= 0: none */
        bool active_text; /* the VT in front is in KD_TEXT (a console, no compositor) */
} VtSeen;

typedef enum VtPlanKind {
        VT_PLAN_NONE,   /* no bar: why says */
        VT_PLAN_SWITCH, /* switch to vt (free), back to seen->active after the write */
        VT_PLAN_STAY,   /* draw on vt, the text VT already in front: no switch */
} VtPlanKind;

typedef struct VtPlan {
        VtPlanKind kind;
        int vt;
        char why[128]; /* NONE and STAY: a sentence for the journal */
} VtPlan;

/* A free VT when there is one; else the one in front if it shows text;
 * else no bar (a compositor's VT takes no text) */
VtPlan vt_plan(const VtSeen *seen);
