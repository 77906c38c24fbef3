/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-format.h"
#include "format-util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
/* XXH64_state_t on the stack, not from malloc */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>
#include <lz4.h>
#include <zstd.h>

/* The header's fields on disk: offsets are the format, so they are spelt */
enum {
        OFF_MAGIC = 0,
        OFF_VERSION = 8,
        OFF_HEADER_SIZE = 12,
        OFF_PAGE_SIZE = 16,
        OFF_BLOCK_PAGES = 20,
        OFF_IMAGE_ID = 24,
        OFF_IMAGE_PAGES = 32,
        OFF_COMPRESSED = 40,
        OFF_BLOCK_COUNT = 48,
        OFF_MAP_OFFSET = 56,
        OFF_LEVEL = 64,
        OFF_COMPRESSOR = 68,
        OFF_RELEASE = 72,
        OFF_KVERSION = OFF_RELEASE + FRIDGE_IMAGE_KERNEL_MAX,
        OFF_FLAGS = 204, /* after the version's 65 bytes, aligned */
        OFF_CHECKSUM = FRIDGE_IMAGE_HEADER_SIZE - 8,
};
_Static_assert(OFF_FLAGS >= OFF_KVERSION + FRIDGE_IMAGE_KERNEL_MAX, "the flags overlap the kernel's version");

/* A block's header: magic, raw length, compressed length, reserved, index,
 * then the xxhash64 of those 24 bytes and the payload, seeded with the
 * image's id (a block of an earlier image does not verify in this one) */
#define BLOCK_MAGIC 0x314b4246u /* "FBK1" */
enum { BOFF_MAGIC = 0, BOFF_RAW = 4, BOFF_COMP = 8, BOFF_INDEX = 16, BOFF_HASH = 24 };

static bool string_ok(const char *s, size_t max) {
        return memchr(s, 0, max) != NULL;
}

/* What both sides hold a header to, apart from the bytes it came in */
static int header_validate(const FridgeImageHeader *h, char *err, size_t errlen) {
        if (h->page_size < FRIDGE_IMAGE_PAGE_SIZE_MIN || h->page_size > FRIDGE_IMAGE_PAGE_SIZE_MAX ||
            (h->page_size & (h->page_size - 1)) != 0)
                return fail(-EBADMSG, err, errlen, "image header: page size %u is not a power of two from %u to %u",
                            h->page_size, FRIDGE_IMAGE_PAGE_SIZE_MIN, FRIDGE_IMAGE_PAGE_SIZE_MAX);
        if (h->block_pages == 0 || h->block_pages > FRIDGE_IMAGE_BLOCK_PAGES_MAX)
                return fail(-EBADMSG, err, errlen, "image header: %u pages a block is not from 1 to %u",
                            h->block_pages, FRIDGE_IMAGE_BLOCK_PAGES_MAX);
        uint64_t want = h->image_pages / h->block_pages + (h->image_pages % h->block_pages != 0);
        if (h->image_pages == 0 || h->block_count != want)
                return fail(-EBADMSG, err, errlen,
                            "image header: %" PRIu64 " blocks do not hold %" PRIu64 " pages at %u pages a block",
                            h->block_count, h->image_pages, h->block_pages);
        if (h->compressor >= _FRIDGE_IMAGE_COMPRESSOR_MAX)
                return fail(-EPROTO, err, errlen, "image header: compressor %u is not one this reader knows (zstd, lz4)",
                            h->compressor);
        if (h->flags & ~(uint32_t) _FRIDGE_IMAGE_FLAGS_KNOWN)
                return fail(-EPROTO, err, errlen, "image header: flags 0x%x are not ones this reader knows", h->flags);
        if (!string_ok(h->kernel_release, sizeof(h->kernel_release)) || !*h->kernel_release ||
            !string_ok(h->kernel_version, sizeof(h->kernel_version)))
                return fail(-EBADMSG, err, errlen, "image header: the kernel's identity is missing or not terminated");
        return 0;
}

