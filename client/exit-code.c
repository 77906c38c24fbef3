/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "exit-code.h"

#include <stdbool.h>
#include <string.h>

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

int exit_code_for_call_error(const char *error_name) {
        /* Refusals the caller can act on (wait, ask an admin, change the
         * request) are 4; anything else means the call did not get through. */
        static const char *const refusals[] = {
                "org.freedesktop.DBus.Error.AccessDenied",
                "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired",
        };

        if (!error_name || !*error_name)
                return EXIT_CODE_DONE;
        if (strcmp(error_name, "org.freedesktop.DBus.Error.InvalidArgs") == 0)
                return EXIT_CODE_USAGE;
        if (strncmp(error_name, FRIDGE_ERROR_PREFIX, strlen(FRIDGE_ERROR_PREFIX)) == 0)
                return EXIT_CODE_REFUSED;
        if (str_in(error_name, refusals, ELEMENTSOF(refusals)))
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
