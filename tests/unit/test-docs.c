/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The documentation follows the tables: fridge.conf(5) documents every key
 * of config_keys[] (range, values, default) and no other; fridgectl(1) and
 * the Sleep comment of dbus/io.fridge.Fridge1.xml document every option of
 * sleep_options[] (type, range, values, what it applies to) and no other,
 * fridgectl(1) documents every command and option of client/args.c's
 * tables (hook included) and no other, and the bash completion offers
 * each flag and its values.
 * A key or option added to a table without its documentation, or left in
 * the documentation after it went, fails here. */
#include <glib.h>
#include <string.h>

#include "args.h"
#include "config-keys.h"
#include "man-page.h"
#include "sleep-options.h"

/* ---- fridge.conf(5) and config_keys[] ---- */

static const ConfigKey *config_key_of(const char *section, const char *tag) {
        if (section[0] != '[')
                return NULL;
        g_autofree char *group = g_strndup(section + 1, strlen(section) - 2);
        g_autofree char *name = g_strndup(tag, strcspn(tag, "="));
        return config_key_find(group, name);
}

static void test_fridge_conf_5(void) {
        g_autofree char *text = source_text("man/fridge.conf.5");
        g_autoptr(GPtrArray) items = man_items(text);
        g_autofree bool *documented = g_new0(bool, config_keys_count);

        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                if (!it->tag || it->section[0] != '[')
                        continue; /* [Group] sections hold the keys; CLASSES has its own */
                const ConfigKey *k = config_key_of(it->section, it->tag);
                if (!k)
                        g_error("fridge.conf(5) documents %s %s, which fridged does not know", it->section, it->tag);
                documented[k - config_keys] = true;

                g_autofree char *where = g_strdup_printf("fridge.conf(5) on [%s] %s", k->group, k->name);
                g_autofree char *all = g_strdup_printf("%s %s", it->tag, it->body->str);
                if (k->type == CONFIG_KEY_U32 || k->type == CONFIG_KEY_MSEC) {
                        g_autofree char *range = g_strdup_printf("%" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, k->min,
                                                                 k->max);
                        assert_says(where, all, range);
                }
                for (const char *const *w = k->words; w && *w; w++)
                        assert_says(where, all, *w);
                if (*k->default_value) {
                        g_autofree char *value = g_regex_escape_string(k->default_value, -1);
                        g_autofree char *pattern = g_strdup_printf("[Dd]efault:? %s\\b", value);
                        if (!g_regex_match_simple(pattern, all, 0, 0))
                                g_error("%s does not give the default %s:%s", where, k->default_value, all);
                } else {
                        const ManItem *sec = man_section_text(items, it->section);
                        if (!strstr(all, "Empty (the default)") && !(sec && strstr(sec->body->str, "Empty (the default)")))
                                g_error("%s does not say that empty is the default:%s", where, all);
                }
        }
        for (size_t i = 0; i < config_keys_count; i++)
                if (!documented[i])
                        g_error("fridge.conf(5) lacks [%s] %s", config_keys[i].group, config_keys[i].name);
}

/* ---- fridgectl(1) and sleep_options[] ---- */

#define SLEEP_SECTION "Options for suspend, hibernate and hybrid-sleep"

static void test_fridgectl_1(void) {
        g_autofree char *text = source_text("man/fridgectl.1");
        g_autoptr(GPtrArray) items = man_items(text);
        g_autofree bool *documented = g_new0(bool, sleep_options_count);

        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                if (!it->tag || !g_str_equal(it->section, SLEEP_SECTION))
                        continue;
                g_assert_true(g_str_has_prefix(it->tag, "--"));
                const char *flag = it->tag + 2;
                const SleepOption *s = sleep_option_by_flag(flag, strcspn(flag, "="));
                if (!s)
                        g_error("fridgectl(1) documents %s, which is not a Sleep option", it->tag);
                documented[s - sleep_options] = true;

                g_autofree char *want_tag = g_strdup_printf("--%s%s%s", s->flag, s->metavar ? "=" : "",
                                                            s->metavar ? s->metavar : "");
                g_assert_cmpstr(it->tag, ==, want_tag);
                g_autofree char *where = g_strdup_printf("fridgectl(1) on --%s", s->flag);
                const char *body = it->body->str;
                assert_says(where, body, s->name); /* the D-Bus name */
                g_autofree char *with = s->requires ? g_strdup_printf("--%s", sleep_option_by_name(s->requires)->flag) : NULL;
                assert_sleep_option_says(where, body, s, with);
        }
        for (size_t i = 0; i < sleep_options_count; i++)
                if (!documented[i])
                        g_error("fridgectl(1) lacks --%s in \"" SLEEP_SECTION "\"", sleep_options[i].flag);
}

