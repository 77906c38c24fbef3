/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Line numbers in GKeyFile texts: GLib names none in its syntax errors and
 * none for values, and administrators fix files by line number. */

#include <stdbool.h>
#include <stddef.h>

/* A stripped line as GKeyFile sees it: a group header, or key=value. */
bool keyfile_line_is_group(const char *l);
bool keyfile_line_is_key_value(const char *l);

/* The first line GKeyFile cannot take; 0 when none. */
unsigned keyfile_syntax_error_line(const char *text);

/* The line of the first NUL byte in text[0..len), 0 when none: GKeyFile
 * would silently stop reading there. */
unsigned keyfile_nul_line(const char *text, size_t len);

/* The line of [group] when key is NULL, else of the key's last assignment
 * in that group (the one GKeyFile keeps); 0 when not found. */
unsigned keyfile_find_line(const char *text, const char *group, const char *key);
