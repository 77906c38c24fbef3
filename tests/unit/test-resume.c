/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge-resume on a swap area in a file, holding an image built as
 * fridge-image-writer lays it out (stream pages scattered, map, header,
 * signature). What is checked before /dev/snapshot is, here with
 * --snapshot naming a path that does not exist: a valid image verifies
 * (--verify-only); a corrupt map or signature, or another kernel's header,
 * is refused in one line naming it and the swap area is mkswap's page
 * again; the signature is restored before any load is tried;
 * --device=UUID= finds the area on a loop device by mkswap's header.
 * The load itself goes into a snapshot device umockdev emulates (its
 * ioctls and writes answered here): the pages the kernel would get are the
 * image's, byte for byte; a corrupt block stops the load before any of its
 * pages are handed on, and the restore is never asked for. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <linux/suspend_ioctls.h>
#ifdef HAVE_UMOCKDEV
#include <umockdev.h>
#include "umockdev-preload.h"
#endif

#include "image-format.h"
#include "image-map.h"
#include "swap-page.h"
#include "swap-signature.h"

#define DEVICE_PAGES 1024u
#define IMAGE_PAGES 70u /* three blocks of 32, the last short */
#define MAP_AT 50u
#define HEADER_AT 60u
#define STREAM_AT 100u /* every other page from here */

typedef struct Area {
        char *path;
        uint8_t *mkswap; /* the header page as mkswap made it */
} Area;

static void put_page(int fd, uint64_t page, const void *buf) {
        g_assert_cmpint(pwrite(fd, buf, PAGE, (off_t) (page * PAGE)), ==, PAGE);
}

static uint64_t stream_write(int fd, const FridgeImageHeader *h, const uint8_t *stream, size_t len) {
        uint64_t n = fridge_image_map_entries(h), *e = g_new(uint64_t, n), map_at = MAP_AT;
        uint8_t page[PAGE], mpage[PAGE];
        char err[FRIDGE_IMAGE_ERR_MAX];
        for (uint64_t i = 0; i < n; i++) {
                memset(page, 0, PAGE);
                memcpy(page, stream + i * PAGE, MIN(PAGE, len - i * PAGE));
                e[i] = STREAM_AT + 2 * i;
                put_page(fd, e[i], page);
        }
        g_assert_cmpuint(fridge_image_map_pages(h), ==, 1);
        g_assert_cmpint(fridge_image_map_encode(h, e, &map_at, 1, mpage, err, sizeof(err)), ==, 0);
        put_page(fd, MAP_AT, mpage);
        g_free(e);
        return n;
}

/* The image's IMAGE_PAGES pages, as the snapshot device gave them to the writer */
static uint8_t *raw_make(void) {
        uint8_t *raw = g_malloc0(IMAGE_PAGES * PAGE);
        for (size_t i = 0; i < IMAGE_PAGES * PAGE; i += 7)
                raw[i] = (uint8_t) (i / PAGE);
        return raw;
}

/* Where each block starts in the stream */
static size_t block_at[3];

/* The blocks of the raw pages, as the writer makes them */
static size_t blocks_make(FridgeImageHeader *h, uint8_t *stream) {
        g_autofree uint8_t *raw = raw_make();
        size_t len = 0;
        char err[FRIDGE_IMAGE_ERR_MAX];
        for (uint64_t b = 0; b < h->block_count; b++) {
                size_t n, chunk = MIN(32u, IMAGE_PAGES - b * 32) * PAGE;
                block_at[b] = len;
                g_assert_cmpint(fridge_image_block_encode(h, NULL, b, raw + b * 32 * PAGE, chunk, h->level, stream + len,
                                                          fridge_image_block_bound(chunk), &n, err, sizeof(err)), ==, 0);
                len += n;
        }
        return len;
}

/* A swap area of DEVICE_PAGES pages with an image whose header names
 * release (NULL: the running kernel) and has flags */
