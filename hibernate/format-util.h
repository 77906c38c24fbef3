/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the on-disk formats of hibernate/ share: little-endian fields and
 * a refusal that says why in the caller's buffer. */

#include <endian.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 4, 5))) static inline int fail(int r, char *err, size_t errlen, const char *fmt, ...) {
        if (err && errlen > 0) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return r;
}

static inline void put32(uint8_t *p, uint32_t v) {
        v = htole32(v);
        memcpy(p, &v, sizeof(v));
}
static inline void put64(uint8_t *p, uint64_t v) {
        v = htole64(v);
        memcpy(p, &v, sizeof(v));
}
static inline uint32_t get32(const uint8_t *p) {
        uint32_t v;
        memcpy(&v, p, sizeof(v));
        return le32toh(v);
}
static inline uint64_t get64(const uint8_t *p) {
        uint64_t v;
        memcpy(&v, p, sizeof(v));
        return le64toh(v);
}
