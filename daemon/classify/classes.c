/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "classes.h"

#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "conf-files.h"
#include "keyfile.h"
#include "log.h"
#include "util.h"

static void class_rule_free(ClassRule *rule) {
        if (!rule)
                return;
        g_free(rule->glob);
        g_free(rule->arg_glob);
        g_free(rule->source);
        g_free(rule);
}

int class_rules_new(ClassRules **ret) {
        ClassRules *r = g_new0(ClassRules, 1);
        r->rules = g_ptr_array_new_with_free_func((GDestroyNotify) class_rule_free);
        *ret = r;
        return 0;
}

ClassRules *class_rules_free(ClassRules *r) {
        if (!r)
                return NULL;
        g_ptr_array_unref(r->rules);
        g_free(r);
        return NULL;
}

ClassRules *class_rules_copy(const ClassRules *r) {
        ClassRules *copy;
        (void) class_rules_new(&copy); /* cannot fail */
        for (guint i = 0; r && i < r->rules->len; i++) {
                const ClassRule *rule = r->rules->pdata[i];
                ClassRule *dup = g_new0(ClassRule, 1);
                *dup = (ClassRule) { .class = rule->class, .on = rule->on, .glob = g_strdup(rule->glob),
                                     .arg_glob = g_strdup(rule->arg_glob), .source = g_strdup(rule->source) };
                g_ptr_array_add(copy->rules, dup);
        }
        return copy;
}

bool class_glob_match(const char *glob, const char *s, bool path) {
        return fnmatch(glob, s, path ? FNM_PATHNAME : 0) == 0;
}

/* The group names of classes.d, in CgroupClass order. */
static const char *const group_names[_CLASS_MAX] = {
        [CLASS_EARLY] = "Early",
        [CLASS_LATE] = "Late",
        [CLASS_NOFREEZE] = "NoFreeze",
        [CLASS_UI] = "UI",
};

static CgroupClass class_of_group(const char *group) {
        for (int c = 0; c < _CLASS_MAX; c++)
                if (strcmp(group, group_names[c]) == 0)
                        return (CgroupClass) c;
        return _CLASS_INVALID;
}


/* Where a bracket expression is left open, fnmatch() quietly takes '['
 * literally: an administrator's typo would then never match. */
static bool glob_is_well_formed(const char *glob) {
        for (const char *p = glob; *p; p++) {
                if (*p == '\\') {
                        if (!*++p)
                                return false;
                } else if (*p == '[') {
                        const char *q = p + 1;
                        if (*q == '!' || *q == '^')
                                q++;
                        if (*q == ']')
                                q++; /* a leading ']' is a member, not the end */
                        q = strchr(q, ']');
                        if (!q)
                                return false;
                        p = q;
                }
        }
        return true;
}

static bool path_glob_is_valid(const char *glob) {
        if (glob[0] == '/')
                return false;
        g_auto(GStrv) parts = g_strsplit(glob, "/", -1);
        for (char **s = parts; *s; s++)
                if (strcmp(*s, "..") == 0)
                        return false;
        return true;
}

/* Why a glob is refused, or NULL when it is fine. */
static const char *glob_problem(const char *glob, ClassRuleOn on) {
        if (!g_utf8_validate(glob, -1, NULL))
                return "is not UTF-8";
        if (!glob_is_well_formed(glob))
                return "is not a valid glob (an open '[' or a trailing '\\')";
        if (on == RULE_ON_PATH && !path_glob_is_valid(glob))
                return "must be relative to the cgroup mount, without \"..\"";
        if (on == RULE_ON_UNIT && strchr(glob, '/'))
                return "is a unit name glob and cannot contain '/'";
        if (on == RULE_ON_PROCESS && strchr(glob, '/'))
                return "is a command or executable name glob (a basename) and cannot contain '/'";
        if (on == RULE_ON_COMMAND) {
                const char *space = strchr(glob, ' ');
                if (!space || !space[1 + strspn(space + 1, " ")])
                        return "is not NAME ARG (a command or executable name glob, a space, an argument glob)";
                if (memchr(glob, '/', (size_t) (space - glob)))
                        return "names a command or executable (a basename) that cannot contain '/'";
        }
        return NULL;
}

static const char *const key_names[_RULE_ON_MAX] = {
        [RULE_ON_UNIT] = "Units",
        [RULE_ON_PATH] = "Cgroups",
        [RULE_ON_PROCESS] = "Processes",
        [RULE_ON_COMMAND] = "Commands",
};

/* "Units=, Cgroups=, Processes= or Commands=", for messages */
static char *expected_keys(void) {
        GString *s = g_string_new(NULL);
        for (size_t i = 0; i < G_N_ELEMENTS(key_names); i++)
                g_string_append_printf(s, "%s%s=", i == 0 ? "" : i + 1 < G_N_ELEMENTS(key_names) ? ", " : " or ",
                                       key_names[i]);
        return g_string_free(s, FALSE);
}

static void warn_unknown_key(const char *path, unsigned line, const char *key, const char *group) {
        g_autofree char *expected = expected_keys();
        log_warning("%s:%u: unknown key %s in [%s] (expected %s); file skipped", path, line, key, group, expected);
}

