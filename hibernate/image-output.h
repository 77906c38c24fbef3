/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fridge-image-writer's side of the resume device: the stream of blocks
 * goes page by page onto swap pages the kernel hands out
 * (SNAPSHOT_ALLOC_SWAP_PAGE: never a page the running system has swapped
 * out to), pages that follow each other on the device written in one
 * go; then the map pages, likewise; then, once all of that is synced, the
 * image header and fridge's signature in the swap header page, synced.
 * Until that last step nothing on the device says there is an image, so
 * an abort or a power cut leaves mkswap's swap area as it was. */

#include <stdint.h>

#include "image-format.h"

typedef struct ImageOutput {
        int dev;                 /* the resume device, O_DIRECT */
        int snap;                /* /dev/snapshot, which hands out the pages */
        uint32_t page_size;
        uint64_t swap_offset;    /* pages from the device's start to the swap header */
        uint8_t *cur;            /* a page for the header and the signature */
        size_t fill;             /* bytes in the page being filled, after run's */
        uint8_t *run;            /* full pages waiting, on consecutive device pages,
                                  * then the page being filled */
        size_t run_pages;
        uint64_t run_start;      /* device page of run's first */
        uint64_t *map;           /* device page of each page of the stream */
        uint64_t map_len, map_cap;
        uint64_t bytes;          /* of the stream, so far */
        uint64_t *ready;         /* pages handed out ahead (image_output_reserve) */
        size_t ready_len, ready_pos, ready_cap;
        uint64_t reserved_bytes; /* of the stream, their pages handed out */
} ImageOutput;

/* dev open O_RDWR|O_DIRECT on the resume device; snap after SNAPSHOT_SET_SWAP_AREA */
int image_output_init(ImageOutput *o, int dev, int snap, uint32_t page_size, uint64_t swap_offset);
void image_output_done(ImageOutput *o);
/* Has the kernel hand out now the pages the next len bytes of the stream
 * fill, so that image_output_put, on another thread, never calls into
 * /dev/snapshot: the snapshot device's reads take the kernel's
 * system_transition_mutex, and its ioctls only try it (EBUSY while a
 * read holds it). */
int image_output_reserve(ImageOutput *o, uint64_t len);
/* Appends bytes of the stream; a negative errno, said on stderr */
int image_output_put(ImageOutput *o, const uint8_t *data, size_t len);
/* Pads and writes the last page, writes the map (h's map_offset set),
 * syncs: everything the header will point at is on the device */
int image_output_finish(ImageOutput *o, FridgeImageHeader *h);
/* Then the header and the signature, synced: from here the image resumes */
int image_output_sign(ImageOutput *o, const FridgeImageHeader *h);
/* The swap header page, read into an aligned page buffer */
int image_output_read_swap_header(int dev, uint32_t page_size, uint64_t swap_offset, uint8_t *page);
