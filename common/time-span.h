/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Time spans as systemd writes them (systemd.time(7), its parse_sec()):
 * "500ms", "30s", "2min", "1h", "1.5s", "1min 30s" or "1min30s". A plain
 * number is in the value's historic unit (milliseconds for fridge.conf's
 * ...Ms keys), so files and scripts written before keep their meaning.
 * One parser for fridged's configuration and fridgectl's options. Plain C. */

#include <stddef.h>
#include <stdint.h>

/* What a time span may look like, for "expected ..." messages */
#define TIME_SPAN_FORMS "a time span such as 500ms, 30s, 2min, 1h or \"1min 30s\""

/* Parses `s` into µs; a bare number counts in `default_unit_usec`.
 * -EINVAL: not a time span (empty, an unknown unit, a sign, junk);
 * -ERANGE: too large for 64 bits of µs. */
int time_span_parse(const char *s, uint64_t default_unit_usec, uint64_t *ret_usec);

/* The same into whole units of `unit_usec` (ms: 1000): -EINVAL as above or
 * when finer than that unit, -ERANGE beyond UINT32_MAX units */
int time_span_parse_u32(const char *s, uint64_t unit_usec, uint32_t *ret);

/* `ms` the shortest way systemd would write it ("1min 30s", "500ms"),
 * into buf; returns buf */
char *time_span_format_ms(uint64_t ms, char *buf, size_t size);
