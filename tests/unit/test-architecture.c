/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* docs/ARCHITECTURE.md against the code: its generated sections are
 * rendered here from the state table, the error table, the Sleep option
 * table and the config key table, and must match; its module map must
 * name every source file. `--write FILE` rewrites the sections. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "config-keys.h"
#include "cycle-state.h"
#include "fridge-error.h"
#include "sleep-options.h"

static const char *yes_no(bool b) {
        return b ? "yes" : "no";
}

/* mermaid takes no '-' in a state's name */
static char *mermaid_name(CycleState st) {
        char *n = g_strdup(cycle_state_to_string(st));
        return g_strdelimit(n, "-", '_');
}

static char *render_states(void) {
        GString *s = g_string_new("| state | phase | State | Cancel | moves to |\n|---|---|---|---|---|\n");
        for (int i = 0; i < _CYCLE_STATE_MAX; i++) {
                g_autoptr(GString) to = g_string_new(NULL);
                for (int j = 0; j < _CYCLE_STATE_MAX; j++)
                        if (cycle_state_allowed(i, j))
                                g_string_append_printf(to, "%s%s", to->len ? ", " : "", cycle_state_to_string(j));
                const char *phase = cycle_state_phase_name(i);
                g_string_append_printf(s, "| %s | %s | %s | %s | %s |\n", cycle_state_to_string(i),
                                       *phase ? phase : "-", cycle_state_property(i),
                                       yes_no(cycle_state_cancellable(i)), to->len ? to->str : "-");
        }
        g_string_append(s, "\n```mermaid\nstateDiagram-v2\n    [*] --> new\n");
        for (int i = 0; i < _CYCLE_STATE_MAX; i++)
                for (int j = 0; j < _CYCLE_STATE_MAX; j++)
                        if (cycle_state_allowed(i, j)) {
                                g_autofree char *from = mermaid_name(i), *to = mermaid_name(j);
                                g_string_append_printf(s, "    %s --> %s\n", from, to);
                        }
        g_string_append(s, "    finished --> [*]\n```\n");
        return g_string_free(s, FALSE);
}

static char *exit_text(int code) {
        return code < 0 ? g_strdup("-") : g_strdup_printf("%d", code);
}

static char *render_errors(void) {
        GString *s = g_string_new("| error | D-Bus name | exit (call) | exit (cycle) | meaning |\n"
                                  "|---|---|---|---|---|\n");
        for (int e = 1; e < _FRIDGE_ERROR_MAX; e++) {
                const FridgeErrorInfo *i = fridge_error_info(e);
                const char *dot = strrchr(i->name, '.');
                g_autofree char *call = exit_text(i->call_exit), *cycle = exit_text(i->cycle_exit);
                g_string_append_printf(s, "| %s | `%s` | %s | %s | %s |\n", dot ? dot + 1 : i->name, i->name, call,
                                       cycle, i->summary);
        }
        return g_string_free(s, FALSE);
}

static char *option_values(const SleepOption *o) {
        if (o->type == SLEEP_OPTION_BOOL)
                return g_strdup("true, false");
        if (o->type == SLEEP_OPTION_UINT)
                return g_strdup_printf("%u to %u", o->min, o->max);
        return g_strjoinv(", ", (char **) o->words);
}

static char *render_options(void) {
        GString *s = g_string_new("| option | type | fridgectl | values | applies | meaning |\n"
                                  "|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *o = &sleep_options[i];
                g_autofree char *values = option_values(o);
                g_autoptr(GString) applies = g_string_new(o->only_kind ? o->only_kind : "all kinds");
                if (o->requires)
                        g_string_append_printf(applies, ", with %s", o->requires);
                g_string_append_printf(s, "| `%s` | `%c` | `--%s%s%s` | %s | %s | %s |\n", o->name, (char) o->type,
                                       o->flag, o->metavar ? "=" : "", o->metavar ? o->metavar : "", values,
                                       applies->str, o->help);
        }
        return g_string_free(s, FALSE);
}

static char *render_config(void) {
        GString *s = g_string_new("| key | takes | default | meaning |\n|---|---|---|---|\n");
        for (size_t i = 0; i < config_keys_count; i++) {
                const ConfigKey *k = &config_keys[i];
                g_autofree char *takes = config_key_expected(k);
                g_string_append_printf(s, "| `[%s] %s=` | %s | `%s` | %s |\n", k->group, k->name, takes,
                                       k->default_value && *k->default_value ? k->default_value : "(empty)",
                                       k->help);
        }
        return g_string_free(s, FALSE);
}

typedef struct Section {
        const char *name;
        char *(*render)(void);
} Section;

