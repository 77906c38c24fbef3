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
        OPT_DRY_RUN,
        OPT_PM_TEST,
        OPT_MEM_SLEEP,
        OPT_WAKE_AFTER,
        OPT_FLUSH_TIMEOUT,
        OPT_FREEZE_TIMEOUT,
        OPT_WHO,
        OPT_WHY,
        OPT_MODE,
        OPT_QUEUE,
} OptionId;

/* The commands an option means something to. */
typedef enum OptionScope {
        SCOPE_ANY,
        SCOPE_SLEEP,            /* suspend, hibernate, hybrid-sleep */
        SCOPE_HOLDER,           /* hold, inhibit: who holds and why */
        SCOPE_INHIBIT,
        _SCOPE_MAX,
} OptionScope;

typedef struct Option {
        const char *name;       /* without the leading "--" */
        char short_name;        /* 0 if none */
        bool has_value;
        OptionScope scope;
        OptionId id;
} Option;

static const Option options[] = {
        { "help",           'h', false, SCOPE_ANY,   OPT_HELP },
        { "version",        0,   false, SCOPE_ANY,   OPT_VERSION },
        { "bus",            0,   true,  SCOPE_ANY,   OPT_BUS },
        { "bus-address",    0,   true,  SCOPE_ANY,   OPT_BUS_ADDRESS },
        { "json",           0,   false, SCOPE_ANY,   OPT_JSON },
        { "no-progress",    0,   false, SCOPE_ANY,   OPT_NO_PROGRESS },
        { "dry-run",        0,   false, SCOPE_SLEEP, OPT_DRY_RUN },
        { "pm-test",        0,   true,  SCOPE_SLEEP, OPT_PM_TEST },
        { "mem-sleep",      0,   true,  SCOPE_SLEEP, OPT_MEM_SLEEP },
        { "wake-after",     0,   true,  SCOPE_SLEEP, OPT_WAKE_AFTER },
        { "flush-timeout",  0,   true,  SCOPE_SLEEP, OPT_FLUSH_TIMEOUT },
        { "freeze-timeout", 0,   true,  SCOPE_SLEEP, OPT_FREEZE_TIMEOUT },
        { "queue",          0,   false, SCOPE_SLEEP, OPT_QUEUE },
        { "who",            0,   true,  SCOPE_HOLDER, OPT_WHO },
        { "why",            0,   true,  SCOPE_HOLDER, OPT_WHY },
        { "mode",           0,   true,  SCOPE_INHIBIT, OPT_MODE },
};

/* What the usage error says when an option is used elsewhere. */
static const char *const scope_commands[_SCOPE_MAX] = {
        [SCOPE_SLEEP] = "suspend, hibernate and hybrid-sleep",
        [SCOPE_HOLDER]  = "hold and inhibit",
        [SCOPE_INHIBIT] = "inhibit",
};

static const char *const classes[] = { "early", "late", "nofreeze" };
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
};

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

/* Finds the option an argument names. "--name=value" yields its inline value. */
static const Option *find_option(const char *arg, const char **ret_inline) {
        *ret_inline = NULL;

        if (arg[1] != '-') {
                /* Single-dash: only "-h" exists; no bundling is needed. */
                for (size_t i = 0; i < ELEMENTSOF(options); i++)
                        if (options[i].short_name && arg[1] == options[i].short_name && arg[2] == 0)
                                return &options[i];
                return NULL;
        }

        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t) (eq - name) : strlen(name);

        for (size_t i = 0; i < ELEMENTSOF(options); i++)
                if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0) {
                        *ret_inline = eq ? eq + 1 : NULL;
                        return &options[i];
                }
        return NULL;
}

static int parse_u32_option(const char *opt, const char *value, OptU32 *ret, char *err, size_t err_size) {
        int r = parse_u32(value, &ret->value);

        if (r == -ERANGE)
                return usage_error(err, err_size, "--%s: value \"%s\" is too large", opt, value);
        if (r < 0)
                return usage_error(err, err_size, "--%s: \"%s\" is not a non-negative integer", opt, value);
        ret->set = true;
        return 0;
}

static int apply_option(const Option *o, const char *value, Args *a, char *err, size_t err_size) {
        switch (o->id) {
        case OPT_HELP:          a->help = true; return 0;
        case OPT_VERSION:       a->version = true; return 0;
        case OPT_JSON:          a->json = true; return 0;
        case OPT_NO_PROGRESS:   a->no_progress = true; return 0;
        case OPT_DRY_RUN:       a->dry_run = true; return 0;
        case OPT_QUEUE:         a->queue = true; return 0;
        case OPT_BUS_ADDRESS:   a->bus_address = value; return 0;
        case OPT_PM_TEST:       a->pm_test = value; return 0;
        case OPT_MEM_SLEEP:     a->mem_sleep = value; return 0;
        case OPT_WHO:           a->who = value; return 0;
        case OPT_WHY:           a->why = value; return 0;
        case OPT_MODE:
                if (!word_in(value, inhibit_modes, ELEMENTSOF(inhibit_modes)))
                        return usage_error(err, err_size, "--mode: expected \"block\" or \"delay\", got \"%s\"",
                                           value);
                a->inhibit_mode = value;
                return 0;
        case OPT_WAKE_AFTER:    return parse_u32_option(o->name, value, &a->wake_after_sec, err, err_size);
        case OPT_FLUSH_TIMEOUT: return parse_u32_option(o->name, value, &a->flush_timeout_ms, err, err_size);
        case OPT_FREEZE_TIMEOUT:return parse_u32_option(o->name, value, &a->freeze_timeout_ms, err, err_size);
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
                if (strcmp(word, "pre") != 0 && strcmp(word, "post") != 0)
                        return usage_error(err, err_size, "hook: \"%s\" is neither pre nor post", word);
                a->hook_when = word;
                return 0;
        }
        if (a->hook_kind)
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
                                           "hold: unknown class \"%s\" (expected early, late or nofreeze)", word);
                a->hold_class = word;
                return 0;
        }
        if (a->command == COMMAND_HOOK)
                return apply_hook_word(word, a, err, err_size);
        if (a->command == COMMAND_CANCEL && !*have_cycle) {
                if (parse_u64(word, &a->cycle) < 0)
                        return usage_error(err, err_size, "cancel: \"%s\" is not a cycle id", word);
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
        const Option *scoped[_SCOPE_MAX] = {};
        int r;

        if (err && err_size > 0)
                err[0] = 0;

        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i], *value;
                const Option *o;

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

                o = find_option(arg, &value);
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
                        scoped[o->scope] = o;
        }

        if (a.help || a.version) {
                *ret = a;
                return 0;
        }
        if (a.command == COMMAND_NONE)
                return usage_error(err, err_size, "no command given");

        for (size_t s = 0; s < _SCOPE_MAX; s++)
                if (scoped[s] && !command_in_scope(a.command, (OptionScope) s))
                        return usage_error(err, err_size, "--%s only applies to %s", scoped[s]->name,
                                           scope_commands[s]);

        if (a.command == COMMAND_HOOK && !a.hook_kind)
                return usage_error(err, err_size, "hook: expected pre|post and the kind of sleep");
        if (a.command == COMMAND_HOLD && !a.hold_class)
                return usage_error(err, err_size, "hold: no class given (early, late or nofreeze)");
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
