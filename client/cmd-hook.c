/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hook pre|post KIND: what fridge's system-sleep hook runs around
 * systemd-sleep's state write. One Hook call, bounded in time: systemd-sleep
 * waits for its hooks, and the hook script hides our status. */
#include <stdio.h>
#include <string.h>

#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "json.h"
#include "report.h"

/* Below the hook script's own 60 s bound, so a slow fridged is reported
 * by us rather than cut short by timeout(1) */
#define HOOK_CALL_TIMEOUT_USEC (50ULL * 1000 * 1000)

static void print_done(const Args *a, uint64_t cycle) {
        JsonObject j;
        bool pre = strcmp(a->hook_when, "pre") == 0;

        if (!a->json) {
                printf("cycle %llu %s\n", (unsigned long long) cycle,
                       pre ? "frozen: systemd-sleep may sleep" : "resumed and thawed");
                return;
        }
        json_object_begin(&j, stdout);
        json_object_add_string(&j, "event", pre ? "hook-pre-done" : "hook-post-done");
        json_object_add_u64(&j, "cycle", cycle);
        json_object_end(&j);
        fputc('\n', stdout);
}

int cmd_hook(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *call = NULL, *reply = NULL;
        uint64_t cycle;
        char what[64];

        int r = sd_bus_message_new_method_call(bus, &call, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                               "Hook");
        if (r >= 0)
                r = sd_bus_message_append(call, "ss", a->hook_when, a->hook_kind);
        if (r < 0)
                return report_errno(a, "cannot build the Hook call", r);
        snprintf(what, sizeof(what), "hook %s %s", a->hook_when, a->hook_kind);
        r = sd_bus_call(bus, call, HOOK_CALL_TIMEOUT_USEC, &e, &reply);
        if (r < 0)
                return report_call_error(a, what, &e);
        r = sd_bus_message_read(reply, "t", &cycle);
        if (r < 0)
                return report_errno(a, what, r);
        print_done(a, cycle);
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}
