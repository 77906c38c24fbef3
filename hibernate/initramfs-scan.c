/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "initramfs-scan.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lz4.h>
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "format-util.h"
#include "macro.h"

#define CPIO_HEADER 110u
#define CPIO_NAME_MAX 4096u
#define OUT_CHUNK (256u * 1024u)
#define LZ4_LEGACY_MAGIC 0x184C2102u
#define LZ4_LEGACY_BLOCK (8u << 20)

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* ---- the cpio (newc) stream, fed in pieces of any size ---- */

typedef enum CpioState { CPIO_AT_HEADER, CPIO_AT_NAME, CPIO_SKIPPING } CpioState;

typedef struct Cpio {
        InitramfsScan *scan;
        CpioState state;
        uint64_t pos;                   /* in the stream: headers start 4-aligned */
        char header[CPIO_HEADER];
        char name[CPIO_NAME_MAX];
        size_t have, name_size;
        uint64_t skip;                  /* the name's padding, then the data and its */
        uint32_t mode;
        uint64_t data_size;
        bool ended;                     /* TRAILER!!! read */
} Cpio;

static int hex8(const char *s, uint64_t *ret) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) {
                char c = s[i];
                int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
                if (d < 0)
                        return -EBADMSG;
                v = v << 4 | (uint64_t) d;
        }
        *ret = v;
        return 0;
}

static uint64_t pad4(uint64_t pos) {
        return (4 - pos % 4) % 4;
}

/* newc's fields: magic, then 13 of 8 hex digits; mode is the 2nd, the
 * file size the 7th, the name's size (with its NUL) the 12th */
static int cpio_header_parse(Cpio *p, char *why, size_t whylen) {
        if (memcmp(p->header, "070701", 6) != 0 && memcmp(p->header, "070702", 6) != 0)
                return fail(-EBADMSG, why, whylen, "no cpio header where one should start (\"%.6s\")", p->header);
        uint64_t mode, size, name_size;
        if (hex8(p->header + 6 + 8, &mode) < 0 || hex8(p->header + 6 + 6 * 8, &size) < 0 ||
            hex8(p->header + 6 + 11 * 8, &name_size) < 0)
                return fail(-EBADMSG, why, whylen, "a cpio header with a field that is not hexadecimal");
        if (name_size == 0 || name_size > CPIO_NAME_MAX)
                return fail(-EBADMSG, why, whylen, "a cpio entry whose name is %" PRIu64 " bytes long", name_size);
        p->mode = (uint32_t) mode;
        p->data_size = size;
        p->name_size = (size_t) name_size;
        return 0;
}

static void cpio_entry_done(Cpio *p) {
        const char *n = p->name;
        while (n[0] == '.' && n[1] == '/')
                n += 2;
        n += strspn(n, "/");
        if (strcmp(p->name, "TRAILER!!!") == 0)
                p->ended = true;
        else if (S_ISREG(p->mode) && strcmp(n, p->scan->name) == 0)
                p->scan->found = true;
}

/* How much of buf it took: all of it, or up to the end of an archive
 * (then p->ended); a negative errno on a broken archive */
static ssize_t cpio_feed(Cpio *p, const uint8_t *buf, size_t len, char *why, size_t whylen) {
        size_t used = 0;
        while (used < len && !p->ended) {
                size_t n;
                if (p->state == CPIO_SKIPPING) {
                        n = (size_t) MIN(p->skip, (uint64_t) (len - used));
                        p->skip -= n;
                        if (p->skip == 0)
                                p->state = CPIO_AT_HEADER;
                } else if (p->state == CPIO_AT_HEADER) {
                        n = MIN(CPIO_HEADER - p->have, len - used);
                        memcpy(p->header + p->have, buf + used, n);
                        p->have += n;
                        if (p->have == CPIO_HEADER) {
                                int r = cpio_header_parse(p, why, whylen);
                                if (r < 0)
                                        return r;
                                p->have = 0;
                                p->state = CPIO_AT_NAME;
                        }
                } else {
                        n = MIN(p->name_size - p->have, len - used);
                        memcpy(p->name + p->have, buf + used, n);
                        p->have += n;
                        if (p->have == p->name_size) {
                                p->name[p->name_size - 1] = '\0';
                                p->have = 0;
                                uint64_t end = p->pos + n;
                                p->skip = pad4(end) + p->data_size + pad4(end + pad4(end) + p->data_size);
                                p->state = p->skip ? CPIO_SKIPPING : CPIO_AT_HEADER;
                                cpio_entry_done(p);
                        }
                }
                used += n;
                p->pos += n;
                /* a trailer's padding belongs to its archive */
                if (p->ended && p->state == CPIO_SKIPPING) {
                        size_t rest = (size_t) MIN(p->skip, (uint64_t) (len - used));
                        used += rest;
                        p->pos += rest;
                        p->skip -= rest;
                }
        }
        return (ssize_t) used;
}

