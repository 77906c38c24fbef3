/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "exit-code.h"

#include <stdbool.h>
#include <string.h>

#include "fridge-error.h"
#include "macro.h"

static bool str_in(const char *s, const char *const *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(s, list[i]) == 0)
                        return true;
        return false;
}

int exit_code_for_result(const char *result) {
        if (!result)
                return EXIT_CODE_FAILED;
        if (strcmp(result, "done") == 0 || strcmp(result, "dry-run") == 0)
                return EXIT_CODE_DONE;
        if (strcmp(result, "aborted") == 0)
                return EXIT_CODE_ABORTED;
        return EXIT_CODE_FAILED;
}

/* A cycle's error says how it ended more precisely than its result; the
 * result decides only for an error this fridgectl does not know. */
int exit_code_for_finished(const char *result, const char *error_name) {
        int code = exit_code_for_result(result);
        FridgeError e = fridge_error_from_name(error_name);

        if (code == EXIT_CODE_DONE || e < 0 || fridge_error_info(e)->cycle_exit < 0)
                return code;
        return fridge_error_info(e)->cycle_exit;
}

int exit_code_for_call_error(const char *error_name) {
        if (!error_name || !*error_name)
                return EXIT_CODE_DONE;
        FridgeError e = fridge_error_from_name(error_name);
        if (e >= 0)
                return fridge_error_info(e)->call_exit;
        /* polkit's answer when it would ask, said by a bus in between */
        if (strcmp(error_name, "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired") == 0)
                return EXIT_CODE_REFUSED;
        return EXIT_CODE_FAILED;
}

bool error_is_unreachable(const char *error_name) {
        static const char *const unreachable[] = {
                "org.freedesktop.DBus.Error.ServiceUnknown",
                "org.freedesktop.DBus.Error.NameHasNoOwner",
                "org.freedesktop.DBus.Error.NoReply",
                "org.freedesktop.DBus.Error.Timeout",
                "org.freedesktop.DBus.Error.TimedOut",
                "org.freedesktop.DBus.Error.Disconnected",
                "org.freedesktop.DBus.Error.NoServer",
                "org.freedesktop.DBus.Error.Spawn.ChildExited",
                "org.freedesktop.DBus.Error.Spawn.Failed",
        };

        return error_name && str_in(error_name, unreachable, ELEMENTSOF(unreachable));
}

const char *error_short_name(const char *error_name) {
        const char *dot;

        if (!error_name)
                return "";
        dot = strrchr(error_name, '.');
        return dot ? dot + 1 : error_name;
}
