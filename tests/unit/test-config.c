/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <errno.h>
#include <glib/gstdio.h>

#include "cgroups.h"
#include "config.h"
#include "fridge-limits.h"
#include "config-keys.h"
#include "keyfile.h"
#include "log.h"
#include "systemd-sleep.h"
#include "testdir.h"

/* config_new_default() as an expression */
static Config *defaults(void) {
        Config *c = NULL;
        g_assert_cmpint(config_new_default(&c), ==, 0);
        return c;
}

static void test_defaults(void) {
        g_autoptr(Config) c = defaults();
        g_assert_cmpuint(c->flush_timeout_ms, ==, 30000);
        g_assert_cmpuint(c->freeze_timeout_ms, ==, 10000);
        g_assert_cmpstr(c->hibernate_mode, ==, "platform");
        g_assert_null(c->mem_sleep);
        g_assert_cmpstr(c->freeze_roots[0], ==, "user.slice");
        g_assert_cmpint(c->flush_on_timeout, ==, FLUSH_ON_TIMEOUT_FAIL);
}

static void test_values(void) {
        g_autoptr(Config) c = defaults();
        unsigned problems = config_apply_text(c, "t.conf",
                                              "[Sleep]\nMemSleep=deep\nHibernateMode=shutdown\n"
                                              "[Flush]\nTimeoutMs=500\nOnTimeout=continue\n"
                                              "[Freeze]\nRoots=user.slice; machine.slice\nTimeoutMs=2000\n");
        g_assert_cmpuint(problems, ==, 0);
        g_assert_cmpstr(c->mem_sleep, ==, "deep");
        g_assert_cmpstr(c->hibernate_mode, ==, "shutdown");
        g_assert_cmpuint(c->flush_timeout_ms, ==, 500);
        g_assert_cmpint(c->flush_on_timeout, ==, FLUSH_ON_TIMEOUT_CONTINUE);
        g_assert_cmpstr(c->freeze_roots[1], ==, "machine.slice");
        g_assert_cmpuint(c->freeze_timeout_ms, ==, 2000);
}

static void test_bad_values_keep_defaults(void) {
        g_autoptr(Config) c = defaults();
        /* each bad line is reported and skipped; the good one still applies */
        unsigned problems = config_apply_text(c, "bad.conf",
                                              "[Flush]\nTimeoutMs=abc\nOnTimeout=maybe\n"
                                              "[Sleep]\nMemSleep=deeper\nRetries=3\n"
                                              "[Freeze]\nRoots=../etc\nTimeoutMs=1\n"
                                              "[Bogus]\nKey=1\n");
        g_assert_cmpuint(problems, ==, 6);
        g_assert_cmpuint(c->flush_timeout_ms, ==, 30000);
        g_assert_cmpint(c->flush_on_timeout, ==, FLUSH_ON_TIMEOUT_FAIL);
        g_assert_null(c->mem_sleep);
        g_assert_cmpuint(c->retries, ==, 3);
        g_assert_cmpstr(c->freeze_roots[0], ==, "user.slice");
        g_assert_cmpuint(c->freeze_timeout_ms, ==, 10000);
}

