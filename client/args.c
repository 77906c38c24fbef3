/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "args.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "macro.h"

typedef enum OptionId {
        OPT_HELP,
        OPT_VERSION,
        OPT_BUS,
        OPT_BUS_ADDRESS,
        OPT_JSON,
        OPT_NO_PROGRESS,
        OPT_QUIET,
        OPT_NO_LEGEND,
        OPT_NO_PAGER,
        OPT_NO_ASK_PASSWORD,
        OPT_WHO,
        OPT_WHY,
        OPT_MODE,
        OPT_LINES,
        OPT_ROOT,
} OptionId;

const ArgsOption args_options[] = {
        { "help",            'h', no_argument,       ARGS_SCOPE_ANY,     OPT_HELP, NULL, N_("Show this help") },
        { "version",         0,   no_argument,       ARGS_SCOPE_ANY,     OPT_VERSION, NULL, N_("Show the version") },
        { "bus",             0,   required_argument, ARGS_SCOPE_ANY,     OPT_BUS, "system|session",
          N_("Bus to talk on (default: system)") },
        { "bus-address",     0,   required_argument, ARGS_SCOPE_ANY,     OPT_BUS_ADDRESS, "ADDR",
          N_("Connect to the bus at this D-Bus address") },
        { "json",            0,   optional_argument, ARGS_SCOPE_ANY,     OPT_JSON, "MODE",
          N_("JSON only on stdout: short (the default: an object or array a line), pretty (indented) or off") },
        { "no-progress",     0,   no_argument,       ARGS_SCOPE_ANY,     OPT_NO_PROGRESS, NULL,
          N_("Plain lines instead of a progress bar") },
        { "quiet",           'q', no_argument,       ARGS_SCOPE_ANY,     OPT_QUIET, NULL,
          N_("Print nothing but errors: the exit status says how it went") },
        { "no-legend",       0,   no_argument,       ARGS_SCOPE_ANY,     OPT_NO_LEGEND, NULL,
          N_("Listings without their header and footer lines") },
        { "no-pager",        0,   no_argument,       ARGS_SCOPE_ANY,     OPT_NO_PAGER, NULL,
          N_("Do not pipe long listings into a pager") },
        { "no-ask-password", 0,   no_argument,       ARGS_SCOPE_ANY,     OPT_NO_ASK_PASSWORD, NULL,
          N_("Do not ask for a password: no pkttyagent, and polkit may not ask") },
        { "who",             0,   required_argument, ARGS_SCOPE_HOLDER,  OPT_WHO, "NAME",
          N_("Who holds it (default: CMD's name)") },
        { "why",             0,   required_argument, ARGS_SCOPE_HOLDER,  OPT_WHY, "TEXT",
          N_("Why (default: \"fridgectl hold\" or \"fridgectl inhibit\")") },
        { "mode",            0,   required_argument, ARGS_SCOPE_INHIBIT, OPT_MODE, "block|delay",
          N_("inhibit only: the kind of inhibitor (default: block)") },
        { "lines",           'n', required_argument, ARGS_SCOPE_HISTORY, OPT_LINES, "N",
          N_("Only the newest N cycles (default: all kept)") },
        { "root",            0,   required_argument, ARGS_SCOPE_CAT_CONFIG, OPT_ROOT, "DIR",
          N_("Search the configuration directories under DIR (default: /)") },
};
const size_t args_options_count = ELEMENTSOF(args_options);

