/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* status: fridged's properties, for people or as one JSON object. */
#include <stdio.h>
#include <string.h>

#include "bus-json.h"
#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "i18n.h"
#include "progress-bar.h"
#include "props.h"
#include "report.h"

static const char *or_dash(const char *s) {
        return s && *s ? s : "-";
}

static void print_field(const char *name, const char *value) {
        printf("%16s: %s\n", name, or_dash(value));
}

/* "no (no swap device)" — the reason only when it is not "yes". */
static void print_can(const char *name, const char *can, const char *reason) {
        if (can && strcmp(can, "yes") != 0 && reason && *reason)
                printf("%16s: %s (%s)\n", name, can, reason);
        else
                print_field(name, can);
}

static void print_kinds(char **kinds) {
        printf("%16s:", "SupportedKinds");
        if (!kinds || !*kinds)
                fputs(" -", stdout);
        for (char **k = kinds; k && *k; k++)
                printf(" %s", *k);
        fputc('\n', stdout);
}

/* What the running cycle obeys, a few to a line */
static void print_settings(char **settings) {
        if (!settings || !*settings)
                return;
        size_t col = 0;
        for (char **s = settings; *s; s++) {
                if (col == 0 || col + strlen(*s) > 60) {
                        printf("%s%16s:", col ? "\n" : "", s == settings ? "Settings" : "");
                        col = 0;
                }
                col += printf(" %s", *s);
        }
        fputc('\n', stdout);
}

static void print_human(const FridgeProps *p) {
        print_field("State", p->state);
        if (p->cycle_id > 0 && p->kind && *p->kind)
                printf("%16s: %llu (%s)\n", "Cycle", (unsigned long long) p->cycle_id, p->kind);
        else if (p->cycle_id > 0)
                printf("%16s: %llu\n", "Cycle", (unsigned long long) p->cycle_id);
        else
                print_field("Cycle", NULL);
        print_field("Phase", p->phase);
        if (p->phase && *p->phase)
                printf("%16s: %u%%%s%s\n", "Progress", progress_percent(p->progress),
                       p->progress_text && *p->progress_text ? " " : "", p->progress_text ? p->progress_text : "");
        else
                print_field("Progress", NULL);
        print_settings(p->cycle_settings);
        print_can("CanSuspend", p->can_suspend, p->can_suspend_reason);
        print_can("CanHibernate", p->can_hibernate, p->can_hibernate_reason);
        print_can("CanHybridSleep", p->can_hybrid_sleep, p->can_hybrid_sleep_reason);
        print_kinds(p->supported_kinds);
        print_field("LastResult", p->last_result);
        print_field("LastWakeReason", p->last_wake_reason);
        print_field("Version", p->version);
        print_field("SleepFreeze", p->sleep_freeze);
}

static int print_status(const Args *a, sd_bus_message *reply) {
        _cleanup_(fridge_props_done) FridgeProps p = {};
        int r;

        if (a->json) {
                /* Straight from the dictionary, so every property fridged
                 * has appears, under its D-Bus name. */
                r = bus_json_write_value(reply, stdout);
                fputc('\n', stdout);
                return r;
        }
        r = fridge_props_read(reply, &p, NULL);
        if (r < 0)
                return r;
        print_human(&p);
        return 0;
}

int cmd_status(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, "org.freedesktop.DBus.Properties",
                               "GetAll", &e, &reply, "s", FRIDGE_INTERFACE);
        if (r < 0)
                return report_call_error(a, _("cannot read the status"), &e);
        r = print_status(a, reply);
        if (r < 0)
                return report_errno(a, _("cannot parse fridged's properties"), r);
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}
