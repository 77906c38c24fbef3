/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A D-Bus client that writes the wire format itself: sd-bus (rightly)
 * refuses to marshal invalid UTF-8, so a fuzzer that wants to see what the
 * bus daemon and fridged make of it has to build the bytes by hand. Little
 * endian, unix:path= addresses, EXTERNAL authentication only. */

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct RawBus RawBus;

typedef struct RawReply {
        int type;               /* 2: method return, 3: error */
        uint32_t reply_serial;
        char *error_name;       /* type 3 */
        char *sender;
} RawReply;

RawBus *rawbus_connect(const char *address);
void rawbus_free(RawBus *rb);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RawBus, rawbus_free)
void rawbus_reply_clear(RawReply *r);

/* Body marshalling: a string of n bytes taken as they are (any bytes), an
 * empty array whose elements align to element_align. */
void rawbus_put_string(GByteArray *b, const char *s, size_t n);
void rawbus_put_empty_array(GByteArray *b, guint element_align);

bool rawbus_call(RawBus *rb, const char *dest, const char *path, const char *interface, const char *member,
                 const char *signature, const GByteArray *body, RawReply *ret, int timeout_ms);
