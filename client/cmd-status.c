/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* status: fridged's properties, for people or as one JSON object. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "bus-json.h"
#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "i18n.h"
#include "json.h"
#include "macro.h"
#include "pager.h"
#include "progress-bar.h"
#include "props.h"
#include "report.h"
#include "terminal.h"

static const char *or_dash(const char *s) {
        return s && *s ? s : "-";
}

static void print_field(FILE *f, const char *name, const char *value) {
        fprintf(f, "%16s: %s\n", name, or_dash(value));
}

/* "no (no swap device)" — the reason only when it is not "yes". */
static void print_can(FILE *f, const char *name, const char *can, const char *reason) {
        if (can && strcmp(can, "yes") != 0 && reason && *reason)
                fprintf(f, "%16s: %s (%s)\n", name, can, reason);
        else
                print_field(f, name, can);
}

/* Who writes a hibernation's image, and why not fridge's when it was asked for */
static void print_writer(FILE *f, const char *writer, const char *reason) {
        if (writer && reason && *reason)
                fprintf(f, "%16s: %s (%s)\n", "HibernateWriter", writer, reason);
        else
                print_field(f, "HibernateWriter", writer);
}

/* Whether the hibernation image's device is encrypted, with the notice
 * when it is not; nothing when the pre-flight chose no device */
static void print_encrypted(FILE *f, const char *encrypted, const char *warning) {
        if (!encrypted || !*encrypted)
                return;
        if (warning && *warning)
                fprintf(f, "%16s: %s (%s)\n", "ResumeEncrypted", encrypted, warning);
        else
                print_field(f, "ResumeEncrypted", encrypted);
}

static void print_kinds(FILE *f, char **kinds) {
        fprintf(f, "%16s:", "SupportedKinds");
        if (!kinds || !*kinds)
                fputs(" -", f);
        for (char **k = kinds; k && *k; k++)
                fprintf(f, " %s", *k);
        fputc('\n', f);
}

/* What the running cycle obeys, a few to a line */
static void print_settings(FILE *f, char **settings) {
        if (!settings || !*settings)
                return;
        size_t col = 0;
        for (char **s = settings; *s; s++) {
                if (col == 0 || col + strlen(*s) > 60) {
                        fprintf(f, "%s%16s:", col ? "\n" : "", s == settings ? "Settings" : "");
                        col = 0;
                }
                col += fprintf(f, " %s", *s);
        }
        fputc('\n', f);
}

static void print_human(FILE *f, const FridgeProps *p) {
        print_field(f, "State", p->state);
        if (p->cycle_id > 0 && p->kind && *p->kind)
                fprintf(f, "%16s: %llu (%s)\n", "Cycle", (unsigned long long) p->cycle_id, p->kind);
        else if (p->cycle_id > 0)
                fprintf(f, "%16s: %llu\n", "Cycle", (unsigned long long) p->cycle_id);
        else
                print_field(f, "Cycle", NULL);
        print_field(f, "Phase", p->phase);
        if (p->phase && *p->phase)
                fprintf(f, "%16s: %u%%%s%s\n", "Progress", progress_percent(p->progress),
                       p->progress_text && *p->progress_text ? " " : "", p->progress_text ? p->progress_text : "");
        else
                print_field(f, "Progress", NULL);
        print_settings(f, p->cycle_settings);
        print_can(f, "CanSuspend", p->can_suspend, p->can_suspend_reason);
        print_can(f, "CanHibernate", p->can_hibernate, p->can_hibernate_reason);
        print_can(f, "CanHybridSleep", p->can_hybrid_sleep, p->can_hybrid_sleep_reason);
        print_writer(f, p->hibernate_writer, p->hibernate_writer_reason);
        print_encrypted(f, p->hibernate_encrypted, p->hibernate_warning);
        print_kinds(f, p->supported_kinds);
        print_field(f, "LastResult", p->last_result);
        print_field(f, "LastWakeReason", p->last_wake_reason);
        print_field(f, "Version", p->version);
        print_field(f, "SleepFreeze", p->sleep_freeze);
        /* empty: a kernel before 6.16, which has no such file */
        print_field(f, "FreezeFilesystems", p->freeze_filesystems && *p->freeze_filesystems ? p->freeze_filesystems
                                                                                           : _("n/a (kernel)"));
}

/* Through the pager only when it would not fit the terminal */
static int print_paged(const Args *a, const FridgeProps *p) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0, lines = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return -ENOMEM;
        print_human(f, p);
        if (fclose(f) != 0)
                return -ENOMEM;
        for (const char *c = text; c && *c; c++)
                lines += *c == '\n';
        if (lines >= terminal_lines(STDOUT_FILENO))
                pager_open(a);
        fputs(text, stdout);
        return 0;
}

static int print_status(const Args *a, sd_bus_message *reply) {
        _cleanup_(fridge_props_done) FridgeProps p = {};
        int r;

        if (a->json) {
                JsonOut out;
                /* Straight from the dictionary, so every property fridged
                 * has appears, under its D-Bus name. */
                r = bus_json_write_value(reply, json_out_begin(&out, stdout,
                                                               a->json_format == JSON_FORMAT_PRETTY));
                json_out_end(&out);
                return r;
        }
        r = fridge_props_read(reply, &p, NULL);
        if (r < 0)
                return r;
        return print_paged(a, &p);
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