static Area area_make_flags(const char *release, uint32_t flags) {
        Area a = { .path = g_build_filename(g_get_tmp_dir(), "fridge-resume-XXXXXX", NULL), .mkswap = test_swap_page() };
        int fd = g_mkstemp(a.path);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(ftruncate(fd, (off_t) DEVICE_PAGES * PAGE), ==, 0);
        FridgeImageHeader h = { .page_size = PAGE, .block_pages = 32, .image_id = 99, .image_pages = IMAGE_PAGES,
                                .block_count = 3, .map_offset = MAP_AT * PAGE,
                                .compressor = FRIDGE_IMAGE_ZSTD, .level = 1, .flags = flags };
        g_assert_cmpint(fridge_image_header_set_kernel(&h), ==, 0);
        if (release)
                g_strlcpy(h.kernel_release, release, sizeof(h.kernel_release));
        g_autofree uint8_t *stream = g_malloc(3 * fridge_image_block_bound(32 * PAGE));
        h.compressed_bytes = blocks_make(&h, stream);
        stream_write(fd, &h, stream, h.compressed_bytes);
        uint8_t page[PAGE] = {};
        char err[FRIDGE_IMAGE_ERR_MAX];
        g_assert_cmpint(fridge_image_header_encode(&h, page, PAGE, err, sizeof(err)), ==, 0);
        put_page(fd, HEADER_AT, page);
        memcpy(page, a.mkswap, PAGE);
        g_assert_cmpint(fridge_swap_sig_mark(page, PAGE, HEADER_AT * PAGE, err, sizeof(err)), ==, 0);
        put_page(fd, 0, page);
        close(fd);
        return a;
}

static Area area_make(const char *release) {
        return area_make_flags(release, 0);
}

static void area_free(Area *a) {
        g_unlink(a->path);
        g_free(a->path);
        g_free(a->mkswap);
}

static void flip(const Area *a, uint64_t page, size_t byte) {
        int fd = open(a->path, O_RDWR);
        uint8_t b;
        g_assert_cmpint(pread(fd, &b, 1, (off_t) (page * PAGE + byte)), ==, 1);
        b ^= 0x10;
        g_assert_cmpint(pwrite(fd, &b, 1, (off_t) (page * PAGE + byte)), ==, 1);
        close(fd);
}

/* fridge-resume DEVICE MODE's exit status, run with env (NULL: this
 * test's); its stdout and stderr in out */
static int resume_run(const Area *a, const char *mode, char **env, char **out) {
        g_autofree char *dev = g_strdup_printf("--device=%s", a->path);
        const char *argv[] = { g_getenv("FRIDGE_RESUME"), dev, mode, NULL };
        g_autofree char *o = NULL, *e = NULL;
        gint status = -1;
        g_assert_nonnull(argv[0]);
        g_assert_true(g_spawn_sync(NULL, (char **) argv, env, 0, NULL, NULL, &o, &e, &status, NULL));
        *out = g_strconcat(o, e, NULL);
        g_test_message("fridge-resume %s: %s", argv[2], *out);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int resume_mode(const Area *a, const char *mode, char **out) {
        return resume_run(a, mode, NULL, out);
}

static int resume(const Area *a, bool verify_only, char **out) {
        return resume_mode(a, verify_only ? "--verify-only" : "--snapshot=/nonexistent/snapshot", out);
}

static void assert_page0(const Area *a, const char *sig) {
        g_autofree char *data = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(a->path, &data, &len, NULL));
        g_assert_cmpmem(data + PAGE - 10, 10, sig, 10);
        if (strcmp(sig, "SWAPSPACE2") == 0)
                g_assert_cmpmem(data, PAGE, a->mkswap, PAGE);
}