int fridge_image_header_encode(const FridgeImageHeader *h, uint8_t *buf, size_t size, char *err, size_t errlen) {
        if (size < FRIDGE_IMAGE_HEADER_SIZE)
                return fail(-ENOBUFS, err, errlen, "image header needs %u bytes, the buffer has %zu",
                            FRIDGE_IMAGE_HEADER_SIZE, size);
        int r = header_validate(h, err, errlen);
        if (r < 0)
                return r == -EBADMSG ? -EINVAL : r;
        memset(buf, 0, FRIDGE_IMAGE_HEADER_SIZE);
        memcpy(buf + OFF_MAGIC, FRIDGE_IMAGE_MAGIC, 8);
        put32(buf + OFF_VERSION, FRIDGE_IMAGE_VERSION);
        put32(buf + OFF_HEADER_SIZE, FRIDGE_IMAGE_HEADER_SIZE);
        put32(buf + OFF_PAGE_SIZE, h->page_size);
        put32(buf + OFF_BLOCK_PAGES, h->block_pages);
        put64(buf + OFF_IMAGE_ID, h->image_id);
        put64(buf + OFF_IMAGE_PAGES, h->image_pages);
        put64(buf + OFF_COMPRESSED, h->compressed_bytes);
        put64(buf + OFF_BLOCK_COUNT, h->block_count);
        put64(buf + OFF_MAP_OFFSET, h->map_offset);
        put32(buf + OFF_LEVEL, (uint32_t) h->level);
        put32(buf + OFF_COMPRESSOR, h->compressor);
        put32(buf + OFF_FLAGS, h->flags);
        memcpy(buf + OFF_RELEASE, h->kernel_release, FRIDGE_IMAGE_KERNEL_MAX);
        memcpy(buf + OFF_KVERSION, h->kernel_version, FRIDGE_IMAGE_KERNEL_MAX);
        put64(buf + OFF_CHECKSUM, XXH64(buf, OFF_CHECKSUM, 0));
        return 0;
}

int fridge_image_header_decode(const uint8_t *buf, size_t size, FridgeImageHeader *ret, char *err, size_t errlen) {
        if (size < FRIDGE_IMAGE_HEADER_SIZE)
                return fail(-ENOBUFS, err, errlen, "image header is truncated: %zu of %u bytes", size,
                            FRIDGE_IMAGE_HEADER_SIZE);
        if (memcmp(buf + OFF_MAGIC, FRIDGE_IMAGE_MAGIC, 8) != 0)
                return fail(-ENODATA, err, errlen, "no fridge image: the header does not start with %s",
                            FRIDGE_IMAGE_MAGIC);
        uint64_t sum = XXH64(buf, OFF_CHECKSUM, 0);
        if (get64(buf + OFF_CHECKSUM) != sum)
                return fail(-EBADMSG, err, errlen, "image header checksum mismatch (stored %016" PRIx64
                            ", computed %016" PRIx64 "): the header is corrupt",
                            get64(buf + OFF_CHECKSUM), sum);
        if (get32(buf + OFF_VERSION) != FRIDGE_IMAGE_VERSION || get32(buf + OFF_HEADER_SIZE) != FRIDGE_IMAGE_HEADER_SIZE)
                return fail(-EPROTO, err, errlen, "image format version %u (header %u bytes) is not version %u",
                            get32(buf + OFF_VERSION), get32(buf + OFF_HEADER_SIZE), FRIDGE_IMAGE_VERSION);
        FridgeImageHeader h = {
                .page_size = get32(buf + OFF_PAGE_SIZE),
                .block_pages = get32(buf + OFF_BLOCK_PAGES),
                .image_id = get64(buf + OFF_IMAGE_ID),
                .image_pages = get64(buf + OFF_IMAGE_PAGES),
                .compressed_bytes = get64(buf + OFF_COMPRESSED),
                .block_count = get64(buf + OFF_BLOCK_COUNT),
                .map_offset = get64(buf + OFF_MAP_OFFSET),
                .level = (int32_t) get32(buf + OFF_LEVEL),
                .compressor = get32(buf + OFF_COMPRESSOR),
                .flags = get32(buf + OFF_FLAGS),
        };
        memcpy(h.kernel_release, buf + OFF_RELEASE, FRIDGE_IMAGE_KERNEL_MAX);
        memcpy(h.kernel_version, buf + OFF_KVERSION, FRIDGE_IMAGE_KERNEL_MAX);
        int r = header_validate(&h, err, errlen);
        if (r < 0)
                return r;
        *ret = h;
        return 0;
}

