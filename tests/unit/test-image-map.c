/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The map of an image's pages on the device: what the writer encodes the
 * resume tool reads back entry for entry, and a corrupt, truncated,
 * looping, foreign or out-of-device map is refused with a sentence that
 * names the map page. The device is an array of pages in memory. */
#include <errno.h>
#include <glib.h>
#include <string.h>

#include "image-map.h"

#define PAGE 4096u
#define DEVICE_PAGES 4096u
#define PER ((PAGE - FRIDGE_IMAGE_MAP_HEADER_SIZE) / 8u)

typedef struct Device {
        uint8_t *pages;
        int reads;
} Device;

static int dev_read(uint64_t page, uint8_t *buf, void *userdata) {
        Device *d = userdata;
        g_assert_cmpuint(page, <, DEVICE_PAGES);
        if (++d->reads > 100)
                g_error("the reader went on past 100 map pages: a loop was followed");
        memcpy(buf, d->pages + page * PAGE, PAGE);
        return 0;
}

/* entries image pages (so 1 + entries / PER map pages), the stream on
 * every other page from 100 (as a swap with holes hands them out), the map
 * pages at 10, 20, 30..., written to the device */
static FridgeImageHeader map_make(Device *d, uint64_t entries, uint64_t **ret_entries) {
        FridgeImageHeader h = { .page_size = PAGE, .block_pages = 32, .image_id = 0xfeedULL,
                                .compressed_bytes = entries * PAGE - 100 };
        uint64_t n = fridge_image_map_entries(&h), maps = fridge_image_map_pages(&h);
        g_assert_cmpuint(n, ==, entries);
        uint64_t *e = g_new(uint64_t, n), *m = g_new(uint64_t, maps);
        for (uint64_t i = 0; i < n; i++)
                e[i] = 100 + 2 * i;
        for (uint64_t k = 0; k < maps; k++)
                m[k] = 10 * (k + 1);
        g_autofree uint8_t *out = g_malloc(maps * PAGE);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        g_assert_cmpint(fridge_image_map_encode(&h, e, m, maps, out, err, sizeof(err)), ==, 0);
        d->pages = g_malloc0((size_t) DEVICE_PAGES * PAGE);
        for (uint64_t k = 0; k < maps; k++)
                memcpy(d->pages + m[k] * PAGE, out + k * PAGE, PAGE);
        h.map_offset = m[0] * PAGE;
        g_free(m);
        *ret_entries = e;
        return h;
}

static void assert_refused(const FridgeImageHeader *h, Device *d, int want, const char *says) {
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        uint64_t *got = NULL;
        d->reads = 0;
        int r = fridge_image_map_load(h, DEVICE_PAGES, dev_read, d, &got, err, sizeof(err));
        g_assert_null(got);
        g_test_message("refused (%d): %s", r, err);
        g_assert_cmpint(r, ==, want);
        if (!strstr(err, says))
                g_error("\"%s\" does not say \"%s\"", err, says);
}

static void test_round_trip(void) {
        /* one short page, exactly one full, and three with the last short */
        uint64_t sizes[] = { 1, 7, PER, 2 * PER + 5 };
        for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
                Device d = {};
                g_autofree uint64_t *e = NULL, *got = NULL;
                FridgeImageHeader h = map_make(&d, sizes[s], &e);
                char err[FRIDGE_IMAGE_ERR_MAX] = "";
                g_assert_cmpint(fridge_image_map_load(&h, DEVICE_PAGES, dev_read, &d, &got, err, sizeof(err)), ==, 0);
                g_assert_cmpmem(got, sizes[s] * 8, e, sizes[s] * 8);
                g_assert_cmpint(d.reads, ==, (int) fridge_image_map_pages(&h));
                g_free(d.pages);
        }
}

static void test_corrupt(void) {
        Device d = {};
        g_autofree uint64_t *e = NULL;
        FridgeImageHeader h = map_make(&d, 2 * PER + 5, &e);
        d.pages[20 * PAGE + 100] ^= 0x10; /* an entry of the second map page */
        assert_refused(&h, &d, -EBADMSG, "map page 1 (device page 20) is corrupt");
        d.pages[20 * PAGE + 100] ^= 0x10;
        /* a map page of another image, valid in itself */
        FridgeImageHeader other = h;
        other.image_id++;
        assert_refused(&other, &d, -EBADMSG, "map page 0 (device page 10) is corrupt");
        g_free(d.pages);
}

