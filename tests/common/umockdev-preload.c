/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "umockdev-preload.h"

#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Set in the re-executed test: a second failure to be preloaded is final.
 * The variables the re-exec changes are saved as SAVED_PREFIX NAME (when
 * they were set at all) to be put back once the preload library runs. */
#define REEXEC_MARK "FRIDGE_UMOCKDEV_REEXEC"
#define SAVED_PREFIX "FRIDGE_UMOCKDEV_SAVED_"

static const char *const changed_vars[] = { "LD_PRELOAD", "ASAN_OPTIONS", NULL };

static char **append_to(char **env, const char *name, const char *value, const char *sep, bool prepend) {
        const char *old = g_environ_getenv(env, name);
        g_autofree char *joined = NULL;

        if (old && *old)
                joined = prepend ? g_strjoin(sep, value, old, NULL) : g_strjoin(sep, old, value, NULL);
        return g_environ_setenv(env, name, joined ? joined : value, TRUE);
}

char **umockdev_preload_environ(char **env) {
        env = append_to(env, "LD_PRELOAD", UMOCKDEV_PRELOAD_LIB, ":", true);
        /* A sanitized program wants the ASan runtime first in the library
         * list and aborts when a preloaded library comes before it. The
         * preload library only wraps libc calls (open, stat, readlink, ...),
         * which reach ASan's interceptors through RTLD_NEXT all the same, so
         * the order check is the one thing to switch off, and only here. */
        return append_to(env, "ASAN_OPTIONS", "verify_asan_link_order=0", ":", false);
}

static int is_preload(struct dl_phdr_info *info, size_t size, void *data) {
        return info->dlpi_name && strstr(info->dlpi_name, "/libumockdev-preload.so") != NULL;
}

/* Not umockdev_in_mock_environment(): it can only tell once a testbed
 * exists, and caches its first answer. */
static bool preload_loaded(void) {
        return dl_iterate_phdr(is_preload, NULL) != 0;
}

static char **save_vars(char **env) {
        for (const char *const *v = changed_vars; *v; v++) {
                const char *old = g_environ_getenv(env, *v);
                g_autofree char *saved = g_strconcat(SAVED_PREFIX, *v, NULL);
                if (old)
                        env = g_environ_setenv(env, saved, old, TRUE);
        }
        return g_environ_setenv(env, REEXEC_MARK, "1", TRUE);
}

/* Loaded libraries and parsed options stay; the programs the test starts
 * (fakesys, dbus-daemon, fridgectl) get the environment it was given */
static void restore_vars(void) {
        for (const char *const *v = changed_vars; *v; v++) {
                g_autofree char *saved = g_strconcat(SAVED_PREFIX, *v, NULL);
                const char *old = g_getenv(saved);
                if (old)
                        g_setenv(*v, old, TRUE);
                else
                        g_unsetenv(*v);
                g_unsetenv(saved);
        }
}

void umockdev_preload_self_or_skip(char **argv) {
        const char *why = umockdev_preload_self(argv);
        if (why) {
                printf("SKIP: %s\n", why);
                exit(77);
        }
}

const char *umockdev_preload_self(char **argv) {
        if (preload_loaded()) {
                if (g_getenv(REEXEC_MARK))
                        restore_vars();
                return NULL;
        }
        if (g_getenv(REEXEC_MARK))
                return UMOCKDEV_PRELOAD_LIB " could not be preloaded (is the umockdev package installed?)";

        g_auto(GStrv) env = umockdev_preload_environ(save_vars(g_get_environ()));
        execve("/proc/self/exe", argv, env);
        return "re-executing the test under " UMOCKDEV_PRELOAD_LIB " failed";
}
