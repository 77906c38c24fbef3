/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A hibernation's image write in one line, as fridgectl and fridge-agent
 * both say it (ListCycles' image-* keys). Plain C, translated through
 * gettext's default domain (each program sets it). */

#include <stdint.h>

typedef struct ImageWrite {
        const char *writer;             /* "fridge", "kernel"; NULL or "": none */
        uint64_t raw_bytes, written_bytes, usec;
        uint64_t done_bytes, total_bytes;
} ImageWrite;

/* "image: 78.0 MiB written as 13.7 MiB (5.7x) in 1.2 s, 65 MiB/s";
 * "image: the write stopped at 2 of 4 MiB"; "image: written by the
 * kernel"; NULL when there is nothing to say (or OOM). malloc'd. */
char *image_write_line(const ImageWrite *w);

/* writer as one of ours ("fridge", "kernel": static, to outlive a bus
 * reply it was borrowed from), or NULL for anything else */
const char *image_writer_name(const char *writer);