/* The chain ends before the last entry: the last map page never written */
static void test_truncated(void) {
        Device d = {};
        g_autofree uint64_t *e = NULL;
        FridgeImageHeader h = map_make(&d, 2 * PER + 5, &e);
        memset(d.pages + 30 * PAGE, 0, PAGE);
        assert_refused(&h, &d, -EBADMSG, "map page 2 (device page 30) is corrupt");
        g_free(d.pages);
        g_clear_pointer(&e, g_free);
        /* a header that claims more than the chain holds: it ends early */
        h = map_make(&d, PER, &e);
        h.compressed_bytes += PAGE;
        assert_refused(&h, &d, -ENOBUFS, "map is truncated: the chain ends after map page 0 with 508 of 509");
        g_free(d.pages);
}

/* A map page whose next link leads back to itself */
static void test_loop(void) {
        FridgeImageHeader h = { .page_size = PAGE, .block_pages = 32, .image_id = 7,
                                .compressed_bytes = (PER + 1) * PAGE, .map_offset = 5 * PAGE };
        g_autofree uint64_t *e = g_new(uint64_t, PER + 1);
        for (uint64_t i = 0; i <= PER; i++)
                e[i] = 1000 + i;
        uint64_t m[] = { 5, 5 };
        g_autofree uint8_t *out = g_malloc(2 * PAGE);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        g_assert_cmpint(fridge_image_map_encode(&h, e, m, 2, out, err, sizeof(err)), ==, 0);
        Device d = { .pages = g_malloc0((size_t) DEVICE_PAGES * PAGE) };
        memcpy(d.pages + 5 * PAGE, out, PAGE); /* map page 0, linking to 5 */
        assert_refused(&h, &d, -ELOOP, "map chain loops");
        g_free(d.pages);
}

static void test_out_of_device(void) {
        Device d = {};
        g_autofree uint64_t *e = NULL;
        FridgeImageHeader h = map_make(&d, 9, &e);
        FridgeImageHeader far = h;
        far.map_offset = (uint64_t) DEVICE_PAGES * PAGE;
        assert_refused(&far, &d, -EBADMSG, "is not a page of the device");
        far.map_offset = PAGE / 2;
        assert_refused(&far, &d, -EBADMSG, "is not a page of the device");
        g_free(d.pages);
        /* an entry past the end: encoded as the writer would, on a bigger device */
        uint64_t big[9], m[] = { 10 };
        for (int i = 0; i < 9; i++)
                big[i] = 100 + i;
        big[4] = DEVICE_PAGES + 3;
        d.pages = g_malloc0((size_t) DEVICE_PAGES * PAGE);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        g_assert_cmpint(fridge_image_map_encode(&h, big, m, 1, d.pages + 10 * PAGE, err, sizeof(err)), ==, 0);
        assert_refused(&h, &d, -EBADMSG, "image page 4 is at device page 4099, outside the device");
        g_free(d.pages);
}

/* A chain that goes on after its last entry, or a link out of the device */
static void test_bad_links(void) {
        Device d = {};
        g_autofree uint64_t *e = NULL;
        FridgeImageHeader h = map_make(&d, 2 * PER + 5, &e);
        FridgeImageHeader shorter = h;
        shorter.compressed_bytes = PER * PAGE; /* one full map page, but it links on */
        assert_refused(&shorter, &d, -EBADMSG, "map page 0 is the last but links to another");
        g_free(d.pages);
        uint64_t m[] = { 10, DEVICE_PAGES + 1, 30 };
        g_autofree uint8_t *out = g_malloc(3 * PAGE);
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        g_assert_cmpint(fridge_image_map_encode(&h, e, m, 3, out, err, sizeof(err)), ==, 0);
        d.pages = g_malloc0((size_t) DEVICE_PAGES * PAGE);
        memcpy(d.pages + 10 * PAGE, out, PAGE);
        assert_refused(&h, &d, -EBADMSG, "map page 0 links to device page 4097, outside the device");
        g_free(d.pages);
}

static void test_encode_refuses(void) {
        FridgeImageHeader h = { .page_size = PAGE, .image_id = 1, .compressed_bytes = 3 * PAGE };
        uint64_t e[] = { 9, 0, 11 }, m[] = { 4, 5 };
        uint8_t out[2 * PAGE];
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        g_assert_cmpint(fridge_image_map_encode(&h, e, m, 2, out, err, sizeof(err)), ==, -EINVAL);
        g_assert_cmpint(fridge_image_map_encode(&h, e, m, 1, out, err, sizeof(err)), ==, -EINVAL);
        g_assert_nonnull(strstr(err, "map entry 1 is device page 0"));
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/image-map/round-trip", test_round_trip);
        g_test_add_func("/image-map/corrupt", test_corrupt);
        g_test_add_func("/image-map/truncated", test_truncated);
        g_test_add_func("/image-map/loop", test_loop);
        g_test_add_func("/image-map/out-of-device", test_out_of_device);
        g_test_add_func("/image-map/bad-links", test_bad_links);
        g_test_add_func("/image-map/encode-refuses", test_encode_refuses);
        return g_test_run();
}