/* ---- fridgectl(1) and the command and option tables of client/args.c ---- */

static bool is_option_section(const char *section) {
        return g_str_equal(section, "OPTIONS") || (g_str_has_prefix(section, "Options for ") &&
                                                   !g_str_equal(section, SLEEP_SECTION));
}

static void test_fridgectl_1_commands(void) {
        g_autofree char *text = source_text("man/fridgectl.1");
        g_autoptr(GPtrArray) items = man_items(text);
        g_autofree bool *documented = g_new0(bool, args_commands_count);

        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                if (!it->tag || !g_str_equal(it->section, "COMMANDS"))
                        continue;
                g_autofree char *name = g_strndup(it->tag, strcspn(it->tag, " "));
                size_t k = 0;
                while (k < args_commands_count && !g_str_equal(args_commands[k].name, name))
                        k++;
                if (k == args_commands_count)
                        g_error("fridgectl(1) documents the command %s, which fridgectl does not have", name);
                documented[k] = true;
        }
        for (size_t k = 0; k < args_commands_count; k++)
                if (!documented[k])
                        g_error("fridgectl(1) lacks the command %s in COMMANDS", args_commands[k].name);
}

static void test_fridgectl_1_options(void) {
        g_autofree char *text = source_text("man/fridgectl.1");
        g_autoptr(GPtrArray) items = man_items(text);
        g_autofree bool *documented = g_new0(bool, args_options_count);
        g_autoptr(GRegex) long_name = g_regex_new("--([a-z][a-z-]*)", 0, 0, NULL);

        for (guint i = 0; i < items->len; i++) {
                const ManItem *it = items->pdata[i];
                g_autoptr(GMatchInfo) m = NULL;
                if (!it->tag || !is_option_section(it->section))
                        continue;
                if (!g_regex_match(long_name, it->tag, 0, &m))
                        g_error("fridgectl(1) has an option without a long name in %s: %s", it->section, it->tag);
                g_autofree char *name = g_match_info_fetch(m, 1);
                size_t k = 0;
                while (k < args_options_count && !g_str_equal(args_options[k].name, name))
                        k++;
                if (k == args_options_count)
                        g_error("fridgectl(1) documents --%s, which fridgectl's option table lacks", name);
                const ArgsOption *o = &args_options[k];
                documented[k] = true;
                g_autofree char *where = g_strdup_printf("fridgectl(1) on --%s", o->name);
                if (o->short_name) {
                        g_autofree char *short_name = g_strdup_printf("-%c", o->short_name);
                        assert_says(where, it->tag, short_name);
                }
                if (o->metavar && o->metavar[0] >= 'A' && o->metavar[0] <= 'Z')
                        assert_says(where, it->tag, o->metavar);
                if (o->scope != ARGS_SCOPE_ANY) {
                        g_autofree char *section = g_strdup_printf("Options for %s", args_scope_commands(o->scope));
                        if (!g_str_equal(it->section, section) && o->scope != ARGS_SCOPE_INHIBIT)
                                g_error("%s: in \"%s\", not \"%s\"", where, it->section, section);
                }
        }
        for (size_t k = 0; k < args_options_count; k++)
                if (!documented[k])
                        g_error("fridgectl(1) lacks --%s", args_options[k].name);
}

/* ---- the D-Bus contract's Sleep comment and sleep_options[] ---- */