int fridge_image_header_check_kernel(const FridgeImageHeader *h, const char *release, const char *version, char *err,
                                     size_t errlen) {
        if (strcmp(h->kernel_release, release) != 0 || strcmp(h->kernel_version, version) != 0)
                return fail(-ESTALE, err, errlen,
                            "the image was made by another kernel: %s (%s), this is %s (%s)", h->kernel_release,
                            h->kernel_version, release, version);
        return 0;
}

int fridge_image_header_set_kernel(FridgeImageHeader *h) {
        struct utsname u;
        if (uname(&u) < 0)
                return -errno;
        snprintf(h->kernel_release, sizeof(h->kernel_release), "%s", u.release);
        snprintf(h->kernel_version, sizeof(h->kernel_version), "%s", u.version);
        return 0;
}

size_t fridge_image_block_bound(size_t raw_len) {
        size_t z = ZSTD_compressBound(raw_len), l = (size_t) LZ4_compressBound((int) raw_len);
        return FRIDGE_IMAGE_BLOCK_HEADER_SIZE + (z > l ? z : l);
}

/* raw into dst with h's compressor: its size, or 0 with err said */
static size_t block_compress(const FridgeImageHeader *h, ZSTD_CCtx *cctx, uint64_t index, const void *raw,
                             size_t raw_len, int level, uint8_t *dst, size_t room, char *err, size_t errlen) {
        if (h->compressor == FRIDGE_IMAGE_LZ4) {
                int n = LZ4_compress_fast(raw, (char *) dst, (int) raw_len, room > INT32_MAX ? INT32_MAX : (int) room,
                                          level);
                if (n <= 0)
                        fail(-ENOBUFS, err, errlen, "block %" PRIu64 ": lz4 found no room", index);
                return n <= 0 ? 0 : (size_t) n;
        }
        size_t n = cctx ? ZSTD_compressCCtx(cctx, dst, room, raw, raw_len, level)
                        : ZSTD_compress(dst, room, raw, raw_len, level);
        if (!ZSTD_isError(n))
                return n;
        fail(-ENOBUFS, err, errlen, "block %" PRIu64 ": zstd: %s", index, ZSTD_getErrorName(n));
        return 0;
}

static uint64_t block_hash(const FridgeImageHeader *h, const uint8_t *block, size_t comp_len) {
        XXH64_state_t s;
        XXH64_reset(&s, h->image_id);
        XXH64_update(&s, block, BOFF_HASH);
        XXH64_update(&s, block + FRIDGE_IMAGE_BLOCK_HEADER_SIZE, comp_len);
        return XXH64_digest(&s);
}

int fridge_image_block_encode(const FridgeImageHeader *h, ZSTD_CCtx *cctx, uint64_t index, const void *raw,
                              size_t raw_len, int level, uint8_t *out, size_t out_size, size_t *ret_len, char *err,
                              size_t errlen) {
        if (raw_len == 0 || raw_len > (size_t) h->block_pages * h->page_size || raw_len % h->page_size != 0)
                return fail(-EINVAL, err, errlen, "block %" PRIu64 ": %zu bytes is not 1 to %u whole pages", index,
                            raw_len, h->block_pages);
        if (out_size < FRIDGE_IMAGE_BLOCK_HEADER_SIZE)
                return fail(-ENOBUFS, err, errlen, "block %" PRIu64 ": no room for its header", index);
        uint8_t *dst = out + FRIDGE_IMAGE_BLOCK_HEADER_SIZE;
        size_t room = out_size - FRIDGE_IMAGE_BLOCK_HEADER_SIZE;
        size_t n = block_compress(h, cctx, index, raw, raw_len, level, dst, room, err, errlen);
        if (n == 0)
                return -ENOBUFS;
        memset(out, 0, FRIDGE_IMAGE_BLOCK_HEADER_SIZE);
        put32(out + BOFF_MAGIC, BLOCK_MAGIC);
        put32(out + BOFF_RAW, (uint32_t) raw_len);
        put32(out + BOFF_COMP, (uint32_t) n);
        put64(out + BOFF_INDEX, index);
        put64(out + BOFF_HASH, block_hash(h, out, n));
        *ret_len = FRIDGE_IMAGE_BLOCK_HEADER_SIZE + n;
        return 0;
}

