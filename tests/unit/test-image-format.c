/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge's hibernation image format on buffers: what the writer puts down
 * the resume tool takes back page for page, and every damage is refused
 * with a sentence that names it. */
#include <errno.h>
#include <glib.h>
#include <string.h>

#include "image-format.h"

#define PAGE 4096u
#define BLOCK_PAGES 4u
#define PAGES 10u /* three blocks, the last one short */

typedef struct Image {
        FridgeImageHeader h;
        uint8_t header[FRIDGE_IMAGE_HEADER_SIZE];
        uint8_t *pages; /* what the kernel's snapshot would have been */
        uint8_t *stream;
        size_t len;
} Image;

/* Memory-like pages: zeros, text, and noise that does not compress */
static uint8_t *make_pages(void) {
        uint8_t *p = g_malloc0(PAGES * PAGE);
        GRand *rand = g_rand_new_with_seed(17);
        for (size_t i = 0; i < PAGES; i++)
                for (size_t j = 0; j < PAGE; j++)
                        p[i * PAGE + j] = i % 3 == 0   ? 0
                                          : i % 3 == 1 ? "fridge keeps its image"[j % 22]
                                                       : (uint8_t) g_rand_int(rand);
        g_rand_free(rand);
        return p;
}

/* A compressor and its level: every one the reader takes */
typedef struct Codec {
        FridgeImageCompressor compressor;
        int level;
        const char *name;
} Codec;
static const Codec writer_codec = { FRIDGE_IMAGE_COMPRESSOR, FRIDGE_IMAGE_LEVEL, "writer" };
static const Codec codecs[] = {
        { FRIDGE_IMAGE_ZSTD, 1, "zstd-1" },
        { FRIDGE_IMAGE_ZSTD, -20, "zstd-fast-20" },
        { FRIDGE_IMAGE_LZ4, 1, "lz4-1" },
        { FRIDGE_IMAGE_LZ4, 8, "lz4-8" },
};

/* A context kept across blocks, as the writer keeps one a thread */
static void image_make_with(Image *img, const Codec *codec) {
        char err[FRIDGE_IMAGE_ERR_MAX];
        ZSTD_CCtx *cctx = ZSTD_createCCtx();
        *img = (Image) {
                .h = { .page_size = PAGE, .block_pages = BLOCK_PAGES, .image_id = 0x1234abcdULL,
                       .image_pages = PAGES, .block_count = 3, .map_offset = 8 * PAGE,
                       .compressor = codec->compressor, .level = codec->level, .kernel_release = "6.1.0-test",
                       .kernel_version = "#1 SMP Debian 6.1.0" },
                .pages = make_pages(),
                .stream = g_malloc(3 * fridge_image_block_bound(BLOCK_PAGES * PAGE)),
        };
        for (uint64_t i = 0; i < img->h.block_count; i++) {
                size_t raw = MIN(BLOCK_PAGES, PAGES - i * BLOCK_PAGES) * PAGE, n;
                g_assert_cmpint(fridge_image_block_encode(&img->h, cctx, i, img->pages + i * BLOCK_PAGES * PAGE, raw,
                                                          codec->level, img->stream + img->len,
                                                          fridge_image_block_bound(raw), &n, err, sizeof(err)),
                                ==, 0);
                img->len += n;
        }
        ZSTD_freeCCtx(cctx);
        img->h.compressed_bytes = img->len;
        g_assert_cmpint(fridge_image_header_encode(&img->h, img->header, sizeof(img->header), err, sizeof(err)), ==, 0);
}

/* With the writer's compressor */
static void image_make(Image *img) {
        image_make_with(img, &writer_codec);
}

static void image_clear(Image *img) {
        g_free(img->pages);
        g_free(img->stream);
}

typedef struct Collect {
        GByteArray *out;
} Collect;

static int collect(const uint8_t *pages, size_t len, void *userdata) {
        g_byte_array_append(((Collect *) userdata)->out, pages, len);
        return 0;
}