/* Refused in one line saying says; the swap area mkswap's again */
static void assert_refused(const Area *a, const char *says) {
        g_autofree char *out = NULL;
        g_assert_cmpint(resume(a, false, &out), ==, 1);
        if (!strstr(out, says) || !strstr(out, "swap signature restored, boot continues"))
                g_error("\"%s\" does not say \"%s\" and that the boot continues", out, says);
        g_assert_cmpint(strchr(out, '\n') - out + 1, ==, strlen(out));
        assert_page0(a, "SWAPSPACE2");
}

static void test_verify(void) {
        Area a = area_make(NULL);
        g_autofree char *out = NULL;
        g_assert_cmpint(resume(&a, true, &out), ==, 0);
        g_assert_nonnull(strstr(out, "verified=1\npages=70\nblocks=3\n"));
        g_assert_nonnull(strstr(out, "first_page=100\n"));
        const char *bytes = strstr(out, "compressed_bytes=");
        g_assert_nonnull(bytes);
        uint64_t pages = (g_ascii_strtoull(bytes + strlen("compressed_bytes="), NULL, 10) + PAGE - 1) / PAGE;
        g_autofree char *last = g_strdup_printf("last_page=%" G_GUINT64_FORMAT "\n", STREAM_AT + 2 * (pages - 1));
        g_assert_cmpuint(pages, >, 1);
        g_assert_nonnull(strstr(out, last));
        assert_page0(&a, "ULSUSPEND"); /* --verify-only changes nothing (the literal's NUL is its 10th byte) */
        area_free(&a);
}

/* The signature goes before the load is tried: a load that fails (here:
 * no snapshot device) is never tried again */
static void test_restored_before_load(void) {
        Area a = area_make(NULL);
        assert_refused(&a, "cannot open /nonexistent/snapshot");
        g_autofree char *out = NULL;
        g_assert_cmpint(resume(&a, false, &out), ==, 0);
        g_assert_cmpstr(out, ==, ""); /* mkswap's page again: as any boot */
        area_free(&a);
}

/* A swap area with sig in the kernel's place (orig_sig, then sig: the
 * page's last 20 bytes), as its writer leaves it */
static Area area_signed(const char *sig) {
        Area a = { .path = g_build_filename(g_get_tmp_dir(), "fridge-resume-XXXXXX", NULL), .mkswap = test_swap_page() };
        int fd = g_mkstemp(a.path);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(ftruncate(fd, (off_t) DEVICE_PAGES * PAGE), ==, 0);
        uint8_t page[PAGE];
        memcpy(page, a.mkswap, PAGE);
        if (sig) {
                memcpy(page + PAGE - 20, "SWAPSPACE2", 10);
                memset(page + PAGE - 10, 0, 10);
                memcpy(page + PAGE - 10, sig, strlen(sig));
        }
        put_page(fd, 0, page);
        close(fd);
        return a;
}

/* What every boot without an image sees: nothing said, nothing written */
static void test_plain_swap(void) {
        Area a = area_signed(NULL);
        g_autofree char *out = NULL;
        g_assert_cmpint(resume(&a, false, &out), ==, 0);
        g_assert_cmpstr(out, ==, "");
        assert_page0(&a, "SWAPSPACE2");
        area_free(&a);
}

/* The kernel's own image is the kernel's resume's, and uswsusp's (its
 * ULSUSPEND without fridge's mark) uswsusp's: the header stays byte for
 * byte, whichever of the initramfs scripts runs first */
static void test_foreign_image(gconstpointer sig) {
        Area a = area_signed(sig);
        g_autofree char *before = NULL, *after = NULL, *out = NULL;
        g_autofree char *says = g_strdup_printf("fridge-resume: no fridge image on %s (signature \"%s\"): "
                                                "left as it is\n", a.path, (const char *) sig);
        gsize len = 0;
        g_assert_true(g_file_get_contents(a.path, &before, &len, NULL));
        g_assert_cmpint(resume(&a, false, &out), ==, 0);
        g_assert_cmpstr(out, ==, says);
        g_assert_true(g_file_get_contents(a.path, &after, &len, NULL));
        g_assert_cmpmem(before, PAGE, after, PAGE);
        area_free(&a);
}

