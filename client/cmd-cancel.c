/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cancel [CYCLE]: one Cancel call; 0 (the default) is the running cycle. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "fridge-error.h"
#include "i18n.h"
#include "json.h"
#include "polkit-agent.h"
#include "report.h"

static void print_requested(const Args *a) {
        JsonOut out;
        JsonObject j;

        if (a->quiet)
                return;
        if (!a->json) {
                if (a->cycle > 0)
                        printf(_("cancel requested for cycle %llu\n"), (unsigned long long) a->cycle);
                else
                        puts(_("cancel requested for the running cycle"));
                return;
        }
        json_object_begin(&j, json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY));
        json_object_add_string(&j, "event", "cancel-requested");
        json_object_add_u64(&j, "cycle", a->cycle);
        json_object_end(&j);
        json_out_end(&out);
}

int cmd_cancel(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        (void) polkit_agent_open(bus, !a->no_ask_password);
        r = sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "Cancel", &e, NULL,
                               "t", a->cycle);
        polkit_agent_close();
        if (r < 0 && !a->json && sd_bus_error_has_name(&e, fridge_error_name(FRIDGE_ERROR_TOO_LATE))) {
                fprintf(stderr, "fridgectl: %s\n", _("too late to cancel: the system is going to sleep"));
                return exit_code_for_call_error(e.name);
        }
        if (r < 0)
                return report_call_error(a, _("cannot cancel"), &e);
        print_requested(a);
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}
