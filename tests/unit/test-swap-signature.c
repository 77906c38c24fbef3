/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge's signature in the swap header page: marked only over mkswap's,
 * and restored to mkswap's page byte for byte (UUID included) whether the
 * pointer beside it is intact or not, so no boot resumes twice and swap
 * stays usable. The page comes from the real mkswap when there is one. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "swap-page.h"
#include "swap-signature.h"

static void assert_says(int r, int want, const char *err, const char *says) {
        g_assert_cmpint(r, ==, want);
        if (!strstr(err, says))
                g_error("\"%s\" does not say \"%s\"", err, says);
}

static FridgeSwapSig inspect(const uint8_t *page) {
        FridgeSwapSig s;
        char err[256] = "";
        g_assert_cmpint(fridge_swap_sig_inspect(page, PAGE, &s, err, sizeof(err)), ==, 0);
        return s;
}

static void test_mark_restore(void) {
        g_autofree uint8_t *page = test_swap_page(), *orig = g_memdup2(page, PAGE);
        char err[256] = "";
        g_assert_cmpint(inspect(page).kind, ==, FRIDGE_SWAP_PLAIN);
        g_assert_cmpint(fridge_swap_sig_mark(page, PAGE, 7 * PAGE, err, sizeof(err)), ==, 0);
        FridgeSwapSig s = inspect(page);
        g_assert_cmpint(s.kind, ==, FRIDGE_SWAP_IMAGE);
        g_assert_cmpuint(s.header_offset, ==, 7 * PAGE);
        g_assert_cmpstr(s.found, ==, "FRIDGEIMG1");
        /* mkswap's fields (version, size, UUID, label) are not touched */
        g_assert_true(memcmp(page, orig, 2048) == 0);
        g_assert_cmpint(fridge_swap_sig_restore(page, PAGE, err, sizeof(err)), ==, 0);
        g_assert_true(memcmp(page, orig, PAGE) == 0);
        /* restoring a plain page again changes nothing */
        g_assert_cmpint(fridge_swap_sig_restore(page, PAGE, err, sizeof(err)), ==, 0);
        g_assert_true(memcmp(page, orig, PAGE) == 0);
}

/* A corrupt pointer is never followed, and the page still comes back whole */
static void test_damaged(void) {
        g_autofree uint8_t *page = test_swap_page(), *orig = g_memdup2(page, PAGE);
        char err[256] = "";
        g_assert_cmpint(fridge_swap_sig_mark(page, PAGE, 3 * PAGE, err, sizeof(err)), ==, 0);
        page[PAGE - 28] ^= 0x04; /* the offset */
        FridgeSwapSig s = inspect(page);
        g_assert_cmpint(s.kind, ==, FRIDGE_SWAP_DAMAGED);
        g_assert_cmpuint(s.header_offset, ==, 0);
        g_assert_cmpint(fridge_swap_sig_restore(page, PAGE, err, sizeof(err)), ==, 0);
        g_assert_true(memcmp(page, orig, PAGE) == 0);
}

static void test_refusals(void) {
        g_autofree uint8_t *page = test_swap_page();
        char err[256] = "";
        assert_says(fridge_swap_sig_mark(page, PAGE, 0, err, sizeof(err)), -EINVAL, err,
                    "the image header's offset 0 is not a page past the first");
        g_assert_cmpint(fridge_swap_sig_mark(page, PAGE, PAGE, err, sizeof(err)), ==, 0);
        /* never twice: the saved signature would be fridge's own */
        assert_says(fridge_swap_sig_mark(page, PAGE, PAGE, err, sizeof(err)), -EBUSY, err,
                    "signature \"FRIDGEIMG1\" is not mkswap's SWAPSPACE2");
        /* never over the kernel's own image */
        memcpy(page + PAGE - 10, "S1SUSPEND\0", 10);
        assert_says(fridge_swap_sig_mark(page, PAGE, PAGE, err, sizeof(err)), -EBUSY, err, "\"S1SUSPEND?\"");
        assert_says(fridge_swap_sig_restore(page, PAGE, err, sizeof(err)), -ENODATA, err,
                    "is neither fridge's nor SWAPSPACE2");
        g_assert_cmpint(inspect(page).kind, ==, FRIDGE_SWAP_OTHER);
        FridgeSwapSig s;
        assert_says(fridge_swap_sig_inspect(page, 1000, &s, err, sizeof(err)), -EINVAL, err,
                    "a page of 1000 bytes is not a power of two");
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/swap-signature/mark-restore", test_mark_restore);
        g_test_add_func("/swap-signature/damaged", test_damaged);
        g_test_add_func("/swap-signature/refusals", test_refusals);
        return g_test_run();
}
