/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridgectl: the command-line client of fridged. Parses the command line,
 * connects, and hands over to one cmd_*() per command; a pager they
 * opened is waited for at the end. Started as systemd-sleep's hook (a
 * link named "fridge"), it is the hook (sleep-hook.c). */
#include <stdio.h>

#include "args.h"
#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "fridge-config.h"
#include "i18n.h"
#include "pager.h"
#include "report.h"
#include "sleep-hook.h"

static int run(const Args *a) {
        _cleanup_bus_ sd_bus *bus = NULL;
        char what[300];
        int r;

        if (a->command == COMMAND_HOOK)
                cmd_hook_arm(a);
        r = bus_open(a, &bus);
        if (r < 0) {
                snprintf(what, sizeof(what), _("cannot connect to %s"), bus_description(a));
                r = report_errno(a, what, r);
                /* hold, inhibit: any failure before CMD runs is 4, CMD's own codes aside. */
                return a->command == COMMAND_HOLD || a->command == COMMAND_INHIBIT ? EXIT_CODE_REFUSED : r;
        }
        switch (a->command) {
        case COMMAND_STATUS:
                return cmd_status(a, bus);
        case COMMAND_SUSPEND:
        case COMMAND_HIBERNATE:
        case COMMAND_HYBRID_SLEEP:
                return cmd_sleep(a, bus);
        case COMMAND_CANCEL:
                return cmd_cancel(a, bus);
        case COMMAND_MONITOR:
                return cmd_monitor(a, bus);
        case COMMAND_PLAN:
                return cmd_plan(a, bus);
        case COMMAND_HOLD:
                return cmd_hold(a, bus);
        case COMMAND_HOOK:
                return cmd_hook(a, bus);
        case COMMAND_INHIBIT:
                return cmd_inhibit(a, bus);
        case COMMAND_INHIBITORS:
                return cmd_inhibitors(a, bus);
        case COMMAND_PLOT:
                return cmd_plot(a, bus);
        case COMMAND_CAN_SLEEP:
                return cmd_can_sleep(a, bus);
        case COMMAND_HISTORY:
                return cmd_history(a, bus);
        case COMMAND_CAT_CONFIG:
        case COMMAND_NONE:
                break;
        }
        return EXIT_CODE_USAGE;
}

static int fridgectl_main(int argc, char *argv[]) {
        char err[256];
        Args a;

        if (args_parse(argc, argv, &a, err, sizeof(err)) < 0) {
                fprintf(stderr, _("fridgectl: %s\nTry 'fridgectl --help'.\n"), err);
                return EXIT_CODE_USAGE;
        }
        if (a.help) {
                args_print_help(stdout);
                return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
        }
        if (a.version) {
                puts("fridgectl " FRIDGE_VERSION);
                return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
        }
        int r = a.command == COMMAND_CAT_CONFIG ? cmd_cat_config(&a) : run(&a);
        pager_close();
        return r;
}

int main(int argc, char *argv[]) {
        i18n_init();
        if (sleep_hook_invoked(argv[0]))
                return sleep_hook_main(argc, argv, fridgectl_main);
        return fridgectl_main(argc, argv);
}
