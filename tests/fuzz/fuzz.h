/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the libFuzzer targets and their corpus replay (fuzz-replay.c). */

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as the daemon sees a file: text up to its first NUL */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
        return g_strndup((const char *) data, size);
}

/* The warnings are the point of the loaders, not of the fuzzer: they would
 * only slow it down */
static inline void fuzz_quiet(void) {
        log_set_max_level(-1);
}
