/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Command-line parsing for fridgectl. Pure: no I/O (but the help it is
 * asked to write), no globals, so every accepted and rejected command line
 * is a unit test. One table of commands and one of options (the Sleep
 * options come from the table in sleep-options.h) drive getopt_long, the
 * scope errors, --help (args-help.c) and the tests that hold the man page
 * and the shell completions to them. */

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

typedef enum JsonFormat {
        JSON_FORMAT_OFF,
        JSON_FORMAT_SHORT,      /* one object (or array) a line */
        JSON_FORMAT_PRETTY,     /* indented, one after another */
} JsonFormat;

typedef enum BusKind {
        BUS_KIND_SYSTEM,
        BUS_KIND_SESSION,
} BusKind;

typedef struct Args {
        Command command;
        BusKind bus;
        const char *bus_address;        /* borrowed from argv */
        bool json;                      /* json_format is not off */
        JsonFormat json_format;
        bool no_progress;
        bool quiet;                     /* -q: exit codes and errors only */
        bool no_legend;                 /* listings without header and footer */
        bool no_pager;
        bool no_ask_password;           /* no pkttyagent, no interactive polkit */
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

/* The commands an option means something to. */
typedef enum ArgsScope {
        ARGS_SCOPE_ANY,
        ARGS_SCOPE_SLEEP,       /* suspend, hibernate, hybrid-sleep */
        ARGS_SCOPE_HOLDER,      /* hold, inhibit: who holds and why */
        ARGS_SCOPE_INHIBIT,
        ARGS_SCOPE_HISTORY,
        ARGS_SCOPE_CAT_CONFIG,
        _ARGS_SCOPE_MAX,
} ArgsScope;

/* One of fridgectl's own options (the Sleep options have their table). */
typedef struct ArgsOption {
        const char *name;       /* --NAME */
        char short_name;        /* -C too; 0: none */
        int has_arg;            /* getopt's no_argument, required_argument, optional_argument */
        ArgsScope scope;
        int id;
        const char *metavar;    /* --NAME=METAVAR (--NAME[=METAVAR] if optional); NULL: none */
        const char *help;       /* one sentence for --help */
} ArgsOption;

extern const ArgsOption args_options[];
extern const size_t args_options_count;

typedef struct ArgsCommand {
        const char *name;
        Command command;
        const char *synopsis;   /* what follows the name; "" if nothing */
        const char *help;
        bool hidden;            /* not offered: hook is the sleep hook's */
} ArgsCommand;

extern const ArgsCommand args_commands[];
extern const size_t args_commands_count;

/* "suspend, hibernate and hybrid-sleep": what a scope's options apply to */
const char *args_scope_commands(ArgsScope scope);

/* Parses argv into *ret. No command means status. On a usage error returns -EINVAL and writes a
 * one-line explanation (no trailing newline) into err. --help and
 * --version are only flagged. getopt_long permutes nothing here (it
 * stops at each word that is not an option), but argv is passed on to it. */
int args_parse(int argc, char **argv, Args *ret, char *err, size_t err_size);

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

/* --help, from the tables (args-help.c) */
void args_print_help(FILE *f);
/* The lines of --help for the Sleep options, from their table */
void args_print_sleep_options(FILE *f);
