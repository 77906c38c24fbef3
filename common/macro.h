/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers in the style of systemd's macro.h, so that every owner of a
 * resource declares how it is released and no error path can forget it.
 * Shared by fridged and fridgectl; see docs/ARCHITECTURE.md for the
 * ownership convention they serve. */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Hand ownership of *p to the caller and leave NULL behind, so the
 * _cleanup_ handler of the previous owner does nothing. */
#define TAKE_PTR(p)                             \
        ({                                      \
                __typeof__(p) _tp = (p);        \
                (p) = NULL;                     \
                _tp;                            \
        })

static inline void freep(void *p) {
        free(*(void **) p);
}

#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

#define USEC_PER_SEC 1000000ULL
#define USEC_PER_MSEC 1000ULL

static inline const char *strempty(const char *s) {
        return s ? s : "";
}