static void test_dbus_contract(void) {
        g_autofree char *text = source_text("dbus/io.fridge.Fridge1.xml");
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_autoptr(GRegex) start = g_regex_new("^ {8}([a-z][a-z-]*) +([a-z]) +(.*)$", 0, 0, NULL);
        g_autofree bool *documented = g_new0(bool, sleep_options_count);
        bool in_options = false;
        const SleepOption *cur = NULL;
        GString *desc = g_string_new(NULL);

        for (char **l = lines; *l; l++) {
                if (strstr(*l, "options (every key optional")) {
                        in_options = true;
                        continue;
                }
                if (!in_options)
                        continue;
                g_autoptr(GMatchInfo) m = NULL;
                bool is_start = g_regex_match(start, *l, 0, &m);
                bool is_more = !is_start && g_str_has_prefix(*l, "                             ");
                if ((is_start || !is_more) && cur) {
                        g_autofree char *where = g_strdup_printf("the Sleep comment on %s", cur->name);
                        if (cur->type == SLEEP_OPTION_UINT) {
                                g_autofree char *range = g_strdup_printf("%u..%u", cur->min, cur->max);
                                assert_says(where, desc->str, range);
                        }
                        if (cur->words) {
                                char words[256];
                                assert_says(where, desc->str, sleep_option_words(cur, "|", words, sizeof(words)));
                        }
                        if (cur->only_kind) {
                                g_autofree char *only = g_strdup_printf("(%s only)", cur->only_kind);
                                assert_says(where, desc->str, only);
                        }
                        if (cur->requires) {
                                g_autofree char *with = g_strdup_printf("only with %s", cur->requires);
                                assert_says(where, desc->str, with);
                        }
                        if (cur->fallback) {
                                g_autofree char *def = g_strdup_printf("default %s", cur->fallback);
                                assert_says(where, desc->str, def);
                        }
                        cur = NULL;
                }
                if (is_start) {
                        g_autofree char *name = g_match_info_fetch(m, 1);
                        g_autofree char *type = g_match_info_fetch(m, 2);
                        cur = sleep_option_by_name(name);
                        if (!cur)
                                g_error("the Sleep comment documents option %s, which fridged does not take", name);
                        g_assert_cmpint(type[0], ==, (char) cur->type);
                        documented[cur - sleep_options] = true;
                        g_autofree char *rest = g_match_info_fetch(m, 3);
                        g_string_assign(desc, rest);
                } else if (is_more && cur) {
                        g_autofree char *more = g_strstrip(g_strdup(*l));
                        g_string_append_printf(desc, " %s", more);
                } else if (!is_more)
                        break;
        }
        g_string_free(desc, TRUE);
        g_assert_true(in_options);
        for (size_t i = 0; i < sleep_options_count; i++)
                if (!documented[i])
                        g_error("the Sleep comment of dbus/io.fridge.Fridge1.xml lacks option %s", sleep_options[i].name);
}

/* ---- the bash completion and sleep_options[] ---- */

static void test_completion(void) {
        g_autofree char *text = source_text("completion/fridgectl");
        const char *start = strstr(text, "local opts_sleep='");
        g_assert_nonnull(start);
        start += strlen("local opts_sleep='");
        g_autofree char *list = g_strndup(start, strcspn(start, "'"));
        g_auto(GStrv) words = g_regex_split_simple("\\s+", g_strstrip(list), 0, 0);
        g_assert_cmpuint(g_strv_length(words), ==, sleep_options_count);
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                g_autofree char *word = g_strdup_printf("--%s%s", s->flag, s->metavar ? "=" : "");
                if (!g_strv_contains((const char *const *) words, word))
                        g_error("completion/fridgectl's opts_sleep lacks %s", word);
                if (s->words) {
                        g_autofree char *joined = g_strjoinv(" ", (char **) s->words);
                        g_autofree char *values = g_strdup_printf("--%s) values='%s'", s->flag, joined);
                        assert_says("completion/fridgectl", text, values);
                }
        }
}