#ifdef HAVE_UMOCKDEV
/* /dev/snapshot as umockdev emulates it: what fridge-resume asks of the
 * kernel (its ioctls, in order; the pages it writes), answered as the
 * kernel would, but for the restore, refused (EPERM: fridge-resume must
 * say so and go on with the boot). take: bytes taken before writes fail
 * with ENOMEM, as the kernel's when memory for the image runs out. */
typedef struct Sink {
        UMockdevTestbed *tb;
        UMockdevIoctlBase *handler;
        GMutex lock;
        GString *ioctls; /* "freeze platform restore free unfreeze " */
        GByteArray *pages;
        size_t take;
} Sink;

static const char *sink_ioctl_name(gulong request) {
        static const struct {
                gulong request;
                const char *name;
        } names[] = { { SNAPSHOT_FREEZE, "freeze" }, { SNAPSHOT_UNFREEZE, "unfreeze" },
                      { SNAPSHOT_PLATFORM_SUPPORT, "platform" }, { SNAPSHOT_ATOMIC_RESTORE, "restore" },
                      { SNAPSHOT_FREE, "free" } };
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
                if (names[i].request == request)
                        return names[i].name;
        return "other";
}

static gboolean sink_on_ioctl(UMockdevIoctlBase *base, UMockdevIoctlClient *client, gpointer userdata) {
        Sink *k = userdata;
        const char *name = sink_ioctl_name(umockdev_ioctl_client_get_request(client));
        g_mutex_lock(&k->lock);
        g_string_append_printf(k->ioctls, "%s ", name);
        g_mutex_unlock(&k->lock);
        bool refuse = strcmp(name, "restore") == 0 || strcmp(name, "other") == 0;
        umockdev_ioctl_client_complete(client, refuse ? -1 : 0, refuse ? (strcmp(name, "other") ? EPERM : ENOTTY) : 0);
        return TRUE;
}

static gboolean sink_on_write(UMockdevIoctlBase *base, UMockdevIoctlClient *client, gpointer userdata) {
        Sink *k = userdata;
        UMockdevIoctlData *d = umockdev_ioctl_client_get_arg(client);
        g_mutex_lock(&k->lock);
        size_t room = k->take > k->pages->len ? k->take - k->pages->len : 0, n = MIN(room, (size_t) d->data_len);
        g_byte_array_append(k->pages, d->data, (guint) n);
        g_mutex_unlock(&k->lock);
        umockdev_ioctl_client_complete(client, n > 0 ? (long) n : -1, n > 0 ? 0 : ENOMEM);
        return TRUE;
}

static void sink_init(Sink *k, size_t take) {
        *k = (Sink) { .tb = umockdev_testbed_new(), .handler = g_object_new(UMOCKDEV_TYPE_IOCTL_BASE, NULL),
                      .ioctls = g_string_new(""), .pages = g_byte_array_new(), .take = take };
        g_autoptr(GError) error = NULL;
        g_mutex_init(&k->lock);
        g_assert_true(umockdev_testbed_add_from_string(k->tb, "P: /devices/virtual/misc/snapshot\nN: snapshot\n"
                                                       "E: SUBSYSTEM=misc\nE: DEVNAME=/dev/snapshot\nA: dev=10:231\n",
                                                       &error));
        g_signal_connect(k->handler, "handle-ioctl", G_CALLBACK(sink_on_ioctl), k);
        g_signal_connect(k->handler, "handle-write", G_CALLBACK(sink_on_write), k);
        g_assert_true(umockdev_testbed_attach_ioctl(k->tb, "/dev/snapshot", k->handler, &error));
}

static void sink_done(Sink *k) {
        g_autoptr(GError) error = NULL;
        g_assert_true(umockdev_testbed_detach_ioctl(k->tb, "/dev/snapshot", &error));
        g_object_unref(k->handler);
        g_object_unref(k->tb);
        g_string_free(k->ioctls, TRUE);
        g_byte_array_unref(k->pages);
        g_mutex_clear(&k->lock);
}

