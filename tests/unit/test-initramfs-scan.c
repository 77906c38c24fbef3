/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether an initramfs holds fridge-resume, read as the kernel unpacks it:
 * uncompressed and compressed archives one after another (early microcode
 * first, as Debian's are), each compression initramfs-tools and dracut
 * use, archives fed to the reader in pieces of any size, and what cannot
 * be read named. The archives are made here, by the same rules as
 * initramfs-tools' cpio and the kernel's gen_init_cpio. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <lz4.h>
#include <lzma.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include "cpio-newc.h"
#include "initramfs-scan.h"

#define WANTED "usr/libexec/fridge-resume"
#define LZ4_MAGIC 0x184C2102u

/* A main archive as initramfs-tools makes one: directories, a large
 * module before the binary (the reader goes through several output
 * chunks and the binary's header lands mid-chunk), then `name` */
static GByteArray *main_archive(const char *name, uint32_t mode) {
        GByteArray *a = g_byte_array_new();
        cpio_newc_add(a, ".", S_IFDIR | 0755, NULL, 0);
        cpio_newc_add(a, "usr", S_IFDIR | 0755, NULL, 0);
        cpio_newc_add(a, "usr/libexec", S_IFDIR | 0755, NULL, 0);
        g_autofree uint8_t *module = g_malloc(1500013);
        for (size_t i = 0; i < 1500013; i++)
                module[i] = (uint8_t) (i * 2654435761u >> 13);
        cpio_newc_add(a, "usr/lib/modules/x/big.ko", S_IFREG | 0644, module, 1500013);
        if (name)
                cpio_newc_add(a, name, mode, "\177ELF...", 7);
        cpio_newc_add(a, "scripts/local-premount/fridge", S_IFREG | 0755, "#!/bin/sh\n", 10);
        cpio_newc_trailer(a);
        return a;
}

/* The early archive, padded to 512 bytes with zeros as cpio pads its blocks */
static GByteArray *early_archive(void) {
        GByteArray *a = g_byte_array_new();
        cpio_newc_add(a, "kernel", S_IFDIR | 0755, NULL, 0);
        cpio_newc_add(a, "kernel/x86/microcode/AuthenticAMD.bin", S_IFREG | 0644, "ucode", 5);
        cpio_newc_trailer(a);
        static const uint8_t zero[512];
        g_byte_array_append(a, zero, (512 - a->len % 512) % 512);
        return a;
}

static GByteArray *zstd_of(const GByteArray *in) {
        GByteArray *out = g_byte_array_sized_new((guint) ZSTD_compressBound(in->len));
        size_t n = ZSTD_compress(out->data, ZSTD_compressBound(in->len), in->data, in->len, 3);
        g_assert_false(ZSTD_isError(n));
        g_byte_array_set_size(out, (guint) n);
        return out;
}

static GByteArray *gzip_of(const GByteArray *in) {
        z_stream z = {};
        g_assert_cmpint(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), ==, Z_OK);
        GByteArray *out = g_byte_array_sized_new((guint) deflateBound(&z, in->len));
        g_byte_array_set_size(out, (guint) deflateBound(&z, in->len));
        z.next_in = in->data;
        z.avail_in = in->len;
        z.next_out = out->data;
        z.avail_out = out->len;
        g_assert_cmpint(deflate(&z, Z_FINISH), ==, Z_STREAM_END);
        g_byte_array_set_size(out, (guint) z.total_out);
        deflateEnd(&z);
        return out;
}

static GByteArray *xz_of(const GByteArray *in) {
        size_t bound = lzma_stream_buffer_bound(in->len), pos = 0;
        GByteArray *out = g_byte_array_sized_new((guint) bound);
        g_byte_array_set_size(out, (guint) bound);
        g_assert_cmpint(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC32, NULL, in->data, in->len, out->data, &pos, bound),
                        ==, LZMA_OK);
        g_byte_array_set_size(out, (guint) pos);
        return out;
}

static size_t vli_skip(const uint8_t *b, size_t at) {
        while (b[at] & 0x80)
                at++;
        return at + 1;
}

/* xz_of()'s stream, its block header saying the LZMA2 dictionary is
 * 1.5 GiB (properties byte 37; its CRC32 made again): nothing is
 * encoded with such a dictionary, only asked for */
