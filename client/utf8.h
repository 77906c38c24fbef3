/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Length in bytes of the well-formed UTF-8 sequence starting at s (1..4),
 * or 0 if s does not start one. *ret_cp receives the code point. Used to
 * escape JSON and to cut text for the terminal without splitting a
 * character. */
size_t utf8_decode(const char *s, uint32_t *ret_cp);
