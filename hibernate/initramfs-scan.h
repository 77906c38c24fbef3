/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether an initramfs holds a file, read as the kernel unpacks it at boot
 * (init/initramfs.c): archives one after another, each an uncompressed
 * cpio (newc, as early microcode comes) or a compressed one (zstd, gzip,
 * xz, lz4's legacy frames: what initramfs-tools and dracut make), zero
 * padding between. fridge-image-writer asks it before it freezes anything:
 * an image the next boot's initramfs cannot resume (dracut without a
 * fridge module, update-initramfs not run since the package came) would
 * be a session lost; the kernel's own writer is used instead. */

/* Names as in the archive, without "./" or "/" in front */
typedef struct InitramfsScan {
        const char *name;       /* the regular file looked for */
        bool found;
        size_t archives;        /* how many were read (tests) */
} InitramfsScan;

/* 0 when read to its end or as far as the file was found; a negative
 * errno and why (no file, corrupt, a compression not read here) */
int initramfs_scan_buffer(const void *data, size_t size, InitramfsScan *s, char *why, size_t whylen);

int initramfs_scan_file(const char *path, InitramfsScan *s, char *why, size_t whylen);

/* Where a distribution puts the initramfs the boot loader gives kernel
 * `release`: Debian's (initramfs-tools and dracut alike), then Fedora's
 * dracut's. The i-th candidate into buf; false past the last. */
bool initramfs_candidate(const char *release, unsigned i, char *buf, size_t size);
