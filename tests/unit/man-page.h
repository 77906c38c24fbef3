/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The docs tests read man pages as the reader sees them: each section's
 * text and each .TP paragraph, font macros applied, escapes resolved. */

#include <glib.h>

#include "sleep-options.h"

typedef struct ManItem {
        char *section; /* .SH or .SS title */
        char *tag;     /* the .TP tag line; NULL: the section's own text */
        GString *body;
} ManItem;

/* A file of the source tree (FRIDGE_SOURCE_DIR), whole */
char *source_text(const char *relative);
/* The items of a page, in order */
GPtrArray *man_items(const char *text);
/* A section's own text (the item without a tag); NULL: no such section */
const ManItem *man_section_text(GPtrArray *items, const char *section);
/* Fails the test unless `text` contains `what`, naming `where` */
void assert_says(const char *where, const char *text, const char *what);

/* Fails the test unless a Sleep option's paragraph says its range, its
 * words, the kind it is limited to, `requires` (how this page names the
 * option it needs: NULL when it needs none) and its default */
void assert_sleep_option_says(const char *where, const char *body, const SleepOption *s, const char *requires);