/* fridge-resume --snapshot=/dev/snapshot under umockdev's preload: its
 * exit status, its output (both streams) in out */
static int resume_into(const Area *a, char **out) {
        g_auto(GStrv) env = umockdev_preload_environ(g_get_environ());
        return resume_run(a, "--snapshot=/dev/snapshot", env, out);
}

/* Loaded: loading, then refused with says; the swap area mkswap's again */
static void assert_loaded_refused(const Area *a, const char *says) {
        g_autofree char *out = NULL;
        g_assert_cmpint(resume_into(a, &out), ==, 1);
        g_assert_true(g_str_has_prefix(out, "fridge-resume: loading the image (0 MiB"));
        if (!strstr(out, says) || !strstr(out, "swap signature restored, boot continues"))
                g_error("\"%s\" does not say \"%s\" and that the boot continues", out, says);
        assert_page0(a, "SWAPSPACE2");
}

/* The whole image handed over, page for page, then the restore asked for
 * (here refused): frozen first, unfrozen after the refusal */
static void test_load(void) {
        Area a = area_make(NULL);
        Sink k;
        sink_init(&k, SIZE_MAX);
        assert_loaded_refused(&a, "SNAPSHOT_ATOMIC_RESTORE: Operation not permitted");
        g_assert_cmpstr(k.ioctls->str, ==, "freeze restore free unfreeze ");
        g_autofree uint8_t *raw = raw_make();
        g_assert_cmpmem(k.pages->data, k.pages->len, raw, IMAGE_PAGES * PAGE);
        sink_done(&k);
        area_free(&a);
}

/* An image made for the platform's hibernation state: the kernel told so before the load */
static void test_load_platform(void) {
        Area a = area_make_flags(NULL, FRIDGE_IMAGE_FLAG_PLATFORM);
        Sink k;
        sink_init(&k, SIZE_MAX);
        assert_loaded_refused(&a, "SNAPSHOT_ATOMIC_RESTORE: Operation not permitted");
        g_assert_cmpstr(k.ioctls->str, ==, "freeze platform restore free unfreeze ");
        g_assert_cmpuint(k.pages->len, ==, IMAGE_PAGES * PAGE);
        sink_done(&k);
        area_free(&a);
}

/* A corrupt block stops the load before any of its pages go to the
 * kernel, and the restore is never asked for: corrupt block 0, nothing
 * handed on; corrupt block 2 (the last), blocks 0 and 1's pages only */
static void test_load_corrupt(gconstpointer data) {
        unsigned block = GPOINTER_TO_UINT(data);
        Area a = area_make(NULL);
        size_t at = block_at[block] + 40; /* past the block's 32-byte header */
        flip(&a, STREAM_AT + 2 * (at / PAGE), at % PAGE);
        Sink k;
        sink_init(&k, SIZE_MAX);
        g_autofree char *says = g_strdup_printf("block %u is corrupt: its xxhash64 does not match", block);
        assert_loaded_refused(&a, says);
        g_assert_cmpstr(k.ioctls->str, ==, "freeze free unfreeze ");
        g_autofree uint8_t *raw = raw_make();
        g_assert_cmpmem(k.pages->data, k.pages->len, raw, (size_t) block * 32 * PAGE);
        sink_done(&k);
        area_free(&a);
}

/* The kernel out of memory for the image (its write fails): said, no restore */
static void test_load_refused_by_kernel(void) {
        Area a = area_make(NULL);
        Sink k;
        sink_init(&k, 40 * PAGE);
        assert_loaded_refused(&a, "/dev/snapshot did not take the image: Cannot allocate memory");
        g_assert_cmpstr(k.ioctls->str, ==, "freeze free unfreeze ");
        g_assert_cmpuint(k.pages->len, ==, 40 * PAGE);
        sink_done(&k);
        area_free(&a);
}
#else
static void test_no_umockdev(void) {
        g_test_skip("umockdev-1.0 (libumockdev-dev) was not found at configure time: no emulated snapshot device");
}
#endif

