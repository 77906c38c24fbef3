/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdint.h>

/* cpio's newc format, as initramfs-tools and the kernel's own
 * usr/gen_init_cpio write it, for tests that need an initramfs: one
 * entry (its header, the name padded to 4 bytes, the data padded too),
 * and the trailer that ends an archive */
void cpio_newc_add(GByteArray *a, const char *name, uint32_t mode, const void *data, size_t size);
void cpio_newc_trailer(GByteArray *a);
