/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* can-sleep [KIND]: CanSleep for this caller, for one kind or for each. */
#include <stdio.h>

#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "i18n.h"
#include "json.h"
#include "report.h"

static int can_sleep(const Args *a, sd_bus *bus, const char *kind, bool label) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *reply = NULL;
        const char *answer;
        char what[160];
        int r;

        r = sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "CanSleep", &e, &reply,
                               "s", kind);
        snprintf(what, sizeof(what), _("cannot ask whether %s is allowed"), kind);
        if (r < 0)
                return report_call_error(a, what, &e);
        r = sd_bus_message_read(reply, "s", &answer);
        if (r < 0)
                return report_errno(a, what, r);
        if (a->json) {
                JsonOut out;
                JsonObject j;
                json_object_begin(&j, json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY));
                json_object_add_string(&j, "kind", kind);
                json_object_add_string(&j, "answer", answer);
                json_object_end(&j);
                json_out_end(&out);
        } else if (label)
                printf("%-13s %s\n", kind, answer);
        else
                puts(answer);
        return EXIT_CODE_DONE;
}

int cmd_can_sleep(const Args *a, sd_bus *bus) {
        static const char *const kinds[] = { "suspend", "hibernate", "hybrid-sleep", NULL };
        int r = EXIT_CODE_DONE;

        if (a->sleep_kind)
                r = can_sleep(a, bus, a->sleep_kind, false);
        else
                for (size_t i = 0; kinds[i] && r == EXIT_CODE_DONE; i++)
                        r = can_sleep(a, bus, kinds[i], true);
        return fflush(stdout) == 0 ? r : EXIT_CODE_FAILED;
}
