/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One function per command; each returns fridgectl's exit code. */

#include <systemd/sd-bus.h>

#include "args.h"
#include "cycle-text.h"

int cmd_status(const Args *a, sd_bus *bus);
int cmd_sleep(const Args *a, sd_bus *bus);
int cmd_cancel(const Args *a, sd_bus *bus);
int cmd_monitor(const Args *a, sd_bus *bus);
int cmd_plan(const Args *a, sd_bus *bus);
int cmd_hold(const Args *a, sd_bus *bus);
int cmd_hook(const Args *a, sd_bus *bus);
/* hook pre|post: its deadline, armed before the connection */
void cmd_hook_arm(const Args *a);
/* Run as systemd-sleep's hook: past the deadline, `line` is said too and
 * the status is 0 (sleep-hook.c) */
void cmd_hook_as_sleep_hook(const char *line);
/* The deadline off: Hook answered, or fridgectl is done */
void cmd_hook_deadline_disarm(void);
int cmd_inhibit(const Args *a, sd_bus *bus);
int cmd_inhibitors(const Args *a, sd_bus *bus);
int cmd_plot(const Args *a, sd_bus *bus);
int cmd_can_sleep(const Args *a, sd_bus *bus);
int cmd_history(const Args *a, sd_bus *bus);
/* The image write of cycle `id`, just finished, from ListCycles(1): its
 * writer (static) is NULL when the history has none to tell (another
 * cycle came first, no write, an error) */
ImageWrite history_image_write(sd_bus *bus, uint64_t id);
/* needs no bus */
int cmd_cat_config(const Args *a);