/* ---- the completions run: what they offer against the tables ---- */

/* `script` run by `shell` (its argv before the script) with the source
 * dir's completion file `file` as $1; its stdout. NULL: no such shell */
static char *run_completion(const char *const *shell, const char *script, const char *file) {
        g_autofree char *path = g_find_program_in_path(shell[0]);
        if (!path)
                return NULL;
        g_autofree char *completion = g_build_filename(g_getenv("FRIDGE_SOURCE_DIR"), file, NULL);
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        for (const char *const *a = shell; *a; a++)
                g_ptr_array_add(argv, (char *) *a);
        g_ptr_array_add(argv, (char *) "-c");
        g_ptr_array_add(argv, (char *) script);
        g_ptr_array_add(argv, (char *) shell[0]);
        g_ptr_array_add(argv, completion);
        g_ptr_array_add(argv, NULL);
        char *out = NULL, *err = NULL;
        int status = 0;
        g_assert_true(g_spawn_sync(NULL, (char **) argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                                   &status, NULL));
        if (!g_spawn_check_wait_status(status, NULL))
                g_error("%s on %s failed:\n%s%s", shell[0], file, out, err);
        g_free(err);
        return out;
}

/* The words of section `name` ("#name" line, up to the next "#") */
static GPtrArray *offered(const char *out, const char *name) {
        GPtrArray *words = g_ptr_array_new_with_free_func(g_free);
        g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
        g_autofree char *head = g_strdup_printf("#%s", name);
        bool in = false;
        for (char **l = lines; *l; l++) {
                if ((*l)[0] == '#') {
                        in = g_str_equal(*l, head);
                        continue;
                }
                if (in && **l)
                        g_ptr_array_add(words, g_strdup(*l));
        }
        return words;
}

static bool has_word(GPtrArray *words, const char *w) {
        for (guint i = 0; i < words->len; i++)
                if (g_str_equal(words->pdata[i], w))
                        return true;
        return false;
}

/* Exactly the commands of the table but the hidden ones (hook) */
static void assert_commands(const char *shell, GPtrArray *words) {
        size_t shown = 0;
        for (size_t k = 0; k < args_commands_count; k++) {
                const ArgsCommand *c = &args_commands[k];
                shown += !c->hidden;
                if (has_word(words, c->name) == c->hidden)
                        g_error("the %s completion %s the command %s", shell, c->hidden ? "offers" : "lacks", c->name);
        }
        g_assert_cmpuint(words->len, ==, shown);
}

static void assert_option(const char *shell, GPtrArray *words, const char *name) {
        g_autofree char *bare = g_strdup_printf("--%s", name), *eq = g_strdup_printf("--%s=", name);
        if (!has_word(words, bare) && !has_word(words, eq))
                g_error("the %s completion does not offer --%s", shell, name);
}

static const char bash_script[] =
        "source \"$1\"\n"
        "offer() { echo \"#$1\"; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _fridgectl;"
        " printf '%s\\n' \"${COMPREPLY[@]}\"; }\n"
        "offer commands fridgectl ''\n"
        "offer 0 fridgectl status --\n"
        "offer 1 fridgectl suspend --\n"
        "offer 2 fridgectl inhibit --\n"
        "offer 3 fridgectl inhibit --\n"
        "offer 4 fridgectl history --\n"
        "offer 5 fridgectl cat-config --\n"
        "offer json fridgectl --json=\n";

static void test_completion_bash(void) {
        const char *const bash[] = { "bash", "--norc", "--noprofile", NULL };
        g_autofree char *out = run_completion(bash, bash_script, "completion/fridgectl");
        g_assert_nonnull(out);
        g_autoptr(GPtrArray) commands = offered(out, "commands");
        assert_commands("bash", commands);
        for (size_t i = 0; i < args_options_count; i++) {
                g_autofree char *scope = g_strdup_printf("%d", (int) args_options[i].scope);
                g_autoptr(GPtrArray) words = offered(out, scope);
                assert_option("bash", words, args_options[i].name);
        }
        g_autoptr(GPtrArray) sleep_words = offered(out, "1");
        for (size_t i = 0; i < sleep_options_count; i++)
                assert_option("bash", sleep_words, sleep_options[i].flag);
        g_autoptr(GPtrArray) modes = offered(out, "json");
        g_assert_true(has_word(modes, "pretty") && has_word(modes, "short") && has_word(modes, "off"));
}