static GByteArray *xz_of_greedy(const GByteArray *in) {
        GByteArray *out = xz_of(in);
        uint8_t *h = out->data + LZMA_STREAM_HEADER_SIZE;
        size_t size = ((size_t) h[0] + 1) * 4, at = 2;
        if (h[1] & 0x40)
                at = vli_skip(h, at); /* compressed size */
        if (h[1] & 0x80)
                at = vli_skip(h, at); /* uncompressed size */
        g_assert_cmpuint(h[at], ==, LZMA_FILTER_LZMA2);
        g_assert_cmpuint(h[at + 1], ==, 1);
        h[at + 2] = 37;
        uint32_t crc = lzma_crc32(h, size - 4, 0);
        for (int i = 0; i < 4; i++)
                h[size - 4 + (size_t) i] = (uint8_t) (crc >> (8 * i));
        return out;
}

static void put_le32(GByteArray *a, uint32_t v) {
        uint8_t b[4] = { (uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24) };
        g_byte_array_append(a, b, 4);
}

/* lz4 -l's legacy frames, in blocks of `block` input bytes (lz4 makes
 * 8 MiB ones; small ones feed the cpio reader a few bytes at a time) */
static GByteArray *lz4_of(const GByteArray *in, size_t block) {
        GByteArray *out = g_byte_array_new();
        put_le32(out, LZ4_MAGIC);
        g_autofree char *tmp = g_malloc((size_t) LZ4_compressBound((int) block));
        for (size_t at = 0; at < in->len; at += block) {
                int len = (int) MIN(block, in->len - at);
                int n = LZ4_compress_default((const char *) in->data + at, tmp, len, LZ4_compressBound((int) block));
                g_assert_cmpint(n, >, 0);
                put_le32(out, (uint32_t) n);
                g_byte_array_append(out, (const uint8_t *) tmp, (guint) n);
        }
        return out;
}

static GByteArray *concat(GByteArray *a, GByteArray *b) {
        g_byte_array_append(a, b->data, b->len);
        g_byte_array_unref(b);
        return a;
}

static int scan(const GByteArray *a, InitramfsScan *s, char *why) {
        *s = (InitramfsScan) { .name = WANTED };
        why[0] = '\0';
        int r = initramfs_scan_buffer(a->data, a->len, s, why, 256);
        g_test_message("r=%d found=%d archives=%zu why=%s", r, s->found, s->archives, why);
        return r;
}

/* A readable archive, with or without the resume tool in it */
static void assert_scan(const GByteArray *a, bool found, size_t archives) {
        InitramfsScan s;
        char why[256];
        g_assert_cmpint(scan(a, &s, why), ==, 0);
        g_assert_cmpint(s.found, ==, found);
        g_assert_cmpuint(s.archives, ==, archives);
}

static void test_plain(void) {
        g_autoptr(GByteArray) a = main_archive(WANTED, S_IFREG | 0755);
        assert_scan(a, true, 1);
        g_autoptr(GByteArray) b = main_archive(NULL, 0);
        assert_scan(b, false, 1);
}

/* Early microcode, then the main archive compressed each way */
static void test_compressed(void) {
        static const struct {
                const char *name;
                GByteArray *(*compress)(const GByteArray *);
        } ways[] = { { "zstd", zstd_of }, { "gzip", gzip_of }, { "xz", xz_of } };
        for (size_t i = 0; i < G_N_ELEMENTS(ways); i++) {
                g_test_message("%s", ways[i].name);
                g_autoptr(GByteArray) with = main_archive(WANTED, S_IFREG | 0755);
                g_autoptr(GByteArray) a = concat(early_archive(), ways[i].compress(with));
                assert_scan(a, true, 2);
                g_autoptr(GByteArray) without = main_archive(NULL, 0);
                g_autoptr(GByteArray) b = concat(early_archive(), ways[i].compress(without));
                assert_scan(b, false, 2);
        }
}

/* lz4's blocks of 8 MiB, and of 7 bytes: every header, name and padding
 * arrives cut at another place */
