/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "writer-protocol.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "format-util.h"

typedef enum Field {
        FIELD_MODE,
        FIELD_DONE,
        FIELD_TOTAL,
        FIELD_RAW,
        FIELD_WRITTEN,
        FIELD_USEC,
        FIELD_PATH,
        FIELD_KEY,
        FIELD_MESSAGE, /* last on a line: takes the rest of it */
        _FIELD_MAX,
} Field;

#define F(f) (1u << (f))

static const char *const field_names[_FIELD_MAX] = {
        [FIELD_MODE] = "mode",   [FIELD_DONE] = "done",       [FIELD_TOTAL] = "total",     [FIELD_RAW] = "raw",
        [FIELD_WRITTEN] = "written", [FIELD_USEC] = "usec",   [FIELD_PATH] = "path",       [FIELD_KEY] = "key",
        [FIELD_MESSAGE] = "message",
};

/* Each message's word and the fields it must have (and may have: no others) */
static const struct {
        const char *word;
        unsigned fields;
} messages[_WRITER_MSG_MAX] = {
        [WRITER_MSG_HIBERNATE] = { "hibernate", F(FIELD_MODE) },
        [WRITER_MSG_CANCEL] = { "cancel", 0 },
        [WRITER_MSG_PROGRESS] = { "progress", F(FIELD_DONE) | F(FIELD_TOTAL) },
        [WRITER_MSG_UNAVAILABLE] = { "unavailable", F(FIELD_MESSAGE) },
        [WRITER_MSG_CANCELLED] = { "cancelled", F(FIELD_MESSAGE) },
        [WRITER_MSG_FAILED] = { "failed", F(FIELD_MESSAGE) },
        [WRITER_MSG_RESUMED] = { "resumed", F(FIELD_RAW) | F(FIELD_WRITTEN) | F(FIELD_USEC) },
        [WRITER_MSG_CHECK] = { "check", 0 },
        [WRITER_MSG_USABLE] = { "usable", F(FIELD_PATH) | F(FIELD_KEY) },
        [WRITER_MSG_UNUSABLE] = { "unusable", F(FIELD_PATH) | F(FIELD_KEY) | F(FIELD_MESSAGE) },
};

const char *writer_message_type_to_string(WriterMessageType t) {
        return t >= 0 && t < _WRITER_MSG_MAX ? messages[t].word : NULL;
}

static uint64_t *u64_field(WriterMessage *m, Field f) {
        switch (f) {
        case FIELD_DONE:    return &m->done;
        case FIELD_TOTAL:   return &m->total;
        case FIELD_RAW:     return &m->raw;
        case FIELD_WRITTEN: return &m->written;
        case FIELD_USEC:    return &m->usec;
        default:            return NULL;
        }
}

/* The words: a field of one token, its buffer's size in *size */
static char *word_field(WriterMessage *m, Field f, size_t *size) {
        switch (f) {
        case FIELD_MODE: *size = sizeof(m->mode); return m->mode;
        case FIELD_PATH: *size = sizeof(m->path); return m->path;
        case FIELD_KEY:  *size = sizeof(m->key);  return m->key;
        default:         return NULL;
        }
}

static Field field_from_name(const char *name, size_t len) {
        for (int f = 0; f < _FIELD_MAX; f++)
                if (strlen(field_names[f]) == len && memcmp(field_names[f], name, len) == 0)
                        return (Field) f;
        return _FIELD_MAX;
}

