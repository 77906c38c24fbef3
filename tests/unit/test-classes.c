/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "classes.h"
#include "testdir.h"

/* Our log writes to stderr, not to GLib's logging: catch it in a file. */
typedef struct Capture {
        int saved_fd;
        char *path;
} Capture;

static void capture_begin(Capture *c) {
        g_autoptr(GError) error = NULL;
        int fd = g_file_open_tmp("test-classes-XXXXXX", &c->path, &error);
        g_assert_no_error(error);
        fflush(stderr);
        c->saved_fd = dup(STDERR_FILENO);
        g_assert_cmpint(dup2(fd, STDERR_FILENO), ==, STDERR_FILENO);
        close(fd);
}

static char *capture_end(Capture *c) {
        char *text = NULL;
        fflush(stderr);
        g_assert_cmpint(dup2(c->saved_fd, STDERR_FILENO), ==, STDERR_FILENO);
        close(c->saved_fd);
        g_assert_true(g_file_get_contents(c->path, &text, NULL, NULL));
        g_unlink(c->path);
        g_free(c->path);
        /* still visible in the test log */
        fputs(text, stderr);
        return text;
}

static const ClassRule *rule(const ClassRules *r, guint i) {
        g_assert_cmpuint(i, <, r->rules->len);
        return r->rules->pdata[i];
}

static void test_good_file(void) {
        g_autoptr(ClassRules) r = NULL;
        g_assert_cmpint(class_rules_new(&r), ==, 0);
        const char *text = "# fridge classes\n"
                           "[Early]\n"
                           "Units=a.service; b.service;\n"
                           "\n"
                           "[Late]\n"
                           "Units=sshfs@*.service\n"
                           "Cgroups = user.slice/*/app-*.scope\n"
                           "[NoFreeze]\n"
                           "Units=keep.service\n";
        g_assert_cmpint(class_rules_add_text(r, "/etc/fridge/classes.d/good.conf", text), ==, 0);
        g_assert_cmpuint(r->rules->len, ==, 5);
        g_assert_cmpstr(rule(r, 0)->glob, ==, "a.service");
        g_assert_cmpstr(rule(r, 1)->glob, ==, "b.service");
        g_assert_cmpstr(rule(r, 0)->source, ==, "/etc/fridge/classes.d/good.conf:3");

        CgroupClass c;
        const char *source;
        g_assert_true(class_rules_match(r, "user.slice/b.service", "b.service", &c, &source));
        g_assert_cmpint(c, ==, CLASS_EARLY);
        g_assert_true(class_rules_match(r, "user.slice/user-1000.slice/app-x.scope", "app-x.scope", &c, &source));
        g_assert_cmpint(c, ==, CLASS_LATE);
        g_assert_cmpstr(source, ==, "/etc/fridge/classes.d/good.conf:7");
        g_assert_true(class_rules_match(r, "system.slice/keep.service", "keep.service", &c, &source));
        g_assert_cmpint(c, ==, CLASS_NOFREEZE);
        g_assert_cmpstr(source, ==, "/etc/fridge/classes.d/good.conf:9");
        g_assert_false(class_rules_match(r, "user.slice/other.service", "other.service", &c, &source));
}

static void test_precedence(void) {
        g_autoptr(ClassRules) r = NULL;
        g_assert_cmpint(class_rules_new(&r), ==, 0);
        g_assert_cmpint(class_rules_add_text(r, "p.conf",
                                             "[NoFreeze]\nUnits=keep*.service\n"
                                             "[Early]\nUnits=*.service\n"
                                             "[Late]\nUnits=backup.service;keep-backup.service\n"),
                        ==, 0);
        CgroupClass c;
        const char *source;
        g_assert_true(class_rules_match(r, "s/x.service", "x.service", &c, &source));
        g_assert_cmpint(c, ==, CLASS_EARLY);
        g_assert_cmpstr(source, ==, "p.conf:4");
        g_assert_true(class_rules_match(r, "s/backup.service", "backup.service", &c, &source));
        g_assert_cmpint(c, ==, CLASS_LATE);
        g_assert_cmpstr(source, ==, "p.conf:6");
        g_assert_true(class_rules_match(r, "s/keep-backup.service", "keep-backup.service", &c, &source));
        g_assert_cmpint(c, ==, CLASS_NOFREEZE);
        g_assert_cmpstr(source, ==, "p.conf:2");
        /* no unit: only path rules can match */
        g_assert_false(class_rules_match(r, "s/worker", "", &c, &source));
}

