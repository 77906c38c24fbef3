/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Config fuzz: 1,000 seeded mutations of a good fridge.conf and a good
 * classes.d file (byte flips, lines deleted or doubled, bad groups, keys and
 * values, huge values, NUL bytes, invalid UTF-8, a missing '=', truncation),
 * each written to a file and loaded the way fridged loads it. Each input
 * that is refused in part must say so with "PATH:LINE:"; what is left must
 * be a sane configuration (defaults for what was bad). Then a few of the
 * worst go to a real fridged, which must start and run a dry-run cycle.
 *
 *   test-config-fuzz [SEED]            (or FUZZ_SEED)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "classes.h"
#include "cgroups.h"
#include "config.h"
#include "harness.h"

#define DEFAULT_SEED 20050401u
#define INPUTS 1000u
#define WORST_KEPT 4u

static const char good_config[] =
        "# fridge.conf\n"
        "[Sleep]\n"
        "Driver=direct\n"
        "MemSleep=deep\n"
        "HibernateMode=platform\n"
        "ResumeDevice=/dev/vda2\n"
        "Retries=2\n"
        "RetryDelayMs=100\n"
        "\n"
        "[Flush]\n"
        "TimeoutMs=30000\n"
        "OnTimeout=continue\n"
        "[Freeze]\n"
        "Roots=user.slice;machine.slice\n"
        "TimeoutMs=10000\n"
        "[Delay]\n"
        "TimeoutMs=500\n"
        "[TuxOnIce]\n"
        "ImageSizeLimit=0\n"
        "Compressor=lzo\n"
        "EnableEscape=yes\n";

static const char good_classes[] =
        "# classes\n"
        "[Early]\n"
        "Units=firefox.service;app-*.scope\n"
        "[Late]\n"
        "Units=sshfs@*.service\n"
        "Cgroups=user.slice/*/backup-[0-9].scope\n"
        "[NoFreeze]\n"
        "Units=keep.service\n";

typedef struct Fuzz {
        GRand *rand;
        char *dir;
        int log_fd;             /* stderr goes here while an input loads */
        unsigned rejected, rejected_with_line, accepted, accepted_but_warned, insane;
        GPtrArray *worst_config, *worst_classes; /* NUL-free refused texts, most problems first */
} Fuzz;

static unsigned pick(Fuzz *f, unsigned n) {
        return (unsigned) g_rand_int_range(f->rand, 0, (gint32) n);
}

/* ---- mutations ---- */

/* [start, end) of a random line */
static void random_line(Fuzz *f, const GByteArray *t, guint *start, guint *end) {
        guint at = t->len ? pick(f, t->len) : 0;
        *start = at;
        while (*start > 0 && t->data[*start - 1] != '\n')
                (*start)--;
        *end = at;
        while (*end < t->len && t->data[*end] != '\n')
                (*end)++;
        if (*end < t->len)
                (*end)++;
}

static void insert(GByteArray *t, guint at, const void *bytes, guint n) {
        g_byte_array_set_size(t, t->len + n);
        memmove(t->data + at + n, t->data + at, t->len - n - at);
        memcpy(t->data + at, bytes, n);
}

static const char *const bad_lines[] = {
        "[Sleep\n", "[]\n", "[Nope]\n", "[Sleep]]\n", "[Sl\xff\x65\x65p]\n", "Nope=1\n", "=value\n", "Retries\n",
        "Retries[de]=3\n", "Units[de]=x.service\n", "[Late]\nUnits=\n", "[Late]\nCgroups=/abs;../up\n",
        "[Early]\nUnits=a/b.service\n", "[Early]\nUnits=[oops\n", "  \t\n", "#\xff\n", "[Freeze]\nRoots=a//b\n",
};

static const char *const bad_values[] = {
        "", "-1", "99999999999999999999", "deep;s2idle", "\xff\xfe", "../..", "a\\", "[", "0x10", " 5 ", "1e3",
        "4294967296", "-3", "\\", "yes;no", "LZO", "a\\nb", "\xc3", "\t",
};

