/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* The name systemd-sleep knows fridgectl by in its hook directory */
#define SLEEP_HOOK_NAME "fridge"

/* Whether fridgectl was started as the hook (argv[0] ends in /fridge) */
bool sleep_hook_invoked(const char *argv0);

/* The hook: "pre|post KIND" handed to fridgectl_main() as `fridgectl
 * --no-progress hook pre|post KIND`, unless fridged.service is masked;
 * a failure is logged; always 0 */
int sleep_hook_main(int argc, char **argv, int (*fridgectl_main)(int argc, char **argv));
