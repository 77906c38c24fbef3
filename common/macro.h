/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers in the style of systemd's macro.h, so that every owner of a
 * resource declares how it is released and no error path can forget it.
 * Shared by fridged and fridgectl; see docs/ARCHITECTURE.md for the
 * ownership convention they serve. */

#include <errno.h>
#include <stdbool.h>
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

/* A NULL-terminated array of strings from malloc(), as
 * sd_bus_message_read_strv() hands out (the daemon has GStrv). */
static inline char **strv_free(char **l) {
        for (char **i = l; i && *i; i++)
                free(*i);
        free(l);
        return NULL;
}
static inline void strv_freep(char ***l) {
        strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

#define USEC_PER_SEC 1000000ULL
#define USEC_PER_MSEC 1000ULL

static inline const char *strempty(const char *s) {
        return s ? s : "";
}

static inline bool isempty(const char *s) {
        return !s || !*s;
}