/* Inside one decompressed stream: an archive's trailer padding, zeros
 * between archives, then the next */
static int cpio_feed_stream(Cpio *p, const uint8_t *buf, size_t len, char *why, size_t whylen) {
        while (len > 0 && !p->scan->found) {
                size_t n;
                if (p->ended) {
                        n = p->skip ? (size_t) MIN(p->skip, (uint64_t) len) : buf[0] == 0;
                        if (n == 0) {
                                p->ended = false;
                                p->state = CPIO_AT_HEADER;
                                p->scan->archives++;
                                continue;
                        }
                        p->skip -= MIN(p->skip, (uint64_t) n);
                        p->pos += n;
                } else {
                        ssize_t r = cpio_feed(p, buf, len, why, whylen);
                        if (r < 0)
                                return (int) r;
                        n = (size_t) r;
                }
                buf += n, len -= n;
        }
        return 0;
}

/* ---- compressed archives: each takes what it reads, gives its output to the cpio stream ---- */

typedef int (*Decompressor)(Cpio *p, const uint8_t *in, size_t len, size_t *ret_used, char *why, size_t whylen);

static int feed_out(Cpio *p, const uint8_t *out, size_t n, char *why, size_t whylen) {
        return cpio_feed_stream(p, out, n, why, whylen);
}

static const uint8_t zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

static int zstd_read(Cpio *p, const uint8_t *in, size_t len, size_t *ret_used, char *why, size_t whylen) {
        ZSTD_DStream *z = ZSTD_createDStream();
        _cleanup_free_ uint8_t *out = malloc(OUT_CHUNK);
        if (!z || !out) {
                ZSTD_freeDStream(z);
                return fail(-ENOMEM, why, whylen, "out of memory");
        }
        ZSTD_inBuffer ib = { in, len, 0 };
        int r = 0;
        for (size_t ret = 1; r == 0 && !p->scan->found;) {
                /* frames one after another are one archive's (zstd -T) */
                if (ret == 0 && (ib.size - ib.pos < 4 || memcmp((const uint8_t *) in + ib.pos, zstd_magic, 4) != 0))
                        break;
                ZSTD_outBuffer ob = { out, OUT_CHUNK, 0 };
                ret = ZSTD_decompressStream(z, &ob, &ib);
                if (ZSTD_isError(ret))
                        r = fail(-EBADMSG, why, whylen, "corrupt zstd data: %s", ZSTD_getErrorName(ret));
                else if (ob.pos > 0)
                        r = feed_out(p, out, ob.pos, why, whylen);
                else if (ret != 0 && ib.pos == ib.size)
                        r = fail(-EBADMSG, why, whylen, "the zstd data ends early");
        }
        ZSTD_freeDStream(z);
        *ret_used = ib.pos;
        return r;
}