/* --verify-only checks every block, as the load does (which needs a
 * snapshot device: the emulated one below); here without umockdev too */
static void test_verify_corrupt_block(void) {
        Area a = area_make(NULL);
        flip(&a, STREAM_AT, 100); /* in block 0, past its 32-byte header */
        g_autofree char *out = NULL;
        g_assert_cmpint(resume(&a, true, &out), ==, 1);
        g_assert_nonnull(strstr(out, "block 0 is corrupt: its xxhash64 does not match"));
        assert_page0(&a, "ULSUSPEND"); /* and changes nothing */
        area_free(&a);
}

static void test_corrupt_map(void) {
        Area a = area_make(NULL);
        flip(&a, MAP_AT, 40);
        assert_refused(&a, "map page 0 (device page 50) is corrupt");
        area_free(&a);
}

static void test_other_kernel(void) {
        Area a = area_make("0.0.0-other");
        assert_refused(&a, "the image was made by another kernel: 0.0.0-other");
        area_free(&a);
}

static void test_damaged_signature(void) {
        Area a = area_make(NULL);
        flip(&a, 0, PAGE - 28); /* the pointer to the header */
        assert_refused(&a, "fridge's signature on");
        area_free(&a);
}

/* The device ends before the image's last pages */
/* --device=UUID=: the swap area found by mkswap's header on a block
 * device (a loop device over the area), though blkid cannot name it with
 * fridge's signature there; a UUID no swap area has is exit status 3 */
static void test_by_uuid(void) {
        Area a = area_make(NULL);
        const char *losetup[] = { "losetup", "--find", "--show", a.path, NULL };
        g_autofree char *loop = NULL;
        gint status = -1;
        if (!g_spawn_sync(NULL, (char **) losetup, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                          NULL, &loop, NULL, &status, NULL) ||
            !g_spawn_check_wait_status(status, NULL)) {
                area_free(&a);
                return g_test_skip("no loop device (losetup --find needs root and /dev/loop-control)");
        }
        g_strstrip(loop);
        GString *uuid = g_string_new("--device=UUID=");
        for (size_t i = 0; i < 16; i++)
                g_string_append_printf(uuid, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
                                       a.mkswap[1036 + i]);
        const char *find[] = { g_getenv("FRIDGE_RESUME"), uuid->str, "--verify-only", NULL };
        const char *none[] = { g_getenv("FRIDGE_RESUME"), "--device=UUID=00000000-1111-2222-3333-444444444444",
                               "--verify-only", NULL };
        g_autofree char *out = NULL, *err = NULL, *out2 = NULL, *err2 = NULL;
        g_assert_true(g_spawn_sync(NULL, (char **) find, NULL, 0, NULL, NULL, &out, &err, &status, NULL));
        g_test_message("%s on %s: %s%s", uuid->str, loop, out, err);
        gint none_status = -1;
        g_assert_true(g_spawn_sync(NULL, (char **) none, NULL, 0, NULL, NULL, &out2, &err2, &none_status, NULL));
        const char *detach[] = { "losetup", "--detach", loop, NULL };
        g_assert_true(g_spawn_sync(NULL, (char **) detach, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL,
                                   NULL));
        g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        g_assert_nonnull(strstr(out, "verified=1\npages=70\n"));
        g_assert_true(WIFEXITED(none_status) && WEXITSTATUS(none_status) == 3);
        g_assert_nonnull(strstr(err2, "no swap area UUID=00000000-1111-2222-3333-444444444444 on any block device"));
        g_string_free(uuid, TRUE);
        area_free(&a);
}

