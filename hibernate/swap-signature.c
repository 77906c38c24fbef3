/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "swap-signature.h"
#include "format-util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <xxhash.h>

/* fridge's tail of the page, counted back from its end: its mark, the
 * checksum, the image header's offset, the saved signature, the signature
 * (the last three where uswsusp's header keeps them). mkswap's fields end
 * at byte 1540 (linux/swap.h's union swap_header), far below. */
#define TAIL_SIZE 46u
enum { T_MARK = 0, T_SUM = 10, T_OFFSET = 18, T_ORIG = 26, T_SIG = 36 };

static int page_check(size_t page_size, char *err, size_t errlen) {
        if (page_size < 4096 || (page_size & (page_size - 1)) != 0)
                return fail(-EINVAL, err, errlen, "swap header: a page of %zu bytes is not a power of two from 4096",
                            page_size);
        return 0;
}

static uint64_t tail_sum(const uint8_t *tail) {
        return XXH64(tail + T_OFFSET, T_SIG - T_OFFSET, 0);
}

int fridge_swap_sig_inspect(const uint8_t *page, size_t page_size, FridgeSwapSig *ret, char *err, size_t errlen) {
        int r = page_check(page_size, err, errlen);
        if (r < 0)
                return r;
        const uint8_t *tail = page + page_size - TAIL_SIZE;
        FridgeSwapSig s = { .kind = FRIDGE_SWAP_OTHER };
        size_t n = FRIDGE_SWAP_SIG_LEN;
        while (n > 0 && tail[T_SIG + n - 1] == 0)
                n--;
        for (size_t i = 0; i < n; i++) /* printable, for a message */
                s.found[i] = tail[T_SIG + i] >= 0x20 && tail[T_SIG + i] < 0x7f ? (char) tail[T_SIG + i] : '?';
        if (memcmp(tail + T_SIG, FRIDGE_SWAP_SPACE2, FRIDGE_SWAP_SIG_LEN) == 0)
                s.kind = FRIDGE_SWAP_PLAIN;
        else if (memcmp(tail + T_SIG, FRIDGE_SWAP_SIG, FRIDGE_SWAP_SIG_LEN) == 0 &&
                 memcmp(tail + T_MARK, FRIDGE_SWAP_MARK, FRIDGE_SWAP_SIG_LEN) == 0) {
                bool ok = get64(tail + T_SUM) == tail_sum(tail) &&
                          memcmp(tail + T_ORIG, FRIDGE_SWAP_SPACE2, FRIDGE_SWAP_SIG_LEN) == 0;
                s.kind = ok ? FRIDGE_SWAP_IMAGE : FRIDGE_SWAP_DAMAGED;
                s.header_offset = ok ? get64(tail + T_OFFSET) : 0;
        }
        *ret = s;
        return 0;
}

int fridge_swap_sig_mark(uint8_t *page, size_t page_size, uint64_t header_offset, char *err, size_t errlen) {
        FridgeSwapSig s;
        int r = fridge_swap_sig_inspect(page, page_size, &s, err, errlen);
        if (r < 0)
                return r;
        if (s.kind != FRIDGE_SWAP_PLAIN)
                return fail(-EBUSY, err, errlen, "swap header: signature \"%s\" is not mkswap's %s; not marking it",
                            s.found, FRIDGE_SWAP_SPACE2);
        if (header_offset < page_size || header_offset % page_size != 0)
                return fail(-EINVAL, err, errlen,
                            "swap header: the image header's offset %" PRIu64 " is not a page past the first",
                            header_offset);
        uint8_t *tail = page + page_size - TAIL_SIZE;
        put64(tail + T_OFFSET, header_offset);
        memcpy(tail + T_ORIG, FRIDGE_SWAP_SPACE2, FRIDGE_SWAP_SIG_LEN);
        put64(tail + T_SUM, tail_sum(tail));
        memcpy(tail + T_MARK, FRIDGE_SWAP_MARK, FRIDGE_SWAP_SIG_LEN);
        memcpy(tail + T_SIG, FRIDGE_SWAP_SIG, FRIDGE_SWAP_SIG_LEN);
        return 0;
}

int fridge_swap_sig_restore(uint8_t *page, size_t page_size, char *err, size_t errlen) {
        FridgeSwapSig s;
        int r = fridge_swap_sig_inspect(page, page_size, &s, err, errlen);
        if (r < 0)
                return r;
        if (s.kind == FRIDGE_SWAP_PLAIN)
                return 0;
        if (s.kind == FRIDGE_SWAP_OTHER)
                return fail(-ENODATA, err, errlen, "swap header: signature \"%s\" is neither fridge's nor %s", s.found,
                            FRIDGE_SWAP_SPACE2);
        /* mkswap leaves the tail zero: so must we, for the page to be its own again */
        memset(page + page_size - TAIL_SIZE, 0, TAIL_SIZE - FRIDGE_SWAP_SIG_LEN);
        memcpy(page + page_size - FRIDGE_SWAP_SIG_LEN, FRIDGE_SWAP_SPACE2, FRIDGE_SWAP_SIG_LEN);
        return 0;
}
