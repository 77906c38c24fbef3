/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "exit-code.h"

#include <stdbool.h>
#include <string.h>
#include <systemd/sd-bus-protocol.h>

#include "fridge-error.h"

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
        if (strcmp(error_name, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED) == 0)
                return EXIT_CODE_REFUSED;
        /* A newer fridged's answer this fridgectl does not know yet is still
         * fridge refusing the call */
        if (strncmp(error_name, FRIDGE_ERROR_PREFIX, strlen(FRIDGE_ERROR_PREFIX)) == 0)
                return EXIT_CODE_REFUSED;
        return EXIT_CODE_FAILED;
}

const char *error_short_name(const char *error_name) {
        const char *dot;

        if (!error_name)
                return "";
        dot = strrchr(error_name, '.');
        return dot ? dot + 1 : error_name;
}