static void test_lz4_pieces(void) {
        const size_t blocks[] = { 8u << 20, 7, 4096 + 3 };
        for (size_t i = 0; i < G_N_ELEMENTS(blocks); i++) {
                g_autoptr(GByteArray) with = main_archive(WANTED, S_IFREG | 0755);
                g_autoptr(GByteArray) a = concat(early_archive(), lz4_of(with, blocks[i]));
                static const uint8_t zero[8];
                g_byte_array_append(a, zero, sizeof(zero)); /* padding after the last frame */
                assert_scan(a, true, 2);
                g_autoptr(GByteArray) without = main_archive(NULL, 0);
                g_autoptr(GByteArray) b = concat(early_archive(), lz4_of(without, blocks[i]));
                assert_scan(b, false, 2);
        }
}

/* zstd -T0 may write one archive as several frames: one archive still */
static void test_zstd_frames(void) {
        g_autoptr(GByteArray) with = main_archive(WANTED, S_IFREG | 0755);
        g_autoptr(GByteArray) first = g_byte_array_new(), second = g_byte_array_new();
        guint cut = with->len - 301; /* inside the binary's entry */
        g_byte_array_append(first, with->data, cut);
        g_byte_array_append(second, with->data + cut, with->len - cut);
        g_autoptr(GByteArray) a = concat(concat(early_archive(), zstd_of(first)), zstd_of(second));
        assert_scan(a, true, 2);
}

/* "./usr/…" as `find .` names it is the same file; a directory or a
 * symlink by that name is not the program */
static void test_names(void) {
        InitramfsScan s;
        char why[256];
        g_autoptr(GByteArray) dot = main_archive("./" WANTED, S_IFREG | 0755);
        g_assert_cmpint(scan(dot, &s, why), ==, 0);
        g_assert_true(s.found);
        g_autoptr(GByteArray) dir = main_archive(WANTED, S_IFDIR | 0755);
        g_assert_cmpint(scan(dir, &s, why), ==, 0);
        g_assert_false(s.found);
        g_autoptr(GByteArray) link = main_archive(WANTED, S_IFLNK | 0777);
        g_assert_cmpint(scan(link, &s, why), ==, 0);
        g_assert_false(s.found);
        g_autoptr(GByteArray) longer = main_archive(WANTED "-old", S_IFREG | 0755);
        g_assert_cmpint(scan(longer, &s, why), ==, 0);
        g_assert_false(s.found);
}

/* What cannot be read is an error that says what, never "not there" */
static void test_unreadable(void) {
        InitramfsScan s;
        char why[256];
        g_autoptr(GByteArray) without = main_archive(NULL, 0);

        g_autoptr(GByteArray) bz = early_archive();
        g_byte_array_append(bz, (const uint8_t *) "BZh91AY&SY", 10);
        g_assert_cmpint(scan(bz, &s, why), ==, -EOPNOTSUPP);
        g_assert_nonnull(strstr(why, "compressed with bzip2"));

        g_autoptr(GByteArray) junk = early_archive();
        g_byte_array_append(junk, (const uint8_t *) "\x7f" "ELF", 4);
        g_assert_cmpint(scan(junk, &s, why), ==, -EBADMSG);
        g_assert_nonnull(strstr(why, "neither a cpio archive nor a known compression (7f 45 4c 46)"));

        g_autoptr(GByteArray) z = zstd_of(without);
        g_byte_array_set_size(z, z->len / 2);
        g_assert_cmpint(scan(z, &s, why), ==, -EBADMSG);
        g_assert_nonnull(strstr(why, "zstd"));

        g_autoptr(GByteArray) gz = gzip_of(without);
        g_byte_array_set_size(gz, gz->len / 2);
        g_assert_cmpint(scan(gz, &s, why), ==, -EBADMSG);
        g_assert_nonnull(strstr(why, "gzip data: it ends early"));

        g_autoptr(GByteArray) xz = xz_of(without);
        g_byte_array_set_size(xz, xz->len / 2);
        g_assert_cmpint(scan(xz, &s, why), ==, -EBADMSG);
        g_assert_nonnull(strstr(why, "xz data: it ends early"));

        g_autoptr(GByteArray) cut = g_byte_array_new();
        g_byte_array_append(cut, without->data, without->len - 200); /* no trailer */
        g_assert_cmpint(scan(cut, &s, why), ==, -EBADMSG);
        g_assert_nonnull(strstr(why, "the last archive ends early"));

        /* compressed, cut inside the archive, then padding: not "not there" */
        g_autoptr(GByteArray) half = g_byte_array_new();
        g_byte_array_append(half, without->data, without->len - 200);
        g_autoptr(GByteArray) padded = zstd_of(half);
        static const uint8_t zeros[512];
        g_byte_array_append(padded, zeros, sizeof(zeros));
        g_assert_cmpint(scan(padded, &s, why), ==, -EBADMSG);
        g_assert_nonnull(strstr(why, "the last archive ends early"));

        /* an xz header asking for a 1.5 GiB dictionary is not obeyed */
        g_autoptr(GByteArray) greedy = xz_of_greedy(without);
        g_assert_cmpint(scan(greedy, &s, why), ==, -EFBIG);
        g_assert_nonnull(strstr(why, "needs more than 128 MiB"));

        g_autoptr(GByteArray) bad = main_archive(NULL, 0);
        memcpy(bad->data + 6 + 8, "0000Z1ED", 8); /* the first entry's mode */
        g_assert_cmpint(scan(bad, &s, why), ==, -EBADMSG);
        g_assert_nonnull(strstr(why, "not hexadecimal"));
}

