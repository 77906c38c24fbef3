/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The swap area's first page, where the next boot looks for an image: as
 * the kernel's writer and uswsusp do, fridge puts a signature in the last
 * bytes of mkswap's header page, keeping "SWAPSPACE2" beside it, with a
 * pointer to its image header and its own mark, "FRIDGEIMG1". The rest of
 * the page (the version, the size, the UUID and label) is never touched,
 * so restoring the signature gives back mkswap's page byte for byte.
 *
 * The signature is uswsusp's "ULSUSPEND", which the kernel's resume never
 * takes for its own (it looks for S1SUSPEND) and blkid reports as TYPE
 * swsuspend with the area's UUID: udev keeps /dev/disk/by-uuid/, so a
 * boot whose initrd has no fridge-resume (another generator) does not wait
 * for a swap device that vanished; swapon(8) rewrites a swsuspend
 * signature to SWAPSPACE2 before it uses the area, and that stale image
 * is never resumed later. Only the mark makes an image fridge's: a
 * ULSUSPEND without it is uswsusp's, and left alone. Pure functions over
 * the page's bytes; errors as in image-format.h. */

#include <stddef.h>
#include <stdint.h>

#define FRIDGE_SWAP_SIG "ULSUSPEND" /* with its NUL: 10 bytes */
#define FRIDGE_SWAP_SIG_LEN 10u
#define FRIDGE_SWAP_MARK "FRIDGEIMG1"
#define FRIDGE_SWAP_SPACE2 "SWAPSPACE2"

typedef enum FridgeSwapKind {
        FRIDGE_SWAP_PLAIN,   /* mkswap's SWAPSPACE2: no image */
        FRIDGE_SWAP_IMAGE,   /* fridge's signature and mark, intact */
        FRIDGE_SWAP_DAMAGED, /* fridge's signature and mark, its pointer corrupt */
        FRIDGE_SWAP_OTHER,   /* not a swap area, or another writer's image */
} FridgeSwapKind;

typedef struct FridgeSwapSig {
        FridgeSwapKind kind;
        uint64_t header_offset; /* FRIDGE_SWAP_IMAGE: where the image header is */
        char found[FRIDGE_SWAP_SIG_LEN + 1]; /* the signature as found, for messages (trailing NULs
                                              * dropped, other unprintable bytes as '?') */
} FridgeSwapSig;

int fridge_swap_sig_inspect(const uint8_t *page, size_t page_size, FridgeSwapSig *ret, char *err, size_t errlen);
/* Marks a plain swap area as holding the image whose header is at
 * header_offset; refuses anything but SWAPSPACE2 (never over another
 * writer's image, never a second time). */
int fridge_swap_sig_mark(uint8_t *page, size_t page_size, uint64_t header_offset, char *err, size_t errlen);
/* Gives a fridge-marked page back its SWAPSPACE2 (even when the pointer
 * is damaged: fridge marks nothing else); a plain page is left as it is.
 * Refuses (-ENODATA) a page that is neither. */
int fridge_swap_sig_restore(uint8_t *page, size_t page_size, char *err, size_t errlen);
