/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "rawbus.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Header field codes of the D-Bus specification */
enum { FIELD_PATH = 1, FIELD_INTERFACE, FIELD_MEMBER, FIELD_ERROR_NAME, FIELD_REPLY_SERIAL, FIELD_DESTINATION,
       FIELD_SENDER, FIELD_SIGNATURE };

struct RawBus {
        int fd;
        uint32_t serial;
};

/* All of n bytes, each way; false on EOF, an error, or timeout_ms without progress */
static bool transfer_all(int fd, char *p, size_t n, bool sending, int timeout_ms) {
        while (n > 0) {
                struct pollfd pfd = { .fd = fd, .events = sending ? POLLOUT : POLLIN };
                if (poll(&pfd, 1, timeout_ms) <= 0)
                        return false;
                ssize_t k = sending ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return false;
                p += k;
                n -= (size_t) k;
        }
        return true;
}

static bool send_all(int fd, const void *p, size_t n) {
        return transfer_all(fd, (char *) p, n, true, 10000);
}

static bool recv_all(int fd, void *p, size_t n, int timeout_ms) {
        return transfer_all(fd, p, n, false, timeout_ms);
}

static bool recv_line(int fd, char *buf, size_t size) {
        size_t n = 0;
        while (n + 1 < size) {
                if (!recv_all(fd, buf + n, 1, 5000))
                        return false;
                if (buf[n++] == '\n')
                        break;
        }
        buf[n] = '\0';
        return true;
}

static void put_align(GByteArray *b, guint a) {
        static const guint8 zero[8];
        g_byte_array_append(b, zero, (a - b->len % a) % a);
}

static void put_u32(GByteArray *b, uint32_t v) {
        put_align(b, 4);
        g_byte_array_append(b, (const guint8 *) &v, 4);
}

static void put_sig(GByteArray *b, const char *s) {
        guint8 n = (guint8) strlen(s);
        g_byte_array_append(b, &n, 1);
        g_byte_array_append(b, (const guint8 *) s, n + 1);
}

void rawbus_put_string(GByteArray *b, const char *s, size_t n) {
        put_u32(b, (uint32_t) n);
        g_byte_array_append(b, (const guint8 *) s, (guint) n);
        g_byte_array_append(b, (const guint8 *) "", 1);
}

void rawbus_put_empty_array(GByteArray *b, guint element_align) {
        put_u32(b, 0);
        put_align(b, element_align);
}

static void put_field(GByteArray *b, guint8 code, char type, const char *value) {
        const char sig[2] = { type, '\0' };
        put_align(b, 8);
        g_byte_array_append(b, &code, 1);
        put_sig(b, sig);
        if (type == 'g')
                put_sig(b, value);
        else
                rawbus_put_string(b, value, strlen(value));
}

/* A little-endian method call with `body` already marshalled for `signature`. */
static GByteArray *build_call(uint32_t serial, const char *dest, const char *path, const char *interface,
                              const char *member, const char *signature, const GByteArray *body) {
        GByteArray *m = g_byte_array_new();
        const guint8 fixed[4] = { 'l', 1 /* method call */, 0, 1 };
        g_byte_array_append(m, fixed, 4);
        put_u32(m, body ? body->len : 0);
        put_u32(m, serial);
        put_u32(m, 0); /* fields length, patched below */
        guint start = m->len;
        put_field(m, FIELD_PATH, 'o', path);
        if (interface)
                put_field(m, FIELD_INTERFACE, 's', interface);
        put_field(m, FIELD_MEMBER, 's', member);
        if (dest)
                put_field(m, FIELD_DESTINATION, 's', dest);
        if (signature && *signature)
                put_field(m, FIELD_SIGNATURE, 'g', signature);
        uint32_t fields_len = m->len - start;
        memcpy(m->data + 12, &fields_len, 4);
        put_align(m, 8);
        if (body)
                g_byte_array_append(m, body->data, body->len);
        return m;
}

/* Only what the reply's header says; the body is read and dropped. Each
 * field is a (yv) struct, aligned to 8 within the message. */
