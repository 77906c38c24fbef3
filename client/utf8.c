/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "utf8.h"

size_t utf8_decode(const char *s, uint32_t *ret_cp) {
        const unsigned char *u = (const unsigned char *) s;
        uint32_t cp, min;
        size_t len;

        if (u[0] < 0x80) {
                *ret_cp = u[0];
                return 1;
        }
        if ((u[0] & 0xe0) == 0xc0) {
                len = 2; cp = u[0] & 0x1f; min = 0x80;
        } else if ((u[0] & 0xf0) == 0xe0) {
                len = 3; cp = u[0] & 0x0f; min = 0x800;
        } else if ((u[0] & 0xf8) == 0xf0) {
                len = 4; cp = u[0] & 0x07; min = 0x10000;
        } else
                return 0;

        for (size_t i = 1; i < len; i++) {
                /* A NUL ends the string and is not a continuation byte, so
                 * this never reads past the terminator. */
                if ((u[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (u[i] & 0x3f);
        }
        /* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_cp = cp;
        return len;
}
