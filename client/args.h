/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Command-line parsing for fridgectl. Pure: no I/O (but the help it is
 * asked to write), no globals, so every accepted and rejected command line
 * is a unit test. The Sleep options come from the table in sleep-options.h. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sleep-options.h"

typedef enum Command {
        COMMAND_NONE,
        COMMAND_STATUS,
        COMMAND_SUSPEND,
        COMMAND_HIBERNATE,
        COMMAND_HYBRID_SLEEP,
        COMMAND_CANCEL,
        COMMAND_MONITOR,
        COMMAND_PLAN,
        COMMAND_HOLD,
        COMMAND_HOOK,
        COMMAND_INHIBIT,
        COMMAND_INHIBITORS,
        COMMAND_PLOT,
        COMMAND_CAN_SLEEP,
        COMMAND_HISTORY,
        COMMAND_CAT_CONFIG,
} Command;

typedef enum BusKind {
        BUS_KIND_SYSTEM,
        BUS_KIND_SESSION,
} BusKind;

typedef struct Args {
        Command command;
        BusKind bus;
        const char *bus_address;        /* borrowed from argv */
        bool json;
        bool no_progress;
        bool help;
        bool version;

        /* The Sleep options (sleep-options.h), only valid with suspend,
         * hibernate and hybrid-sleep; strings borrowed from argv */
        CycleOptions sleep;

        /* cancel [CYCLE]: 0 means the running cycle; plot [CYCLE]: the running or last one */
        uint64_t cycle;

        /* hold CLASS [--who=NAME] [--why=TEXT] -- CMD [ARGS…]
         * inhibit [--mode=MODE] [--who=NAME] [--why=TEXT] -- CMD [ARGS…] */
        const char *hold_class;         /* early|late|nofreeze|ui, borrowed from argv */
        const char *inhibit_mode;       /* block|delay; NULL: block */
        const char *who;                /* NULL: see args_hold_who() */
        const char *why;                /* NULL: see args_hold_why() */
        char *const *exec_argv;         /* CMD [ARGS…]: the rest of argv after "--",
                                         * NULL-terminated like argv itself */

        /* can-sleep [KIND]; NULL: every kind (borrowed) */
        const char *sleep_kind;
        /* history [-n N]: the newest N cycles; 0: every one kept */
        uint32_t history_max;

        /* hook pre|post KIND, as systemd-sleep passes them, or hook budget (borrowed) */
        const char *hook_when;
        const char *hook_kind;
        /* cat-config --root=DIR: the tree to search; NULL: the built-in directories */
        const char *root;
} Args;

/* Parses argv into *ret. On a usage error returns -EINVAL and writes a
 * one-line explanation (no trailing newline) into err. --help and
 * --version are only flagged; a command is not required with them. */
int args_parse(int argc, char *const *argv, Args *ret, char *err, size_t err_size);

/* Strict decimal parsers: digits only, no sign, no spaces, no overflow. */
int parse_u32(const char *s, uint32_t *ret);
int parse_u64(const char *s, uint64_t *ret);

bool command_is_sleep(Command c);

/* The D-Bus "kind" for a sleep command, NULL for the others. */
const char *command_sleep_kind(Command c);

/* early, late, nofreeze or ui: the classes HoldClass and GetPlan know. */
bool class_is_valid(const char *class_name);

/* hold's and inhibit's "who": --who, else the basename of CMD. */
const char *args_hold_who(const Args *a);
/* hold's and inhibit's "why": --why, else "fridgectl hold" or
 * "fridgectl inhibit". */
const char *args_hold_why(const Args *a);
/* inhibit's mode: --mode, else "block". */
const char *args_inhibit_mode(const Args *a);

/* The lines of --help for the Sleep options, from their table */
void args_print_sleep_options(FILE *f);
