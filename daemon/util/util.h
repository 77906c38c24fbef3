/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

#include "macro.h"

/* Turns a negative errno into "Device or resource busy": thread-safe. */
const char *errno_text(int negative_errno);

/* The string keys of t in strcmp() order, borrowed from the table (valid
 * while it holds them), for output that does not depend on hashing. */
GPtrArray *hash_table_sorted_keys(GHashTable *t);