static void test_hook_timeout(void) {
        g_autoptr(Config) c = defaults();
        g_assert_cmpuint(c->hook_timeout_ms, ==, HOOK_TIMEOUT_DEFAULT_MS);
        g_assert_cmpuint(config_apply_text(c, "h.conf", "[Sleep]\nHookTimeoutMs=2500\nDriver=logind\n"), ==, 0);
        g_assert_cmpuint(c->hook_timeout_ms, ==, 2500);
        g_assert_cmpint(c->driver, ==, DRIVER_LOGIND);
        /* below the floor: a typo must not thaw a sleeping machine at once */
        g_assert_cmpuint(config_apply_text(c, "h.conf", "[Sleep]\nHookTimeoutMs=500\n"), ==, 1);
        g_assert_cmpuint(c->hook_timeout_ms, ==, 2500);
        /* above systemd-sleep's own limit for hooks (90 s): the hook would be
         * killed while fridged still waited */
        g_assert_cmpuint(config_apply_text(c, "h.conf", "[Sleep]\nHookTimeoutMs=90000\n"), ==, 1);
        g_assert_cmpuint(c->hook_timeout_ms, ==, 2500);
        /* every layer of the hook inside the one around it, and the whole inside the budget */
        for (unsigned b = HOOK_TIMEOUT_MIN_MS; b <= HOOK_TIMEOUT_MAX_MS; b += 500) {
                unsigned s = hook_slack_ms(b);
                g_assert_cmpuint(hook_pre_wait_ms(b) + s, <=, hook_call_timeout_ms(b));
                g_assert_cmpuint(hook_call_timeout_ms(b) + s, <=, hook_deadline_ms(b, HOOK_QUERY_MS));
                g_assert_cmpuint(HOOK_QUERY_MS + hook_deadline_ms(b, HOOK_QUERY_MS) + s, ==, b);
                g_assert_cmpuint(hook_pre_wait_ms(b), >, 0);
        }
        g_assert_cmpuint(HOOK_TIMEOUT_MAX_MS, <, 90000);
}

static void test_tuxonice_defaults_keep_the_kernels(void) {
        g_autoptr(Config) c = defaults();
        g_assert_cmpint(c->tuxonice.image_size_limit, ==, TUXONICE_IMAGE_SIZE_LIMIT_UNSET);
        g_assert_null(c->tuxonice.compressor);
        g_assert_cmpint(c->tuxonice.enable_escape, ==, -1);
}

static void test_tuxonice_values(void) {
        g_autoptr(Config) c = defaults();
        unsigned problems = config_apply_text(c, "t.conf",
                                              "[TuxOnIce]\nImageSizeLimit=2048\nCompressor=lz4\nEnableEscape=yes\n");
        g_assert_cmpuint(problems, ==, 0);
        g_assert_cmpint(c->tuxonice.image_size_limit, ==, 2048);
        g_assert_cmpstr(c->tuxonice.compressor, ==, "lz4");
        g_assert_cmpint(c->tuxonice.enable_escape, ==, 1);

        /* TuxOnIce's own special limits, compression off, escape off */
        problems = config_apply_text(c, "u.conf", "[TuxOnIce]\nImageSizeLimit=-2\nCompressor=none\nEnableEscape=false\n");
        g_assert_cmpuint(problems, ==, 0);
        g_assert_cmpint(c->tuxonice.image_size_limit, ==, -2);
        g_assert_cmpstr(c->tuxonice.compressor, ==, "none");
        g_assert_cmpint(c->tuxonice.enable_escape, ==, 0);

        /* empty: back to the kernel's */
        problems = config_apply_text(c, "v.conf", "[TuxOnIce]\nImageSizeLimit=\nCompressor=\nEnableEscape=\n");
        g_assert_cmpuint(problems, ==, 0);
        g_assert_cmpint(c->tuxonice.image_size_limit, ==, TUXONICE_IMAGE_SIZE_LIMIT_UNSET);
        g_assert_null(c->tuxonice.compressor);
        g_assert_cmpint(c->tuxonice.enable_escape, ==, -1);
}

static const char tuxonice_bad_text[] = "[TuxOnIce]\n"
                                        "ImageSizeLimit=-3\n"
                                        "Compressor=LZO;rm\n"
                                        "EnableEscape=maybe\n"
                                        "Ratio=2\n";

static void test_tuxonice_bad_values_skipped(void) {
        g_autoptr(Config) c = defaults();
        g_assert_cmpuint(config_apply_text(c, "bad.conf", tuxonice_bad_text), ==, 4);
        g_assert_cmpuint(config_apply_text(c, "big.conf", "[TuxOnIce]\nImageSizeLimit=2147483648\n"), ==, 1);
        g_assert_cmpuint(config_apply_text(c, "long.conf",
                                           "[TuxOnIce]\nCompressor=a234567890123456789012345678901x\n"), ==, 1);
        g_assert_cmpuint(config_apply_text(c, "dash.conf", "[TuxOnIce]\nCompressor=-lzo\n"), ==, 1);
        g_assert_cmpint(c->tuxonice.image_size_limit, ==, TUXONICE_IMAGE_SIZE_LIMIT_UNSET);
        g_assert_null(c->tuxonice.compressor);
        g_assert_cmpint(c->tuxonice.enable_escape, ==, -1);
}