static const Section sections[] = {
        { "errors", render_errors },
        { "states", render_states },
        { "sleep-options", render_options },
        { "config-keys", render_config },
};

/* The text between the section's markers, or NULL without them */
static char *section_text(const char *doc, const char *name, gsize *ret_start, gsize *ret_end) {
        g_autofree char *begin = g_strdup_printf("<!-- BEGIN GENERATED %s -->\n", name);
        g_autofree char *end = g_strdup_printf("<!-- END GENERATED %s -->", name);
        const char *a = strstr(doc, begin);
        const char *b = a ? strstr(a, end) : NULL;
        if (!a || !b)
                return NULL;
        a += strlen(begin);
        *ret_start = (gsize) (a - doc);
        *ret_end = (gsize) (b - doc);
        return g_strndup(a, (gsize) (b - a));
}

static char *doc_path(void) {
        const char *src = g_getenv("FRIDGE_SOURCE_DIR");
        if (!src)
                g_error("FRIDGE_SOURCE_DIR is not set (meson sets it)");
        return g_build_filename(src, "docs", "ARCHITECTURE.md", NULL);
}

static char *read_doc(void) {
        g_autofree char *path = doc_path();
        char *text = NULL;
        g_autoptr(GError) e = NULL;
        if (!g_file_get_contents(path, &text, NULL, &e))
                g_error("%s", e->message);
        return text;
}

static void test_section(gconstpointer data) {
        const Section *s = data;
        g_autofree char *doc = read_doc();
        gsize a, b;
        g_autofree char *have = section_text(doc, s->name, &a, &b);
        if (!have)
                g_error("docs/ARCHITECTURE.md has no GENERATED %s section", s->name);
        g_autofree char *want = s->render();
        if (strcmp(have, want) != 0)
                g_error("docs/ARCHITECTURE.md's %s section disagrees with the code; run "
                        "tests/unit/test-architecture --write docs/ARCHITECTURE.md. It should read:\n%s",
                        s->name, want);
}

/* Every source file of the daemon, of common/, agent/ and hibernate/ is placed in the map */
static void test_module_map(void) {
        g_autofree char *doc = read_doc();
        static const char *const dirs[] = { "common", "daemon/util", "daemon/config", "daemon/kernel", "daemon/cgroup",
                                            "daemon/classify", "daemon/manager", "daemon/bus", "agent",
                                            "hibernate" };
        unsigned files = 0;
        for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
                g_autofree char *path = g_build_filename(g_getenv("FRIDGE_SOURCE_DIR"), dirs[i], NULL);
                g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
                g_assert_nonnull(d);
                g_autofree char *folder = g_strdup_printf("%s/", strrchr(dirs[i], '/') ? strrchr(dirs[i], '/') + 1
                                                                                       : dirs[i]);
                if (!strstr(doc, folder))
                        g_error("the module map does not name the folder %s", dirs[i]);
                for (const char *n; (n = g_dir_read_name(d));) {
                        if (!g_str_has_suffix(n, ".c"))
                                continue;
                        g_autofree char *stem = g_strndup(n, strlen(n) - 2);
                        if (!strstr(doc, stem))
                                g_error("the module map does not name %s/%s", dirs[i], n);
                        files++;
                }
        }
        g_assert_cmpuint(files, >, 30);
}

static int write_doc(const char *path) {
        g_autofree char *doc = NULL;
        g_autoptr(GError) e = NULL;
        if (!g_file_get_contents(path, &doc, NULL, &e)) {
                g_printerr("%s\n", e->message);
                return 1;
        }
        for (size_t i = 0; i < G_N_ELEMENTS(sections); i++) {
                gsize a, b;
                g_autofree char *have = section_text(doc, sections[i].name, &a, &b);
                if (!have) {
                        g_printerr("%s has no GENERATED %s section\n", path, sections[i].name);
                        return 1;
                }
                g_autofree char *want = sections[i].render();
                g_autofree char *head = g_strndup(doc, a);
                char *next = g_strconcat(head, want, doc + b, NULL);
                g_free(doc);
                doc = next;
        }
        if (!g_file_set_contents(path, doc, -1, &e)) {
                g_printerr("%s\n", e->message);
                return 1;
        }
        return 0;
}

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "--write") == 0)
                return write_doc(argv[2]);
        g_test_init(&argc, &argv, NULL);
        for (size_t i = 0; i < G_N_ELEMENTS(sections); i++) {
                g_autofree char *name = g_strdup_printf("/architecture/%s", sections[i].name);
                g_test_add_data_func(name, &sections[i], test_section);
        }
        g_test_add_func("/architecture/module-map", test_module_map);
        return g_test_run();
}
