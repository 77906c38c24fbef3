/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Just enough JSON output for fridgectl's one-object-per-line events.
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