/* Decodes img's header and stream; the refusal's message in err */
static int image_read(const Image *img, size_t len, GByteArray *out, char *err) {
        FridgeImageHeader h;
        int r = fridge_image_header_decode(img->header, sizeof(img->header), &h, err, FRIDGE_IMAGE_ERR_MAX);
        if (r < 0)
                return r;
        Collect c = { out };
        return fridge_image_stream_decode(&h, img->stream, len, out ? collect : NULL, &c, err, FRIDGE_IMAGE_ERR_MAX);
}

static void assert_refused(int r, int want, const char *err, const char *says) {
        g_assert_cmpint(r, ==, want);
        if (!strstr(err, says))
                g_error("the refusal \"%s\" does not say \"%s\"", err, says);
}

static void test_round_trip(gconstpointer codec) {
        Image img;
        image_make_with(&img, codec);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        g_autoptr(GByteArray) out = g_byte_array_new();
        g_assert_cmpint(image_read(&img, img.len, out, err), ==, 0);
        g_assert_cmpuint(out->len, ==, PAGES * PAGE);
        g_assert_true(memcmp(out->data, img.pages, PAGES * PAGE) == 0);
        /* a third of the pages are noise: the rest must have shrunk */
        g_assert_cmpuint(img.len, <, PAGES * PAGE / 2);

        FridgeImageHeader h;
        g_assert_cmpint(fridge_image_header_decode(img.header, sizeof(img.header), &h, err, sizeof(err)), ==, 0);
        g_assert_cmpstr(h.kernel_release, ==, "6.1.0-test");
        g_assert_cmpstr(h.kernel_version, ==, "#1 SMP Debian 6.1.0");
        g_assert_cmpuint(h.map_offset, ==, 8 * PAGE);
        g_assert_cmpuint(h.image_id, ==, 0x1234abcdULL);
        g_assert_cmpuint(h.compressed_bytes, ==, img.len);
        image_clear(&img);
}

/* The header says which compressor made the blocks, with its level (a
 * fast zstd level is negative); one this reader does not know is refused */
static void test_compressor_in_header(void) {
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        FridgeImageHeader h = { .page_size = PAGE, .block_pages = BLOCK_PAGES, .image_pages = BLOCK_PAGES,
                                .block_count = 1, .kernel_release = "6.1.0-test" }, back;
        uint8_t buf[FRIDGE_IMAGE_HEADER_SIZE];
        for (size_t i = 0; i < G_N_ELEMENTS(codecs); i++) {
                h.compressor = codecs[i].compressor, h.level = codecs[i].level;
                g_assert_cmpint(fridge_image_header_encode(&h, buf, sizeof(buf), err, sizeof(err)), ==, 0);
                g_assert_cmpint(fridge_image_header_decode(buf, sizeof(buf), &back, err, sizeof(err)), ==, 0);
                g_assert_cmpint(back.compressor, ==, codecs[i].compressor);
                g_assert_cmpint(back.level, ==, codecs[i].level);
        }
        h.compressor = _FRIDGE_IMAGE_COMPRESSOR_MAX;
        assert_refused(fridge_image_header_encode(&h, buf, sizeof(buf), err, sizeof(err)), -EPROTO, err,
                       "compressor 2 is not one this reader knows");
}

/* The platform flag goes through; an image from before the flags (zeros
 * there) has none; a flag this reader does not know is refused */
