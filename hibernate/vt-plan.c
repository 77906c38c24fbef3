/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vt-plan.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int vt_parse_active(const char *s) {
        if (strncmp(s, "tty", 3) != 0)
                return -EINVAL;
        s += 3;
        int n = 0;
        size_t digits = strspn(s, "0123456789");
        if (digits == 0 || digits > 2 || s[0] == '0')
                return -EINVAL;
        for (size_t i = 0; i < digits; i++)
                n = n * 10 + (s[i] - '0');
        const char *rest = s + digits;
        if (strcmp(rest, "") != 0 && strcmp(rest, "\n") != 0)
                return -EINVAL;
        return n <= VT_PLAN_MAX ? n : -EINVAL;
}

static bool vt_valid(int n) {
        return n >= 1 && n <= VT_PLAN_MAX;
}

VtPlan vt_plan(const VtSeen *seen) {
        VtPlan p = { .kind = VT_PLAN_NONE };
        if (!vt_valid(seen->active)) {
                snprintf(p.why, sizeof(p.why), "no virtual terminal is in front (none in this kernel?)");
                return p;
        }
        if (vt_valid(seen->free_vt) && seen->free_vt != seen->active)
                return (VtPlan) { .kind = VT_PLAN_SWITCH, .vt = seen->free_vt };
        if (seen->active_text) {
                p = (VtPlan) { .kind = VT_PLAN_STAY, .vt = seen->active };
                snprintf(p.why, sizeof(p.why), "no free virtual terminal: drawing on tty%d, in front and in text mode",
                         seen->active);
                return p;
        }
        snprintf(p.why, sizeof(p.why), "no free virtual terminal, and tty%d in front is graphical", seen->active);
        return p;
}