static void mutate_value(Fuzz *f, GByteArray *t) {
        guint s, e;
        random_line(f, t, &s, &e);
        const guint8 *eq = memchr(t->data + s, '=', e - s);
        if (!eq)
                return;
        guint at = (guint) (eq - t->data) + 1, line_end = e > at && t->data[e - 1] == '\n' ? e - 1 : e;
        g_byte_array_remove_range(t, at, line_end - at);
        if (pick(f, 12) == 0) {
                g_autofree char *huge = g_strnfill(pick(f, 2) ? 65536 : 1024 * 1024, 'x');
                insert(t, at, huge, (guint) strlen(huge));
        } else {
                const char *v = bad_values[pick(f, G_N_ELEMENTS(bad_values))];
                insert(t, at, v, (guint) strlen(v));
        }
}

static void mutate(Fuzz *f, GByteArray *t) {
        guint s, e, at = t->len ? pick(f, t->len) : 0;
        static const char nul = '\0', bad_utf8[] = "\xed\xa0\x80\xff";
        const char *line;
        switch (pick(f, 10)) {
        case 0: if (t->len) t->data[at] ^= (guint8) (1u << pick(f, 8)); break;
        case 1: random_line(f, t, &s, &e); g_byte_array_remove_range(t, s, e - s); break;
        case 2: { /* a copy: insert() may move t->data */
                random_line(f, t, &s, &e);
                g_autofree guint8 *copy = g_memdup2(t->data + s, e - s);
                insert(t, e, copy, e - s);
                break;
        }
        case 3: random_line(f, t, &s, &e);
                line = bad_lines[pick(f, G_N_ELEMENTS(bad_lines))];
                insert(t, s, line, (guint) strlen(line)); break;
        case 4: case 5: mutate_value(f, t); break;
        case 6: insert(t, at, &nul, 1); break;
        case 7: insert(t, at, bad_utf8, 1 + pick(f, 4)); break;
        case 8: random_line(f, t, &s, &e);
                for (guint i = s; i < e; i++)
                        if (t->data[i] == '=') {
                                g_byte_array_remove_index(t, i);
                                break;
                        }
                break;
        default: g_byte_array_set_size(t, at); break;
        }
}

/* ---- loading and judging ---- */

static void capture_begin(Fuzz *f, int *saved) {
        fflush(stderr);
        g_assert_cmpint(ftruncate(f->log_fd, 0), ==, 0);
        g_assert_cmpint(lseek(f->log_fd, 0, SEEK_SET), ==, 0);
        *saved = dup(STDERR_FILENO);
        g_assert_cmpint(dup2(f->log_fd, STDERR_FILENO), ==, STDERR_FILENO);
}

static char *capture_end(Fuzz *f, int saved) {
        fflush(stderr);
        g_assert_cmpint(dup2(saved, STDERR_FILENO), ==, STDERR_FILENO);
        close(saved);
        off_t n = lseek(f->log_fd, 0, SEEK_END);
        char *text = g_malloc0((size_t) n + 1);
        g_assert_cmpint(pread(f->log_fd, text, (size_t) n, 0), ==, n);
        return text;
}

/* Every message line names the file and a line (from 1) in it */
static bool every_message_has_line(const char *log, const char *path) {
        g_autofree char *prefix = g_strdup_printf("%s:", path);
        g_auto(GStrv) lines = g_strsplit(log, "\n", -1);
        unsigned n = 0;
        for (char **l = lines; *l; l++) {
                if (!**l || g_str_has_prefix(*l, "Reading "))
                        continue;
                const char *p = strstr(*l, prefix);
                char *end;
                if (!p || g_ascii_strtoull(p + strlen(prefix), &end, 10) == 0 || *end != ':')
                        return false;
                n++;
        }
        return n > 0;
}

/* What loaded is within the documented ranges: the bad parts fell back */
static bool config_is_sane(const Config *c) {
        static const char *const mem_sleep[] = { "s2idle", "shallow", "deep", NULL };
        bool ok = c->driver <= DRIVER_LOGIND && c->retries <= 10 && c->retry_delay_ms <= 60000 &&
                  c->flush_timeout_ms >= FLUSH_TIMEOUT_MIN_MS && c->flush_timeout_ms <= FLUSH_TIMEOUT_MAX_MS &&
                  c->freeze_timeout_ms >= FREEZE_TIMEOUT_MIN_MS && c->freeze_timeout_ms <= FREEZE_TIMEOUT_MAX_MS &&
                  c->delay_timeout_ms <= DELAY_TIMEOUT_MAX_MS && c->hibernate_mode &&
                  (!c->mem_sleep || g_strv_contains(mem_sleep, c->mem_sleep)) &&
                  (!c->resume_device || g_utf8_validate(c->resume_device, -1, NULL));
        for (char **r = c->freeze_roots; ok && r && *r; r++)
                ok = cgroups_path_is_valid(*r) && g_utf8_validate(*r, -1, NULL);
        return ok;
}

