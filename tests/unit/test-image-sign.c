/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The end of fridge-image-writer's write (image_pipeline_sign()): a cancel
 * (fridged's, here; an Esc is read by the same look) that comes while the
 * last pages and the map go out still stops it, and no signature is
 * written; without one the image is signed. /dev/snapshot, which hands out
 * the swap pages (SNAPSHOT_ALLOC_SWAP_PAGE), is emulated by umockdev: the
 * test runs itself again under its preload library (umockdev-preload.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/suspend_ioctls.h>
#include <umockdev.h>
#include <unistd.h>

#include "image-console.h"
#include "image-output.h"
#include "image-pipeline.h"
#include "swap-page.h"
#include "umockdev-preload.h"
#include "writer-protocol.h"

#define DEVICE_PAGES 64u
#define FIRST_FREE 10u /* the first page the emulated kernel hands out */

typedef struct Fixture {
        UMockdevTestbed *tb;
        UMockdevIoctlBase *handler;
        gint next;              /* the next page handed out (atomic: the handler's thread) */
        char *device;           /* the swap area, a file */
        uint8_t *mkswap;        /* its header page as mkswap made it */
        int dev, snap;
} Fixture;

static gboolean on_ioctl(UMockdevIoctlBase *base, UMockdevIoctlClient *client, gpointer userdata) {
        Fixture *f = userdata;
        if (umockdev_ioctl_client_get_request(client) != SNAPSHOT_ALLOC_SWAP_PAGE) {
                umockdev_ioctl_client_complete(client, -1, ENOTTY);
                return TRUE;
        }
        g_autoptr(GError) error = NULL;
        UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(client);
        g_autoptr(UMockdevIoctlData) off = umockdev_ioctl_data_resolve(arg, 0, sizeof(loff_t), &error);
        gint page = g_atomic_int_add(&f->next, 1);
        if (!off || page >= (gint) DEVICE_PAGES) {
                umockdev_ioctl_client_complete(client, -1, off ? ENOSPC : EFAULT);
                return TRUE;
        }
        loff_t v = (loff_t) page * PAGE;
        memcpy(off->data, &v, sizeof(v)); /* synced back to the caller by complete() */
        umockdev_ioctl_client_complete(client, 0, 0);
        return TRUE;
}

static void fixture_setup(Fixture *f, gconstpointer data) {
        g_autoptr(GError) error = NULL;
        *f = (Fixture) { .tb = umockdev_testbed_new(), .handler = g_object_new(UMOCKDEV_TYPE_IOCTL_BASE, NULL),
                         .next = FIRST_FREE, .mkswap = test_swap_page() };
        g_assert_true(umockdev_testbed_add_from_string(f->tb, "P: /devices/virtual/misc/snapshot\nN: snapshot\n"
                                                       "E: SUBSYSTEM=misc\nE: DEVNAME=/dev/snapshot\nA: dev=10:231\n",
                                                       &error));
        g_signal_connect(f->handler, "handle-ioctl", G_CALLBACK(on_ioctl), f);
        g_assert_true(umockdev_testbed_attach_ioctl(f->tb, "/dev/snapshot", f->handler, &error));
        f->snap = open("/dev/snapshot", O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(f->snap, >=, 0);
        f->device = g_build_filename(g_get_tmp_dir(), "fridge-image-sign-XXXXXX", NULL);
        f->dev = g_mkstemp(f->device);
        g_assert_cmpint(f->dev, >=, 0);
        g_assert_cmpint(ftruncate(f->dev, (off_t) DEVICE_PAGES * PAGE), ==, 0);
        g_assert_cmpint(pwrite(f->dev, f->mkswap, PAGE, 0), ==, PAGE);
}

static void fixture_teardown(Fixture *f, gconstpointer data) {
        close(f->snap);
        close(f->dev);
        g_unlink(f->device);
        g_free(f->device);
        g_free(f->mkswap);
        g_autoptr(GError) error = NULL;
        g_assert_true(umockdev_testbed_detach_ioctl(f->tb, "/dev/snapshot", &error));
        g_object_unref(f->handler);
        g_object_unref(f->tb);
}

static void output_start(Fixture *f, FridgeImageHeader *h, ImageOutput *out) {
        *h = (FridgeImageHeader) { .page_size = PAGE, .block_pages = 32, .image_id = 7,
                                   .compressor = FRIDGE_IMAGE_ZSTD, .level = 1 };
        g_assert_cmpint(fridge_image_header_set_kernel(h), ==, 0);
        g_assert_cmpint(image_output_init(out, f->dev, f->snap, PAGE, 0), ==, 0);
}

/* The end of a write: one block of 8 pages out, then the map and the signing */
static int sign(Fixture *f, bool cancel_first) {
        FridgeImageHeader h;
        ImageOutput out;
        output_start(f, &h, &out);
        g_autofree uint8_t *raw = g_malloc0(8 * PAGE), *block = g_malloc(fridge_image_block_bound(8 * PAGE));
        for (size_t i = 0; i < 8 * PAGE; i += 5)
                raw[i] = (uint8_t) i;
        size_t len = 0;
        char err[FRIDGE_IMAGE_ERR_MAX];
        g_assert_cmpint(fridge_image_block_encode(&h, NULL, 0, raw, 8 * PAGE, h.level, block,
                                                  fridge_image_block_bound(8 * PAGE), &len, err, sizeof(err)), ==, 0);
        g_assert_cmpint(image_output_reserve(&out, len), ==, 0);
        g_assert_cmpint(image_output_put(&out, block, len), ==, 0);
        h.compressed_bytes = len;
        h.image_pages = 8;
        h.block_count = 1;
        int sv[2];
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        ImageConsole con = { .fd = -1 };
        image_console_attach_peer(&con, sv[0]);
        if (cancel_first) { /* fridged's Cancel, sent while the last pages went out */
                char line[WRITER_LINE_MAX];
                WriterMessage m = { .type = WRITER_MSG_CANCEL };
                int n = writer_message_format(&m, line, sizeof(line));
                g_assert_cmpint(n, >, 0);
                g_assert_cmpint(write(sv[1], line, (size_t) n), ==, n);
        }
        int r = image_pipeline_sign(&out, &h, &con);
        image_output_done(&out);
        close(sv[0]);
        close(sv[1]);
        return r;
}

static void assert_page0_sig(const Fixture *f, const char *sig) {
        uint8_t page[PAGE];
        g_assert_cmpint(pread(f->dev, page, PAGE, 0), ==, PAGE);
        g_assert_cmpmem(page + PAGE - 10, strlen(sig), sig, strlen(sig));
}

static void test_cancel_before_signing(Fixture *f, gconstpointer data) {
        g_assert_cmpint(sign(f, true), ==, -ECANCELED);
        assert_page0_sig(f, "SWAPSPACE2"); /* mkswap's: nothing to resume */
        uint8_t page[PAGE];
        g_assert_cmpint(pread(f->dev, page, PAGE, 0), ==, PAGE);
        g_assert_cmpmem(page, PAGE, f->mkswap, PAGE);
}

/* The control: no cancel, the image is signed (so the test above could fail) */
static void test_signed(Fixture *f, gconstpointer data) {
        g_assert_cmpint(sign(f, false), ==, 0);
        assert_page0_sig(f, "ULSUSPEND");
        g_assert_cmpint(g_atomic_int_get(&f->next), >, FIRST_FREE); /* its pages came from the kernel */
}

/* A stream of no pages (the kernel's image always has one) is refused with
 * a message, not a map read past its end (AddressSanitizer's catch) */
static void test_empty_image(Fixture *f, gconstpointer data) {
        FridgeImageHeader h;
        ImageOutput out;
        output_start(f, &h, &out);
        g_assert_cmpint(image_output_finish(&out, &h), ==, -EINVAL);
        image_output_done(&out);
        assert_page0_sig(f, "SWAPSPACE2");
}

#define ADD(name, fn) g_test_add("/image-sign/" name, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int main(int argc, char *argv[]) {
        umockdev_preload_self_or_skip(argv);
        g_test_init(&argc, &argv, NULL);
        ADD("cancel-before-signing", test_cancel_before_signing);
        ADD("signed", test_signed);
        ADD("empty-image", test_empty_image);
        return g_test_run();
}
