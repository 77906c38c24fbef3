/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers in the style of systemd's macro.h, so that every owner of a
 * resource declares how it is released and no error path can forget it. */

#include <stdlib.h>

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

static inline const char *strempty(const char *s) {
        return s ? s : "";
}
