/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "report.h"

#include <stdio.h>
#include <string.h>

#include "bus-util.h"
#include "exit-code.h"
#include "i18n.h"
#include "json.h"

static void print_json_error(const char *name, const char *message) {
        JsonObject j;

        json_object_begin(&j, stdout);
        json_object_add_string(&j, "event", "error");
        json_object_add_string(&j, "error", name);
        json_object_add_string(&j, "message", message);
        json_object_end(&j);
        fputc('\n', stdout);
        fflush(stdout);
}

int report_error(const Args *a, const char *name, const char *message, int exit_code) {
        if (a->json)
                print_json_error(name, message);
        else
                fprintf(stderr, "fridgectl: %s\n", message);
        return exit_code;
}

int report_call_error(const Args *a, const char *what, const sd_bus_error *e) {
        const char *name = e->name ? e->name : SD_BUS_ERROR_FAILED;
        const char *message = e->message ? e->message : "";

        if (a->json)
                print_json_error(name, message);
        else if (fridge_error_name_is_unreachable(name))
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