static void test_unit_glob(void) {
        g_assert_true(class_glob_match("sshfs@*.service", "sshfs@home-me.service", false));
        g_assert_false(class_glob_match("sshfs@*.service", "sshfs.service", false));
        g_assert_false(class_glob_match("sshfs@*.service", "x-sshfs@a.service", false));

        g_autoptr(ClassRules) r = NULL;
        g_assert_cmpint(class_rules_new(&r), ==, 0);
        g_assert_cmpint(class_rules_add_text(r, "u.conf", "[Late]\nUnits=sshfs@*.service\n"), ==, 0);
        CgroupClass c;
        g_assert_true(class_rules_match(r, "system.slice/system-sshfs.slice/sshfs@mnt.service", "sshfs@mnt.service",
                                        &c, NULL));
        g_assert_cmpint(c, ==, CLASS_LATE);
}

static void test_path_glob(void) {
        const char *g = "user.slice/*/app-*.scope";
        g_assert_true(class_glob_match(g, "user.slice/user-1000.slice/app-firefox.scope", true));
        /* with FNM_PATHNAME, '*' stays within one component */
        g_assert_false(class_glob_match(g, "user.slice/user-1000.slice/x.slice/app-firefox.scope", true));
        g_assert_false(class_glob_match(g, "user.slice/app-firefox.scope", true));
        g_assert_true(class_glob_match("*/a*", "x/a/b", false));
        g_assert_false(class_glob_match("*/a*", "x/a/b", true));
}

static void write_file(const char *dir, const char *name, const char *text) {
        g_autofree char *p = g_build_filename(dir, name, NULL);
        g_assert_true(g_file_set_contents(p, text, -1, NULL));
}

static char *make_dir(const char *base, const char *name) {
        char *p = g_build_filename(base, name, NULL);
        g_assert_cmpint(g_mkdir(p, 0755), ==, 0);
        return p;
}

static void test_override(void) {
        g_autofree char *base = g_dir_make_tmp("test-classes-XXXXXX", NULL);
        g_autofree char *usr = make_dir(base, "usr");
        g_autofree char *etc = make_dir(base, "etc");
        write_file(usr, "a.conf", "[Late]\nUnits=x.service\n");
        write_file(usr, "b.conf", "[Early]\nUnits=y.service\n");
        write_file(usr, "README", "[Late]\nUnits=readme.service\n");
        write_file(etc, "a.conf", "# replaces usr's\n[NoFreeze]\nUnits=z.service\n");
        write_file(etc, "c.conf", "[Late]\nCgroups=user.slice/*\n");
        g_autofree char *missing = g_build_filename(base, "nope", NULL);

        const char *dirs[] = { etc, missing, usr, NULL }; /* highest priority first */
        g_autoptr(ClassRules) r = NULL;
        unsigned problems = 99;
        g_assert_cmpint(class_rules_load(dirs, &r, &problems), ==, 0);
        g_assert_cmpuint(problems, ==, 0);
        g_assert_cmpuint(r->rules->len, ==, 3);

        /* name order: a (etc), b (usr), c (etc) */
        g_autofree char *a_src = g_strdup_printf("%s/a.conf:3", etc);
        g_assert_cmpstr(rule(r, 0)->glob, ==, "z.service");
        g_assert_cmpstr(rule(r, 0)->source, ==, a_src);
        g_assert_cmpstr(rule(r, 1)->glob, ==, "y.service");
        g_assert_cmpstr(rule(r, 2)->glob, ==, "user.slice/*");
        g_assert_false(class_rules_match(r, "s/x.service", "x.service", NULL, NULL));
        g_assert_false(class_rules_match(r, "s/readme.service", "readme.service", NULL, NULL));

        testdir_remove(base);
}

