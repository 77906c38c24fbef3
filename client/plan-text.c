/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "plan-text.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fridge-config.h"
#include "i18n.h"
#include "json.h"
#include "macro.h"
#include "progress-bar.h"
#include "utf8.h"

#define ELLIPSIS "\xe2\x80\xa6"         /* U+2026, one column */

enum {
        COL_CGROUP,
        COL_UNIT,
        COL_CLASS,
        COL_REASON,
        _COL_MAX,
};

static const char *const headers[_COL_MAX] = { "CGROUP", "UNIT", "CLASS", "REASON" };

PlanCounts plan_count(const PlanEntry *entries, size_t n) {
        PlanCounts c = {};

        for (size_t i = 0; i < n; i++) {
                const char *k = strempty(entries[i].class_name);

                if (strcmp(k, "early") == 0)
                        c.early++;
                else if (strcmp(k, "late") == 0)
                        c.late++;
                else if (strcmp(k, "nofreeze") == 0)
                        c.nofreeze++;
                else if (strcmp(k, "ui") == 0)
                        c.ui++;
                else if (strcmp(k, "skipped") == 0)
                        c.skipped++;
        }
        return c;
}

char *plan_summary_line(const PlanEntry *entries, size_t n) {
        PlanCounts c = plan_count(entries, n);
        char ui[128] = "", skipped[128] = "";
        char *s;

        /* ui and skipped ones are said only when there are some */
        if (c.ui > 0)
                snprintf(ui, sizeof(ui), _(", %zu ui (kept running for the user interface)"), c.ui);
        if (c.skipped > 0)
                snprintf(skipped, sizeof(skipped), _(", %zu skipped (cannot be read)"), c.skipped);
        /* Translators: the counts of the classes early, late and nofreeze, then
         * the ui and skipped parts above, when there are some */
        if (asprintf(&s, _("%zu early, %zu late, %zu never frozen%s%s"), c.early, c.late, c.nofreeze, ui,
                     skipped) < 0)
                return NULL;
        return s;
}

/* Copies s from its skip'th code point on, with control characters (C0,
 * DEL, C1) and bytes that are not UTF-8 as '?': cgroup names may hold
 * any byte, and must not move the cursor. */
static char *sanitize_from(const char *s, size_t skip) {
        char *out = malloc(strlen(strempty(s)) + 1), *o = out;

        if (!out)
                return NULL;
        for (const char *p = strempty(s); *p; ) {
                uint32_t cp;
                size_t n = utf8_decode(p, &cp);
                bool bad = n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);

                if (skip > 0)
                        skip--;
                else if (bad)
                        *o++ = '?';
                else {
                        memcpy(o, p, n);
                        o += n;
                }
                p += n > 0 ? n : 1;
        }
        *o = 0;
        return out;
}

/* A cell for people: sanitized, "-" when empty. */
static char *plain_cell(const char *s) {
        return sanitize_from(s && *s ? s : "-", 0);
}

char *plan_cgroup_cell(const char *cgroup) {
        size_t cols = text_columns(cgroup);
        _cleanup_free_ char *tail = NULL;
        char *s;

        if (cols <= PLAN_CGROUP_MAX_COLUMNS)
                return plain_cell(cgroup);
        /* The ellipsis takes one column; the tail the others. */
        tail = sanitize_from(cgroup, cols - (PLAN_CGROUP_MAX_COLUMNS - 1));
        if (!tail || asprintf(&s, ELLIPSIS "%s", tail) < 0)
                return NULL;
        return s;
}

static void write_padded(FILE *f, const char *s, size_t width) {
        fputs(s, f);
        for (size_t c = text_columns(s); c < width; c++)
                fputc(' ', f);
}

/* One line; the last column is not padded, so no line ends in blanks. */
static void write_row(FILE *f, char *const *cells, const size_t *widths) {
        for (size_t i = 0; i < _COL_MAX; i++) {
                if (i + 1 < _COL_MAX) {
                        write_padded(f, cells[i], widths[i]);
                        fputs("  ", f);
                } else
                        fputs(cells[i], f);
        }
        fputc('\n', f);
}

static void free_cells(char *(*cells)[_COL_MAX], size_t n) {
        for (size_t i = 0; cells && i < n; i++)
                for (size_t j = 0; j < _COL_MAX; j++)
                        free(cells[i][j]);
        free(cells);
}

bool plan_has_hidden(const PlanEntry *entries, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (strstr(strempty(entries[i].reason), FRIDGE_PLAN_HIDDEN))
                        return true;
        return false;
}

char *plan_format_table(const PlanEntry *entries, size_t n, bool legend) {
        char *(*cells)[_COL_MAX] = calloc(n + 1, sizeof(*cells));
        _cleanup_free_ char *summary = plan_summary_line(entries, n);
        size_t widths[_COL_MAX], size = 0;
        char *buf = NULL;
        bool oom = !cells || !summary;
        FILE *f;

        for (size_t j = 0; j < _COL_MAX; j++)
                widths[j] = text_columns(headers[j]);
        for (size_t i = 0; !oom && i < n; i++) {
                cells[i][COL_CGROUP] = plan_cgroup_cell(entries[i].cgroup);
                cells[i][COL_UNIT] = plain_cell(entries[i].unit);
                cells[i][COL_CLASS] = plain_cell(entries[i].class_name);
                cells[i][COL_REASON] = plain_cell(entries[i].reason);
                for (size_t j = 0; j < _COL_MAX; j++) {
                        size_t w;

                        if (!cells[i][j]) {
                                oom = true;
                                break;
                        }
                        w = text_columns(cells[i][j]);
                        if (w > widths[j])
                                widths[j] = w;
                }
        }
        if (oom) {
                free_cells(cells, n);
                return NULL;
        }

        f = open_memstream(&buf, &size);
        if (!f) {
                free_cells(cells, n);
                return NULL;
        }
        if (legend)
                write_row(f, (char *const *) headers, widths);
        for (size_t i = 0; i < n; i++)
                write_row(f, cells[i], widths);
        if (legend) {
                fputs(summary, f);
                fputc('\n', f);
        }
        if (legend && plan_has_hidden(entries, n))
                /* Translators: %s is GetPlan's stand-in, "[hidden]" */
                fprintf(f, _("%s and pid 0: another user's process, which only root may see\n"),
                        FRIDGE_PLAN_HIDDEN);
        free_cells(cells, n);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

void plan_write_json(FILE *f, const PlanEntry *entries, size_t n) {
        fputc('[', f);
        for (size_t i = 0; i < n; i++) {
                JsonObject j;

                if (i > 0)
                        fputc(',', f);
                json_object_begin(&j, f);
                json_object_add_string(&j, "cgroup", entries[i].cgroup);
                json_object_add_string(&j, "unit", entries[i].unit);
                json_object_add_string(&j, "class", entries[i].class_name);
                json_object_add_string(&j, "reason", entries[i].reason);
                json_object_end(&j);
        }
        fputc(']', f);
}