/* The header's claims, before anything is hashed or decompressed */
static int block_check_header(const FridgeImageHeader *h, uint64_t index, const uint8_t *in, size_t in_size,
                              char *err, size_t errlen) {
        if (in_size < FRIDGE_IMAGE_BLOCK_HEADER_SIZE)
                return fail(-ENOBUFS, err, errlen, "block %" PRIu64 " is truncated: %zu bytes, its header needs %u",
                            index, in_size, FRIDGE_IMAGE_BLOCK_HEADER_SIZE);
        if (get32(in + BOFF_MAGIC) != BLOCK_MAGIC)
                return fail(-EBADMSG, err, errlen, "block %" PRIu64 " is corrupt: no block header", index);
        if (get64(in + BOFF_INDEX) != index)
                return fail(-EBADMSG, err, errlen, "block %" PRIu64 " is out of order: it says it is block %" PRIu64,
                            index, get64(in + BOFF_INDEX));
        uint32_t raw = get32(in + BOFF_RAW), comp = get32(in + BOFF_COMP);
        if (raw == 0 || raw % h->page_size != 0 || raw > (uint64_t) h->block_pages * h->page_size)
                return fail(-EBADMSG, err, errlen, "block %" PRIu64 " is corrupt: %u raw bytes", index, raw);
        if (comp > in_size - FRIDGE_IMAGE_BLOCK_HEADER_SIZE)
                return fail(-ENOBUFS, err, errlen, "block %" PRIu64 " is truncated: %zu of %u bytes", index,
                            in_size - FRIDGE_IMAGE_BLOCK_HEADER_SIZE, comp);
        return 0;
}

/* A block's compressed bytes into exactly raw bytes at out. dctx: one kept
 * across blocks (ZSTD_decompress makes and clears one a call, and in the
 * initramfs every byte of memory is the image's), or NULL */
