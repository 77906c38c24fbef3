/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "report.h"

#include <stdio.h>
#include <string.h>

#include "bus-util.h"
#include "exit-code.h"
#include "i18n.h"
#include "json.h"

/* With --json, an error is also an object on stdout: a reader of the
 * stream learns there why it ended */
static void print_json_error(const Args *a, const char *name, const char *message) {
        JsonOut out;
        JsonObject j;

        if (!a->json)
                return;
        json_object_begin(&j, json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY));
        json_object_add_string(&j, "event", "error");
        json_object_add_string(&j, "error", name);
        json_object_add_string(&j, "message", message);
        json_object_end(&j);
        json_out_end(&out);
}

int report_error(const Args *a, const char *name, const char *message, int exit_code) {
        print_json_error(a, name, message);
        fprintf(stderr, "fridgectl: %s\n", message);
        return exit_code;
}

int report_call_error(const Args *a, const char *what, const sd_bus_error *e) {
        const char *name = e->name ? e->name : SD_BUS_ERROR_FAILED;
        const char *message = e->message ? e->message : "";

        print_json_error(a, name, message);
        if (fridge_error_name_is_unreachable(name))
                /* Translators: what failed, the bus name, the bus (as "the system bus"), D-Bus's message */
                fprintf(stderr, _("fridgectl: %s: fridged (%s) is not reachable on %s: %s\n"),
                        what, FRIDGE_BUS_NAME, bus_description(a), message);
        else
                fprintf(stderr, "fridgectl: %s: %s: %s\n", what, error_short_name(name), message);
        return exit_code_for_call_error(name);
}

int report_errno(const Args *a, const char *what, int r) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        /* sd-bus names errnos ("System.Error.ENOENT"), which keeps the
         * JSON error field meaningful for local failures too. */
        char message[512];

        sd_bus_error_set_errno(&e, r);
        snprintf(message, sizeof(message), "%s: %s", what, e.message ? e.message : strerror(-r));
        return report_error(a, e.name ? e.name : "System.Error", message, EXIT_CODE_FAILED);
}
