/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridgectl --help, made from the tables of args.c and sleep-options.c:
 * a command or option added there is in the help without another line. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "i18n.h"
#include "macro.h"

/* `text` from column `col` on, its words broken before column HELP_WIDTH
 * and carried on at HELP_COLUMN */
#define HELP_COLUMN 25
#define HELP_WIDTH 79
/* Columns, not bytes: a translation's "ä" takes two bytes and one column */
static size_t utf8_columns(const char *p, size_t n) {
        size_t cols = 0;
        for (size_t i = 0; i < n; i++)
                cols += ((unsigned char) p[i] & 0xc0) != 0x80;
        return cols;
}

static void print_wrapped(FILE *f, size_t col, const char *text) {
        bool first = true;

        for (const char *p = text + strspn(text, " "); *p; p += strspn(p, " ")) {
                size_t word = strcspn(p, " "), width = utf8_columns(p, word);

                if (!first && col + 1 + width > HELP_WIDTH) {
                        fprintf(f, "\n%*s", HELP_COLUMN, "");
                        col = HELP_COLUMN;
                } else if (!first) {
                        fputc(' ', f);
                        col++;
                }
                fprintf(f, "%.*s", (int) word, p);
                col += width;
                p += word;
                first = false;
        }
        fputc('\n', f);
}

/* Appends what fits of s to buf (size > *n): help text, cut rather than overrun */
static void append_cut(char *buf, size_t size, size_t *n, const char *s) {
        size_t l = strnlen(s, size - 1 - *n);
        memcpy(buf + *n, s, l);
        *n += l;
        buf[*n] = 0;
}

/* One part of an option's limits, from a translated format */
__attribute__((format(printf, 3, 4))) static void format_part(char *dst, size_t size, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(dst, size, fmt, ap);
        va_end(ap);
}

/* What the table says beyond the help sentence: "(1..31536000)",
 * "(s2idle|shallow|deep; suspend only; default [Sleep] MemSleep)" */
static void sleep_option_limits(const SleepOption *s, char *buf, size_t size) {
        char words[256], parts[4][300];
        size_t n = 0, k = 0;

        if (s->type == SLEEP_OPTION_STRING)
                snprintf(parts[k++], sizeof(parts[0]), "%s", sleep_option_words(s, "|", words, sizeof(words)));
        if (s->type == SLEEP_OPTION_UINT)
                snprintf(parts[k++], sizeof(parts[0]), "%u..%u", s->min, s->max);
        if (s->only_kind)
                /* Translators: "suspend only" */
                format_part(parts[k++], sizeof(parts[0]), _("%s only"), s->only_kind);
        if (s->requires)
                /* Translators: "with --queue" */
                format_part(parts[k++], sizeof(parts[0]), _("with --%s"), sleep_option_by_name(s->requires)->flag);
        if (s->fallback)
                /* Translators: "default [Sleep] MemSleep" (a config key) or "default 30000" */
                format_part(parts[k++], sizeof(parts[0]), _("default %s"), s->fallback);
        buf[0] = 0;
        for (size_t i = 0; i < k; i++) {
                append_cut(buf, size, &n, i == 0 ? " (" : "; ");
                append_cut(buf, size, &n, parts[i]);
        }
        if (k > 0)
                append_cut(buf, size, &n, ")");
}

/* "  NAME" or "  -C --NAME=METAVAR" at the left, `help` wrapped from
 * HELP_COLUMN on (on the next line when the left part is too wide) */
static void print_item(FILE *f, const char *left, const char *help) {
        int w = fprintf(f, "%s", left);
        if (w < HELP_COLUMN)
                w += fprintf(f, "%*s", HELP_COLUMN - w, "");
        else {
                fprintf(f, "\n%*s", HELP_COLUMN, "");
                w = HELP_COLUMN;
        }
        print_wrapped(f, (size_t) w, help);
}

