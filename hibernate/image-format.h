/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fridge's hibernation image, as fridge-image-writer lays it out and
 * fridge-resume reads it back: one header, then blocks of up to
 * block_pages pages of the kernel's snapshot, each compressed with the
 * header's compressor (zstd or lz4) and carrying an xxhash64 of itself. Pure functions over buffers: no
 * device, no /dev/snapshot, so every refusal can be tested on a buffer.
 *
 * Everything on disk is little-endian. A function that refuses says why in
 * err (a sentence naming the problem) and returns a negative errno:
 * -EBADMSG corrupt, -ENODATA no fridge image, -EPROTO another version,
 * -ESTALE another kernel, -ENOBUFS truncated or no room. */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zstd.h>

#define FRIDGE_IMAGE_MAGIC "FRIDGEIM"
#define FRIDGE_IMAGE_VERSION 1u
/* The header's size on disk; it is written alone in the first page */
#define FRIDGE_IMAGE_HEADER_SIZE 512u
/* uname(2)'s fields are 65 bytes with their NUL */
#define FRIDGE_IMAGE_KERNEL_MAX 65u
#define FRIDGE_IMAGE_BLOCK_HEADER_SIZE 32u
/* Bounds a header may claim before anything is allocated from it */
#define FRIDGE_IMAGE_BLOCK_PAGES_MAX 1024u
#define FRIDGE_IMAGE_PAGE_SIZE_MIN 4096u
#define FRIDGE_IMAGE_PAGE_SIZE_MAX 65536u
/* The blocks' compressor, recorded in the header (0, what version 1 images
 * before it have there, is zstd) */
typedef enum FridgeImageCompressor {
        FRIDGE_IMAGE_ZSTD = 0,
        FRIDGE_IMAGE_LZ4 = 1,
        _FRIDGE_IMAGE_COMPRESSOR_MAX,
} FridgeImageCompressor;
/* What the writer uses: see docs/ARCHITECTURE.md (hibernate/) for the
 * measurement. zstd level 1 made the write compression-bound under qemu's
 * TCG at half the kernel's speed. The level (zstd's, negative for its fast
 * ones; lz4's acceleration) does not matter to the reader: the header
 * records it for the figures only. */
/* The header's flags (0 in images from before them) */
enum {
        /* made for the platform's hibernation state (ACPI S4, SNAPSHOT_PLATFORM_SUPPORT):
         * restored the same way, as the kernel restores its own image in platform mode */
        FRIDGE_IMAGE_FLAG_PLATFORM = 1u << 0,
        _FRIDGE_IMAGE_FLAGS_KNOWN = FRIDGE_IMAGE_FLAG_PLATFORM,
};
#define FRIDGE_IMAGE_COMPRESSOR FRIDGE_IMAGE_LZ4
#define FRIDGE_IMAGE_LEVEL 4
/* The room every err argument is given */
#define FRIDGE_IMAGE_ERR_MAX 256u

typedef struct FridgeImageHeader {
        uint32_t page_size;
        uint32_t block_pages;      /* pages of the snapshot a block holds, the last fewer */
        uint64_t image_id;         /* random for each image: seeds every block's checksum */
        uint64_t image_pages;      /* pages the kernel's snapshot has */
        uint64_t compressed_bytes; /* the blocks as written, with their headers */
        uint64_t block_count;
        uint64_t map_offset;       /* byte offset on the device of the first map page */
        int32_t level;             /* what the writer used, for the figures: zstd's level
                                    * (its fast ones negative) or lz4's acceleration */
        uint32_t compressor;       /* FridgeImageCompressor */
        uint32_t flags;            /* FRIDGE_IMAGE_FLAG_* */
        char kernel_release[FRIDGE_IMAGE_KERNEL_MAX]; /* uname -r */
        char kernel_version[FRIDGE_IMAGE_KERNEL_MAX]; /* uname -v */
} FridgeImageHeader;

/* buf must hold FRIDGE_IMAGE_HEADER_SIZE bytes. Refuses (-EINVAL) a header
 * that decode would refuse, so no writer can put down what no reader takes. */
int fridge_image_header_encode(const FridgeImageHeader *h, uint8_t *buf, size_t size, char *err, size_t errlen);
int fridge_image_header_decode(const uint8_t *buf, size_t size, FridgeImageHeader *ret, char *err, size_t errlen);
/* The image must come from the kernel that runs: its release and its build
 * (uname -v tells two builds of one release apart). */
int fridge_image_header_check_kernel(const FridgeImageHeader *h, const char *release, const char *version, char *err,
                                     size_t errlen);
/* Fills in the running kernel's identity (uname) */
int fridge_image_header_set_kernel(FridgeImageHeader *h);

/* The most room block_encode needs for raw_len bytes */
size_t fridge_image_block_bound(size_t raw_len);
/* Compresses raw (at most block_pages pages) as block number index of the
 * image h into out with h's compressor; *ret_len is its size with its
 * header. cctx: a zstd context kept across blocks (a fresh one clears
 * megabytes of tables), or NULL. level: zstd's level or lz4's acceleration. */
int fridge_image_block_encode(const FridgeImageHeader *h, ZSTD_CCtx *cctx, uint64_t index, const void *raw,
                              size_t raw_len, int level, uint8_t *out, size_t out_size, size_t *ret_len, char *err,
                              size_t errlen);
/* Verifies block number index at the start of in and decompresses it into
 * out; *ret_used is how many bytes of in it took, *ret_raw_len the raw size. */
int fridge_image_block_decode(const FridgeImageHeader *h, uint64_t index, const uint8_t *in, size_t in_size,
                              size_t *ret_used, uint8_t *out, size_t out_size, size_t *ret_raw_len, char *err,
                              size_t errlen);

/* Verifies a whole stream of blocks (what follows the header) and hands
 * each block's pages to page_cb in order (NULL: verify only). Refuses a
 * stream with fewer or more blocks, pages or bytes than the header says. */
typedef int (*FridgeImagePagesCb)(const uint8_t *pages, size_t len, void *userdata);
int fridge_image_stream_decode(const FridgeImageHeader *h, const uint8_t *stream, size_t len,
                               FridgeImagePagesCb page_cb, void *userdata, char *err, size_t errlen);
/* The same over a source read in pieces (the device, through the map):
 * read_cb fills buf with up to len bytes and returns how many, fewer only
 * at the stream's end (0 there), or a negative errno. */
typedef ssize_t (*FridgeImageReadCb)(uint8_t *buf, size_t len, void *userdata);
int fridge_image_stream_read(const FridgeImageHeader *h, FridgeImageReadCb read_cb, void *read_userdata,
                             FridgeImagePagesCb page_cb, void *userdata, char *err, size_t errlen);
/* Every block's header, sizes and checksum (an xxhash64 of its compressed
 * bytes: what the writer wrote), and the stream's totals, without
 * decompressing, in the time a read takes: fridge-resume --verify-only.
 * The load (fridge_image_stream_read()) checks the same of each block
 * before it decompresses it. */
int fridge_image_stream_check(const FridgeImageHeader *h, FridgeImageReadCb read_cb, void *read_userdata, char *err,
                              size_t errlen);