static void test_flags_in_header(void) {
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        FridgeImageHeader h = { .page_size = PAGE, .block_pages = BLOCK_PAGES, .image_pages = BLOCK_PAGES,
                                .block_count = 1, .kernel_release = "6.1.0-test" }, back;
        uint8_t buf[FRIDGE_IMAGE_HEADER_SIZE];
        g_assert_cmpint(fridge_image_header_encode(&h, buf, sizeof(buf), err, sizeof(err)), ==, 0);
        g_assert_cmpint(fridge_image_header_decode(buf, sizeof(buf), &back, err, sizeof(err)), ==, 0);
        g_assert_cmpuint(back.flags, ==, 0);
        h.flags = FRIDGE_IMAGE_FLAG_PLATFORM;
        g_assert_cmpint(fridge_image_header_encode(&h, buf, sizeof(buf), err, sizeof(err)), ==, 0);
        g_assert_cmpint(fridge_image_header_decode(buf, sizeof(buf), &back, err, sizeof(err)), ==, 0);
        g_assert_cmpuint(back.flags, ==, FRIDGE_IMAGE_FLAG_PLATFORM);
        h.flags = 0x6;
        assert_refused(fridge_image_header_encode(&h, buf, sizeof(buf), err, sizeof(err)), -EPROTO, err,
                       "flags 0x6 are not ones this reader knows");
}

/* A source that hands out at most step bytes a call (as the device does,
 * through the map, page by page), and fails after fail_at bytes */
typedef struct Trickle {
        const uint8_t *p;
        size_t len, pos, step, fail_at;
} Trickle;

static ssize_t trickle(uint8_t *buf, size_t len, void *userdata) {
        Trickle *t = userdata;
        if (t->pos >= t->fail_at)
                return -EIO;
        size_t n = MIN(MIN(len, t->step), t->len - t->pos);
        memcpy(buf, t->p + t->pos, n);
        t->pos += n;
        return (ssize_t) n;
}

static void test_stream_read(void) {
        Image img;
        image_make(&img);
        FridgeImageHeader h;
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        g_assert_cmpint(fridge_image_header_decode(img.header, sizeof(img.header), &h, err, sizeof(err)), ==, 0);
        size_t steps[] = { 1, 1000, PAGE, img.len };
        for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
                g_autoptr(GByteArray) out = g_byte_array_new();
                Collect c = { out };
                Trickle t = { img.stream, img.len, 0, steps[i], SIZE_MAX };
                g_assert_cmpint(fridge_image_stream_read(&h, trickle, &t, collect, &c, err, sizeof(err)), ==, 0);
                g_assert_cmpuint(out->len, ==, PAGES * PAGE);
                g_assert_true(memcmp(out->data, img.pages, PAGES * PAGE) == 0);
        }
        /* the source fails in the middle: its error, said */
        Trickle t = { img.stream, img.len, 0, PAGE, img.len / 2 };
        assert_refused(fridge_image_stream_read(&h, trickle, &t, NULL, NULL, err, sizeof(err)), -EIO, err,
                       "reading the image: Input/output error");
        /* it ends early */
        t = (Trickle) { img.stream, img.len - 1, 0, PAGE, SIZE_MAX };
        g_assert_cmpint(fridge_image_stream_read(&h, trickle, &t, NULL, NULL, err, sizeof(err)), <, 0);
        g_assert_nonnull(strstr(err, "block 2 is truncated"));
        image_clear(&img);
}

/* --verify-only's check, which does not decompress: it accepts a whole
 * image and catches what decoding would, a bit flipped anywhere (a block's
 * header or its checksummed payload) and an image cut short */
static void test_stream_check(void) {
        Image img;
        image_make(&img);
        FridgeImageHeader h;
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        g_assert_cmpint(fridge_image_header_decode(img.header, sizeof(img.header), &h, err, sizeof(err)), ==, 0);
        size_t steps[] = { 1, PAGE, img.len };
        for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
                Trickle t = { img.stream, img.len, 0, steps[i], SIZE_MAX };
                g_assert_cmpint(fridge_image_stream_check(&h, trickle, &t, err, sizeof(err)), ==, 0);
        }
        for (size_t i = 0; i < img.len; i += 97) {
                img.stream[i] ^= 0x10;
                Trickle t = { img.stream, img.len, 0, PAGE, SIZE_MAX };
                g_assert_cmpint(fridge_image_stream_check(&h, trickle, &t, err, sizeof(err)), <, 0);
                g_assert_nonnull(strstr(err, "block "));
                img.stream[i] ^= 0x10;
        }
        size_t second = 32 + (size_t) (img.stream[8] | img.stream[9] << 8 | img.stream[10] << 16);
        Trickle t = { img.stream, second, 0, PAGE, SIZE_MAX };
        assert_refused(fridge_image_stream_check(&h, trickle, &t, err, sizeof(err)), -ENOBUFS, err,
                       "image is truncated: 1 of 3 blocks");
        image_clear(&img);
}