/* The file is refused as a whole, and the warning names the path and line. */
static void assert_bad(const char *text, unsigned line, const char *words) {
        g_autoptr(ClassRules) r = NULL;
        g_assert_cmpint(class_rules_new(&r), ==, 0);
        g_assert_cmpint(class_rules_add_text(r, "ok.conf", "[Early]\nUnits=ok.service\n"), ==, 0);

        Capture cap;
        capture_begin(&cap);
        int e = class_rules_add_text(r, "bad.conf", text);
        g_autofree char *log = capture_end(&cap);

        g_assert_cmpint(e, ==, -EINVAL);
        g_assert_cmpuint(r->rules->len, ==, 1);
        g_autofree char *where = g_strdup_printf("bad.conf:%u: ", line);
        g_assert_true(g_str_has_prefix(log, where));
        g_assert_nonnull(strstr(log, words));
        g_assert_nonnull(strstr(log, "file skipped"));
}

static void test_bad_files(void) {
        /* good lines before the bad one are dropped too */
        assert_bad("[Late]\nUnits=a.service\n[Early\nUnits=b.service\n", 3, "[Early");
        assert_bad("# x\nUnits=a.service\n", 2, "does not start with a group");
        assert_bad("[Late]\nUnits=a.service\ngarbage\n", 3, "garbage");
        assert_bad("[Late]\nUnits=a.service\n[Freeze]\nUnits=b.service\n", 3, "unknown group [Freeze]");
        assert_bad("[Late]\nUnits=a.service\n\nUnitz=b.service\n", 4, "unknown key Unitz");
        assert_bad("[Late]\nUnits[de]=a.service\n", 2, "unknown key Units[de]");
        assert_bad("[Late]\nUnits=a.service\nCgroups= ; \n", 3, "has no glob");
        assert_bad("[Late]\nCgroups=user.slice;/system.slice\n", 2, "\"/system.slice\"");
        assert_bad("[NoFreeze]\n\nCgroups=user.slice/../system.slice/*\n", 3, "without \"..\"");
        assert_bad("[Early]\nUnits=user.slice/a.service\n", 2, "cannot contain '/'");
        assert_bad("[Early]\nUnits=a[bc.service\n", 2, "not a valid glob");
}

static void test_bad_file_skipped_on_load(void) {
        g_autofree char *base = g_dir_make_tmp("test-classes-XXXXXX", NULL);
        write_file(base, "10-good.conf", "[Late]\nUnits=backup.service\n");
        write_file(base, "20-bad.conf", "[Late]\nUnits=x.service\nCgroups=../x\n");
        write_file(base, "30-good.conf", "[NoFreeze]\nUnits=keep.service\n");

        const char *dirs[] = { base, NULL };
        g_autoptr(ClassRules) r = NULL;
        unsigned problems = 0;
        Capture cap;
        capture_begin(&cap);
        g_assert_cmpint(class_rules_load(dirs, &r, &problems), ==, 0);
        g_autofree char *log = capture_end(&cap);

        g_assert_cmpuint(problems, ==, 1);
        g_autofree char *where = g_strdup_printf("%s/20-bad.conf:3: ", base);
        g_assert_nonnull(strstr(log, where));
        g_assert_cmpuint(r->rules->len, ==, 2);
        g_assert_true(class_rules_match(r, "s/backup.service", "backup.service", NULL, NULL));
        g_assert_true(class_rules_match(r, "s/keep.service", "keep.service", NULL, NULL));
        g_assert_false(class_rules_match(r, "s/x.service", "x.service", NULL, NULL));

        testdir_remove(base);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/classes/good-file", test_good_file);
        g_test_add_func("/classes/precedence", test_precedence);
        g_test_add_func("/classes/unit-glob", test_unit_glob);
        g_test_add_func("/classes/path-glob", test_path_glob);
        g_test_add_func("/classes/override", test_override);
        g_test_add_func("/classes/bad-files", test_bad_files);
        g_test_add_func("/classes/bad-file-skipped-on-load", test_bad_file_skipped_on_load);
        return g_test_run();
}
