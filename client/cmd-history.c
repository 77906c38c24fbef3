/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* history: ListCycles, newest first, as a table for people or as one JSON
 * array (every key fridged sends, newer ones included). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bus-dict.h"
#include "bus-json.h"
#include "bus-util.h"
#include "cmd.h"
#include "cycle-text.h"
#include "exit-code.h"
#include "fridge-error.h"
#include "i18n.h"
#include "json.h"
#include "macro.h"
#include "pager.h"
#include "report.h"

typedef struct HistoryRow {
        uint64_t id, start_usec, slept_usec;
        const char *kind, *result, *error, *phase, *message, *wake_source; /* borrowed from the reply */
        char **warnings;                /* owned */
        ImageWrite image;               /* a hibernation's; its writer borrowed */
} HistoryRow;

/* The keys of ListCycles' dictionaries the table shows */
static const struct {
        const char *name;
        char type;
        size_t offset;
} row_keys[] = {
        { "id",          't', offsetof(HistoryRow, id) },
        { "start-usec",  't', offsetof(HistoryRow, start_usec) },
        { "slept-usec",  't', offsetof(HistoryRow, slept_usec) },
        { "kind",        's', offsetof(HistoryRow, kind) },
        { "result",      's', offsetof(HistoryRow, result) },
        { "error",       's', offsetof(HistoryRow, error) },
        { "phase",       's', offsetof(HistoryRow, phase) },
        { "message",     's', offsetof(HistoryRow, message) },
        { "wake-source", 's', offsetof(HistoryRow, wake_source) },
        { "image-writer",        's', offsetof(HistoryRow, image.writer) },
        { "image-raw-bytes",     't', offsetof(HistoryRow, image.raw_bytes) },
        { "image-written-bytes", 't', offsetof(HistoryRow, image.written_bytes) },
        { "image-usec",          't', offsetof(HistoryRow, image.usec) },
        { "image-done-bytes",    't', offsetof(HistoryRow, image.done_bytes) },
        { "image-total-bytes",   't', offsetof(HistoryRow, image.total_bytes) },
};

static int read_warnings(sd_bus_message *m, HistoryRow *row) {
        int r = sd_bus_message_enter_container(m, 'v', "as");
        if (r == -ENXIO)
                return sd_bus_message_skip(m, "v");
        if (r < 0)
                return r;
        row->warnings = strv_free(row->warnings);
        r = sd_bus_message_read_strv(m, &row->warnings);
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_row_entry(sd_bus_message *m, const char *name, void *userdata) {
        if (strcmp(name, "warnings") == 0)
                return read_warnings(m, userdata);
        for (size_t i = 0; i < ELEMENTSOF(row_keys); i++) {
                if (strcmp(row_keys[i].name, name) != 0)
                        continue;
                const char signature[2] = { row_keys[i].type, 0 };
                int r = sd_bus_message_enter_container(m, 'v', signature);
                if (r == -ENXIO) /* another type than this client knows */
                        return sd_bus_message_skip(m, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_read_basic(m, row_keys[i].type, (char *) userdata + row_keys[i].offset);
                return r < 0 ? r : sd_bus_message_exit_container(m);
        }
        return sd_bus_message_skip(m, "v");
}

/* io.fridge.Fridge1.Error.Cancelled → Cancelled */
static const char *error_short(const char *name) {
        const char *dot = strrchr(strempty(name), '.');
        return dot ? dot + 1 : strempty(name);
}

static void print_row(const HistoryRow *r) {
        char start[32] = "-";
        time_t t = (time_t) (r->start_usec / 1000000);
        struct tm tm;
        if (r->start_usec > 0 && localtime_r(&t, &tm))
                strftime(start, sizeof(start), "%Y-%m-%d %H:%M:%S", &tm);
        _cleanup_free_ char *asleep = r->slept_usec > 0 || !isempty(r->wake_source) ? format_duration(r->slept_usec)
                                                                                     : NULL;
        printf("%6llu %-12s %-19s %-8s %-9s ", (unsigned long long) r->id, strempty(r->kind), start,
               strempty(r->result), asleep ? asleep : "-");
        if (isempty(r->error))
                printf("%s\n", isempty(r->wake_source) ? "-" : r->wake_source);
        else
                printf("%s%s%s: %s\n", strempty(r->phase), isempty(r->phase) ? "" : ": ", error_short(r->error),
                       strempty(r->message));
        /* under the row, where the eye goes on: what went wrong beside the result */
        _cleanup_free_ char *image = image_write_line(&r->image);
        if (image)
                printf("%6s %s\n", "", image);
        for (char **w = r->warnings; w && *w; w++)
                printf("%6s %s %s\n", "", _("warning:"), *w);
}

static int print_table(const Args *a, sd_bus_message *reply) {
        unsigned n = 0;
        int r = sd_bus_message_enter_container(reply, 'a', "a{sv}");
        if (r < 0)
                return r;
        pager_open(a);
        if (!a->no_legend)
                printf("%6s %-12s %-19s %-8s %-9s %s\n", "ID", "KIND", "START", "RESULT", "ASLEEP",
                       "WAKE SOURCE, OR PHASE: ERROR: MESSAGE");
        while ((r = sd_bus_message_at_end(reply, false)) == 0) {
                HistoryRow row = {};
                r = bus_dict_read(reply, read_row_entry, &row);
                if (r >= 0)
                        print_row(&row);
                strv_free(row.warnings);
                if (r < 0)
                        return r;
                n++;
        }
        if (r < 0)
                return r;
        if (!a->no_legend)
                printf(ngettext("%u cycle\n", "%u cycles\n", n), n);
        return sd_bus_message_exit_container(reply);
}

ImageWrite history_image_write(sd_bus *bus, uint64_t id) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *reply = NULL;
        HistoryRow row = {};
        int r = sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "ListCycles", &e,
                                   &reply, "u", 1u);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "a{sv}");
        if (r > 0 && sd_bus_message_at_end(reply, false) == 0)
                r = bus_dict_read(reply, read_row_entry, &row);
        strv_free(row.warnings);
        if (r < 0 || row.id != id)
                return (ImageWrite) {};
        row.image.writer = image_writer_name(row.image.writer);
        return row.image;
}

int cmd_history(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "ListCycles", &e, &reply,
                               "u", a->history_max);
        if (r < 0)
                return report_call_error(a, _("cannot list the past cycles"), &e);
        if (a->json) {
                JsonOut out;
                r = bus_json_write_value(reply, json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY));
                json_out_end(&out);
        } else
                r = print_table(a, reply);
        if (r < 0)
                return report_errno(a, _("cannot parse fridged's history"), r);
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}
