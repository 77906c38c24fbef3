/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cpio-newc.h"

#include <stdio.h>
#include <string.h>

static void pad4(GByteArray *a) {
        static const uint8_t zeros[4];
        g_byte_array_append(a, zeros, (4 - a->len % 4) % 4);
}

void cpio_newc_add(GByteArray *a, const char *name, uint32_t mode, const void *data, size_t size) {
        static unsigned ino = 1;
        char header[111];
        size_t name_size = strlen(name) + 1;
        snprintf(header, sizeof(header), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", ino++,
                 mode, 0u, 0u, 1u, 0u, (unsigned) size, 0u, 0u, 0u, 0u, (unsigned) name_size, 0u);
        g_byte_array_append(a, (const uint8_t *) header, 110);
        g_byte_array_append(a, (const uint8_t *) name, (guint) name_size);
        pad4(a);
        if (size)
                g_byte_array_append(a, data, (guint) size);
        pad4(a);
}

void cpio_newc_trailer(GByteArray *a) {
        cpio_newc_add(a, "TRAILER!!!", 0, NULL, 0);
}