static void parse_fields(const guint8 *f, uint32_t len, RawReply *r) {
        for (uint32_t i = 0; i + 4 <= len; i = (i + 7) & ~7u) {
                guint8 code = f[i], slen = f[i + 1];
                char type = (char) f[i + 2];
                i += 3 + slen;                  /* past the variant's signature */
                if (type == 'g') {
                        if (i >= len)
                                return;
                        i += 1 + f[i] + 1;
                        continue;
                }
                i = (i + 3) & ~3u;
                if (i + 4 > len)
                        return;
                uint32_t v;
                memcpy(&v, f + i, 4);
                i += 4;
                if (code == FIELD_REPLY_SERIAL)
                        r->reply_serial = v;
                if (type == 's' || type == 'o') {
                        if ((code == FIELD_ERROR_NAME || code == FIELD_SENDER) && i + v <= len)
                                *(code == FIELD_SENDER ? &r->sender : &r->error_name) =
                                        g_strndup((const char *) f + i, v);
                        i += v + 1;
                }
        }
}

static bool read_message(RawBus *rb, RawReply *r, int timeout_ms) {
        guint8 fixed[16];
        if (!recv_all(rb->fd, fixed, sizeof fixed, timeout_ms) || fixed[0] != 'l')
                return false;
        uint32_t body_len, fields_len;
        memcpy(&body_len, fixed + 4, 4);
        memcpy(&fields_len, fixed + 12, 4);
        if (fields_len > (1u << 26) || body_len > (1u << 27))
                return false;
        size_t rest = ((16 + (size_t) fields_len + 7) & ~(size_t) 7) - 16 + body_len;
        g_autofree guint8 *buf = g_malloc(rest + 1);
        if (!recv_all(rb->fd, buf, rest, timeout_ms))
                return false;
        *r = (RawReply) { .type = fixed[1] };
        parse_fields(buf, fields_len, r);
        return true;
}

void rawbus_reply_clear(RawReply *r) {
        g_clear_pointer(&r->error_name, g_free);
        g_clear_pointer(&r->sender, g_free);
}

/* Sends and waits for the reply to it, skipping signals. false: the bus
 * closed the connection (or said nothing within timeout_ms). */
bool rawbus_call(RawBus *rb, const char *dest, const char *path, const char *interface, const char *member,
                 const char *signature, const GByteArray *body, RawReply *ret, int timeout_ms) {
        uint32_t serial = ++rb->serial;
        g_autoptr(GByteArray) m = build_call(serial, dest, path, interface, member, signature, body);
        if (!send_all(rb->fd, m->data, m->len))
                return false;
        for (;;) {
                RawReply r = {};
                if (!read_message(rb, &r, timeout_ms))
                        return false;
                if ((r.type == 2 || r.type == 3) && r.reply_serial == serial) {
                        *ret = r;
                        return true;
                }
                rawbus_reply_clear(&r);
        }
}

static bool authenticate(int fd) {
        g_autofree char *uid = g_strdup_printf("%u", (unsigned) getuid());
        g_autoptr(GString) hex = g_string_new(NULL);
        for (const char *c = uid; *c; c++)
                g_string_append_printf(hex, "%02x", (unsigned char) *c);
        g_autofree char *auth = g_strdup_printf("AUTH EXTERNAL %s\r\n", hex->str);
        char line[512];
        if (!send_all(fd, "", 1) || !send_all(fd, auth, strlen(auth)) || !recv_line(fd, line, sizeof line) ||
            strncmp(line, "OK ", 3) != 0)
                return false;
        return send_all(fd, "BEGIN\r\n", 7);
}

RawBus *rawbus_connect(const char *address) {
        const char *path = g_str_has_prefix(address, "unix:path=") ? address + strlen("unix:path=") : NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (!path || strcspn(path, ",") >= sizeof sa.sun_path)
                return NULL;
        memcpy(sa.sun_path, path, strcspn(path, ","));
        RawBus *rb = g_new0(RawBus, 1);
        rb->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        RawReply hello = {};
        if (rb->fd < 0 || connect(rb->fd, (struct sockaddr *) &sa, sizeof sa) < 0 || !authenticate(rb->fd) ||
            !rawbus_call(rb, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello",
                         NULL, NULL, &hello, 5000) || hello.type != 2) {
                rawbus_reply_clear(&hello);
                rawbus_free(rb);
                return NULL;
        }
        rawbus_reply_clear(&hello);
        return rb;
}

void rawbus_free(RawBus *rb) {
        if (!rb)
                return;
        if (rb->fd >= 0)
                close(rb->fd);
        g_free(rb);
}