static void test_truncated(void) {
        Area a = area_make(NULL);
        g_assert_cmpint(truncate(a.path, (off_t) (STREAM_AT + 3) * PAGE), ==, 0);
        assert_refused(&a, "outside the device (103 pages)");
        area_free(&a);
}

/* noresume: the image dropped unread (a corrupt block is not even seen),
 * mkswap's page back byte for byte, one line; a later boot finds plain swap */
static void test_discard(void) {
        Area a = area_make(NULL);
        flip(&a, STREAM_AT, 100);
        g_autofree char *out = NULL, *again = NULL, *verify = NULL;
        g_autofree char *says = g_strdup_printf("fridge-resume: noresume: the hibernation image on %s discarded "
                                                "unread, swap signature restored\n", a.path);
        g_assert_cmpint(resume_mode(&a, "--discard", &out), ==, 0);
        g_assert_cmpstr(out, ==, says);
        assert_page0(&a, "SWAPSPACE2");
        g_assert_cmpint(resume(&a, false, &again), ==, 0);
        g_assert_cmpstr(again, ==, "");
        g_assert_cmpint(resume(&a, true, &verify), ==, 1);
        area_free(&a);
}

/* --discard leaves what is not fridge's as it is: plain swap silently, the
 * kernel's image byte for byte; and it does not go with --verify-only */
static void test_discard_others(void) {
        Area plain = area_signed(NULL), kernel = area_signed("S1SUSPEND");
        g_autofree char *out = NULL, *kout = NULL, *before = NULL, *after = NULL;
        gsize len = 0;
        g_assert_cmpint(resume_mode(&plain, "--discard", &out), ==, 0);
        g_assert_cmpstr(out, ==, "");
        assert_page0(&plain, "SWAPSPACE2");
        g_assert_true(g_file_get_contents(kernel.path, &before, &len, NULL));
        g_assert_cmpint(resume_mode(&kernel, "--discard", &kout), ==, 0);
        g_assert_nonnull(strstr(kout, "left as it is"));
        g_assert_true(g_file_get_contents(kernel.path, &after, &len, NULL));
        g_assert_cmpmem(before, PAGE, after, PAGE);
        const char *argv[] = { g_getenv("FRIDGE_RESUME"), "--device=/dev/null", "--discard", "--verify-only", NULL };
        gint status = -1;
        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                                   &status, NULL));
        g_assert_cmpint(WEXITSTATUS(status), ==, 2);
        area_free(&plain);
        area_free(&kernel);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/resume/verify", test_verify);
        g_test_add_func("/resume/restored-before-load", test_restored_before_load);
        g_test_add_func("/resume/plain-swap", test_plain_swap);
        g_test_add_data_func("/resume/kernel-image", "S1SUSPEND", test_foreign_image);
        g_test_add_data_func("/resume/uswsusp-image", "ULSUSPEND", test_foreign_image);
#ifdef HAVE_UMOCKDEV
        g_test_add_func("/resume/load", test_load);
        g_test_add_func("/resume/load-platform", test_load_platform);
        g_test_add_data_func("/resume/load-corrupt-first", GUINT_TO_POINTER(0), test_load_corrupt);
        g_test_add_data_func("/resume/load-corrupt-last", GUINT_TO_POINTER(2), test_load_corrupt);
        g_test_add_func("/resume/load-refused-by-kernel", test_load_refused_by_kernel);
#else
        g_test_add_func("/resume/load", test_no_umockdev);
#endif
        g_test_add_func("/resume/verify-corrupt-block", test_verify_corrupt_block);
        g_test_add_func("/resume/corrupt-map", test_corrupt_map);
        g_test_add_func("/resume/other-kernel", test_other_kernel);
        g_test_add_func("/resume/damaged-signature", test_damaged_signature);
        g_test_add_func("/resume/truncated", test_truncated);
        g_test_add_func("/resume/by-uuid", test_by_uuid);
        g_test_add_func("/resume/discard", test_discard);
        g_test_add_func("/resume/discard-others", test_discard_others);
        return g_test_run();
}
