/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

/* umockdev redirects /sys and /dev only in a process that has its
 * libumockdev-preload.so.0 preloaded: what the tests need to start one. */

#define UMOCKDEV_PRELOAD_LIB "libumockdev-preload.so.0"

/* `env` (g_get_environ() style, consumed) with LD_PRELOAD and ASAN_OPTIONS
 * set so that a program exec'd with it runs under the preload library. */
char **umockdev_preload_environ(char **env);

/* Re-executes the running test under the preload library unless it already
 * runs there. Returns NULL when it does, else (the re-exec failed or did not
 * take) why umockdev is unavailable. */
const char *umockdev_preload_self(char **argv);

/* umockdev_preload_self(), or the test skipped (exit 77) with the reason on
 * stdout, whose last line tools/test shows for a skip */
void umockdev_preload_self_or_skip(char **argv);
