/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan: GetPlan, as a table for people or as one JSON array. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "i18n.h"
#include "json.h"
#include "pager.h"
#include "plan-text.h"
#include "report.h"

/* Reads the a(ssss) into *ret (a malloc'd array whose strings point into
 * reply, so reply must outlive it). */
static int read_plan(sd_bus_message *reply, PlanEntry **ret, size_t *ret_n) {
        _cleanup_free_ PlanEntry *entries = NULL;
        size_t n = 0, allocated = 0;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(ssss)");
        if (r < 0)
                return r;
        for (;;) {
                PlanEntry e;

                r = sd_bus_message_read(reply, "(ssss)", &e.cgroup, &e.unit, &e.class_name, &e.reason);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (n == allocated) {
                        size_t m = allocated ? allocated * 2 : 16;
                        PlanEntry *p = reallocarray(entries, m, sizeof(*p));

                        if (!p)
                                return -ENOMEM;
                        entries = p;
                        allocated = m;
                }
                entries[n++] = e;
        }
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(entries);
        *ret_n = n;
        return 0;
}

static int print_plan(const Args *a, const PlanEntry *entries, size_t n) {
        _cleanup_free_ char *table = NULL;

        if (a->json) {
                JsonOut out;
                plan_write_json(json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY), entries, n);
                json_out_end(&out);
                return 0;
        }
        table = plan_format_table(entries, n, !a->no_legend);
        if (!table)
                return -ENOMEM;
        pager_open(a);
        fputs(table, stdout);
        return 0;
}

int cmd_plan(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *reply = NULL;
        _cleanup_free_ PlanEntry *entries = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "GetPlan", &e, &reply,
                               NULL);
        if (r < 0)
                return report_call_error(a, _("cannot read the plan"), &e);
        r = read_plan(reply, &entries, &n);
        if (r < 0)
                return report_errno(a, _("cannot parse fridged's plan"), r);
        r = print_plan(a, entries, n);
        if (r < 0)
                return report_errno(a, _("cannot show the plan"), r);
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}