void args_print_sleep_options(FILE *f) {
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                char flag[64], limits[512], text[1024];

                char short_flag[8] = "   ";
                if (s->short_flag)
                        snprintf(short_flag, sizeof(short_flag), "-%c ", s->short_flag);
                snprintf(flag, sizeof(flag), "  %s--%s%s%s", short_flag, s->flag, s->metavar ? "=" : "",
                         strempty(s->metavar));
                sleep_option_limits(s, limits, sizeof(limits));
                snprintf(text, sizeof(text), "%s%s", _(s->help), limits);
                print_item(f, flag, text);
        }
}

static void print_commands(FILE *f) {
        for (size_t i = 0; i < args_commands_count; i++) {
                const ArgsCommand *c = &args_commands[i];
                char left[128];

                if (c->hidden)
                        continue;
                snprintf(left, sizeof(left), "  %s%s%s", c->name, *c->synopsis ? " " : "", c->synopsis);
                print_item(f, left, _(c->help));
        }
}

static void print_options(FILE *f, ArgsScope scope) {
        for (size_t i = 0; i < args_options_count; i++) {
                const ArgsOption *o = &args_options[i];
                char left[128];

                /* inhibit's own options are listed with hold's */
                if (o->scope != scope && !(scope == ARGS_SCOPE_HOLDER && o->scope == ARGS_SCOPE_INHIBIT))
                        continue;
                char short_name[8] = "   ";
                if (o->short_name)
                        snprintf(short_name, sizeof(short_name), "-%c ", o->short_name);
                snprintf(left, sizeof(left), "  %s--%s%s%s%s%s", short_name, o->name,
                         o->has_arg == optional_argument ? "[" : "", o->metavar ? "=" : "", strempty(o->metavar),
                         o->has_arg == optional_argument ? "]" : "");
                print_item(f, left, _(o->help));
        }
}

static void print_scope_heading(FILE *f, ArgsScope scope) {
        const char *commands = args_scope_commands(scope);
        fputc('\n', f);
        fprintf(f, _("Options for %s:\n"), commands ? commands : "?");
}

void args_print_help(FILE *f) {
        fputs(_("Usage: fridgectl [OPTIONS] [COMMAND]\n"
                "\n"
                "Control fridged, the suspend orchestration daemon.\n"
                "\n"
                "Commands:\n"), f);
        print_commands(f);
        fputs(_("\nOptions:\n"), f);
        print_options(f, ARGS_SCOPE_ANY);
        print_scope_heading(f, ARGS_SCOPE_SLEEP);
        args_print_sleep_options(f);
        print_scope_heading(f, ARGS_SCOPE_HOLDER);
        print_options(f, ARGS_SCOPE_HOLDER);
        print_scope_heading(f, ARGS_SCOPE_HISTORY);
        print_options(f, ARGS_SCOPE_HISTORY);
        print_scope_heading(f, ARGS_SCOPE_CAT_CONFIG);
        print_options(f, ARGS_SCOPE_CAT_CONFIG);
        fputs(_("\n"
                "On a terminal a progress bar is drawn; press Esc or Ctrl-C to cancel the\n"
                "cycle (Ctrl-C again: stop waiting and leave it running). Long listings go\n"
                "through $SYSTEMD_PAGER, $PAGER or less on a terminal (see --no-pager).\n"
                "\n"
                "Exit status:\n"
                "  0  done, dry-run, or the command succeeded\n"
                "  1  the cycle failed, fridged is not reachable, or another error\n"
                "  2  usage error (also InvalidArgs from fridged)\n"
                "  3  the cycle was aborted (cancelled)\n"
                "  4  fridged refused: Busy, NotSupported, Inhibited, HibernateNotReady,\n"
                "     TooLate, NoSuchCycle, AccessDenied; hold, inhibit: the class or the\n"
                "     inhibitor could not be held (CMD was not run)\n"
                "hold and inhibit otherwise exit with CMD's status (128+N if signal N ended\n"
                "it).\n"), f);
}
