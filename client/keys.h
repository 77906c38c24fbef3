/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether one read() from the terminal holds a lone Esc press. Keys such
 * as the arrows send Esc followed by more bytes in the same read, and must
 * not cancel a cycle; an Esc at the end of the chunk, or followed by a
 * second Esc, was typed on its own. */
bool keys_have_lone_escape(const char *buf, size_t n);
