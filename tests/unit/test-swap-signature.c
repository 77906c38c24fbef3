/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge's signature in the swap header page: marked only over mkswap's,
 * and restored to mkswap's page byte for byte (UUID included) whether the
 * pointer beside it is intact or not, so no boot resumes twice and swap
 * stays usable. The page comes from the real mkswap when there is one. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

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
        g_assert_cmpstr(s.found, ==, "ULSUSPEND");
        g_assert_true(memcmp(page + PAGE - 10, "ULSUSPEND\0", 10) == 0);
        g_assert_true(memcmp(page + PAGE - 46, "FRIDGEIMG1", 10) == 0);
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
                    "signature \"ULSUSPEND\" is not mkswap's SWAPSPACE2");
        /* never over the kernel's own image */
        memcpy(page + PAGE - 10, "S1SUSPEND\0", 10);
        assert_says(fridge_swap_sig_mark(page, PAGE, PAGE, err, sizeof(err)), -EBUSY, err, "\"S1SUSPEND\"");
        assert_says(fridge_swap_sig_restore(page, PAGE, err, sizeof(err)), -ENODATA, err,
                    "is neither fridge's nor SWAPSPACE2");
        g_assert_cmpint(inspect(page).kind, ==, FRIDGE_SWAP_OTHER);
        FridgeSwapSig s;
        assert_says(fridge_swap_sig_inspect(page, 1000, &s, err, sizeof(err)), -EINVAL, err,
                    "a page of 1000 bytes is not a power of two");
}

/* uswsusp's own image: its ULSUSPEND without fridge's mark is not
 * fridge's, never marked over nor restored */
static void test_uswsusp_left_alone(void) {
        g_autofree uint8_t *page = test_swap_page();
        char err[256] = "";
        g_assert_cmpint(fridge_swap_sig_mark(page, PAGE, 5 * PAGE, err, sizeof(err)), ==, 0);
        memset(page + PAGE - 46, 0, 10); /* no mark */
        g_autofree uint8_t *uswsusp = g_memdup2(page, PAGE);
        g_assert_cmpint(inspect(page).kind, ==, FRIDGE_SWAP_OTHER);
        assert_says(fridge_swap_sig_restore(page, PAGE, err, sizeof(err)), -ENODATA, err,
                    "signature \"ULSUSPEND\" is neither fridge's nor SWAPSPACE2");
        g_assert_true(memcmp(page, uswsusp, PAGE) == 0);
}

/* blkid FILE's KEY=VALUE lines (-p: the device's own bytes, no cache) */
static char *blkid(const char *path) {
        const char *argv[] = { "blkid", "-p", "-o", "export", path, NULL };
        g_autofree char *out = NULL;
        int status = -1;
        if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                          NULL, &out, NULL, &status, NULL))
                return NULL;
        return g_steal_pointer(&out);
}

static char *area_file(const uint8_t *page) {
        g_autofree char *path = g_build_filename(g_get_tmp_dir(), "fridge-swapsig-XXXXXX", NULL);
        int fd = g_mkstemp(path);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(ftruncate(fd, 64 * PAGE), ==, 0); /* blkid's swsuspend wants 10 pages at least */
        g_assert_cmpint(pwrite(fd, page, PAGE, 0), ==, PAGE);
        close(fd);
        return g_steal_pointer(&path);
}

static const char *line_of(const char *text, const char *key) {
        const char *l = strstr(text, key);
        return l && (l == text || l[-1] == '\n') ? l : NULL;
}

/* What a boot without fridge-resume sees: blkid (and so udev's by-uuid
 * link and systemd's swap unit) finds the area by its UUID, as a
 * suspend image (swapon rewrites that signature before use) */
static void test_blkid_sees_swsuspend(void) {
        g_autofree char *found = g_find_program_in_path("blkid");
        if (!found) {
                g_test_skip("no blkid");
                return;
        }
        g_autofree uint8_t *page = test_swap_page();
        g_autofree char *plain = area_file(page), *plain_ids = blkid(plain);
        g_assert_nonnull(plain_ids);
        g_assert_nonnull(line_of(plain_ids, "TYPE=swap\n"));
        const char *uuid = line_of(plain_ids, "UUID=");
        g_assert_nonnull(uuid);
        g_autofree char *uuid_line = g_strndup(uuid, strcspn(uuid, "\n") + 1);
        char err[256] = "";
        g_assert_cmpint(fridge_swap_sig_mark(page, PAGE, 9 * PAGE, err, sizeof(err)), ==, 0);
        g_autofree char *marked = area_file(page), *marked_ids = blkid(marked);
        g_assert_nonnull(marked_ids);
        if (!line_of(marked_ids, "TYPE=swsuspend\n") || !line_of(marked_ids, uuid_line))
                g_error("blkid says \"%s\" of the marked area, not TYPE=swsuspend with %s", marked_ids, uuid_line);
        g_unlink(plain);
        g_unlink(marked);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/swap-signature/mark-restore", test_mark_restore);
        g_test_add_func("/swap-signature/damaged", test_damaged);
        g_test_add_func("/swap-signature/refusals", test_refusals);
        g_test_add_func("/swap-signature/uswsusp-left-alone", test_uswsusp_left_alone);
        g_test_add_func("/swap-signature/blkid-sees-swsuspend", test_blkid_sees_swsuspend);
        return g_test_run();
}