static bool rules_are_sane(const ClassRules *r) {
        for (guint i = 0; i < r->rules->len; i++) {
                const ClassRule *rule = r->rules->pdata[i];
                if (!g_utf8_validate(rule->glob, -1, NULL) || !*rule->glob || rule->glob[0] == '/')
                        return false;
        }
        return true;
}

/* Loads `t` as DIR/NAME the way fridged does; returns the problems counted */
static unsigned load(Fuzz *f, bool classes, const GByteArray *t, char **ret_log, char **ret_path, bool *sane) {
        g_autofree char *sub = g_build_filename(f->dir, classes ? "classes.d" : "conf", NULL);
        char *path = g_build_filename(sub, classes ? "fuzz.conf" : "fridge.conf", NULL);
        g_assert_true(g_file_set_contents(path, (const char *) t->data, t->len, NULL));
        unsigned problems = 0;
        int saved;
        capture_begin(f, &saved);
        if (classes) {
                g_autoptr(ClassRules) rules = NULL;
                const char *const dirs[] = { sub, NULL };
                g_assert_cmpint(class_rules_load(dirs, &rules, &problems), ==, 0);
                *sane = rules_are_sane(rules);
        } else {
                g_autoptr(Config) c = NULL;
                g_assert_cmpint(config_load((char *[]) { sub, NULL }, &c, &problems), ==, 0);
                *sane = config_is_sane(c);
        }
        *ret_log = capture_end(f, saved);
        *ret_path = path;
        return problems;
}

typedef struct Worst {
        unsigned problems;
        char *text;
} Worst;

static void worst_free(gpointer p) {
        Worst *w = p;
        g_free(w->text);
        g_free(w);
}

static void keep_worst(GPtrArray *worst, const GByteArray *t, unsigned problems) {
        if (memchr(t->data, '\0', t->len) || t->len > 4096)
                return; /* the harness writes C strings; small ones read well in the log */
        Worst *w = g_new0(Worst, 1);
        w->problems = problems;
        w->text = g_strndup((const char *) t->data, t->len);
        g_ptr_array_add(worst, w);
}

static gint more_problems_first(gconstpointer a, gconstpointer b) {
        const Worst *x = *(Worst *const *) a, *y = *(Worst *const *) b;
        return (int) y->problems - (int) x->problems;
}

static void fuzz_one(Fuzz *f, unsigned i) {
        bool classes = i % 2;
        const char *base = classes ? good_classes : good_config;
        g_autoptr(GByteArray) t = g_byte_array_new();
        g_byte_array_append(t, (const guint8 *) base, (guint) strlen(base));
        for (unsigned n = 1 + pick(f, 3); n > 0; n--)
                mutate(f, t);

        g_autofree char *log = NULL, *path = NULL;
        bool sane;
        unsigned problems = load(f, classes, t, &log, &path, &sane);
        if (!sane) {
                f->insane++;
                g_printerr("input %u (%s) left a configuration out of range:\n%.*s\n", i, path, (int) MIN(t->len, 2000),
                           (const char *) t->data);
        }
        if (problems == 0 && memchr(t->data, '\0', t->len)) {
                f->insane++; /* GKeyFile stops at a NUL: the rest would be lost without a word */
                g_printerr("input %u (%s) with a NUL byte was accepted\n", i, path);
        }
        if (problems == 0) {
                f->accepted++;
                if (*log && !g_str_has_prefix(log, "Reading ") ) {
                        f->accepted_but_warned++;
                        g_printerr("input %u accepted but warned: %s\n", i, log);
                }
                return;
        }
        f->rejected++;
        if (every_message_has_line(log, path))
                f->rejected_with_line++;
        else
                g_printerr("input %u (%s): a message without PATH:LINE:\n%s\n", i, path, log);
        keep_worst(classes ? f->worst_classes : f->worst_config, t, problems);
}