static void test_flipped_bit(gconstpointer codec) {
        Image img;
        image_make_with(&img, codec);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        /* one bit in every byte of the stream, one at a time: each is caught */
        for (size_t i = 0; i < img.len; i += 97) {
                img.stream[i] ^= 0x10;
                int r = image_read(&img, img.len, NULL, err);
                g_assert_cmpint(r, <, 0);
                g_assert_nonnull(strstr(err, "block "));
                img.stream[i] ^= 0x10;
        }
        /* in the second block's payload: the checksum names the block */
        size_t second = 32 + (size_t) (img.stream[8] | img.stream[9] << 8 | img.stream[10] << 16);
        img.stream[second + 40] ^= 0x01;
        assert_refused(image_read(&img, img.len, NULL, err), -EBADMSG, err,
                       "block 1 is corrupt: its xxhash64 does not match");
        image_clear(&img);
}

static void test_truncated(void) {
        Image img;
        image_make(&img);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        assert_refused(image_read(&img, img.len - 1, NULL, err), -ENOBUFS, err, "is truncated");
        assert_refused(image_read(&img, 20, NULL, err), -ENOBUFS, err, "block 0 is truncated: 20 bytes");
        /* cut at a block's end: the missing blocks are counted */
        size_t first = 32 + (size_t) (img.stream[8] | img.stream[9] << 8 | img.stream[10] << 16);
        assert_refused(image_read(&img, first, NULL, err), -ENOBUFS, err, "image is truncated: 1 of 3 blocks");
        FridgeImageHeader h;
        assert_refused(fridge_image_header_decode(img.header, 100, &h, err, sizeof(err)), -ENOBUFS, err,
                       "image header is truncated: 100 of 512 bytes");
        image_clear(&img);
}

static void test_other_kernel(void) {
        Image img;
        image_make(&img);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        FridgeImageHeader h;
        g_assert_cmpint(fridge_image_header_decode(img.header, sizeof(img.header), &h, err, sizeof(err)), ==, 0);
        g_assert_cmpint(fridge_image_header_check_kernel(&h, "6.1.0-test", "#1 SMP Debian 6.1.0", err, sizeof(err)),
                        ==, 0);
        assert_refused(fridge_image_header_check_kernel(&h, "6.1.0-other", "#1 SMP Debian 6.1.0", err, sizeof(err)),
                       -ESTALE, err,
                       "the image was made by another kernel: 6.1.0-test (#1 SMP Debian 6.1.0), this is 6.1.0-other");
        /* the same release, another build */
        assert_refused(fridge_image_header_check_kernel(&h, "6.1.0-test", "#2 SMP Debian 6.1.0", err, sizeof(err)),
                       -ESTALE, err, "made by another kernel");
        image_clear(&img);
}

static void test_header_checksum(void) {
        Image img;
        image_make(&img);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        FridgeImageHeader h;
        /* a changed kernel release would let a stale image through: the sum catches it */
        img.header[72] ^= 0x01;
        assert_refused(fridge_image_header_decode(img.header, sizeof(img.header), &h, err, sizeof(err)), -EBADMSG, err,
                       "image header checksum mismatch");
        img.header[72] ^= 0x01;
        img.header[FRIDGE_IMAGE_HEADER_SIZE - 1] ^= 0x80;
        assert_refused(fridge_image_header_decode(img.header, sizeof(img.header), &h, err, sizeof(err)), -EBADMSG, err,
                       "the header is corrupt");
        image_clear(&img);
}

