/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

int bus_error_set(sd_bus_error *error, int r, const char *message) {
        if (r == 0)
                r = FRIDGE_ERROR_INTERNAL;
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "%s", message ? message : errno_text(r));
        return sd_bus_error_set(error, fridge_error_name(r), message ? message : fridge_error_summary(r));
}

int bus_error_setf(sd_bus_error *error, int r, const char *format, ...) {
        char *message = NULL;
        va_list ap;

        va_start(ap, format);
        int k = vasprintf(&message, format, ap);
        va_end(ap);
        if (k < 0)
                return bus_error_set(error, -ENOMEM, NULL);
        k = bus_error_set(error, r, message);
        free(message);
        return k;
}