/* ---- a real fridged on the worst ones ---- */

static const char *const fakesys_args[] = { "--sleep-ms=10", NULL };
static const char *const proc_files[] = { "swaps", "Filename\tType\tSize\tUsed\tPriority\n", NULL };

static void run_fridged(const char *config, const char *classes) {
        HarnessOptions o = { .fakesys_args = fakesys_args, .proc_files = proc_files, .config = config,
                             .classes = classes };
        g_autoptr(Harness) h = harness_new(&o);
        g_autofree char *err = NULL, *msg = NULL, *result = NULL;
        uint64_t id = 0;
        if (harness_sleep(h, "suspend", &id, &err, &msg, "dry-run", "b", 1, NULL) != 0) {
                harness_dump_fridged_log(h);
                g_error("Sleep(dry-run) refused: %s: %s", err, msg);
        }
        g_assert_true(harness_wait_finished(h, id, 30000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "dry-run");
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        g_assert_nonnull(strstr(log, h->conf_dir));     /* it said which file was bad */
        g_assert_cmpint(harness_stop(h), ==, 0);
}

static unsigned seed_arg;

static void test_config_fuzz(void) {
        g_autofree char *tmpl = g_build_filename(g_get_tmp_dir(), "fridge-config-fuzz-XXXXXX", NULL);
        Fuzz f = { .rand = g_rand_new_with_seed(seed_arg), .dir = g_strdup(g_mkdtemp(tmpl)),
                   .worst_config = g_ptr_array_new_with_free_func(worst_free),
                   .worst_classes = g_ptr_array_new_with_free_func(worst_free) };
        g_autofree char *log_path = g_build_filename(f.dir, "log", NULL);
        g_autofree char *conf = g_build_filename(f.dir, "conf", NULL);
        g_autofree char *classes = g_build_filename(f.dir, "classes.d", NULL);
        g_assert_cmpint(g_mkdir_with_parents(conf, 0755), ==, 0);
        g_assert_cmpint(g_mkdir_with_parents(classes, 0755), ==, 0);
        f.log_fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        g_assert_cmpint(f.log_fd, >=, 0);

        for (unsigned i = 0; i < INPUTS; i++)
                fuzz_one(&f, i);

        g_ptr_array_sort(f.worst_config, more_problems_first);
        g_ptr_array_sort(f.worst_classes, more_problems_first);
        unsigned ran = 0;
        if (harness_skip_reason() == NULL)
                for (; ran < WORST_KEPT && ran < f.worst_config->len && ran < f.worst_classes->len; ran++)
                        run_fridged(((Worst *) f.worst_config->pdata[ran])->text,
                                    ((Worst *) f.worst_classes->pdata[ran])->text);

        printf("FIGURE: config-fuzz seed=%u inputs=%u rejected-with-path-and-line=%u/%u accepted=%u "
               "insane=%u crashes=0; fridged ran a dry-run cycle on %u of the worst pairs\n", seed_arg, INPUTS,
               f.rejected_with_line, f.rejected, f.accepted, f.insane, ran);
        fflush(stdout);
        g_assert_cmpuint(f.rejected_with_line, ==, f.rejected);
        g_assert_cmpuint(f.insane, ==, 0);
        g_assert_cmpuint(f.accepted_but_warned, ==, 0);

        close(f.log_fd);
        g_autofree char *rm = g_strdup_printf("rm -rf '%s'", f.dir);
        g_assert_cmpint(system(rm), ==, 0);
        g_ptr_array_unref(f.worst_config);
        g_ptr_array_unref(f.worst_classes);
        g_free(f.dir);
        g_rand_free(f.rand);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        const char *s = argc > 1 ? argv[1] : g_getenv("FUZZ_SEED");
        seed_arg = s && *s ? (unsigned) g_ascii_strtoull(s, NULL, 10) : DEFAULT_SEED;
        printf("# seed %u (again: FUZZ_SEED=%u %s)\n", seed_arg, seed_arg, argv[0]);
        g_test_add_func("/stress/config-fuzz", test_config_fuzz);
        return g_test_run();
}
