/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The kernel's image, read from /dev/snapshot in batches of blocks and
 * compressed by worker threads started here, after SNAPSHOT_FREEZE (the
 * qemu tier's snapshot-threads proves such threads run while the rest of
 * user space, this process's older threads included, is frozen). The
 * blocks go out in order to an ImageOutput, or nowhere (--discard). */

#include <stdint.h>

#include "image-console.h"
#include "image-format.h"
#include "image-output.h"

typedef struct ImageFigures {
        uint64_t raw_bytes, compressed_bytes, blocks, usec;
        /* where usec went: the main thread reading /dev/snapshot, waiting
         * for the compression, waiting for the device (time the writes
         * overlapped with the rest is not counted) */
        uint64_t read_usec, compress_usec, output_usec;
        unsigned threads;
} ImageFigures;

/* Fills in h's sizes and counts; out NULL: the blocks are dropped.
 * con (or NULL): the bar drawn there after each batch, and Esc typed
 * there stops the write with -ECANCELED. */
int image_pipeline_run(int snap, FridgeImageHeader *h, ImageOutput *out, ImageConsole *con, ImageFigures *f);

/* Its end: the last pages, the map and their sync (image_output_finish()),
 * one more look at con (an Esc, or fridged's cancel, that came while they
 * went out: -ECANCELED, nothing signed), then the header and the signature */
int image_pipeline_sign(ImageOutput *out, FridgeImageHeader *h, ImageConsole *con);