/* The warnings name the file and line an administrator has to fix */
static void test_tuxonice_bad_values_logged(void) {
        if (g_test_subprocess()) {
                log_set_max_level(LOG_WARNING);
                g_autoptr(Config) c = defaults();
                (void) config_apply_text(c, "/etc/fridge/fridge.conf", tuxonice_bad_text);
                return;
        }
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
        g_test_trap_assert_passed();
        g_test_trap_assert_stderr("*/etc/fridge/fridge.conf:2: [TuxOnIce] ImageSizeLimit=-3 is not valid*");
        g_test_trap_assert_stderr("*/etc/fridge/fridge.conf:3: [TuxOnIce] Compressor=LZO;rm is not valid*");
        g_test_trap_assert_stderr("*/etc/fridge/fridge.conf:4: [TuxOnIce] EnableEscape=maybe is not valid*");
        g_test_trap_assert_stderr("*/etc/fridge/fridge.conf:5: unknown key [TuxOnIce] Ratio*");
}

static void test_tuxonice_copy(void) {
        g_autoptr(Config) c = defaults();
        TuxOnIceConfig copy;
        g_assert_cmpuint(config_apply_text(c, "t.conf", "[TuxOnIce]\nCompressor=lzo\nImageSizeLimit=0\n"), ==, 0);
        config_tuxonice_copy(&copy, &c->tuxonice);
        g_assert_cmpstr(copy.compressor, ==, "lzo");
        g_assert_true(copy.compressor != c->tuxonice.compressor);
        g_assert_cmpint(copy.image_size_limit, ==, 0);
        config_tuxonice_clear(&copy);
        g_assert_null(copy.compressor);
}

static void test_syntax_error(void) {
        g_autoptr(Config) c = defaults();
        g_assert_cmpuint(config_apply_text(c, "syntax.conf", "[Flush\nTimeoutMs=500\n"), ==, 1);
        g_assert_cmpuint(c->flush_timeout_ms, ==, 30000);
}

static void test_keyfile_lines(void) {
        /* the lines administrators are pointed at */
        g_assert_cmpuint(keyfile_syntax_error_line("[Flush\nTimeoutMs=500\n"), ==, 1);
        g_assert_cmpuint(keyfile_syntax_error_line("# c\n[Flush]\nTimeoutMs=500\ngarbage\n"), ==, 4);
        g_assert_cmpuint(keyfile_syntax_error_line("[Flush]\nTimeoutMs=500\n"), ==, 0);
        const char *text = "[Sleep]\nRetries=1\n[Flush]\nTimeoutMs=1\n TimeoutMs = 2\n";
        g_assert_cmpuint(keyfile_find_line(text, "Flush", "TimeoutMs"), ==, 5); /* the last one wins */
        g_assert_cmpuint(keyfile_find_line(text, "Flush", NULL), ==, 3);
        g_assert_cmpuint(keyfile_find_line(text, "Sleep", "TimeoutMs"), ==, 0);
}

/* Lines GKeyFile refuses that the config fuzzer found reported as line 0 */
static void test_keyfile_lines_fuzz_found(void) {
        g_assert_cmpuint(keyfile_syntax_error_line("[Sleep]]\nRetries=1\n"), ==, 1);
        g_assert_cmpuint(keyfile_syntax_error_line("[Flush]\nTimeoutMs=1\n[]\n"), ==, 3);
        g_assert_cmpuint(keyfile_syntax_error_line("[Flush]\nTimeout]s=1\n"), ==, 2);
        g_assert_cmpuint(keyfile_syntax_error_line("[Flush]\nTimeoutMs=1"), ==, 0);
        g_assert_cmpuint(keyfile_syntax_error_line("Retries=1"), ==, 1);
        g_assert_cmpuint(keyfile_nul_line("a\nb\nc\0d", 7), ==, 3);
        g_assert_cmpuint(keyfile_nul_line("a\nb", 3), ==, 0);
}

