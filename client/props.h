/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fridged's properties as a struct, read from an a{sv} (a GetAll reply or
 * the changed dictionary of PropertiesChanged) through one table. */

#include <stdint.h>
#include <systemd/sd-bus.h>

typedef struct FridgeProps {
        char *state;
        uint64_t cycle_id;
        char *kind;
        char *phase;
        double progress;
        char *progress_text;
        char *can_suspend;
        char *can_suspend_reason;
        char *can_hibernate;
        char *can_hibernate_reason;
        char *can_hybrid_sleep;
        char *can_hybrid_sleep_reason;
        char *hibernate_writer;        /* "fridge", "kernel", "tuxonice" */
        char *hibernate_writer_reason; /* why not fridge's, when configured */
        char *hibernate_encrypted;     /* the image's device: "yes", "no", "unknown", "" */
        char *hibernate_warning;       /* the notice when it is "no" */
        char **supported_kinds;
        char **cycle_settings;  /* "name=value": what the running cycle obeys */
        char *last_result;
        char *last_wake_reason;
        char *version;
        char *sleep_freeze;     /* systemd-sleep's own freeze of user.slice */
        char *freeze_filesystems; /* the kernel's own freeze of file systems: yes, no, "" (no such knob) */
} FridgeProps;

/* Bits for the properties a dictionary carried. */
enum {
        PROP_STATE         = 1u << 0,
        PROP_CYCLE_ID      = 1u << 1,
        PROP_KIND          = 1u << 2,
        PROP_PHASE         = 1u << 3,
        PROP_PROGRESS      = 1u << 4,
        PROP_PROGRESS_TEXT = 1u << 5,
};

void fridge_props_done(FridgeProps *p);

/* Reads an a{sv} at the current position into p, replacing the fields it
 * names. Unknown names, and known names with a wrong type, are skipped: a
 * newer daemon must not break an older client. *ret_seen gets the PROP_*
 * bits of the fields that were set. */
int fridge_props_read(sd_bus_message *m, FridgeProps *p, uint32_t *ret_seen);