/* g_key_file_get_keys() hides "Units[de]=": find such keys in the text, or
 * a typo there would pass unnoticed. */
static int check_localized_keys(const char *path, const char *text) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_autofree char *group = NULL;

        for (unsigned i = 0; lines[i]; i++) {
                g_autofree char *l = g_strstrip(g_strdup(lines[i]));
                if (keyfile_line_is_group(l)) {
                        g_free(group);
                        group = g_strndup(l + 1, strcspn(l + 1, "]"));
                } else if (keyfile_line_is_key_value(l) && memchr(l, '[', strcspn(l, "="))) {
                        g_autofree char *key = g_strstrip(g_strndup(l, strcspn(l, "=")));
                        warn_unknown_key(path, i + 1, key, group ? group : "");
                        return -EINVAL;
                }
        }
        return 0;
}

typedef struct FileContext {
        const char *path;
        const char *text;
        GPtrArray *rules; /* what the file adds, kept apart until all of it is good */
} FileContext;

static int add_key(FileContext *f, const char *group, CgroupClass class, const char *key, const char *value) {
        unsigned line = keyfile_find_line(f->text, group, key);
        int on = -1;

        for (size_t i = 0; i < G_N_ELEMENTS(key_names); i++)
                if (strcmp(key, key_names[i]) == 0)
                        on = (int) i;
        if (on < 0) {
                warn_unknown_key(f->path, line, key, group);
                return -EINVAL;
        }

        g_auto(GStrv) globs = g_strsplit(value, ";", -1);
        unsigned n_added = 0;
        for (char **g = globs; *g; g++) {
                g_strstrip(*g);
                if (!**g)
                        continue; /* "a; b;" is a list of two */
                const char *problem = glob_problem(*g, (ClassRuleOn) on);
                if (problem) {
                        log_warning("%s:%u: [%s] %s: \"%s\" %s; file skipped", f->path, line, group, key, *g,
                                    problem);
                        return -EINVAL;
                }
                ClassRule *rule = g_new0(ClassRule, 1);
                rule->class = class;
                rule->on = (ClassRuleOn) on;
                rule->glob = g_strdup(*g);
                if (on == RULE_ON_COMMAND) {
                        char *space = strchr(rule->glob, ' ');
                        rule->arg_glob = g_strdup(space + strspn(space, " "));
                        *space = '\0';
                }
                rule->source = g_strdup_printf("%s:%u", f->path, line);
                g_ptr_array_add(f->rules, rule);
                n_added++;
        }
        if (n_added == 0) {
                /* No reset semantics here: an empty list can only be a mistake */
                log_warning("%s:%u: [%s] %s= has no glob; file skipped", f->path, line, group, key);
                return -EINVAL;
        }
        return 0;
}

static int add_group(FileContext *f, GKeyFile *kf, const char *group) {
        CgroupClass class = class_of_group(group);
        if (class < 0) {
                log_warning("%s:%u: unknown group [%s] (expected [Early], [Late], [NoFreeze] or [UI]); file skipped",
                            f->path, keyfile_find_line(f->text, group, NULL), group);
                return -EINVAL;
        }

        g_auto(GStrv) keys = g_key_file_get_keys(kf, group, NULL, NULL);
        for (char **k = keys; k && *k; k++) {
                /* The raw value: backslashes are fnmatch escapes, not GKeyFile ones */
                g_autofree char *v = g_key_file_get_value(kf, group, *k, NULL);
                int r = add_key(f, group, class, *k, v ? v : "");
                if (r < 0)
                        return r;
        }
        return 0;
}

int class_rules_add_text(ClassRules *r, const char *path, const char *text) {
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_autoptr(GError) error = NULL;

        if (!g_key_file_load_from_data(kf, text, (gsize) -1, G_KEY_FILE_NONE, &error)) {
                unsigned line = keyfile_syntax_error_line(text);
                if (line > 0)
                        log_warning("%s:%u: %s; file skipped", path, line, error->message);
                else
                        log_warning("%s: %s; file skipped", path, error->message);
                return -EINVAL;
        }

        int e = check_localized_keys(path, text);
        if (e < 0)
                return e;

        g_autoptr(GPtrArray) rules = g_ptr_array_new_with_free_func((GDestroyNotify) class_rule_free);
        FileContext f = { .path = path, .text = text, .rules = rules };
        g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
        for (char **g = groups; *g; g++) {
                e = add_group(&f, kf, *g);
                if (e < 0)
                        return e;
        }

        /* All of the file is good: only now do its rules count */
        for (guint i = 0; i < rules->len; i++)
                g_ptr_array_add(r->rules, rules->pdata[i]);
        g_ptr_array_set_free_func(rules, NULL);
        return 0;
}

static int load_file(ClassRules *r, const char *path) {
        g_autofree char *text = NULL;
        g_autoptr(GError) error = NULL;

        gsize len;
        if (!g_file_get_contents(path, &text, &len, &error)) {
                log_warning("%s: cannot read: %s; file skipped", path, error->message);
                return -EIO;
        }
        unsigned nul = keyfile_nul_line(text, len);
        if (nul > 0) {
                log_warning("%s:%u: contains a NUL byte; file skipped", path, nul);
                return -EINVAL;
        }
        return class_rules_add_text(r, path, text);
}

