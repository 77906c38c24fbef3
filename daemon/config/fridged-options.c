/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fridged-options.h"

#include <stdbool.h>
#include <string.h>

#include "fridge-config.h"
#include "macro.h"

const FridgedOption fridged_options[] = {
        { "bus", FRIDGED_OPTION_BUS, "system|session", "the bus to own the name on (default system)" },
        { "bus-address", FRIDGED_OPTION_BUS_ADDRESS, "ADDR", "connect to this bus address instead" },
        { "sysfs-root", FRIDGED_OPTION_SYSFS_ROOT, "DIR", "where the kernel's sys/ is found (default /)" },
        { "proc-root", FRIDGED_OPTION_PROC_ROOT, "DIR", "where proc is mounted (default /proc)" },
        { "config-root", FRIDGED_OPTION_CONFIG_ROOT, "DIR",
          "search the configuration in DIR/etc/fridge, DIR/run/fridge,\n"
          "DIR/usr/local/lib/fridge and DIR/usr/lib/fridge\n"
          "(default " FRIDGE_CONFIG_DIR ", /run/fridge, /usr/local/lib/fridge,\n"
          FRIDGE_VENDOR_DIR ")" },
        { "config-dir", FRIDGED_OPTION_CONFIG_DIR, "DIR", "the first of them, the administrator's" },
        { "vendor-dir", FRIDGED_OPTION_VENDOR_DIR, "DIR", "the last of them, the vendor's defaults" },
        { "cgroup-root", FRIDGED_OPTION_CGROUP_ROOT, "DIR", "the cgroup v2 mount (default: found in mountinfo)" },
        { "state-dir", FRIDGED_OPTION_STATE_DIR, "DIR",
          "where the ledger of frozen cgroups is (default /run/fridge)" },
        { "persistent-dir", FRIDGED_OPTION_PERSISTENT_DIR, "DIR",
          "the running cycle's record, cycle ids and the history: what\n"
          "outlives a reboot (default /var/lib/fridge)" },
        { "sleep-conf-root", FRIDGED_OPTION_SLEEP_CONF_ROOT, "DIR",
          "where systemd-sleep's etc/systemd/sleep.conf is (default /)" },
        { "thaw-all", FRIDGED_OPTION_THAW_ALL, NULL,
          "thaw what the ledger lists, put back the kernel settings an\n"
          "interrupted cycle changed, then exit" },
        { "verbose", FRIDGED_OPTION_VERBOSE, NULL, "debug messages" },
        { "help", FRIDGED_OPTION_HELP, NULL, "this text" },
        { "version", FRIDGED_OPTION_VERSION, NULL, "the version" },
};
const size_t fridged_options_count = ELEMENTSOF(fridged_options);
_Static_assert(ELEMENTSOF(fridged_options) <= FRIDGED_OPTIONS_MAX, "FRIDGED_OPTIONS_MAX is too small");

static bool has_short(const FridgedOption *o) {
        return o->id < 0x100;
}

void fridged_options_getopt(struct option *longopts, char *shortopts) {
        for (size_t i = 0; i < fridged_options_count; i++) {
                const FridgedOption *o = &fridged_options[i];
                longopts[i] = (struct option) { o->name, o->metavar ? required_argument : no_argument, NULL, o->id };
                if (has_short(o)) {
                        *shortopts++ = (char) o->id;
                        if (o->metavar)
                                *shortopts++ = ':';
                }
        }
        longopts[fridged_options_count] = (struct option) {};
        *shortopts = '\0';
}

#define HELP_COLUMN 29

void fridged_options_help(FILE *f) {
        for (size_t i = 0; i < fridged_options_count; i++) {
                const FridgedOption *o = &fridged_options[i];
                char head[64];
                if (has_short(o))
                        snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->id, o->name, o->metavar ? "=" : "",
                                 o->metavar ?: "");
                else
                        snprintf(head, sizeof(head), "      --%s%s%s", o->name, o->metavar ? "=" : "",
                                 o->metavar ?: "");
                if (strlen(head) < HELP_COLUMN)
                        fprintf(f, "%-*s", HELP_COLUMN, head);
                else
                        fprintf(f, "%s\n%*s", head, HELP_COLUMN, "");
                for (const char *p = o->help; *p;) {
                        size_t n = strcspn(p, "\n");
                        fprintf(f, "%.*s\n", (int) n, p);
                        p += n;
                        if (*p == '\n') {
                                p++;
                                fprintf(f, "%*s", HELP_COLUMN, "");
                        }
                }
        }
}