/* compsys's functions as stubs that print what _fridgectl gives them */
static const char zsh_script[] =
        "_describe() { print -r -- '#commands'; print -rl -- ${${(P)4}%%:*} }\n"
        "_arguments() { print -r -- '#options'; print -rl -- \"$@\" }\n"
        "_values() { : }\n"
        "source \"$1\"\n"
        "_fridgectl_commands\n";

static void test_completion_zsh(void) {
        const char *const zsh[] = { "zsh", "-f", NULL };
        g_autofree char *path = g_find_program_in_path("zsh");
        if (!path) {
                g_test_skip("zsh is not installed (tools/lib/setup.sh installs it)");
                return;
        }
        g_autofree char *file = g_build_filename(g_getenv("FRIDGE_SOURCE_DIR"), "completion/_fridgectl", NULL);
        char *check[] = { (char *) "zsh", (char *) "-n", file, NULL };
        g_autofree char *check_err = NULL;
        int status = 0;
        g_assert_true(g_spawn_sync(NULL, check, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                                   NULL, &check_err, &status, NULL));
        if (!g_spawn_check_wait_status(status, NULL))
                g_error("zsh -n completion/_fridgectl: %s", check_err);
        g_autofree char *out = run_completion(zsh, zsh_script, "completion/_fridgectl");
        g_autoptr(GPtrArray) commands = offered(out, "commands");
        assert_commands("zsh", commands);
        g_autoptr(GPtrArray) specs = offered(out, "options");
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GRegex) long_name = g_regex_new("^(?:\\([^)]*\\))?(--[a-z][a-z-]*)", 0, 0, NULL);
        for (guint i = 0; i < specs->len; i++) {
                g_autoptr(GMatchInfo) m = NULL;
                if (g_regex_match(long_name, specs->pdata[i], 0, &m))
                        g_ptr_array_add(names, g_match_info_fetch(m, 1));
        }
        for (size_t i = 0; i < args_options_count; i++)
                assert_option("zsh", names, args_options[i].name);
        for (size_t i = 0; i < sleep_options_count; i++)
                assert_option("zsh", names, sleep_options[i].flag);
        g_assert_cmpuint(names->len, ==, args_options_count + sleep_options_count);
}

/* The reader of the docs finds what it checks: a page without the section
 * would pass every loop above */
static void test_parsers_find_items(void) {
        g_autoptr(GPtrArray) items = man_items(".SH \"[Sleep]\"\n.TP\n.BR Driver= { auto | direct }\nWho, "
                                               "\\-1 to 2.\nDefault:\n.BR auto .\n");
        g_assert_cmpuint(items->len, ==, 2);
        const ManItem *it = items->pdata[1];
        g_assert_cmpstr(it->section, ==, "[Sleep]");
        g_assert_cmpstr(it->tag, ==, "Driver={auto|direct}");
        g_assert_cmpstr(it->body->str, ==, " Who, -1 to 2. Default: auto.");
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/docs/parsers-find-items", test_parsers_find_items);
        g_test_add_func("/docs/fridge-conf-5", test_fridge_conf_5);
        g_test_add_func("/docs/fridgectl-1", test_fridgectl_1);
        g_test_add_func("/docs/fridgectl-1-commands", test_fridgectl_1_commands);
        g_test_add_func("/docs/fridgectl-1-options", test_fridgectl_1_options);
        g_test_add_func("/docs/dbus-contract", test_dbus_contract);
        g_test_add_func("/docs/completion", test_completion);
        g_test_add_func("/docs/completion-bash", test_completion_bash);
        g_test_add_func("/docs/completion-zsh", test_completion_zsh);
        return g_test_run();
}