static void test_file(void) {
        g_autofree char *dir = g_dir_make_tmp("fridge-initramfs-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, "initrd.img", NULL);
        InitramfsScan s = { .name = WANTED };
        char why[256];
        g_assert_cmpint(initramfs_scan_file(path, &s, why, sizeof(why)), ==, -ENOENT);
        g_assert_cmpstr(why, ==, "No such file or directory");
        g_assert_cmpint(initramfs_scan_file(dir, &s, why, sizeof(why)), ==, -EINVAL);
        g_assert_cmpstr(why, ==, "not a regular file");
        g_assert_true(g_file_set_contents(path, "", 0, NULL));
        g_assert_cmpint(initramfs_scan_file(path, &s, why, sizeof(why)), ==, -EBADMSG);
        g_assert_cmpstr(why, ==, "an empty file");
        g_autoptr(GByteArray) with = main_archive(WANTED, S_IFREG | 0755);
        g_autoptr(GByteArray) a = concat(early_archive(), zstd_of(with));
        g_assert_true(g_file_set_contents(path, (const char *) a->data, a->len, NULL));
        g_assert_cmpint(initramfs_scan_file(path, &s, why, sizeof(why)), ==, 0);
        g_assert_true(s.found);

        /* open for writing (update-initramfs or dracut at work): the scan
         * takes a read lease, which it cannot have now */
        int probe = open(path, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(probe, >=, 0);
        bool leases = fcntl(probe, F_SETLEASE, F_RDLCK) == 0;
        close(probe);
        if (leases) {
                int writing = open(path, O_WRONLY | O_CLOEXEC);
                g_assert_cmpint(writing, >=, 0);
                g_assert_cmpint(initramfs_scan_file(path, &s, why, sizeof(why)), ==, -EBUSY);
                g_assert_cmpstr(why, ==, "it is being written");
                close(writing);
                g_assert_cmpint(initramfs_scan_file(path, &s, why, sizeof(why)), ==, 0);
        } else
                g_test_message("no leases on %s: the scan reads it as it is", dir);
        g_assert_cmpint(g_unlink(path), ==, 0);
        g_assert_cmpint(g_rmdir(dir), ==, 0);
}

static void test_candidates(void) {
        char buf[128];
        g_assert_true(initramfs_candidate("6.1.0-28-amd64", 0, buf, sizeof(buf)));
        g_assert_cmpstr(buf, ==, "/boot/initrd.img-6.1.0-28-amd64");
        g_assert_true(initramfs_candidate("6.1.0-28-amd64", 1, buf, sizeof(buf)));
        g_assert_cmpstr(buf, ==, "/boot/initramfs-6.1.0-28-amd64.img");
        g_assert_false(initramfs_candidate("6.1.0-28-amd64", 2, buf, sizeof(buf)));
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/initramfs/plain", test_plain);
        g_test_add_func("/initramfs/compressed", test_compressed);
        g_test_add_func("/initramfs/lz4-pieces", test_lz4_pieces);
        g_test_add_func("/initramfs/zstd-frames", test_zstd_frames);
        g_test_add_func("/initramfs/names", test_names);
        g_test_add_func("/initramfs/unreadable", test_unreadable);
        g_test_add_func("/initramfs/file", test_file);
        g_test_add_func("/initramfs/candidates", test_candidates);
        return g_test_run();
}
