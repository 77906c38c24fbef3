/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fridged's command line, declared once: getopt_long's table and --help
 * are made from fridged_options[], and a unit test holds fridged(8) to it,
 * so an option cannot be parsed without being documented, nor documented
 * after it went. */

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

typedef enum FridgedOptionId {
        FRIDGED_OPTION_VERBOSE = 'v',
        FRIDGED_OPTION_HELP = 'h',
        FRIDGED_OPTION_BUS = 0x100,
        FRIDGED_OPTION_BUS_ADDRESS,
        FRIDGED_OPTION_SYSFS_ROOT,
        FRIDGED_OPTION_PROC_ROOT,
        FRIDGED_OPTION_CONFIG_ROOT,
        FRIDGED_OPTION_CONFIG_DIR,
        FRIDGED_OPTION_VENDOR_DIR,
        FRIDGED_OPTION_CGROUP_ROOT,
        FRIDGED_OPTION_STATE_DIR,
        FRIDGED_OPTION_PERSISTENT_DIR,
        FRIDGED_OPTION_SLEEP_CONF_ROOT,
        FRIDGED_OPTION_THAW_ALL,
        FRIDGED_OPTION_VERSION,
} FridgedOptionId;

typedef struct FridgedOption {
        const char *name;    /* the long name, without "--" */
        int id;              /* what getopt_long returns: the short letter when there is one */
        const char *metavar; /* the argument as --help shows it; NULL: none */
        const char *help;    /* --help's text; "\n" breaks a line */
} FridgedOption;

/* Room enough for getopt's copy of the table */
#define FRIDGED_OPTIONS_MAX 32

extern const FridgedOption fridged_options[];
extern const size_t fridged_options_count;

/* getopt_long's arguments: `longopts` holds FRIDGED_OPTIONS_MAX + 1
 * entries, `shortopts` 2 * FRIDGED_OPTIONS_MAX + 1 bytes */
void fridged_options_getopt(struct option *longopts, char *shortopts);
/* The option list of --help */
void fridged_options_help(FILE *f);
