/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define USEC_PER_SEC 1000000ULL
#define USEC_PER_MSEC 1000ULL

/* Turns a negative errno into "Device or resource busy": thread-safe. */
const char *errno_text(int negative_errno);