static int block_inflate(const FridgeImageHeader *h, ZSTD_DCtx *dctx, uint64_t index, const uint8_t *src,
                         uint32_t comp, uint8_t *out, uint32_t raw, char *err, size_t errlen) {
        if (h->compressor == FRIDGE_IMAGE_LZ4) {
                int n = LZ4_decompress_safe((const char *) src, (char *) out, (int) comp, (int) raw);
                if (n < 0 || (uint32_t) n != raw)
                        return fail(-EBADMSG, err, errlen, "block %" PRIu64 " is corrupt: lz4: %s", index,
                                    n < 0 ? "malformed" : "wrong length");
                return 0;
        }
        size_t n = dctx ? ZSTD_decompressDCtx(dctx, out, raw, src, comp) : ZSTD_decompress(out, raw, src, comp);
        if (ZSTD_isError(n) || n != raw)
                return fail(-EBADMSG, err, errlen, "block %" PRIu64 " is corrupt: zstd: %s", index,
                            ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong length");
        return 0;
}

/* out NULL: the block checked (header, checksum, sizes), not decompressed */
static int block_decode(const FridgeImageHeader *h, ZSTD_DCtx *dctx, uint64_t index, const uint8_t *in,
                        size_t in_size, size_t *ret_used, uint8_t *out, size_t out_size, size_t *ret_raw_len,
                        char *err, size_t errlen) {
        int r = block_check_header(h, index, in, in_size, err, errlen);
        if (r < 0)
                return r;
        uint32_t raw = get32(in + BOFF_RAW), comp = get32(in + BOFF_COMP);
        if (get64(in + BOFF_HASH) != block_hash(h, in, comp))
                return fail(-EBADMSG, err, errlen, "block %" PRIu64 " is corrupt: its xxhash64 does not match", index);
        if (out_size < raw)
                return fail(-ENOBUFS, err, errlen, "block %" PRIu64 ": %u raw bytes, room for %zu", index, raw,
                            out_size);
        if (out && (r = block_inflate(h, dctx, index, in + FRIDGE_IMAGE_BLOCK_HEADER_SIZE, comp, out, raw, err,
                                      errlen)) < 0)
                return r;
        *ret_used = FRIDGE_IMAGE_BLOCK_HEADER_SIZE + comp;
        *ret_raw_len = raw;
        return 0;
}

int fridge_image_block_decode(const FridgeImageHeader *h, uint64_t index, const uint8_t *in, size_t in_size,
                              size_t *ret_used, uint8_t *out, size_t out_size, size_t *ret_raw_len, char *err,
                              size_t errlen) {
        return block_decode(h, NULL, index, in, in_size, ret_used, out, out_size, ret_raw_len, err, errlen);
}

/* Tops the window up to cap bytes from the source; fewer only at its end */
static int window_fill(FridgeImageReadCb read_cb, void *ud, uint8_t *win, size_t cap, size_t *have, char *err,
                       size_t errlen) {
        while (*have < cap) {
                ssize_t n = read_cb(win + *have, cap - *have, ud);
                if (n < 0)
                        return fail((int) n, err, errlen, "reading the image: %s", strerror((int) -n));
                if (n == 0)
                        break;
                *have += (size_t) n;
        }
        return 0;
}

/* One block from the window: decoded into buf, its pages handed on */
static int stream_block(const FridgeImageHeader *h, ZSTD_DCtx *dctx, uint64_t i, const uint8_t *win, size_t have,
                        uint8_t *buf, size_t room, size_t *ret_used, size_t *ret_raw, char *err, size_t errlen) {
        if (have == 0)
                return fail(-ENOBUFS, err, errlen, "image is truncated: %" PRIu64 " of %" PRIu64 " blocks", i,
                            h->block_count);
        int r = block_decode(h, dctx, i, win, have, ret_used, buf, room, ret_raw, err, errlen);
        if (r == 0 && i + 1 < h->block_count && *ret_raw != room)
                return fail(-EBADMSG, err, errlen, "block %" PRIu64 " is short: %zu bytes", i, *ret_raw);
        return r;
}

/* The stream block by block; decompressed (into each page_cb call) only with decompress */
static int stream_walk(const FridgeImageHeader *h, FridgeImageReadCb read_cb, void *read_userdata, bool decompress,
                       FridgeImagePagesCb page_cb, void *userdata, char *err, size_t errlen) {
        size_t room = (size_t) h->block_pages * h->page_size, cap = fridge_image_block_bound(room), have = 0, pos = 0;
        uint64_t pages = 0;
        uint8_t *buf = malloc(room), *win = malloc(cap);
        ZSTD_DCtx *dctx = ZSTD_createDCtx();
        int r = buf && win && dctx ? 0 : fail(-ENOMEM, err, errlen, "out of memory for a block of %zu bytes", room);
        for (uint64_t i = 0; r == 0 && i < h->block_count; i++) {
                size_t used = 0, raw = 0;
                r = window_fill(read_cb, read_userdata, win, cap, &have, err, errlen);
                if (r == 0)
                        r = stream_block(h, dctx, i, win, have, decompress ? buf : NULL, room, &used, &raw, err,
                                         errlen);
                if (r == 0 && page_cb)
                        r = page_cb(buf, raw, userdata);
                if (r == 0) {
                        memmove(win, win + used, have - used);
                        have -= used;
                        pos += used;
                        pages += raw / h->page_size;
                }
        }
        free(buf);
        free(win);
        ZSTD_freeDCtx(dctx);
        if (r == 0 && (pages != h->image_pages || pos != h->compressed_bytes))
                r = fail(-EBADMSG, err, errlen,
                         "image holds %" PRIu64 " pages in %zu bytes, its header says %" PRIu64 " in %" PRIu64, pages,
                         pos, h->image_pages, h->compressed_bytes);
        return r;
}

int fridge_image_stream_read(const FridgeImageHeader *h, FridgeImageReadCb read_cb, void *read_userdata,
                             FridgeImagePagesCb page_cb, void *userdata, char *err, size_t errlen) {
        return stream_walk(h, read_cb, read_userdata, true, page_cb, userdata, err, errlen);
}

int fridge_image_stream_check(const FridgeImageHeader *h, FridgeImageReadCb read_cb, void *read_userdata, char *err,
                              size_t errlen) {
        return stream_walk(h, read_cb, read_userdata, false, NULL, NULL, err, errlen);
}

typedef struct MemSource {
        const uint8_t *p;
        size_t len, pos;
} MemSource;

static ssize_t mem_read(uint8_t *buf, size_t len, void *userdata) {
        MemSource *m = userdata;
        size_t n = m->len - m->pos < len ? m->len - m->pos : len;
        memcpy(buf, m->p + m->pos, n);
        m->pos += n;
        return (ssize_t) n;
}

int fridge_image_stream_decode(const FridgeImageHeader *h, const uint8_t *stream, size_t len,
                               FridgeImagePagesCb page_cb, void *userdata, char *err, size_t errlen) {
        MemSource m = { stream, len, 0 };
        return fridge_image_stream_read(h, mem_read, &m, page_cb, userdata, err, errlen);
}
