/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"

typedef enum OptionId {
        OPT_HELP,
        OPT_VERSION,
        OPT_BUS,
        OPT_BUS_ADDRESS,
        OPT_JSON,
        OPT_NO_PROGRESS,
        OPT_WHO,
        OPT_WHY,
        OPT_MODE,
        OPT_LINES,
        OPT_ROOT,
        OPT_SLEEP,              /* one of sleep_options[] */
} OptionId;

/* The commands an option means something to. */
typedef enum OptionScope {
        SCOPE_ANY,
        SCOPE_SLEEP,            /* suspend, hibernate, hybrid-sleep */
        SCOPE_HOLDER,           /* hold, inhibit: who holds and why */
        SCOPE_INHIBIT,
        SCOPE_HISTORY,
        SCOPE_CAT_CONFIG,
        _SCOPE_MAX,
} OptionScope;

typedef struct Option {
        const char *name;       /* without the leading "--" */
        char short_name;        /* 0 if none */
        bool has_value;
        OptionScope scope;
        OptionId id;
        const SleepOption *sleep; /* OPT_SLEEP */
} Option;

static const Option options[] = {
        { "help",           'h', false, SCOPE_ANY,   OPT_HELP },
        { "version",        0,   false, SCOPE_ANY,   OPT_VERSION },
        { "bus",            0,   true,  SCOPE_ANY,   OPT_BUS },
        { "bus-address",    0,   true,  SCOPE_ANY,   OPT_BUS_ADDRESS },
        { "json",           0,   false, SCOPE_ANY,   OPT_JSON },
        { "no-progress",    0,   false, SCOPE_ANY,   OPT_NO_PROGRESS },
        { "who",            0,   true,  SCOPE_HOLDER, OPT_WHO },
        { "why",            0,   true,  SCOPE_HOLDER, OPT_WHY },
        { "mode",           0,   true,  SCOPE_INHIBIT, OPT_MODE },
        { "lines",          'n', true,  SCOPE_HISTORY, OPT_LINES },
        { "root",           0,   true,  SCOPE_CAT_CONFIG, OPT_ROOT },
};

/* What the usage error says when an option is used elsewhere. */
static const char *const scope_commands[_SCOPE_MAX] = {
        [SCOPE_SLEEP] = "suspend, hibernate and hybrid-sleep",
        [SCOPE_HOLDER]  = "hold and inhibit",
        [SCOPE_INHIBIT] = "inhibit",
        [SCOPE_HISTORY] = "history",
        [SCOPE_CAT_CONFIG] = "cat-config",
};

static const char *const classes[] = { "early", "late", "nofreeze", "ui" };
static const char *const inhibit_modes[] = { "block", "delay" };

static const struct {
        const char *name;
        Command command;
} commands[] = {
        { "status",       COMMAND_STATUS },
        { "suspend",      COMMAND_SUSPEND },
        { "hibernate",    COMMAND_HIBERNATE },
        { "hybrid-sleep", COMMAND_HYBRID_SLEEP },
        { "cancel",       COMMAND_CANCEL },
        { "monitor",      COMMAND_MONITOR },
        { "plan",         COMMAND_PLAN },
        { "hold",         COMMAND_HOLD },
        { "hook",         COMMAND_HOOK },
        { "inhibit",      COMMAND_INHIBIT },
        { "inhibitors",   COMMAND_INHIBITORS },
        { "plot",         COMMAND_PLOT },
        { "can-sleep",    COMMAND_CAN_SLEEP },
        { "history",      COMMAND_HISTORY },
        { "cat-config",   COMMAND_CAT_CONFIG },
};

static const char *const sleep_kinds[] = { "suspend", "hibernate", "hybrid-sleep" };
/* systemd-sleep's kinds; fridged maps suspend-then-hibernate */
static const char *const hook_kinds[] = { "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate" };