const ArgsCommand args_commands[] = {
        { "status",       COMMAND_STATUS,       "", N_("Show fridged's state and what this machine can do (the "
          "default command)") },
        { "suspend",      COMMAND_SUSPEND,      "", N_("Suspend to RAM and follow the cycle to its end") },
        { "hibernate",    COMMAND_HIBERNATE,    "", N_("Hibernate to disk and follow the cycle") },
        { "hybrid-sleep", COMMAND_HYBRID_SLEEP, "", N_("Hibernate, then suspend, and follow the cycle") },
        { "cancel",       COMMAND_CANCEL,       "[CYCLE]", N_("Cancel a cycle (default: the running one)") },
        { "monitor",      COMMAND_MONITOR,      "", N_("Print fridged's events until Ctrl-C") },
        { "plan",         COMMAND_PLAN,         "", N_("Show which cgroups are frozen early, late or never") },
        { "hold",         COMMAND_HOLD,         "CLASS -- CMD [ARGS...]", N_("Run CMD while its cgroup keeps CLASS "
          "(early|late|nofreeze|ui); exit with CMD's status") },
        { "hook",         COMMAND_HOOK,         "pre|post KIND | budget", N_("For systemd-sleep's hook only"),
          .hidden = true },
        { "inhibit",      COMMAND_INHIBIT,      "-- CMD [ARGS...]", N_("Run CMD while holding an inhibitor (block: "
          "no cycle starts; delay: a cycle waits for CMD, bounded); exit with CMD's status") },
        { "inhibitors",   COMMAND_INHIBITORS,   "", N_("List the inhibitors held") },
        { "plot",         COMMAND_PLOT,         "[CYCLE]", N_("Draw a cycle's timeline as SVG on stdout (default: the "
          "running or the last cycle)") },
        { "can-sleep",    COMMAND_CAN_SLEEP,    "[KIND]", N_("Whether you may sleep (KIND, or each): yes, no, "
          "challenge (a password is needed) or na") },
        { "history",      COMMAND_HISTORY,      "", N_("List past cycles, newest first (id, kind, start, result, "
          "time asleep, wake source; phase and error of a failed one)") },
        { "cat-config",   COMMAND_CAT_CONFIG,   "", N_("Show the configuration files fridged reads, in the order "
          "they apply (--root=DIR: under DIR)") },
};
const size_t args_commands_count = ELEMENTSOF(args_commands);

/* What the usage error says when an option is used elsewhere. */
static const char *const scope_commands[_ARGS_SCOPE_MAX] = {
        [ARGS_SCOPE_ANY]     = N_("every command"),
        [ARGS_SCOPE_SLEEP]   = N_("suspend, hibernate and hybrid-sleep"),
        [ARGS_SCOPE_HOLDER]  = N_("hold and inhibit"),
        [ARGS_SCOPE_INHIBIT] = "inhibit",
        [ARGS_SCOPE_HISTORY] = "history",
        [ARGS_SCOPE_CAT_CONFIG] = "cat-config",
};

const char *args_scope_commands(ArgsScope scope) {
        return scope < _ARGS_SCOPE_MAX ? _(scope_commands[scope]) : NULL;
}

static const char *const classes[] = { "early", "late", "nofreeze", "ui" };
static const char *const inhibit_modes[] = { "block", "delay" };

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

