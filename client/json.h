/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Just enough JSON output for fridgectl's one-object-per-line events
 * (--json=short) and their indented form (--json=pretty).
 * Writers take a FILE* so tests can use open_memstream(). */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A JSON string literal, quotes included. Control characters become
 * \u00XX; bytes that are not UTF-8 become U+FFFD; NULL is "". */
void json_write_string(FILE *f, const char *s);

/* A JSON number; NaN and infinities (not JSON) become null. */
void json_write_double(FILE *f, double d);

/* Same as json_write_string(), returned as a malloc'd string (NULL on OOM). */
char *json_escape(const char *s);

typedef struct JsonObject {
        FILE *f;
        bool first;
} JsonObject;

void json_object_begin(JsonObject *o, FILE *f);
/* Writes the separator and "key":, for a value the caller writes itself. */
void json_object_key(JsonObject *o, const char *key);
void json_object_add_string(JsonObject *o, const char *key, const char *value);
void json_object_add_u64(JsonObject *o, const char *key, uint64_t value);
void json_object_add_double(JsonObject *o, const char *key, double value);
void json_object_add_bool(JsonObject *o, const char *key, bool value);
/* Closes the object with "}" — no newline. */
void json_object_end(JsonObject *o);

/* The JSON text `compact` (as the writers above make it) again, indented
 * by 8 spaces a level, one member a line, "key" : value, as journalctl's
 * json-pretty; no newline after the last brace. */
void json_write_pretty(FILE *f, const char *compact);

/* One value of fridgectl's JSON output: the writers write to the FILE
 * json_out_begin() returns, json_out_end() puts the value on dest on one
 * line (short) or indented (pretty), a newline after it, and flushes, so
 * a reader at the other end of a pipe has each value when it is made. */
typedef struct JsonOut {
        FILE *dest;
        FILE *f;
        char *buf;
        size_t size;
} JsonOut;

FILE *json_out_begin(JsonOut *o, FILE *dest, bool pretty);
void json_out_end(JsonOut *o);