__attribute__((format(printf, 3, 4)))
static int usage_error(char *err, size_t err_size, const char *fmt, ...) {
        va_list ap;

        if (err && err_size > 0) {
                va_start(ap, fmt);
                vsnprintf(err, err_size, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

static int parse_unsigned(const char *s, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        /* strtoul() accepts signs, spaces and "0x"; a typo there should be a
         * usage error, not a surprising value sent to the daemon. */
        if (!s || !*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                unsigned d;

                if (*p < '0' || *p > '9')
                        return -EINVAL;
                d = (unsigned) (*p - '0');
                if (v > (max - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

int parse_u32(const char *s, uint32_t *ret) {
        uint64_t v;
        int r = parse_unsigned(s, UINT32_MAX, &v);

        if (r < 0)
                return r;
        *ret = (uint32_t) v;
        return 0;
}

int parse_u64(const char *s, uint64_t *ret) {
        return parse_unsigned(s, UINT64_MAX, ret);
}

bool command_is_sleep(Command c) {
        return command_sleep_kind(c) != NULL;
}

const char *command_sleep_kind(Command c) {
        switch (c) {
        case COMMAND_SUSPEND:      return "suspend";
        case COMMAND_HIBERNATE:    return "hibernate";
        case COMMAND_HYBRID_SLEEP: return "hybrid-sleep";
        default:                   return NULL;
        }
}

/* hold and inhibit run CMD while they hold an fd */
static bool command_runs_cmd(Command c) {
        return c == COMMAND_HOLD || c == COMMAND_INHIBIT;
}

static bool command_in_scope(Command c, OptionScope scope) {
        switch (scope) {
        case SCOPE_SLEEP: return command_is_sleep(c);
        case SCOPE_HOLDER:  return command_runs_cmd(c);
        case SCOPE_INHIBIT: return c == COMMAND_INHIBIT;
        case SCOPE_HISTORY: return c == COMMAND_HISTORY;
        case SCOPE_CAT_CONFIG: return c == COMMAND_CAT_CONFIG;
        default:          return true;
        }
}

static bool word_in(const char *word, const char *const *words, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (word && strcmp(word, words[i]) == 0)
                        return true;
        return false;
}

bool class_is_valid(const char *class_name) {
        return word_in(class_name, classes, ELEMENTSOF(classes));
}

const char *args_hold_who(const Args *a) {
        const char *cmd, *slash;

        if (a->who)
                return a->who;
        cmd = a->exec_argv ? strempty(a->exec_argv[0]) : "";
        slash = strrchr(cmd, '/');
        /* "dir/" has no basename worth the name: keep what was typed. */
        return slash && slash[1] ? slash + 1 : cmd;
}

const char *args_hold_why(const Args *a) {
        if (a->why)
                return a->why;
        return a->command == COMMAND_INHIBIT ? "fridgectl inhibit" : "fridgectl hold";
}

const char *args_inhibit_mode(const Args *a) {
        return a->inhibit_mode ? a->inhibit_mode : "block";
}

/* Finds the option an argument names. "--name=value" yields its inline value.
 * A Sleep option is returned in *sleep_slot, made from its table line. */
static const Option *find_option(const char *arg, const char **ret_inline, Option *sleep_slot) {
        *ret_inline = NULL;

        const SleepOption *s;
        if (arg[1] != '-') {
                /* Single-dash: "-h" and the Sleep options' short flags, no bundling */
                for (size_t i = 0; i < ELEMENTSOF(options); i++)
                        if (options[i].short_name && arg[1] == options[i].short_name && arg[2] == 0)
                                return &options[i];
                s = arg[2] == 0 ? sleep_option_by_short_flag(arg[1]) : NULL;
        } else {
                const char *name = arg + 2;
                const char *eq = strchr(name, '=');
                size_t len = eq ? (size_t) (eq - name) : strlen(name);

                for (size_t i = 0; i < ELEMENTSOF(options); i++)
                        if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0) {
                                *ret_inline = eq ? eq + 1 : NULL;
                                return &options[i];
                        }
                s = sleep_option_by_flag(name, len);
                *ret_inline = s && eq ? eq + 1 : NULL;
        }
        if (!s)
                return NULL;
        *sleep_slot = (Option) { .name = s->flag, .has_value = s->type != SLEEP_OPTION_BOOL, .scope = SCOPE_SLEEP,
                                 .id = OPT_SLEEP, .sleep = s };
        return sleep_slot;
}

/* By the table's type, into the option's own field; its range and words
 * are fridged's, so a value fridged would refuse is a usage error here. */
static int apply_sleep_option(const SleepOption *s, const char *value, Args *a, char *err, size_t err_size) {
        void *field = sleep_option_field(&a->sleep, s);
        char why[256];
        uint32_t u;

        switch (s->type) {
        case SLEEP_OPTION_BOOL:
                *(bool *) field = true;
                return 0;
        case SLEEP_OPTION_STRING:
                if (sleep_option_check_word(s, value, why, sizeof(why)) < 0)
                        return usage_error(err, err_size, "--%s %s", s->flag, why);
                *(char **) field = (char *) value; /* borrowed from argv */
                return 0;
        case SLEEP_OPTION_UINT:
                if (sleep_option_parse_uint(s, value, &u, why, sizeof(why)) < 0)
                        return usage_error(err, err_size, "--%s %s", s->flag, why);
                *(uint32_t *) field = u;
                return 0;
        }
        return usage_error(err, err_size, "internal error: option --%s has no parser", s->flag);
}

static int apply_option(const Option *o, const char *value, Args *a, char *err, size_t err_size) {
        switch (o->id) {
        case OPT_HELP:          a->help = true; return 0;
        case OPT_VERSION:       a->version = true; return 0;
        case OPT_JSON:          a->json = true; return 0;
        case OPT_NO_PROGRESS:   a->no_progress = true; return 0;
        case OPT_SLEEP:         return apply_sleep_option(o->sleep, value, a, err, err_size);
        case OPT_BUS_ADDRESS:   a->bus_address = value; return 0;
        case OPT_WHO:           a->who = value; return 0;
        case OPT_ROOT:          a->root = value; return 0;
        case OPT_WHY:           a->why = value; return 0;
        case OPT_MODE:
                if (!word_in(value, inhibit_modes, ELEMENTSOF(inhibit_modes)))
                        return usage_error(err, err_size, "--mode: expected \"block\" or \"delay\", got \"%s\"",
                                           value);
                a->inhibit_mode = value;
                return 0;
        case OPT_LINES:
                if (parse_u32(value, &a->history_max) < 0 || a->history_max == 0)
                        return usage_error(err, err_size, "--lines: expected a number of cycles from 1 to %u, got "
                                           "\"%s\"", UINT32_MAX, value);
                return 0;
        case OPT_BUS:
                if (strcmp(value, "system") == 0)
                        a->bus = BUS_KIND_SYSTEM;
                else if (strcmp(value, "session") == 0)
                        a->bus = BUS_KIND_SESSION;
                else
                        return usage_error(err, err_size, "--bus: expected \"system\" or \"session\", got \"%s\"", value);
                return 0;
        }
        return usage_error(err, err_size, "internal error: unhandled option");
}

static int parse_command(const char *word, Command *ret) {
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(word, commands[i].name) == 0) {
                        *ret = commands[i].command;
                        return 0;
                }
        return -EINVAL;
}

static int apply_hook_word(const char *word, Args *a, char *err, size_t err_size) {
        if (!a->hook_when) {
                if (strcmp(word, "pre") != 0 && strcmp(word, "post") != 0 && strcmp(word, "budget") != 0)
                        return usage_error(err, err_size, "hook: \"%s\" is neither pre, post nor budget", word);
                a->hook_when = word;
                return 0;
        }
        if (a->hook_kind || strcmp(a->hook_when, "budget") == 0)
                return usage_error(err, err_size, "hook: unexpected argument \"%s\"", word);
        for (size_t i = 0; i < ELEMENTSOF(hook_kinds); i++)
                if (strcmp(word, hook_kinds[i]) == 0) {
                        a->hook_kind = word;
                        return 0;
                }
        return usage_error(err, err_size,
                           "hook: unknown kind \"%s\" (expected suspend, hibernate, hybrid-sleep or "
                           "suspend-then-hibernate)", word);
}

/* Positional words: the command, then the optional CYCLE of "cancel" or
 * the CLASS of "hold". */
static int apply_positional(const char *word, Args *a, bool *have_cycle, char *err, size_t err_size) {
        if (a->command == COMMAND_NONE) {
                if (parse_command(word, &a->command) < 0)
                        return usage_error(err, err_size, "unknown command \"%s\"", word);
                return 0;
        }
        if (a->command == COMMAND_HOLD) {
                if (a->hold_class)
                        return usage_error(err, err_size,
                                           "hold: unexpected argument \"%s\"; put the command to run after \"--\"",
                                           word);
                if (!class_is_valid(word))
                        return usage_error(err, err_size,
                                           "hold: unknown class \"%s\" (expected early, late, nofreeze or ui)", word);
                a->hold_class = word;
                return 0;
        }
        if (a->command == COMMAND_HOOK)
                return apply_hook_word(word, a, err, err_size);
        if (a->command == COMMAND_CAN_SLEEP && !a->sleep_kind) {
                if (!word_in(word, sleep_kinds, ELEMENTSOF(sleep_kinds)))
                        return usage_error(err, err_size,
                                           "can-sleep: unknown kind \"%s\" (expected suspend, hibernate or "
                                           "hybrid-sleep)", word);
                a->sleep_kind = word;
                return 0;
        }
        if ((a->command == COMMAND_CANCEL || a->command == COMMAND_PLOT) && !*have_cycle) {
                if (parse_u64(word, &a->cycle) < 0 || (a->command == COMMAND_PLOT && a->cycle == 0))
                        return usage_error(err, err_size, "%s: \"%s\" is not a cycle id",
                                           a->command == COMMAND_PLOT ? "plot" : "cancel", word);
                *have_cycle = true;
                return 0;
        }
        return usage_error(err, err_size, "unexpected argument \"%s\"", word);
}

int args_parse(int argc, char *const *argv, Args *ret, char *err, size_t err_size) {
        Args a = { .command = COMMAND_NONE, .bus = BUS_KIND_SYSTEM };
        bool have_cycle = false, only_positional = false;
        /* Options may come before or after the command, so options for
         * some commands only are checked once the whole line is read. */
        const char *scoped[_SCOPE_MAX] = {};
        int r;

        if (err && err_size > 0)
                err[0] = 0;

        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i], *value;
                const Option *o;
                Option sleep_slot;

                /* hold's and inhibit's "--" ends fridgectl's arguments: the
                 * rest is CMD, options and all. */
                if (command_runs_cmd(a.command) && strcmp(arg, "--") == 0) {
                        a.exec_argv = argv + i + 1;
                        break;
                }
                if (only_positional || arg[0] != '-' || arg[1] == 0) {
                        r = apply_positional(arg, &a, &have_cycle, err, err_size);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (strcmp(arg, "--") == 0) {
                        only_positional = true;
                        continue;
                }

                o = find_option(arg, &value, &sleep_slot);
                if (!o)
                        return usage_error(err, err_size, "unknown option \"%s\"", arg);
                if (!o->has_value && value)
                        return usage_error(err, err_size, "--%s takes no value", o->name);
                if (o->has_value && !value) {
                        if (i + 1 >= argc)
                                return usage_error(err, err_size, "--%s needs a value", o->name);
                        value = argv[++i];
                }
                r = apply_option(o, value, &a, err, err_size);
                if (r < 0)
                        return r;
                if (!scoped[o->scope])
                        scoped[o->scope] = o->name;
        }

        if (a.help || a.version) {
                *ret = a;
                return 0;
        }
        if (a.command == COMMAND_NONE)
                return usage_error(err, err_size, "no command given");

        for (size_t s = 0; s < _SCOPE_MAX; s++)
                if (scoped[s] && !command_in_scope(a.command, (OptionScope) s))
                        return usage_error(err, err_size, "--%s only applies to %s", scoped[s],
                                           scope_commands[s]);
        if (command_is_sleep(a.command)) {
                bool for_kind;
                const SleepOption *s = sleep_options_misapplied(&a.sleep, command_sleep_kind(a.command), &for_kind);
                if (s && for_kind)
                        return usage_error(err, err_size, "--%s only applies to %s, not %s", s->flag, s->only_kind,
                                           command_sleep_kind(a.command));
                if (s)
                        return usage_error(err, err_size, "--%s only applies with --%s", s->flag,
                                           sleep_option_by_name(s->requires)->flag);
        }

        if (a.command == COMMAND_HOOK && !a.hook_kind && !(a.hook_when && strcmp(a.hook_when, "budget") == 0))
                return usage_error(err, err_size, "hook: expected pre|post and the kind of sleep");
        if (a.command == COMMAND_HOLD && !a.hold_class)
                return usage_error(err, err_size, "hold: no class given (early, late, nofreeze or ui)");
        if (command_runs_cmd(a.command)) {
                const char *name = a.command == COMMAND_HOLD ? "hold" : "inhibit";
                if (!a.exec_argv)
                        return usage_error(err, err_size, "%s: missing \"--\" before the command to run", name);
                if (!a.exec_argv[0])
                        return usage_error(err, err_size, "%s: no command given after \"--\"", name);
        }

        *ret = a;
        return 0;
}

/* `text` from column `col` on, its words broken before column HELP_WIDTH
 * and carried on at HELP_COLUMN */
#define HELP_COLUMN 25
#define HELP_WIDTH 79
static void print_wrapped(FILE *f, size_t col, const char *text) {
        bool first = true;

        for (const char *p = text + strspn(text, " "); *p; p += strspn(p, " ")) {
                size_t word = strcspn(p, " ");

                if (!first && col + 1 + word > HELP_WIDTH) {
                        fprintf(f, "\n%*s", HELP_COLUMN, "");
                        col = HELP_COLUMN;
                } else if (!first) {
                        fputc(' ', f);
                        col++;
                }
                fprintf(f, "%.*s", (int) word, p);
                col += word;
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
                snprintf(parts[k++], sizeof(parts[0]), "%s only", s->only_kind);
        if (s->requires)
                snprintf(parts[k++], sizeof(parts[0]), "with --%s", sleep_option_by_name(s->requires)->flag);
        if (s->fallback)
                snprintf(parts[k++], sizeof(parts[0]), "default %s", s->fallback);
        buf[0] = 0;
        for (size_t i = 0; i < k; i++) {
                append_cut(buf, size, &n, i == 0 ? " (" : "; ");
                append_cut(buf, size, &n, parts[i]);
        }
        if (k > 0)
                append_cut(buf, size, &n, ")");
}

void args_print_sleep_options(FILE *f) {
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                char flag[64], limits[512], text[1024];

                char short_flag[8] = "";
                if (s->short_flag)
                        snprintf(short_flag, sizeof(short_flag), "-%c, ", s->short_flag);
                snprintf(flag, sizeof(flag), "%s--%s%s%s", short_flag, s->flag, s->metavar ? "=" : "",
                         strempty(s->metavar));
                sleep_option_limits(s, limits, sizeof(limits));
                snprintf(text, sizeof(text), "%s%s", s->help, limits);
                int w = fprintf(f, "     %-*s ", HELP_COLUMN - 6, flag);
                if (w > HELP_COLUMN) {
                        fprintf(f, "\n%*s", HELP_COLUMN, "");
                        w = HELP_COLUMN;
                }
                print_wrapped(f, (size_t) w, text);
        }
}