int class_rules_load(const char *const *dirs, ClassRules **ret, unsigned *ret_problems) {
        g_autoptr(ClassRules) r = NULL;
        int k = class_rules_new(&r);
        if (k < 0)
                return k;
        _cleanup_(conf_files_freep) ConfFiles *files = NULL;
        k = conf_files_list((char *const *) dirs, NULL, NULL, &files);
        if (k < 0)
                return k;

        unsigned problems = 0;
        for (size_t i = 0; i < files->n; i++) {
                const ConfFile *f = &files->files[i];
                if (f->error < 0)
                        log_warning("%s: cannot list: %s; ignored", f->path, g_strerror(-f->error));
                if (f->error < 0 || (!f->masked && load_file(r, f->path) < 0))
                        problems++;
        }

        if (ret_problems)
                *ret_problems = problems;
        *ret = g_steal_pointer(&r);
        return 0;
}

static bool rule_matches(const ClassRule *rule, const char *cgroup_path, const char *unit) {
        if (rule->on == RULE_ON_PATH)
                return cgroup_path && class_glob_match(rule->glob, cgroup_path, true);
        if (rule->on == RULE_ON_UNIT)
                return unit && *unit && class_glob_match(rule->glob, unit, false);
        return false;
}

static bool rule_matches_name(const ClassRule *rule, const ClassProcess *p) {
        return (p->comm && class_glob_match(rule->glob, p->comm, false)) ||
               (p->exe && class_glob_match(rule->glob, p->exe, false));
}

static bool any_arg_matches(const char *glob, char *const *args) {
        for (char *const *a = args; a && *a; a++)
                if (class_glob_match(glob, *a, false))
                        return true;
        return false;
}

static bool rule_matches_process(const ClassRule *rule, const ClassProcess *p) {
        if (rule->on == RULE_ON_PROCESS)
                return rule_matches_name(rule, p);
        return rule->on == RULE_ON_COMMAND && rule_matches_name(rule, p) && any_arg_matches(rule->arg_glob, p->args);
}

bool class_rules_have_processes(const ClassRules *r) {
        for (guint i = 0; r && i < r->rules->len; i++) {
                ClassRuleOn on = ((const ClassRule *) r->rules->pdata[i])->on;
                if (on == RULE_ON_PROCESS || on == RULE_ON_COMMAND)
                        return true;
        }
        return false;
}

bool class_rules_want_args(const ClassRules *r, const ClassProcess *p) {
        for (guint i = 0; r && i < r->rules->len; i++) {
                const ClassRule *rule = r->rules->pdata[i];
                if (rule->on == RULE_ON_COMMAND && rule_matches_name(rule, p))
                        return true;
        }
        return false;
}

/* Whether a Processes= rule of `class` matches p */
static bool class_matches_process(const ClassRules *r, CgroupClass class, const ClassProcess *p) {
        for (guint i = 0; i < r->rules->len; i++) {
                const ClassRule *rule = r->rules->pdata[i];
                if (rule->class == class && rule_matches_process(rule, p))
                        return true;
        }
        return false;
}

bool class_rules_match_processes(const ClassRules *r, const ClassProcess *procs, size_t n_procs,
                                 CgroupClass *ret_class, const char **ret_source, size_t *ret_index,
                                 size_t *ret_n_class) {
        const ClassRule *best = NULL;
        size_t index = 0;

        for (guint i = 0; i < r->rules->len; i++) {
                const ClassRule *rule = r->rules->pdata[i];
                if ((rule->on != RULE_ON_PROCESS && rule->on != RULE_ON_COMMAND) || (best && rule->class <= best->class))
                        continue;
                for (size_t k = 0; k < n_procs; k++)
                        if (rule_matches_process(rule, &procs[k])) {
                                best = rule;
                                index = k;
                                break;
                        }
        }
        if (!best)
                return false;
        size_t n_class = 0;
        for (size_t k = 0; k < n_procs; k++)
                n_class += class_matches_process(r, best->class, &procs[k]);
        if (ret_class)
                *ret_class = best->class;
        if (ret_source)
                *ret_source = best->source;
        if (ret_index)
                *ret_index = index;
        if (ret_n_class)
                *ret_n_class = n_class;
        return true;
}

bool class_rules_match(const ClassRules *r, const char *cgroup_path, const char *unit, CgroupClass *ret_class,
                       const char **ret_source) {
        const ClassRule *best = NULL;

        for (guint i = 0; i < r->rules->len; i++) {
                const ClassRule *rule = r->rules->pdata[i];
                /* CgroupClass is ordered early < late < nofreeze < ui, which is the precedence;
                 * within a class the first rule in load order names the source. */
                if ((!best || rule->class > best->class) && rule_matches(rule, cgroup_path, unit))
                        best = rule;
        }
        if (!best)
                return false;
        if (ret_class)
                *ret_class = best->class;
        if (ret_source)
                *ret_source = best->source;
        return true;
}
