/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-map.h"
#include "format-util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

/* A map page: magic, entries in it, its place in the chain, the next map
 * page (0: the last), the xxhash64 of the rest of the page, the entries */
#define MAP_MAGIC 0x31504d46u /* "FMP1" */
enum { M_MAGIC = 0, M_COUNT = 4, M_INDEX = 8, M_NEXT = 16, M_HASH = 24 };

uint64_t fridge_image_map_entries(const FridgeImageHeader *h) {
        return h->compressed_bytes / h->page_size + (h->compressed_bytes % h->page_size != 0);
}

size_t fridge_image_map_per_page(uint32_t page_size) {
        return (page_size - FRIDGE_IMAGE_MAP_HEADER_SIZE) / sizeof(uint64_t);
}

uint64_t fridge_image_map_pages(const FridgeImageHeader *h) {
        uint64_t n = fridge_image_map_entries(h), per = fridge_image_map_per_page(h->page_size);
        return n / per + (n % per != 0);
}

static uint64_t map_hash(const FridgeImageHeader *h, const uint8_t *page) {
        XXH64_state_t s;
        XXH64_reset(&s, h->image_id);
        XXH64_update(&s, page, M_HASH);
        XXH64_update(&s, page + FRIDGE_IMAGE_MAP_HEADER_SIZE, h->page_size - FRIDGE_IMAGE_MAP_HEADER_SIZE);
        return XXH64_digest(&s);
}

/* A device page an image may use: not the device's first (the swap
 * header of a partition), not past its end */
static bool page_ok(uint64_t page, uint64_t device_pages) {
        return page >= 1 && page < device_pages;
}

int fridge_image_map_encode(const FridgeImageHeader *h, const uint64_t *entries, const uint64_t *map_pages,
                            uint64_t map_count, uint8_t *out, char *err, size_t errlen) {
        uint64_t total = fridge_image_map_entries(h), per = fridge_image_map_per_page(h->page_size);
        if (map_count != fridge_image_map_pages(h))
                return fail(-EINVAL, err, errlen, "map: %" PRIu64 " pages given, %" PRIu64 " entries need %" PRIu64,
                            map_count, total, fridge_image_map_pages(h));
        for (uint64_t k = 0; k < map_count; k++) {
                uint8_t *page = out + k * h->page_size;
                uint64_t first = k * per, n = total - first < per ? total - first : per;
                if (map_pages[k] == 0)
                        return fail(-EINVAL, err, errlen, "map page %" PRIu64 " at device page 0", k);
                memset(page, 0, h->page_size);
                put32(page + M_MAGIC, MAP_MAGIC);
                put32(page + M_COUNT, (uint32_t) n);
                put64(page + M_INDEX, k);
                put64(page + M_NEXT, k + 1 < map_count ? map_pages[k + 1] : 0);
                for (uint64_t j = 0; j < n; j++) {
                        if (entries[first + j] == 0)
                                return fail(-EINVAL, err, errlen, "map entry %" PRIu64 " is device page 0", first + j);
                        put64(page + FRIDGE_IMAGE_MAP_HEADER_SIZE + j * 8, entries[first + j]);
                }
                put64(page + M_HASH, map_hash(h, page));
        }
        return 0;
}

/* Map page number k of the chain, read from device page at: checked and
 * its entries appended to out (*pos of total so far) */