static void test_not_an_image(void) {
        uint8_t zero[FRIDGE_IMAGE_HEADER_SIZE] = { 0 };
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        FridgeImageHeader h;
        assert_refused(fridge_image_header_decode(zero, sizeof(zero), &h, err, sizeof(err)), -ENODATA, err,
                       "no fridge image");
}

/* A block of an earlier image, or one moved, does not verify */
static void test_stale_or_moved_block(void) {
        Image img, other;
        image_make(&img);
        image_make(&other);
        other.h.image_id++;
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        FridgeImageHeader h = other.h;
        assert_refused(fridge_image_stream_decode(&h, img.stream, img.len, NULL, NULL, err, sizeof(err)), -EBADMSG,
                       err, "block 0 is corrupt: its xxhash64 does not match");
        size_t first = 32 + (size_t) (img.stream[8] | img.stream[9] << 8 | img.stream[10] << 16);
        assert_refused(fridge_image_stream_decode(&img.h, img.stream + first, img.len - first, NULL, NULL, err,
                                                  sizeof(err)),
                       -EBADMSG, err, "block 0 is out of order: it says it is block 1");
        image_clear(&img);
        image_clear(&other);
}

/* The writer cannot put down a header the reader would refuse */
static void test_encode_refuses(void) {
        Image img;
        image_make(&img);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        uint8_t buf[FRIDGE_IMAGE_HEADER_SIZE];
        FridgeImageHeader h = img.h;
        h.block_count = 2;
        assert_refused(fridge_image_header_encode(&h, buf, sizeof(buf), err, sizeof(err)), -EINVAL, err,
                       "2 blocks do not hold 10 pages at 4 pages a block");
        h = img.h;
        h.page_size = 5000;
        assert_refused(fridge_image_header_encode(&h, buf, sizeof(buf), err, sizeof(err)), -EINVAL, err,
                       "page size 5000 is not a power of two");
        h = img.h;
        memset(h.kernel_release, 'x', sizeof(h.kernel_release));
        assert_refused(fridge_image_header_encode(&h, buf, sizeof(buf), err, sizeof(err)), -EINVAL, err,
                       "the kernel's identity is missing or not terminated");
        size_t n;
        assert_refused(fridge_image_block_encode(&img.h, NULL, 0, img.pages, 100, 1, buf, sizeof(buf), &n, err, sizeof(err)),
                       -EINVAL, err, "100 bytes is not 1 to 4 whole pages");
        image_clear(&img);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_data_func("/image-format/round-trip/writer", &writer_codec, test_round_trip);
        g_test_add_data_func("/image-format/flipped-bit/writer", &writer_codec, test_flipped_bit);
        for (size_t i = 0; i < G_N_ELEMENTS(codecs); i++) {
                g_autofree char *rt = g_strdup_printf("/image-format/round-trip/%s", codecs[i].name);
                g_autofree char *fb = g_strdup_printf("/image-format/flipped-bit/%s", codecs[i].name);
                g_test_add_data_func(rt, &codecs[i], test_round_trip);
                g_test_add_data_func(fb, &codecs[i], test_flipped_bit);
        }
        g_test_add_func("/image-format/compressor-in-header", test_compressor_in_header);
        g_test_add_func("/image-format/flags-in-header", test_flags_in_header);
        g_test_add_func("/image-format/stream-read", test_stream_read);
        g_test_add_func("/image-format/stream-check", test_stream_check);
        g_test_add_func("/image-format/truncated", test_truncated);
        g_test_add_func("/image-format/other-kernel", test_other_kernel);
        g_test_add_func("/image-format/header-checksum", test_header_checksum);
        g_test_add_func("/image-format/not-an-image", test_not_an_image);
        g_test_add_func("/image-format/stale-or-moved-block", test_stale_or_moved_block);
        g_test_add_func("/image-format/encode-refuses", test_encode_refuses);
        return g_test_run();
}
