/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "time-span.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"

/* systemd's units (src/basic/time-util.c), longest spelling first so that
 * "ms" is not read as "m" followed by junk */
static const struct {
        const char *suffix;
        uint64_t usec;
} units[] = {
        { "seconds", USEC_PER_SEC },        { "second", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },            { "s", USEC_PER_SEC },
        { "minutes", 60 * USEC_PER_SEC },   { "minute", 60 * USEC_PER_SEC },
        { "min", 60 * USEC_PER_SEC },       { "months", 2629800 * USEC_PER_SEC },
        { "month", 2629800 * USEC_PER_SEC }, { "M", 2629800 * USEC_PER_SEC },
        { "msec", USEC_PER_MSEC },          { "ms", USEC_PER_MSEC },
        { "m", 60 * USEC_PER_SEC },         { "hours", 3600 * USEC_PER_SEC },
        { "hour", 3600 * USEC_PER_SEC },    { "hr", 3600 * USEC_PER_SEC },
        { "h", 3600 * USEC_PER_SEC },       { "days", 86400 * USEC_PER_SEC },
        { "day", 86400 * USEC_PER_SEC },    { "d", 86400 * USEC_PER_SEC },
        { "weeks", 604800 * USEC_PER_SEC }, { "week", 604800 * USEC_PER_SEC },
        { "w", 604800 * USEC_PER_SEC },     { "years", 31557600 * USEC_PER_SEC },
        { "year", 31557600 * USEC_PER_SEC }, { "y", 31557600 * USEC_PER_SEC },
        { "usec", 1 },                      { "us", 1 },
        { "µs", 1 },
};

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n';
}

/* The unit at *p (none: the default), advanced past it */
static int parse_unit(const char **p, uint64_t default_unit, uint64_t *ret) {
        const char *s = *p;
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                size_t n = strlen(units[i].suffix);
                if (strncmp(s, units[i].suffix, n) == 0 && !(s[n] >= 'a' && s[n] <= 'z')) {
                        *p = s + n;
                        *ret = units[i].usec;
                        return 0;
                }
        }
        if (*s && !is_space(*s) && !is_digit(*s))
                return -EINVAL;
        *ret = default_unit;
        return 0;
}

/* One "NUMBER[.FRACTION]UNIT" at *p into *ret_usec, *p advanced */
static int parse_one(const char **p, uint64_t default_unit, uint64_t *ret_usec) {
        const char *s = *p;
        uint64_t whole = 0, frac = 0, frac_scale = 1, unit;
        if (!is_digit(*s) && !(*s == '.' && is_digit(s[1])))
                return -EINVAL;
        for (; is_digit(*s); s++) {
                if (whole > (UINT64_MAX - 9) / 10)
                        return -ERANGE;
                whole = whole * 10 + (uint64_t) (*s - '0');
        }
        if (*s == '.')
                for (s++; is_digit(*s); s++)
                        if (frac_scale < 1000000000000ULL) { /* finer digits cannot matter */
                                frac = frac * 10 + (uint64_t) (*s - '0');
                                frac_scale *= 10;
                        }
        while (is_space(*s))
                s++;
        int r = parse_unit(&s, default_unit, &unit);
        if (r < 0)
                return r;
        if (whole > UINT64_MAX / unit)
                return -ERANGE;
        *ret_usec = whole * unit + (uint64_t) ((double) frac * (double) unit / (double) frac_scale);
        *p = s;
        return 0;
}

int time_span_parse(const char *s, uint64_t default_unit_usec, uint64_t *ret_usec) {
        uint64_t total = 0;
        bool any = false;
        if (!s)
                return -EINVAL;
        for (;;) {
                while (is_space(*s))
                        s++;
                if (!*s)
                        break;
                uint64_t one;
                int r = parse_one(&s, default_unit_usec, &one);
                if (r < 0)
                        return r;
                if (total > UINT64_MAX - one)
                        return -ERANGE;
                total += one;
                any = true;
        }
        if (!any)
                return -EINVAL;
        *ret_usec = total;
        return 0;
}

int time_span_parse_u32(const char *s, uint64_t unit_usec, uint32_t *ret) {
        uint64_t usec;
        int r = time_span_parse(s, unit_usec, &usec);
        if (r < 0)
                return r;
        if (usec % unit_usec != 0)
                return -EINVAL;
        if (usec / unit_usec > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) (usec / unit_usec);
        return 0;
}

char *time_span_format_ms(uint64_t ms, char *buf, size_t size) {
        static const struct {
                const char *suffix;
                uint64_t ms;
        } parts[] = { { "d", 86400000 }, { "h", 3600000 }, { "min", 60000 }, { "s", 1000 }, { "ms", 1 } };
        size_t n = 0;
        buf[0] = 0;
        if (ms == 0) {
                snprintf(buf, size, "0");
                return buf;
        }
        for (size_t i = 0; i < ELEMENTSOF(parts) && n < size; i++) {
                if (ms < parts[i].ms)
                        continue;
                int k = snprintf(buf + n, size - n, "%s%llu%s", n ? " " : "",
                                 (unsigned long long) (ms / parts[i].ms), parts[i].suffix);
                if (k < 0)
                        break;
                n += (size_t) k;
                ms %= parts[i].ms;
        }
        return buf;
}
