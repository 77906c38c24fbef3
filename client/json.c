/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "utf8.h"

void json_write_string(FILE *f, const char *s) {
        fputc('"', f);
        for (const char *p = strempty(s); *p; ) {
                unsigned char c = (unsigned char) *p;
                uint32_t cp;
                size_t n;

                if (c == '"' || c == '\\') {
                        fputc('\\', f);
                        fputc(c, f);
                        p++;
                } else if (c < 0x20 || c == 0x7f) {
                        /* One spelling for every control character keeps
                         * consumers' parsers and our tests simple. */
                        fprintf(f, "\\u%04x", c);
                        p++;
                } else if ((n = utf8_decode(p, &cp)) > 0) {
                        fwrite(p, 1, n, f);
                        p += n;
                } else {
                        /* JSON must be UTF-8; never pass a broken byte on. */
                        fputs("\\ufffd", f);
                        p++;
                }
        }
        fputc('"', f);
}

void json_write_double(FILE *f, double d) {
        char buf[32];

        if (!isfinite(d)) {
                fputs("null", f);
                return;
        }
        /* The shortest of %.15g/%.17g that reads back exactly: 0.05 stays
         * "0.05" rather than "0.050000000000000003". fridgectl leaves
         * LC_NUMERIC alone (i18n_init()), so the decimal point is always '.'. */
        snprintf(buf, sizeof(buf), "%.15g", d);
        if (strtod(buf, NULL) != d)
                snprintf(buf, sizeof(buf), "%.17g", d);
        fputs(buf, f);
}

char *json_escape(const char *s) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        json_write_string(f, s);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

void json_object_begin(JsonObject *o, FILE *f) {
        *o = (JsonObject) { .f = f, .first = true };
        fputc('{', f);
}

void json_object_key(JsonObject *o, const char *key) {
        if (!o->first)
                fputc(',', o->f);
        o->first = false;
        json_write_string(o->f, key);
        fputc(':', o->f);
}

void json_object_add_string(JsonObject *o, const char *key, const char *value) {
        json_object_key(o, key);
        json_write_string(o->f, value);
}

void json_object_add_u64(JsonObject *o, const char *key, uint64_t value) {
        json_object_key(o, key);
        fprintf(o->f, "%" PRIu64, value);
}

void json_object_add_double(JsonObject *o, const char *key, double value) {
        json_object_key(o, key);
        json_write_double(o->f, value);
}

void json_object_add_bool(JsonObject *o, const char *key, bool value) {
        json_object_key(o, key);
        fputs(value ? "true" : "false", o->f);
}

void json_object_end(JsonObject *o) {
        fputc('}', o->f);
}

static void pretty_newline(FILE *f, unsigned depth) {
        fputc('\n', f);
        for (unsigned i = 0; i < depth; i++)
                fputs("        ", f);
}

/* Copies the string literal at p, escapes and all; returns what follows it */
static const char *pretty_string(FILE *f, const char *p) {
        fputc(*p++, f);
        for (; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1])
                        fputc(*p++, f);
                fputc(*p, f);
        }
        if (*p)
                fputc(*p++, f);
        return p;
}

void json_write_pretty(FILE *f, const char *compact) {
        unsigned depth = 0;

        for (const char *p = strempty(compact); *p; ) {
                char c = *p;

                if (c == '"') {
                        p = pretty_string(f, p);
                        continue;
                }
                p++;
                switch (c) {
                case '{': case '[':
                        fputc(c, f);
                        p += strspn(p, " \t\n");
                        if (*p == '}' || *p == ']')
                                fputc(*p++, f); /* {} and [] stay as they are */
                        else
                                pretty_newline(f, ++depth);
                        break;
                case '}': case ']':
                        pretty_newline(f, depth > 0 ? --depth : 0);
                        fputc(c, f);
                        break;
                case ',':
                        fputc(c, f);
                        pretty_newline(f, depth);
                        break;
                case ':':
                        fputs(" : ", f);
                        break;
                case ' ': case '\t': case '\n': case '\r':
                        break;
                default:
                        fputc(c, f);
                }
        }
}

FILE *json_out_begin(JsonOut *o, FILE *dest, bool pretty) {
        *o = (JsonOut) { .dest = dest, .f = dest };
        /* Short goes straight out; pretty needs the whole value first */
        if (pretty)
                o->f = open_memstream(&o->buf, &o->size);
        if (!o->f)
                o->f = dest; /* out of memory: short is still JSON */
        return o->f;
}

void json_out_end(JsonOut *o) {
        if (o->f != o->dest && fclose(o->f) == 0)
                json_write_pretty(o->dest, o->buf);
        free(o->buf);
        o->buf = NULL;
        fputc('\n', o->dest);
        fflush(o->dest);
        o->f = o->dest;
}
