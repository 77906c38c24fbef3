/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridgectl: the command-line client of fridged. Parses the command line,
 * connects, and hands over to one cmd_*() per command. */
#include <stdio.h>

#include "args.h"
#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "fridge-config.h"
#include "report.h"

static void print_help(FILE *f) {
        fputs("Usage: fridgectl [OPTIONS] COMMAND\n"
              "\n"
              "Control fridged, the suspend orchestration daemon.\n"
              "\n"
              "Commands:\n"
              "  status                 Show fridged's state and what this machine can do\n"
              "  suspend                Suspend to RAM and follow the cycle to its end\n"
              "  hibernate              Hibernate to disk and follow the cycle\n"
              "  hybrid-sleep           Hibernate, then suspend, and follow the cycle\n"
              "  cancel [CYCLE]         Cancel a cycle (default: the running one)\n"
              "  monitor                Print fridged's events until Ctrl-C\n"
              "  plan                   Show which cgroups are frozen early, late or never\n"
              "  hold CLASS -- CMD [ARGS...]\n"
              "                         Run CMD while its cgroup keeps CLASS (early|late|\n"
              "                         nofreeze|ui); exit with CMD's status\n"
              "  hook pre|post KIND     For systemd-sleep's hook: pre freezes for a sleep\n"
              "                         systemd writes, post thaws (KIND: suspend|\n"
              "                         hibernate|hybrid-sleep|suspend-then-hibernate)\n"
              "  hook budget            Print the sleep hook's budget in ms (HookBudgetMs)\n"
              "  inhibit -- CMD [ARGS...]\n"
              "                         Run CMD while holding an inhibitor (block: no cycle\n"
              "                         starts; delay: a cycle waits for CMD, bounded);\n"
              "                         exit with CMD's status\n"
              "  inhibitors             List the inhibitors held\n"
              "  plot [CYCLE]           Draw a cycle's timeline as SVG on stdout (default:\n"
              "                         the running or the last cycle)\n"
              "  can-sleep [KIND]       Whether you may sleep (KIND, or each): yes, no,\n"
              "                         challenge (a password is needed) or na\n"
              "  history                List past cycles, newest first (id, kind, start,\n"
              "                         result, time asleep, wake source; phase and error\n"
              "                         of a failed one)\n"
              "  cat-config             Show the configuration files fridged reads, in the\n"
              "                         order they apply (--root=DIR: under DIR)\n"
              "\n"
              "Options:\n"
              "  -h --help              Show this help\n"
              "     --version           Show the version\n"
              "     --bus=system|session  Bus to talk on (default: system)\n"
              "     --bus-address=ADDR  Connect to the bus at this D-Bus address\n"
              "     --json              JSON only on stdout: one object per line (plan and\n"
              "                         history: one array)\n"
              "     --no-progress       Plain lines instead of a progress bar\n"
              "\n"
              "Options for suspend, hibernate and hybrid-sleep:\n",
              f);
        args_print_sleep_options(f);
        fputs("\n"
              "Options for hold and inhibit:\n"
              "     --who=NAME          Who holds it (default: CMD's name)\n"
              "     --why=TEXT          Why (default: \"fridgectl hold\" or \"fridgectl inhibit\")\n"
              "     --mode=block|delay  inhibit only: the kind of inhibitor (default: block)\n"
              "\n"
              "Options for history:\n"
              "  -n --lines=N           Only the newest N cycles (default: all kept)\n"
              "\n"
              "On a terminal a progress bar is drawn; press Esc or Ctrl-C to cancel the\n"
              "cycle (Ctrl-C again: stop waiting and leave it running).\n"
              "\n"
              "Exit status:\n"
              "  0  done, dry-run, or the command succeeded\n"
              "  1  the cycle failed, fridged is not reachable, or another error\n"
              "  2  usage error (also InvalidArgs from fridged)\n"
              "  3  the cycle was aborted (cancelled)\n"
              "  4  fridged refused: Busy, NotSupported, Inhibited, HibernateNotReady,\n"
              "     TooLate, NoSuchCycle, AccessDenied; hold, inhibit: the class or the\n"
              "     inhibitor could not be held (CMD was not run)\n"
              "hold and inhibit otherwise exit with CMD's status (128+N if signal N ended\n"
              "it).\n",
              f);
}

static int run(const Args *a) {
        _cleanup_bus_ sd_bus *bus = NULL;
        char what[300];
        int r;

        r = bus_open(a, &bus);
        if (r < 0) {
                snprintf(what, sizeof(what), "cannot connect to %s", bus_description(a));
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

int main(int argc, char *argv[]) {
        char err[256];
        Args a;

        if (args_parse(argc, argv, &a, err, sizeof(err)) < 0) {
                fprintf(stderr, "fridgectl: %s\nTry 'fridgectl --help'.\n", err);
                return EXIT_CODE_USAGE;
        }
        if (a.help) {
                print_help(stdout);
                return EXIT_CODE_DONE;
        }
        if (a.version) {
                puts("fridgectl " FRIDGE_VERSION);
                return EXIT_CODE_DONE;
        }
        if (a.command == COMMAND_CAT_CONFIG)
                return cmd_cat_config(&a);
        return run(&a);
}