static int parse_u64(const char *s, size_t len, uint64_t *ret) {
        char digits[21];
        if (len == 0 || len >= sizeof(digits) || strspn(s, "0123456789") < len)
                return -EINVAL;
        memcpy(digits, s, len);
        digits[len] = '\0';
        errno = 0;
        unsigned long long v = strtoull(digits, NULL, 10);
        if (errno != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* One key=value at p (len bytes, or to the end for message); *seen collects the fields */
static int parse_field(WriterMessage *m, const char *p, size_t len, unsigned *seen, char *err, size_t errlen) {
        const char *eq = memchr(p, '=', len);
        if (!eq)
                return fail(-EBADMSG, err, errlen, "'%.*s' is not key=value", (int) len, p);
        Field f = field_from_name(p, (size_t) (eq - p));
        if (f == _FIELD_MAX || !(messages[m->type].fields & F(f)))
                return fail(-EBADMSG, err, errlen, "%s has no field '%.*s'", messages[m->type].word,
                            (int) (eq - p), p);
        if (*seen & F(f))
                return fail(-EBADMSG, err, errlen, "%s has field %s twice", messages[m->type].word, field_names[f]);
        *seen |= F(f);
        const char *v = eq + 1;
        size_t vlen = len - (size_t) (v - p), size = 0;
        char *word = word_field(m, f, &size);
        if (f == FIELD_MESSAGE) {
                memcpy(m->message, v, vlen);
                m->message[vlen] = '\0';
        } else if (word) {
                if (vlen == 0 || vlen >= size)
                        return fail(-EBADMSG, err, errlen, "%s '%.*s' is empty or too long", field_names[f],
                                    (int) vlen, v);
                memcpy(word, v, vlen);
                word[vlen] = '\0';
        } else if (parse_u64(v, vlen, u64_field(m, f)) < 0)
                return fail(-EBADMSG, err, errlen, "%s=%.*s is not a number", field_names[f], (int) vlen, v);
        return 0;
}

static WriterMessageType type_from_word(const char *w, size_t len) {
        for (int t = 0; t < _WRITER_MSG_MAX; t++)
                if (strlen(messages[t].word) == len && memcmp(messages[t].word, w, len) == 0)
                        return (WriterMessageType) t;
        return _WRITER_MSG_INVALID;
}

int writer_message_parse(const char *line, WriterMessage *ret, char *err, size_t errlen) {
        size_t n = strlen(line);
        if (n >= WRITER_LINE_MAX)
                return fail(-EBADMSG, err, errlen, "a line of %zu bytes (at most %u)", n, WRITER_LINE_MAX - 1);
        WriterMessage m = { .type = type_from_word(line, strcspn(line, " ")) };
        if (m.type == _WRITER_MSG_INVALID)
                return fail(-EBADMSG, err, errlen, "unknown message '%.*s'", (int) strcspn(line, " "), line);
        unsigned seen = 0;
        const char *p = line + strcspn(line, " ");
        while (*p == ' ') {
                p++;
                bool rest = strncmp(p, "message=", 8) == 0;
                size_t len = rest ? strlen(p) : strcspn(p, " ");
                int r = parse_field(&m, p, len, &seen, err, errlen);
                if (r < 0)
                        return r;
                p += len;
        }
        unsigned missing = messages[m.type].fields & ~seen;
        for (int f = 0; f < _FIELD_MAX; f++)
                if (missing & F(f))
                        return fail(-EBADMSG, err, errlen, "%s lacks field %s", messages[m.type].word, field_names[f]);
        *ret = m;
        return 0;
}

int writer_message_format(const WriterMessage *m, char *buf, size_t size) {
        if (m->type < 0 || m->type >= _WRITER_MSG_MAX)
                return -EINVAL;
        unsigned fields = messages[m->type].fields;
        if ((fields & F(FIELD_MESSAGE)) && strchr(m->message, '\n'))
                return -EINVAL;
        for (int f = 0; f < _FIELD_MAX; f++) {
                size_t room;
                const char *word = (fields & F(f)) ? word_field((WriterMessage *) m, (Field) f, &room) : NULL;
                if (word && (!word[0] || strpbrk(word, " \n")))
                        return -EINVAL;
        }
        char line[WRITER_LINE_MAX + 64];
        int n = snprintf(line, sizeof(line), "%s", messages[m->type].word);
        for (int f = 0; f < _FIELD_MAX && n >= 0 && (size_t) n < sizeof(line); f++) {
                if (!(fields & F(f)))
                        continue;
                size_t room = sizeof(line) - (size_t) n;
                uint64_t *v = u64_field((WriterMessage *) m, (Field) f);
                size_t wsize;
                const char *word = word_field((WriterMessage *) m, (Field) f, &wsize);
                if (v)
                        n += snprintf(line + n, room, " %s=%" PRIu64, field_names[f], *v);
                else
                        n += snprintf(line + n, room, " %s=%s", field_names[f], word ? word : m->message);
        }
        if (n < 0 || (size_t) n + 1 >= WRITER_LINE_MAX || (size_t) n + 2 > size)
                return -ENOBUFS;
        memcpy(buf, line, (size_t) n);
        buf[n] = '\n';
        buf[n + 1] = '\0';
        return n + 1;
}

void writer_file_key(const char *path, char *buf, size_t size) {
        struct stat st;
        if (stat(path, &st) < 0) {
                if (errno == ENOENT)
                        snprintf(buf, size, "absent");
                else
                        snprintf(buf, size, "unknown-%d", errno);
                return;
        }
        snprintf(buf, size, "%jx:%jx:%jd:%jd.%09ld:%jd.%09ld", (uintmax_t) st.st_dev, (uintmax_t) st.st_ino,
                 (intmax_t) st.st_size, (intmax_t) st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                 (intmax_t) st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

int writer_line_buffer_take(WriterLineBuffer *b, char *line) {
        char *nl = memchr(b->buf, '\n', b->len);
        if (!nl)
                return b->len >= sizeof(b->buf) ? -EMSGSIZE : 0;
        size_t n = (size_t) (nl - b->buf);
        memcpy(line, b->buf, n);
        line[n] = '\0';
        b->len -= n + 1;
        memmove(b->buf, nl + 1, b->len);
        return 1;
}

size_t writer_line_buffer_feed(WriterLineBuffer *b, const char *data, size_t len) {
        size_t take = sizeof(b->buf) - b->len;
        if (take > len)
                take = len;
        memcpy(b->buf + b->len, data, take);
        b->len += take;
        return take;
}