static int map_page_decode(const FridgeImageHeader *h, uint64_t k, uint64_t at, const uint8_t *page,
                           uint64_t device_pages, uint64_t *out, uint64_t total, uint64_t *pos, uint64_t *ret_next,
                           char *err, size_t errlen) {
        if (get32(page + M_MAGIC) != MAP_MAGIC || get64(page + M_HASH) != map_hash(h, page))
                return fail(-EBADMSG, err, errlen, "map page %" PRIu64 " (device page %" PRIu64
                            ") is corrupt: its xxhash64 does not match", k, at);
        uint64_t index = get64(page + M_INDEX);
        if (index < k)
                return fail(-ELOOP, err, errlen, "map chain loops: map page %" PRIu64 " leads back to device page %"
                            PRIu64 ", map page %" PRIu64, k - 1, at, index);
        if (index != k)
                return fail(-EBADMSG, err, errlen, "map page %" PRIu64 " (device page %" PRIu64
                            ") is out of order: it says it is map page %" PRIu64, k, at, index);
        uint64_t per = fridge_image_map_per_page(h->page_size), n = get32(page + M_COUNT);
        uint64_t want = total - *pos < per ? total - *pos : per;
        if (n != want)
                return fail(-EBADMSG, err, errlen, "map page %" PRIu64 " holds %" PRIu64 " entries, %" PRIu64
                            " expected", k, n, want);
        for (uint64_t j = 0; j < n; j++) {
                uint64_t e = get64(page + FRIDGE_IMAGE_MAP_HEADER_SIZE + j * 8);
                if (!page_ok(e, device_pages))
                        return fail(-EBADMSG, err, errlen, "map page %" PRIu64 ": image page %" PRIu64
                                    " is at device page %" PRIu64 ", outside the device (%" PRIu64 " pages)",
                                    k, *pos + j, e, device_pages);
                out[*pos + j] = e;
        }
        *pos += n;
        *ret_next = get64(page + M_NEXT);
        return 0;
}

/* The chain's next link: 0 exactly when every entry is in */
static int map_next_check(uint64_t k, uint64_t next, uint64_t pos, uint64_t total, uint64_t device_pages,
                          char *err, size_t errlen) {
        if (next == 0 && pos < total)
                return fail(-ENOBUFS, err, errlen, "map is truncated: the chain ends after map page %" PRIu64
                            " with %" PRIu64 " of %" PRIu64 " entries", k, pos, total);
        if (next != 0 && pos == total)
                return fail(-EBADMSG, err, errlen, "map page %" PRIu64 " is the last but links to another", k);
        if (next != 0 && !page_ok(next, device_pages))
                return fail(-EBADMSG, err, errlen, "map page %" PRIu64 " links to device page %" PRIu64
                            ", outside the device (%" PRIu64 " pages)", k, next, device_pages);
        return 0;
}

int fridge_image_map_load(const FridgeImageHeader *h, uint64_t device_pages, FridgeImageMapReadCb read_page,
                          void *userdata, uint64_t **ret_entries, char *err, size_t errlen) {
        uint64_t at = h->map_offset / h->page_size, total = fridge_image_map_entries(h), pos = 0;
        if (h->map_offset % h->page_size != 0 || !page_ok(at, device_pages))
                return fail(-EBADMSG, err, errlen, "image header: map offset %" PRIu64 " is not a page of the device"
                            " (%" PRIu64 " pages)", h->map_offset, device_pages);
        if (total >= device_pages)
                return fail(-EBADMSG, err, errlen, "image header: %" PRIu64 " bytes do not fit on the device (%"
                            PRIu64 " pages)", h->compressed_bytes, device_pages);
        uint64_t *out = malloc(total * sizeof(uint64_t));
        uint8_t *page = malloc(h->page_size);
        int r = out && page ? 0 : fail(-ENOMEM, err, errlen, "out of memory for a map of %" PRIu64 " entries", total);
        for (uint64_t k = 0; r == 0 && at != 0; k++) {
                r = read_page(at, page, userdata);
                if (r < 0)
                        r = fail(r, err, errlen, "map page %" PRIu64 " (device page %" PRIu64 "): read failed: %s", k,
                                 at, strerror(-r));
                if (r == 0)
                        r = map_page_decode(h, k, at, page, device_pages, out, total, &pos, &at, err, errlen);
                if (r == 0)
                        r = map_next_check(k, at, pos, total, device_pages, err, errlen);
        }
        free(page);
        if (r < 0) {
                free(out);
                return r;
        }
        *ret_entries = out;
        return 0;
}