/* A NUL byte made GKeyFile stop reading without a word; invalid UTF-8 in
 * ResumeDevice= was taken as it was */
static void test_nul_and_resume_device(void) {
        g_autofree char *dir = g_dir_make_tmp("test-config-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, "fridge.conf", NULL);
        g_assert_true(g_file_set_contents(path, "[Sleep]\nRetries=3\n\0[Flush]\nTimeoutMs=1\n", 40, NULL));
        g_autoptr(Config) c = NULL;
        unsigned problems = 0;
        if (g_test_subprocess()) {
                log_set_max_level(LOG_WARNING);
                config_load((char *[]) { dir, NULL }, &c, &problems);
                g_assert_cmpuint(problems, ==, 1);
                g_assert_cmpuint(c->retries, ==, 0); /* the default: the file was ignored */
                g_autoptr(Config) d = defaults();
                g_assert_cmpuint(config_apply_text(d, "r.conf", "[Sleep]\nResumeDevice=/dev/\xff\n"), ==, 1);
                g_assert_null(d->resume_device);
                return;
        }
        g_test_trap_subprocess(NULL, 0, 0);
        g_test_trap_assert_passed();
        g_test_trap_assert_stderr("*/fridge.conf:3: contains a NUL byte; file ignored*");
        g_test_trap_assert_stderr("*r.conf:2: [Sleep] ResumeDevice=(not shown) is not valid*");
        g_unlink(path);
        g_rmdir(dir);
}

static void test_cgroup_path(void) {
        g_assert_true(cgroups_path_is_valid("user.slice"));
        g_assert_true(cgroups_path_is_valid("user.slice/user-1000.slice"));
        g_assert_false(cgroups_path_is_valid("/user.slice"));
        g_assert_false(cgroups_path_is_valid("user.slice/../x"));
        g_assert_false(cgroups_path_is_valid("a//b"));
        g_assert_false(cgroups_path_is_valid(""));
        g_assert_false(cgroups_path_is_valid("./a"));
}

static void write_file(const char *dir, const char *name, const char *text) {
        g_autofree char *p = g_build_filename(dir, name, NULL);
        g_assert_true(g_file_set_contents(p, text, -1, NULL));
}

static void test_dropins_in_order(void) {
        g_autofree char *dir = g_dir_make_tmp("fridge-config-XXXXXX", NULL);
        g_autofree char *dropins = g_build_filename(dir, "fridge.conf.d", NULL);
        g_assert_cmpint(g_mkdir(dropins, 0755), ==, 0);
        write_file(dir, "fridge.conf", "[Flush]\nTimeoutMs=1000\n[Freeze]\nTimeoutMs=3000\n");
        write_file(dropins, "20-b.conf", "[Flush]\nTimeoutMs=3000\n");
        write_file(dropins, "10-a.conf", "[Flush]\nTimeoutMs=2000\n");
        write_file(dropins, "30-ignored.txt", "[Flush]\nTimeoutMs=9000\n");

        g_autoptr(Config) c = NULL;
        unsigned problems = 99;
        g_assert_cmpint(config_load((char *[]) { dir, NULL }, &c, &problems), ==, 0);
        g_assert_cmpuint(problems, ==, 0);
        g_assert_cmpuint(c->flush_timeout_ms, ==, 3000); /* the last in name order wins */
        g_assert_cmpuint(c->freeze_timeout_ms, ==, 3000);

        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
        g_assert_cmpint(system(cmd), ==, 0);
}

static void test_missing_dir(void) {
        g_autoptr(Config) c = NULL;
        unsigned problems = 99;
        g_assert_cmpint(config_load((char *[]) { (char *) "/nonexistent/fridge", NULL }, &c, &problems), ==, 0);
        g_assert_cmpuint(problems, ==, 0);
        g_assert_cmpuint(c->flush_timeout_ms, ==, 30000);
}

/* A value no key of this type takes */
static const char *bad_value_for(const ConfigKey *k) {
        switch (k->type) {
        case CONFIG_KEY_U32:      return "4294967296";
        case CONFIG_KEY_MSEC:     return "30 fortnights";
        case CONFIG_KEY_I32:      return "2147483648";
        case CONFIG_KEY_ENUM:
        case CONFIG_KEY_CHOICE:   return "bogus";
        case CONFIG_KEY_ROOTS:    return "../etc";
        case CONFIG_KEY_NAME:     return "LZO;rm";
        case CONFIG_KEY_DEVICE:   return "/dev/\x01";
        case CONFIG_KEY_TRISTATE: return "maybe";
        default:                  g_assert_not_reached();
        }
}

/* Every key's default is a value its parser takes, and it is what
 * defaults() holds: applying it again changes nothing */
static void test_table_defaults(void) {
        g_autoptr(Config) c = defaults();
        for (size_t i = 0; i < config_keys_count; i++) {
                const ConfigKey *k = &config_keys[i];
                g_assert_true(config_key_find(k->group, k->name) == k);
                g_assert_true(k->help && *k->help);
                g_autofree char *text = g_strdup_printf("[%s]\n%s=%s\n", k->group, k->name, k->default_value);
                g_assert_cmpuint(config_apply_text(c, "d.conf", text), ==, 0);
        }
        g_autoptr(Config) d = defaults();
        g_assert_cmpint(c->driver, ==, d->driver);
        g_assert_cmpstr(c->hibernate_mode, ==, "platform");
        g_assert_cmpuint(c->retry_delay_ms, ==, 1000);
        g_assert_cmpuint(c->delay_timeout_ms, ==, 5000);
        g_assert_true(g_strv_equal((const char *const *) c->freeze_roots, (const char *const *) d->freeze_roots));
}

/* A bad value of any key is refused with the message its table line makes:
 * PATH:LINE: [Group] Key=value is not valid: expected ...; ignored */
static void test_table_messages(void) {
        if (g_test_subprocess()) {
                log_set_max_level(LOG_WARNING);
                for (size_t i = 0; i < config_keys_count; i++) {
                        const ConfigKey *k = &config_keys[i];
                        g_autoptr(Config) c = defaults();
                        g_autofree char *text = g_strdup_printf("# key %zu\n[%s]\n%s=%s\n", i, k->group, k->name,
                                                                bad_value_for(k));
                        g_assert_cmpuint(config_apply_text(c, "/etc/fridge/t.conf", text), ==, 1);
                }
                g_autoptr(Config) c = defaults();
                g_assert_cmpuint(config_apply_text(c, "/etc/fridge/t.conf", "[Sleep]\n\nMaxRetries=3\n"), ==, 1);
                return;
        }
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
        g_test_trap_assert_passed();
        for (size_t i = 0; i < config_keys_count; i++) {
                const ConfigKey *k = &config_keys[i];
                g_autofree char *expected = config_key_expected(k);
                g_autofree char *want = g_strdup_printf("*/etc/fridge/t.conf:3: [%s] %s=%s is not valid: expected %s; "
                                                        "ignored*", k->group, k->name,
                                                        config_key_shows_value(k) ? bad_value_for(k) : "(not shown)",
                                                        expected);
                g_test_trap_assert_stderr(want);
        }
        /* the wording the table makes, pinned for the generated kinds */
        g_test_trap_assert_stderr("*t.conf:3: [Sleep] Retries=4294967296 is not valid: expected a whole number "
                                  "from 0 to 10; ignored*");
        g_test_trap_assert_stderr("*t.conf:3: [Sleep] Driver=bogus is not valid: expected auto|direct|logind; "
                                  "ignored*");
        g_test_trap_assert_stderr("*t.conf:3: [Sleep] MemSleep=bogus is not valid: expected empty or "
                                  "s2idle|shallow|deep; ignored*");
        g_test_trap_assert_stderr("*t.conf:3: unknown key [Sleep] MaxRetries; ignored*");
}

/* Each whole-number key takes its bounds and refuses one past them */
static void test_table_ranges(void) {
        for (size_t i = 0; i < config_keys_count; i++) {
                const ConfigKey *k = &config_keys[i];
                if (k->type != CONFIG_KEY_U32 && k->type != CONFIG_KEY_MSEC && k->type != CONFIG_KEY_I32)
                        continue;
                g_autoptr(Config) c = defaults();
                const int64_t good[] = { k->min, k->max }, bad[] = { k->min - 1, k->max + 1 };
                for (size_t j = 0; j < 2; j++) {
                        g_autofree char *ok = g_strdup_printf("%" G_GINT64_FORMAT, good[j]);
                        g_autofree char *no = g_strdup_printf("%" G_GINT64_FORMAT, bad[j]);
                        g_assert_cmpint(config_key_apply(k, c, ok), ==, 0);
                        g_assert_cmpint(config_key_apply(k, c, no), ==, -EINVAL);
                }
        }
}

static char *sleep_states(const char *root, char **ret_first_of) {
        static const char *const offered[] = { "freeze", "mem", "disk", NULL };
        g_autoptr(SystemdSleepConf) sc = NULL;
        g_assert_cmpint(systemd_sleep_conf_load(root, &sc), ==, 0);
        g_free(*ret_first_of);
        *ret_first_of = g_strdup(systemd_sleep_suspend_state(sc, (char *const *) offered));
        g_autofree char *list = g_strjoinv(" ", sc->suspend_state);
        return g_strdup_printf("%s (%s)", list, sc->suspend_state_origin ? sc->suspend_state_origin + strlen(root) : "default");
}

/* systemd's own rules for sleep.conf: the first main file found (etc before
 * usr/lib), then the drop-ins by name, a name in etc hiding usr/lib's, and
 * an empty assignment back to the default */
static void test_systemd_sleep_conf(void) {
        g_autofree char *root = g_dir_make_tmp("fridge-sleep-conf-XXXXXX", NULL);
        g_autofree char *first = NULL;
        g_autofree char *none = sleep_states(root, &first);
        g_assert_cmpstr(none, ==, "mem standby freeze (default)");
        g_assert_cmpstr(first, ==, "mem"); /* standby is not offered, mem is first */

        testdir_put(root, "usr/lib/systemd/sleep.conf", "[Sleep]\nSuspendState=disk\n");
        testdir_put(root, "etc/systemd/sleep.conf", "; admin (GKeyFile refused this comment)\n[Sleep]\nSuspendState=standby  freeze\n");
        g_autofree char *main_only = sleep_states(root, &first);
        g_assert_cmpstr(main_only, ==, "standby freeze (/etc/systemd/sleep.conf)");
        g_assert_cmpstr(first, ==, "freeze");

        testdir_put(root, "usr/lib/systemd/sleep.conf.d/10-a.conf", "[Sleep]\nSuspendState=disk\n");
        testdir_put(root, "etc/systemd/sleep.conf.d/10-a.conf", "[Sleep]\nAllowSuspend=yes\n");
        testdir_put(root, "run/systemd/sleep.conf.d/05-b.conf", "[Sleep]\nSuspendState=mem\n");
        g_autofree char *hidden = sleep_states(root, &first);
        g_assert_cmpstr(hidden, ==, "mem (/run/systemd/sleep.conf.d/05-b.conf)");

        testdir_put(root, "usr/lib/systemd/sleep.conf.d/20-c.conf", "[Sleep]\nSuspendState=\n");
        testdir_put(root, "usr/lib/systemd/sleep.conf.d/30-bad.conf", "not a key file\n");
        g_autofree char *reset = sleep_states(root, &first);
        g_assert_cmpstr(reset, ==, "mem standby freeze (default)");
        testdir_remove(root);
}

static char *sleep_text(const char *text) {
        g_autoptr(SystemdSleepConf) sc = g_new0(SystemdSleepConf, 1);
        int r = systemd_sleep_conf_apply_text(sc, text, "t.conf");
        g_autofree char *list = sc->suspend_state ? g_strjoinv(" ", sc->suspend_state) : g_strdup("-");
        return g_strdup_printf("%d %s", r, list);
}

/* What systemd accepts and GKeyFile refused, which hid SuspendState= */
static void test_systemd_sleep_conf_syntax(void) {
        const char *const cases[][2] = {
                { "; an ini comment\n[Sleep]\nSuspendState=freeze\n", "0 freeze" },
                { "[Sleep]\nSuspendState=mem \\\n   freeze\n", "0 mem freeze" },
                { "[Sleep]\n  SuspendState = freeze  \n[Other]\nSuspendState=mem\n", "0 freeze" },
                { "[Sleep]\nSuspendState=freeze\nnot a line\nSuspendState=mem\n", "-22 freeze" },
                { "[Sleep\nSuspendState=freeze\n", "-22 -" },
                { "SuspendState=freeze\n", "0 -" },
                { "[Sleep]\nSuspendState=a\\", "0 a" },
                { "", "0 -" },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *got = sleep_text(cases[i][0]);
                if (!g_str_equal(got, cases[i][1]))
                        g_error("case %zu: \"%s\" gave \"%s\", not \"%s\"", i, cases[i][0], got, cases[i][1]);
        }
}

static bool allowed(const char *root, SystemdSleepOp op, char **ret_reason) {
        g_autoptr(SystemdSleepConf) sc = NULL;
        g_assert_cmpint(systemd_sleep_conf_load(root, &sc), ==, 0);
        g_free(*ret_reason);
        *ret_reason = NULL;
        return systemd_sleep_allowed(sc, op, ret_reason);
}

/* sleep.conf's Allow*= as systemd's sleep-config.c reads them: each yes
 * unless set to no; hybrid-sleep and suspend-then-hibernate, unset, need
 * both suspend and hibernation; the reason names the key and file:line */
static void test_systemd_sleep_allow(void) {
        g_autofree char *root = g_dir_make_tmp("fridge-sleep-allow-XXXXXX", NULL);
        g_autofree char *etc = g_build_filename(root, "etc", "systemd", NULL);
        g_autofree char *reason = NULL;
        g_assert_cmpint(g_mkdir_with_parents(etc, 0755), ==, 0);
        for (int op = 0; op < _SYSTEMD_SLEEP_OP_MAX; op++)
                g_assert_true(allowed(root, op, &reason));

        g_autofree char *conf = g_build_filename(etc, "sleep.conf", NULL);
        g_assert_true(g_file_set_contents(conf, "[Sleep]\n# no suspend here\nAllowSuspend=no\n"
                                                "AllowHibernation=maybe\n", -1, NULL));
        g_assert_false(allowed(root, SYSTEMD_SLEEP_SUSPEND, &reason));
        g_autofree char *want = g_strdup_printf("Sleep mode \"suspend\" is disabled by configuration "
                                                "(AllowSuspend=no in %s:3)", conf);
        g_assert_cmpstr(reason, ==, want);
        g_assert_true(allowed(root, SYSTEMD_SLEEP_HIBERNATE, &reason)); /* not a boolean: ignored */
        g_assert_false(allowed(root, SYSTEMD_SLEEP_HYBRID_SLEEP, &reason));
        g_assert_nonnull(strstr(reason, "\"hybrid-sleep\" is disabled by configuration (AllowSuspend=no in"));
        g_assert_false(allowed(root, SYSTEMD_SLEEP_SUSPEND_THEN_HIBERNATE, &reason));

        /* a drop-in says yes again, and allows hybrid-sleep of its own */
        g_autofree char *dropins = g_build_filename(root, "usr", "lib", "systemd", "sleep.conf.d", NULL);
        g_assert_cmpint(g_mkdir_with_parents(dropins, 0755), ==, 0);
        g_autofree char *d = g_build_filename(dropins, "50-x.conf", NULL);
        g_assert_true(g_file_set_contents(d, "[Sleep]\nAllowSuspend=YES\nAllowHybridSleep=no\n", -1, NULL));
        g_assert_true(allowed(root, SYSTEMD_SLEEP_SUSPEND, &reason));
        g_assert_false(allowed(root, SYSTEMD_SLEEP_HYBRID_SLEEP, &reason));
        g_assert_nonnull(strstr(reason, "(AllowHybridSleep=no in "));
        g_assert_true(allowed(root, SYSTEMD_SLEEP_SUSPEND_THEN_HIBERNATE, &reason));
        g_assert_cmpint(systemd_sleep_op_from_string("hybrid-sleep"), ==, SYSTEMD_SLEEP_HYBRID_SLEEP);
        g_autofree char *rm = g_strdup_printf("rm -rf '%s'", root);
        g_assert_cmpint(system(rm), ==, 0);
}

/* A time key takes systemd's time spans, and a bare number in ms as before */
static void test_time_keys(void) {
        g_autoptr(Config) c = defaults();
        g_assert_cmpuint(config_apply_text(c, "t.conf", "[Flush]\nTimeoutMs=1min 30s\n[Freeze]\nTimeoutMs=2s\n"
                                                         "[Delay]\nTimeoutMs=1500\n[Sleep]\nHookTimeoutMs=1min\n"), ==, 0);
        g_assert_cmpuint(c->flush_timeout_ms, ==, 90000);
        g_assert_cmpuint(c->freeze_timeout_ms, ==, 2000);
        g_assert_cmpuint(c->delay_timeout_ms, ==, 1500);
        g_assert_cmpuint(c->hook_timeout_ms, ==, 60000);
        if (g_test_subprocess()) {
                log_set_max_level(LOG_WARNING);
                g_assert_cmpuint(config_apply_text(c, "/etc/fridge/t.conf", "[Flush]\nTimeoutMs=2 fortnights\n"), ==, 1);
                return;
        }
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
        g_test_trap_assert_passed();
        g_test_trap_assert_stderr("*/etc/fridge/t.conf:2: [Flush] TimeoutMs=2 fortnights is not valid: expected a time "
                                  "span such as 500ms, 30s, 2min, 1h or \"1min 30s\" from 100ms to 1h (a bare number "
                                  "is milliseconds); ignored*");
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        log_set_max_level(LOG_ERR); /* the bad-input cases warn by design */
        g_test_add_func("/config/defaults", test_defaults);
        g_test_add_func("/config/values", test_values);
        g_test_add_func("/config/bad-values-keep-defaults", test_bad_values_keep_defaults);
        g_test_add_func("/config/hook-timeout", test_hook_timeout);
        g_test_add_func("/config/syntax-error", test_syntax_error);
        g_test_add_func("/config/tuxonice-defaults-keep-the-kernels", test_tuxonice_defaults_keep_the_kernels);
        g_test_add_func("/config/tuxonice-values", test_tuxonice_values);
        g_test_add_func("/config/tuxonice-bad-values-skipped", test_tuxonice_bad_values_skipped);
        g_test_add_func("/config/tuxonice-bad-values-logged", test_tuxonice_bad_values_logged);
        g_test_add_func("/config/tuxonice-copy", test_tuxonice_copy);
        g_test_add_func("/config/cgroup-path", test_cgroup_path);
        g_test_add_func("/config/keyfile-lines", test_keyfile_lines);
        g_test_add_func("/config/keyfile-lines-fuzz-found", test_keyfile_lines_fuzz_found);
        g_test_add_func("/config/nul-and-resume-device", test_nul_and_resume_device);
        g_test_add_func("/config/dropins-in-order", test_dropins_in_order);
        g_test_add_func("/config/missing-dir", test_missing_dir);
        g_test_add_func("/config/table-defaults", test_table_defaults);
        g_test_add_func("/config/table-messages", test_table_messages);
        g_test_add_func("/config/table-ranges", test_table_ranges);
        g_test_add_func("/config/systemd-sleep-conf", test_systemd_sleep_conf);
        g_test_add_func("/config/systemd-sleep-conf-syntax", test_systemd_sleep_conf_syntax);
        g_test_add_func("/config/systemd-sleep-allow", test_systemd_sleep_allow);
        g_test_add_func("/config/time-keys", test_time_keys);
        return g_test_run();
}
