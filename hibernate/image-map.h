/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Where an image's pages are on the device. The writer puts the stream of
 * blocks (image-format.h), padded to whole pages, only on swap pages the
 * kernel hands out (SNAPSHOT_ALLOC_SWAP_PAGE), which need not be in a
 * row: the map lists, for each page of the stream in order, the device
 * page (in pages from the start of the device) that holds it. The map is
 * a chain of map pages, themselves on allocated pages, the first at the
 * header's map_offset; each carries its place in the chain, the next map
 * page and an xxhash64 seeded by the image's id (a map page of an earlier
 * image does not verify in this one). Pure functions over buffers; the
 * reader fetches pages through a callback. Errors as in image-format.h,
 * and -ELOOP for a chain that comes back on itself. */

#include <stddef.h>
#include <stdint.h>

#include "image-format.h"

#define FRIDGE_IMAGE_MAP_HEADER_SIZE 32u

/* Device pages the stream of blocks takes: compressed_bytes in whole pages */
uint64_t fridge_image_map_entries(const FridgeImageHeader *h);
/* Entries one map page holds */
size_t fridge_image_map_per_page(uint32_t page_size);
/* Map pages the image needs */
uint64_t fridge_image_map_pages(const FridgeImageHeader *h);

/* Encodes the whole chain: entries (fridge_image_map_entries(h) of them)
 * into map_count pages at the device pages map_pages, in out (map_count
 * pages). Refuses (-EINVAL) what load would refuse. */
int fridge_image_map_encode(const FridgeImageHeader *h, const uint64_t *entries, const uint64_t *map_pages,
                            uint64_t map_count, uint8_t *out, char *err, size_t errlen);

/* Reads device page number page into buf (one page); a negative errno on failure */
typedef int (*FridgeImageMapReadCb)(uint64_t page, uint8_t *buf, void *userdata);

/* Follows the chain from h->map_offset on a device of device_pages pages
 * and returns the entries (fridge_image_map_entries(h), malloc'd). Refuses
 * a map page that is corrupt, of another image, out of order or looping,
 * a chain too short or too long, and any page outside the device. */
int fridge_image_map_load(const FridgeImageHeader *h, uint64_t device_pages, FridgeImageMapReadCb read_page,
                          void *userdata, uint64_t **ret_entries, char *err, size_t errlen);
