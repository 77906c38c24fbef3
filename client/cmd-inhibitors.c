/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inhibitors: ListInhibitors, as a table for people or as one JSON array. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "i18n.h"
#include "json.h"
#include "pager.h"
#include "report.h"

typedef struct InhibitorRow {
        const char *who, *why, *mode, *sender; /* borrowed from the reply */
        uint32_t uid, pid;
} InhibitorRow;

static void print_json_row(FILE *f, const InhibitorRow *r, bool first) {
        JsonObject j;

        if (!first)
                fputc(',', f);
        json_object_begin(&j, f);
        json_object_add_string(&j, "who", r->who);
        json_object_add_string(&j, "why", r->why);
        json_object_add_string(&j, "mode", r->mode);
        json_object_add_string(&j, "sender", r->sender);
        json_object_add_u64(&j, "uid", r->uid);
        json_object_add_u64(&j, "pid", r->pid);
        json_object_end(&j);
}

/* fridged refuses control characters in who and why, so the columns hold */
static void print_text_row(const InhibitorRow *r) {
        printf("%-24s %-5s %8u %6u %-12s %s\n", r->who, r->mode, (unsigned) r->pid, (unsigned) r->uid, r->sender,
               *r->why ? r->why : "-");
}

/* Prints the a(ssssuu) as it is read; the count of each mode. */
static int print_rows(const Args *a, sd_bus_message *reply, unsigned *ret_block, unsigned *ret_delay) {
        InhibitorRow r;
        unsigned n = 0;
        int k;

        JsonOut out;
        FILE *f = stdout;

        k = sd_bus_message_enter_container(reply, 'a', "(ssssuu)");
        if (k < 0)
                return k;
        if (a->json) {
                f = json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY);
                fputc('[', f);
        } else {
                pager_open(a);
                if (!a->no_legend)
                        printf("%-24s %-5s %8s %6s %-12s %s\n", "WHO", "MODE", "PID", "UID", "SENDER", "WHY");
        }
        while ((k = sd_bus_message_read(reply, "(ssssuu)", &r.who, &r.why, &r.mode, &r.sender, &r.uid, &r.pid)) > 0) {
                if (a->json)
                        print_json_row(f, &r, n == 0);
                else
                        print_text_row(&r);
                *(strcmp(r.mode, "delay") == 0 ? ret_delay : ret_block) += 1;
                n++;
        }
        if (a->json) {
                fputc(']', f);
                json_out_end(&out);
        }
        if (k < 0)
                return k;
        return sd_bus_message_exit_container(reply);
}

int cmd_inhibitors(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *reply = NULL;
        unsigned block = 0, delay = 0;
        int r;

        r = sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "ListInhibitors", &e,
                               &reply, NULL);
        if (r < 0)
                return report_call_error(a, _("cannot list the inhibitors"), &e);
        r = print_rows(a, reply, &block, &delay);
        if (r < 0)
                return report_errno(a, _("cannot parse fridged's inhibitors"), r);
        if (!a->json && !a->no_legend)
                /* Translators: the count of block and of delay inhibitors */
                printf(_("%u block, %u delay\n"), block, delay);
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}
