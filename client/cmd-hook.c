/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hook pre|post KIND: what fridge's system-sleep hook runs around
 * systemd-sleep's state write. One Hook call, bounded by the hook's budget
 * (fridge-limits.h): fridged gives up on the pre before this call does,
 * and this call before the hook script kills us. hook budget: the budget
 * the script derives its own limit from. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "fridge-limits.h"
#include "json.h"
#include "report.h"

#define USEC_PER_MSEC 1000ULL

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

/* HookBudgetMs, asked within HOOK_QUERY_MS: a fridged that cannot answer
 * a property that fast will not freeze in time either */
static int read_budget(sd_bus *bus, uint32_t *ret) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *call = NULL, *reply = NULL;
        int r = sd_bus_message_new_method_call(bus, &call, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                               "org.freedesktop.DBus.Properties", "Get");
        if (r >= 0)
                r = sd_bus_message_append(call, "ss", FRIDGE_INTERFACE, "HookBudgetMs");
        if (r >= 0)
                r = sd_bus_call(bus, call, HOOK_QUERY_MS * USEC_PER_MSEC, &e, &reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "v", "u", ret);
        if (r >= 0 && (*ret < HOOK_TIMEOUT_MIN_MS || *ret > HOOK_TIMEOUT_MAX_MS))
                r = -ERANGE;
        return r < 0 ? r : 0;
}

static int print_budget(const Args *a, sd_bus *bus) {
        uint32_t budget;
        int r = read_budget(bus, &budget);
        if (r < 0)
                return report_errno(a, "cannot read the sleep hook's budget (HookBudgetMs)", r);
        if (!a->json)
                printf("%u\n", budget);
        else {
                JsonOut out;
                JsonObject j;
                json_object_begin(&j, json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY));
                json_object_add_u64(&j, "budget-ms", budget);
                json_object_add_u64(&j, "call-timeout-ms", hook_call_timeout_ms(budget));
                json_object_add_u64(&j, "fridged-wait-ms", hook_pre_wait_ms(budget));
                json_object_end(&j);
                json_out_end(&out);
        }
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}

static void print_done(const Args *a, uint64_t cycle) {
        JsonOut out;
        JsonObject j;
        bool pre = strcmp(a->hook_when, "pre") == 0;

        if (a->quiet)
                return;
        if (!a->json) {
                printf("cycle %llu %s\n", (unsigned long long) cycle,
                       pre ? "frozen: systemd-sleep may sleep" : "resumed and thawed");
                return;
        }
        json_object_begin(&j, json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY));
        json_object_add_string(&j, "event", pre ? "hook-pre-done" : "hook-post-done");
        json_object_add_u64(&j, "cycle", cycle);
        json_object_end(&j);
        json_out_end(&out);
}

int cmd_hook(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *call = NULL, *reply = NULL;
        uint64_t cycle;
        char what[64];

        if (strcmp(a->hook_when, "budget") == 0)
                return print_budget(a, bus);

        /* The call's share of the budget counts from our start: the
         * question for the budget comes out of it */
        uint64_t start = now_usec();
        uint32_t budget;
        if (read_budget(bus, &budget) < 0)
                budget = HOOK_TIMEOUT_DEFAULT_MS;
        uint64_t timeout = (uint64_t) hook_call_timeout_ms(budget) * USEC_PER_MSEC;
        uint64_t spent = now_usec() - start;
        timeout = spent < timeout ? timeout - spent : 1;

        int r = sd_bus_message_new_method_call(bus, &call, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                               "Hook");
        if (r >= 0)
                r = sd_bus_message_append(call, "ss", a->hook_when, a->hook_kind);
        if (r < 0)
                return report_errno(a, "cannot build the Hook call", r);
        snprintf(what, sizeof(what), "hook %s %s", a->hook_when, a->hook_kind);
        r = sd_bus_call(bus, call, timeout, &e, &reply);
        if (r < 0)
                return report_call_error(a, what, &e);
        r = sd_bus_message_read(reply, "t", &cycle);
        if (r < 0)
                return report_errno(a, what, r);
        print_done(a, cycle);
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}