static int gzip_read(Cpio *p, const uint8_t *in, size_t len, size_t *ret_used, char *why, size_t whylen) {
        z_stream z = { .next_in = (Bytef *) in, .avail_in = (uInt) MIN(len, (size_t) UINT32_MAX) };
        _cleanup_free_ uint8_t *out = malloc(OUT_CHUNK);
        if (!out || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
                return fail(-ENOMEM, why, whylen, "out of memory");
        int r = 0, zr = Z_OK;
        while (zr != Z_STREAM_END && r == 0 && !p->scan->found) {
                z.next_out = out;
                z.avail_out = OUT_CHUNK;
                zr = inflate(&z, Z_NO_FLUSH);
                if (zr != Z_OK && zr != Z_STREAM_END)
                        r = fail(-EBADMSG, why, whylen, "corrupt gzip data: %s",
                                zr == Z_BUF_ERROR ? "it ends early" : z.msg ? z.msg : "inflate failed");
                else if (OUT_CHUNK - z.avail_out > 0)
                        r = feed_out(p, out, OUT_CHUNK - z.avail_out, why, whylen);
        }
        *ret_used = (size_t) z.total_in;
        inflateEnd(&z);
        return r;
}

/* A header may ask for a dictionary of up to 1.5 GiB; the kernel's own
 * unpacker and initramfs-tools' xz use a few MiB */
#define XZ_MEMLIMIT (128u << 20)

static int xz_read(Cpio *p, const uint8_t *in, size_t len, size_t *ret_used, char *why, size_t whylen) {
        lzma_stream z = LZMA_STREAM_INIT;
        _cleanup_free_ uint8_t *out = malloc(OUT_CHUNK);
        if (!out || lzma_stream_decoder(&z, XZ_MEMLIMIT, 0) != LZMA_OK)
                return fail(-ENOMEM, why, whylen, "out of memory");
        z.next_in = in;
        z.avail_in = len;
        int r = 0;
        lzma_ret zr = LZMA_OK;
        while (zr != LZMA_STREAM_END && r == 0 && !p->scan->found) {
                z.next_out = out;
                z.avail_out = OUT_CHUNK;
                zr = lzma_code(&z, LZMA_FINISH);
                if (zr == LZMA_MEMLIMIT_ERROR)
                        r = fail(-EFBIG, why, whylen, "xz data that needs more than %u MiB to unpack",
                                (unsigned) (XZ_MEMLIMIT >> 20));
                else if (zr != LZMA_OK && zr != LZMA_STREAM_END)
                        r = fail(-EBADMSG, why, whylen, "corrupt xz data: %s",
                                zr == LZMA_BUF_ERROR ? "it ends early" : "liblzma refused it");
                else if (OUT_CHUNK - z.avail_out > 0)
                        r = feed_out(p, out, OUT_CHUNK - z.avail_out, why, whylen);
        }
        *ret_used = (size_t) z.total_in;
        lzma_end(&z);
        return r;
}

/* lz4 -l: the magic, then blocks of a 32-bit size and up to 8 MiB each;
 * the stream ends where the data does or a size cannot be one (the next
 * archive's start, or zero padding) */
static int lz4_read(Cpio *p, const uint8_t *in, size_t len, size_t *ret_used, char *why, size_t whylen) {
        _cleanup_free_ char *out = malloc(LZ4_LEGACY_BLOCK);
        if (!out)
                return fail(-ENOMEM, why, whylen, "out of memory");
        size_t pos = 4, blocks = 0;
        int r = 0;
        while (r == 0 && !p->scan->found && len - pos >= 4) {
                uint32_t size = get32(in + pos);
                if (size == LZ4_LEGACY_MAGIC) {
                        pos += 4;
                        continue;
                }
                if (size == 0 || size > (uint32_t) LZ4_compressBound(LZ4_LEGACY_BLOCK) || size > len - pos - 4) {
                        if (blocks == 0)
                                r = fail(-EBADMSG, why, whylen, "corrupt lz4 data: a first block of %u bytes", size);
                        break;
                }
                int n = LZ4_decompress_safe((const char *) in + pos + 4, out, (int) size, LZ4_LEGACY_BLOCK);
                if (n < 0)
                        return fail(-EBADMSG, why, whylen, "corrupt lz4 data in block %zu", blocks);
                pos += 4 + size;
                blocks++;
                r = feed_out(p, (const uint8_t *) out, (size_t) n, why, whylen);
        }
        *ret_used = pos;
        return r;
}

static const struct {
        const char *name;
        const uint8_t magic[4];
        size_t magic_len;
        Decompressor read;              /* NULL: named, not read */
} formats[] = {
        { "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4, zstd_read },
        { "gzip", { 0x1f, 0x8b }, 2, gzip_read },
        { "xz", { 0xfd, '7', 'z', 'X' }, 4, xz_read },
        { "lz4", { 0x02, 0x21, 0x4c, 0x18 }, 4, lz4_read },
        { "bzip2", { 'B', 'Z', 'h' }, 3, NULL },
        { "lzo", { 0x89, 'L', 'Z', 'O' }, 4, NULL },
        { "lzma", { 0x5d, 0x00, 0x00 }, 3, NULL },
};

/* One compressed archive at in: how much of the file it was */
static int compressed_read(Cpio *p, const uint8_t *in, size_t len, size_t *ret_used, char *why, size_t whylen) {
        for (size_t i = 0; i < ELEMENTSOF(formats); i++) {
                if (len < formats[i].magic_len || memcmp(in, formats[i].magic, formats[i].magic_len) != 0)
                        continue;
                if (!formats[i].read)
                        return fail(-EOPNOTSUPP, why, whylen, "an archive compressed with %s, which is not read here",
                                   formats[i].name);
                if (p->ended) { /* else it goes on with what the last one left unfinished */
                        p->pos = 0;
                        p->skip = 0;
                }
                return formats[i].read(p, in, len, ret_used, why, whylen);
        }
        return fail(-EBADMSG, why, whylen, "neither a cpio archive nor a known compression (%02x %02x %02x %02x)",
                   in[0], len > 1 ? in[1] : 0, len > 2 ? in[2] : 0, len > 3 ? in[3] : 0);
}

int initramfs_scan_buffer(const void *data, size_t size, InitramfsScan *s, char *why, size_t whylen) {
        const uint8_t *b = data;
        size_t at = 0;
        s->found = false;
        s->archives = 0;
        _cleanup_free_ Cpio *p = calloc(1, sizeof(Cpio));
        if (!p)
                return fail(-ENOMEM, why, whylen, "out of memory");
        p->scan = s;
        p->ended = true; /* between archives */
        while (at < size && !s->found) {
                if (b[at] == 0) {
                        at++;
                        continue;
                }
                size_t used = 0;
                int r;
                if (size - at >= 6 && memcmp(b + at, "0707", 4) == 0) {
                        *p = (Cpio) { .scan = s, .pos = at };
                        s->archives++;
                        ssize_t n = cpio_feed(p, b + at, size - at, why, whylen);
                        r = n < 0 ? (int) n : 0;
                        used = n < 0 ? 0 : (size_t) n;
                } else {
                        r = compressed_read(p, b + at, size - at, &used, why, whylen);
                        if (r >= 0 && !s->found && used == 0)
                                r = fail(-EBADMSG, why, whylen, "an archive at byte %zu that reads as empty", at);
                }
                if (r < 0)
                        return r;
                at += used;
        }
        /* a compressed one cut short may be followed by padding: still cut short */
        if (!s->found && !p->ended)
                return fail(-EBADMSG, why, whylen, "the last archive ends early, in its %s",
                           p->state == CPIO_SKIPPING ? "data" : "headers");
        return 0;
}

int initramfs_scan_file(const char *path, InitramfsScan *s, char *why, size_t whylen) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return fail(-errno, why, whylen, "%s", strerror(errno));
        struct stat st;
        if (fstat(fd, &st) < 0)
                return fail(-errno, why, whylen, "%s", strerror(errno));
        if (!S_ISREG(st.st_mode))
                return fail(-EINVAL, why, whylen, "not a regular file");
        if (st.st_size == 0)
                return fail(-EBADMSG, why, whylen, "an empty file");
        /* Mapped, a file cut short under the scan (dracut copies over
         * its output in place) would end it with SIGBUS: under a read
         * lease whoever opens it to write waits until it is closed. One
         * open for writing already is being written: what it will hold
         * is unknown. Without leases (fs.leases-enable=0, a file system
         * without them) it is read as it is. */
        if (fcntl(fd, F_SETLEASE, F_RDLCK) < 0 && errno == EAGAIN)
                return fail(-EBUSY, why, whylen, "it is being written");
        void *m = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
                return fail(-errno, why, whylen, "%s", strerror(errno));
        (void) madvise(m, (size_t) st.st_size, MADV_SEQUENTIAL);
        int r = initramfs_scan_buffer(m, (size_t) st.st_size, s, why, whylen);
        munmap(m, (size_t) st.st_size);
        return r;
}

bool initramfs_candidate(const char *release, unsigned i, char *buf, size_t size) {
        switch (i) {
        case 0: snprintf(buf, size, "/boot/initrd.img-%s", release); return true;
        case 1: snprintf(buf, size, "/boot/initramfs-%s.img", release); return true;
        default: return false;
        }
}