static bool command_in_scope(Command c, ArgsScope scope) {
        switch (scope) {
        case ARGS_SCOPE_SLEEP:   return command_is_sleep(c);
        case ARGS_SCOPE_HOLDER:  return command_runs_cmd(c);
        case ARGS_SCOPE_INHIBIT: return c == COMMAND_INHIBIT;
        case ARGS_SCOPE_HISTORY: return c == COMMAND_HISTORY;
        case ARGS_SCOPE_CAT_CONFIG: return c == COMMAND_CAT_CONFIG;
        default:                 return true;
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

static int apply_json(const char *value, Args *a, char *err, size_t err_size) {
        if (!value || strcmp(value, "short") == 0)
                a->json_format = JSON_FORMAT_SHORT;
        else if (strcmp(value, "pretty") == 0)
                a->json_format = JSON_FORMAT_PRETTY;
        else if (strcmp(value, "off") == 0)
                a->json_format = JSON_FORMAT_OFF;
        else
                return usage_error(err, err_size, _("--json: expected \"pretty\", \"short\" or \"off\", got \"%s\""),
                                   value);
        a->json = a->json_format != JSON_FORMAT_OFF;
        return 0;
}

static int apply_option(const ArgsOption *o, const char *value, Args *a, char *err, size_t err_size) {
        switch ((OptionId) o->id) {
        case OPT_HELP:            a->help = true; return 0;
        case OPT_VERSION:         a->version = true; return 0;
        case OPT_JSON:            return apply_json(value, a, err, err_size);
        case OPT_NO_PROGRESS:     a->no_progress = true; return 0;
        case OPT_QUIET:           a->quiet = true; return 0;
        case OPT_NO_LEGEND:       a->no_legend = true; return 0;
        case OPT_NO_PAGER:        a->no_pager = true; return 0;
        case OPT_NO_ASK_PASSWORD: a->no_ask_password = true; return 0;
        case OPT_BUS_ADDRESS:     a->bus_address = value; return 0;
        case OPT_WHO:             a->who = value; return 0;
        case OPT_WHY:             a->why = value; return 0;
        case OPT_ROOT:            a->root = value; return 0;
        case OPT_MODE:
                if (!word_in(value, inhibit_modes, ELEMENTSOF(inhibit_modes)))
                        return usage_error(err, err_size, _("--mode: expected \"block\" or \"delay\", got \"%s\""),
                                           value);
                a->inhibit_mode = value;
                return 0;
        case OPT_LINES:
                if (parse_u32(value, &a->history_max) < 0 || a->history_max == 0)
                        return usage_error(err, err_size, _("--lines: expected a number of cycles from 1 to %u, got "
                                           "\"%s\""), UINT32_MAX, value);
                return 0;
        case OPT_BUS:
                if (strcmp(value, "system") == 0)
                        a->bus = BUS_KIND_SYSTEM;
                else if (strcmp(value, "session") == 0)
                        a->bus = BUS_KIND_SESSION;
                else
                        return usage_error(err, err_size, _("--bus: expected \"system\" or \"session\", got \"%s\""),
                                           value);
                return 0;
        }
        return usage_error(err, err_size, "internal error: unhandled option --%s", o->name);
}

static int parse_command(const char *word, Command *ret) {
        for (size_t i = 0; i < args_commands_count; i++)
                if (strcmp(word, args_commands[i].name) == 0) {
                        *ret = args_commands[i].command;
                        return 0;
                }
        return -EINVAL;
}

static int apply_hook_word(const char *word, Args *a, char *err, size_t err_size) {
        if (!a->hook_when) {
                if (strcmp(word, "pre") != 0 && strcmp(word, "post") != 0 && strcmp(word, "budget") != 0)
                        return usage_error(err, err_size, _("hook: \"%s\" is neither pre, post nor budget"), word);
                a->hook_when = word;
                return 0;
        }
        if (a->hook_kind || strcmp(a->hook_when, "budget") == 0)
                return usage_error(err, err_size, _("hook: unexpected argument \"%s\""), word);
        for (size_t i = 0; i < ELEMENTSOF(hook_kinds); i++)
                if (strcmp(word, hook_kinds[i]) == 0) {
                        a->hook_kind = word;
                        return 0;
                }
        return usage_error(err, err_size,
                           _("hook: unknown kind \"%s\" (expected suspend, hibernate, hybrid-sleep or "
                           "suspend-then-hibernate)"), word);
}

/* Positional words: the command, then the optional CYCLE of "cancel" or
 * the CLASS of "hold". */
static int apply_positional(const char *word, Args *a, bool *have_cycle, char *err, size_t err_size) {
        if (a->command == COMMAND_NONE) {
                if (parse_command(word, &a->command) < 0)
                        return usage_error(err, err_size, _("unknown command \"%s\""), word);
                return 0;
        }
        if (a->command == COMMAND_HOLD) {
                if (a->hold_class)
                        return usage_error(err, err_size,
                                           _("hold: unexpected argument \"%s\"; put the command to run after \"--\""),
                                           word);
                if (!class_is_valid(word))
                        return usage_error(err, err_size,
                                           _("hold: unknown class \"%s\" (expected early, late, nofreeze or ui)"),
                                           word);
                a->hold_class = word;
                return 0;
        }
        if (a->command == COMMAND_HOOK)
                return apply_hook_word(word, a, err, err_size);
        if (a->command == COMMAND_CAN_SLEEP && !a->sleep_kind) {
                if (!word_in(word, sleep_kinds, ELEMENTSOF(sleep_kinds)))
                        return usage_error(err, err_size,
                                           _("can-sleep: unknown kind \"%s\" (expected suspend, hibernate or "
                                           "hybrid-sleep)"), word);
                a->sleep_kind = word;
                return 0;
        }
        if ((a->command == COMMAND_CANCEL || a->command == COMMAND_PLOT) && !*have_cycle) {
                if (parse_u64(word, &a->cycle) < 0 || (a->command == COMMAND_PLOT && a->cycle == 0))
                        return usage_error(err, err_size, _("%s: \"%s\" is not a cycle id"),
                                           a->command == COMMAND_PLOT ? "plot" : "cancel", word);
                *have_cycle = true;
                return 0;
        }
        return usage_error(err, err_size, _("unexpected argument \"%s\""), word);
}

/* getopt_long's val of a long option without a short one: the index in
 * args_options[], then in sleep_options[], above every char */
#define LONG_VAL_BASE 0x100

/* getopt_long's tables, made from ours: every option once */
typedef struct Getopt {
        struct option *longopts;
        char shortopts[64];
} Getopt;

static void getopt_done(Getopt *g) {
        free(g->longopts);
}

static void add_short(Getopt *g, size_t *n, char c, int has_arg) {
        if (!c || *n + 3 >= sizeof(g->shortopts))
                return;
        g->shortopts[(*n)++] = c;
        if (has_arg == required_argument)
                g->shortopts[(*n)++] = ':';
        g->shortopts[*n] = 0;
}

static int getopt_make(Getopt *g) {
        size_t n = 0, k = 0;

        g->longopts = calloc(args_options_count + sleep_options_count + 1, sizeof(struct option));
        if (!g->longopts)
                return -ENOMEM;
        /* "+": stop at each word that is not an option, so the loop sees
         * the command, its words and hold's "--" where they stand;
         * ":": a missing value is ':', told apart from an unknown option */
        strcpy(g->shortopts, "+:");
        n = 2;
        for (size_t i = 0; i < args_options_count; i++, k++) {
                const ArgsOption *o = &args_options[i];
                g->longopts[k] = (struct option) { o->name, o->has_arg, NULL,
                                                   o->short_name ? o->short_name : LONG_VAL_BASE + (int) k };
                add_short(g, &n, o->short_name, o->has_arg);
        }
        for (size_t i = 0; i < sleep_options_count; i++, k++) {
                const SleepOption *s = &sleep_options[i];
                int has_arg = s->type == SLEEP_OPTION_BOOL ? no_argument : required_argument;
                g->longopts[k] = (struct option) { s->flag, has_arg, NULL,
                                                   s->short_flag ? s->short_flag : LONG_VAL_BASE + (int) k };
                add_short(g, &n, s->short_flag, has_arg);
        }
        return 0;
}

/* Which of the two tables getopt_long's val names; false: neither */
static bool option_of_val(int val, const ArgsOption **ret_o, const SleepOption **ret_s) {
        *ret_o = NULL;
        *ret_s = NULL;
        if (val >= LONG_VAL_BASE) {
                size_t k = (size_t) (val - LONG_VAL_BASE);
                if (k < args_options_count)
                        *ret_o = &args_options[k];
                else if (k - args_options_count < sleep_options_count)
                        *ret_s = &sleep_options[k - args_options_count];
        } else if (val > 0) {
                for (size_t i = 0; i < args_options_count && !*ret_o; i++)
                        if (args_options[i].short_name == val)
                                *ret_o = &args_options[i];
                *ret_s = *ret_o ? NULL : sleep_option_by_short_flag((char) val);
        }
        return *ret_o || *ret_s;
}

static const char *option_name(int val) {
        const ArgsOption *o;
        const SleepOption *s;

        if (!option_of_val(val, &o, &s))
                return "?";
        return o ? o->name : s->flag;
}

/* What getopt_long could not take: an unknown option, a value missing or
 * one given to an option that takes none */
static int getopt_error(int c, char **argv, char *err, size_t err_size) {
        const ArgsOption *o;
        const SleepOption *s;

        if (c == ':')
                return usage_error(err, err_size, _("--%s needs a value"), option_name(optopt));
        if (optopt >= LONG_VAL_BASE || (optopt > 0 && option_of_val(optopt, &o, &s)))
                return usage_error(err, err_size, _("--%s takes no value"), option_name(optopt));
        if (optopt > 0)
                return usage_error(err, err_size, _("unknown option \"-%c\""), optopt);
        return usage_error(err, err_size, _("unknown option \"%s\""), argv[optind - 1]);
}

/* Options may come before or after the command, so options for some
 * commands only are checked once the whole line is read: `scoped` holds
 * the first of each scope given. */
static int apply_val(int val, const char *value, Args *a, const char **scoped, char *err, size_t err_size) {
        const ArgsOption *o;
        const SleepOption *s;

        if (!option_of_val(val, &o, &s))
                return usage_error(err, err_size, "internal error: unknown option %d", val);
        if (s) {
                if (!scoped[ARGS_SCOPE_SLEEP])
                        scoped[ARGS_SCOPE_SLEEP] = s->flag;
                return apply_sleep_option(s, value, a, err, err_size);
        }
        if (!scoped[o->scope])
                scoped[o->scope] = o->name;
        return apply_option(o, value, a, err, err_size);
}

/* After "--": words only, but for hold's and inhibit's own "--", after
 * which the rest is CMD, options and all */
static int apply_rest(int i, int argc, char **argv, Args *a, bool *have_cycle, char *err, size_t err_size) {
        for (; i < argc; i++) {
                if (command_runs_cmd(a->command) && strcmp(argv[i], "--") == 0) {
                        a->exec_argv = argv + i + 1;
                        return 0;
                }
                int r = apply_positional(argv[i], a, have_cycle, err, err_size);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The command line as getopt_long reads it, word by word */
static int parse_words(int argc, char **argv, Args *a, const char **scoped, char *err, size_t err_size) {
        _cleanup_(getopt_done) Getopt g = {};
        bool have_cycle = false;
        int r = getopt_make(&g);

        if (r < 0)
                return usage_error(err, err_size, _("out of memory"));
        optind = 0; /* a fresh start: args_parse() may run more than once */
        opterr = 0;
        for (;;) {
                int before = optind > 0 ? optind : 1;
                int c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL);

                if (c == '?' || c == ':')
                        return getopt_error(c, argv, err, err_size);
                if (c >= 0) {
                        r = apply_val(c, optarg, a, scoped, err, err_size);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (optind == before + 1 && strcmp(argv[before], "--") == 0) {
                        if (command_runs_cmd(a->command)) {
                                a->exec_argv = argv + optind;
                                return 0;
                        }
                        return apply_rest(optind, argc, argv, a, &have_cycle, err, err_size);
                }
                if (optind >= argc)
                        return 0;
                r = apply_positional(argv[optind++], a, &have_cycle, err, err_size);
                if (r < 0)
                        return r;
        }
}

/* What only the whole line tells: options for other commands, a command's
 * missing words */
static int check_line(const Args *a, const char *const *scoped, char *err, size_t err_size) {
        for (size_t s = 0; s < _ARGS_SCOPE_MAX; s++)
                if (scoped[s] && !command_in_scope(a->command, (ArgsScope) s))
                        return usage_error(err, err_size, _("--%s only applies to %s"), scoped[s],
                                           _(scope_commands[s]));
        if (command_is_sleep(a->command)) {
                bool for_kind;
                const SleepOption *s = sleep_options_misapplied(&a->sleep, command_sleep_kind(a->command), &for_kind);
                if (s && for_kind)
                        return usage_error(err, err_size, _("--%s only applies to %s, not %s"), s->flag, s->only_kind,
                                           command_sleep_kind(a->command));
                if (s)
                        return usage_error(err, err_size, _("--%s only applies with --%s"), s->flag,
                                           sleep_option_by_name(s->requires)->flag);
        }
        if (a->command == COMMAND_HOOK && !a->hook_kind && !(a->hook_when && strcmp(a->hook_when, "budget") == 0))
                return usage_error(err, err_size, _("hook: expected pre|post and the kind of sleep"));
        if (a->command == COMMAND_HOLD && !a->hold_class)
                return usage_error(err, err_size, _("hold: no class given (early, late, nofreeze or ui)"));
        if (command_runs_cmd(a->command)) {
                const char *name = a->command == COMMAND_HOLD ? "hold" : "inhibit";
                if (!a->exec_argv)
                        return usage_error(err, err_size, _("%s: missing \"--\" before the command to run"), name);
                if (!a->exec_argv[0])
                        return usage_error(err, err_size, _("%s: no command given after \"--\""), name);
        }
        return 0;
}

int args_parse(int argc, char **argv, Args *ret, char *err, size_t err_size) {
        Args a = { .command = COMMAND_NONE, .bus = BUS_KIND_SYSTEM };
        const char *scoped[_ARGS_SCOPE_MAX] = {};
        int r;

        if (err && err_size > 0)
                err[0] = 0;
        r = parse_words(argc, argv, &a, scoped, err, err_size);
        if (r < 0)
                return r;
        if (a.help || a.version) {
                *ret = a;
                return 0;
        }
        /* As systemctl and loginctl: no command is the overview */
        if (a.command == COMMAND_NONE)
                a.command = COMMAND_STATUS;
        r = check_line(&a, scoped, err, err_size);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}
