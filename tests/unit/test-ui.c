/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ui class: classes.d's [UI] and Processes=, its rank, the plan with ui
 * cgroups, and the caller's terminal (tty_nr, fdinfo, the pty master). */
#include <fcntl.h>
#include <glib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classes.h"
#include "classify.h"
#include "detect.h"
#include "plan.h"
#include "process-rules.h"
#include "terminal.h"
#include "testdir.h"

static ClassRules *rules_of(const char *text) {
        ClassRules *r = NULL;
        g_assert_cmpint(class_rules_new(&r), ==, 0);
        g_assert_cmpint(class_rules_add_text(r, "/etc/fridge/classes.d/t.conf", text), ==, 0);
        return r;
}

static void test_class_string(void) {
        g_assert_cmpstr(cgroup_class_to_string(CLASS_UI), ==, "ui");
        g_assert_cmpint(cgroup_class_from_string("ui"), ==, CLASS_UI);
        g_assert_cmpint(cgroup_class_from_string("UI"), ==, _CLASS_INVALID);
}

static void test_ui_group(void) {
        g_autoptr(ClassRules) r = rules_of("[UI]\n"
                                           "Units=org.gnome.Shell@*.service\n"
                                           "Processes=Xorg; kwin_*\n");
        g_assert_cmpuint(r->rules->len, ==, 3);
        CgroupClass c;
        const char *source;
        g_assert_true(class_rules_match(r, "u/org.gnome.Shell@wayland.service", "org.gnome.Shell@wayland.service",
                                        &c, &source));
        g_assert_cmpint(c, ==, CLASS_UI);
        g_assert_cmpstr(source, ==, "/etc/fridge/classes.d/t.conf:2");
        /* a Processes= rule says nothing of names */
        g_assert_false(class_rules_match(r, "u/Xorg.service", "Xorg.service", &c, &source));
        g_assert_true(class_rules_have_processes(r));

        ClassProcess procs[] = {
                { .pid = 7, .comm = "bash", .exe = "bash" },
                { .pid = 8, .comm = "kwin_wayland", .exe = "kwin_wayland" },
        };
        size_t index, n;
        g_assert_true(class_rules_match_processes(r, procs, 2, &c, &source, &index, &n));
        g_assert_cmpint(c, ==, CLASS_UI);
        g_assert_cmpstr(source, ==, "/etc/fridge/classes.d/t.conf:3");
        g_assert_cmpuint(index, ==, 1);
        g_assert_cmpuint(n, ==, 1);
        /* comm keeps 15 bytes: the exe's basename matches the whole name */
        ClassProcess agent = { .pid = 9, .comm = "polkit-gnome-au", .exe = "polkit-gnome-authentication-agent-1" };
        g_autoptr(ClassRules) r2 = rules_of("[UI]\nProcesses=polkit-gnome-authentication-agent-1\n");
        g_assert_true(class_rules_match_processes(r2, &agent, 1, NULL, NULL, NULL, NULL));
        agent.exe = NULL;
        g_assert_false(class_rules_match_processes(r2, &agent, 1, NULL, NULL, NULL, NULL));
}

static void test_bad_processes(void) {
        g_autoptr(ClassRules) r = NULL;
        g_assert_cmpint(class_rules_new(&r), ==, 0);
        g_assert_cmpint(class_rules_add_text(r, "b.conf", "[UI]\nProcesses=/usr/bin/Xorg\n"), ==, -EINVAL);
        g_assert_cmpint(class_rules_add_text(r, "b.conf", "[UI]\nProcesses=\n"), ==, -EINVAL);
        g_assert_cmpint(class_rules_add_text(r, "b.conf", "[Ui]\nProcesses=Xorg\n"), ==, -EINVAL);
        g_assert_cmpint(class_rules_add_text(r, "b.conf", "[UI]\nProcess=Xorg\n"), ==, -EINVAL);
        g_assert_cmpint(class_rules_add_text(r, "b.conf", "[UI]\nProcesses=Xorg[\n"), ==, -EINVAL);
        /* Commands= is NAME ARG: both, the name a basename */
        g_assert_cmpint(class_rules_add_text(r, "b.conf", "[UI]\nCommands=gjs\n"), ==, -EINVAL);
        g_assert_cmpint(class_rules_add_text(r, "b.conf", "[UI]\nCommands=gjs   \n"), ==, -EINVAL);
        g_assert_cmpint(class_rules_add_text(r, "b.conf", "[UI]\nCommands=/usr/bin/gjs x\n"), ==, -EINVAL);
        g_assert_cmpint(class_rules_add_text(r, "b.conf", "[UI]\nCommands=gjs x[\n"), ==, -EINVAL);
        g_assert_cmpuint(r->rules->len, ==, 0);
        g_assert_false(class_rules_have_processes(r));
}

/* ui > nofreeze > late > early, whatever the order of the files */
static void test_rank(void) {
        g_autoptr(ClassRules) r = rules_of("[UI]\nUnits=x.service\nProcesses=Xorg\n"
                                           "[NoFreeze]\nUnits=x.service;y.service\nProcesses=Xorg;keep\n"
                                           "[Late]\nUnits=*.service\nProcesses=*\n"
                                           "[Early]\nUnits=*\nProcesses=*\n");
        CgroupClass c;
        g_assert_true(class_rules_match(r, "s/x.service", "x.service", &c, NULL));
        g_assert_cmpint(c, ==, CLASS_UI);
        g_assert_true(class_rules_match(r, "s/y.service", "y.service", &c, NULL));
        g_assert_cmpint(c, ==, CLASS_NOFREEZE);
        g_assert_true(class_rules_match(r, "s/z.service", "z.service", &c, NULL));
        g_assert_cmpint(c, ==, CLASS_LATE);
        g_assert_true(class_rules_match(r, "s/z.scope", "z.scope", &c, NULL));
        g_assert_cmpint(c, ==, CLASS_EARLY);

        ClassProcess procs[] = { { 1, "a", "a" }, { 2, "keep", "keep" }, { 3, "Xorg", "Xorg" } };
        size_t index, n;
        g_assert_true(class_rules_match_processes(r, procs, 3, &c, NULL, &index, &n));
        g_assert_cmpint(c, ==, CLASS_UI);
        g_assert_cmpuint(index, ==, 2);
        g_assert_cmpuint(n, ==, 1);
        g_assert_true(class_rules_match_processes(r, procs, 2, &c, NULL, &index, &n));
        g_assert_cmpint(c, ==, CLASS_NOFREEZE);
        g_assert_cmpuint(index, ==, 1);
}

static void test_reason(void) {
        g_autofree char *alone = process_rules_reason("d.conf:12", CLASS_UI, "Xorg", 400, 0);
        g_assert_cmpstr(alone, ==, "config d.conf:12: Xorg (pid 400)");
        g_autofree char *shared = process_rules_reason("d.conf:12", CLASS_UI, "Xorg", 400, 2);
        g_assert_cmpstr(shared, ==, "config d.conf:12: Xorg (pid 400) keeps its cgroup running, and with it 2 other "
                                    "processes");
        g_autofree char *one = process_rules_reason("d.conf:12", CLASS_NOFREEZE, "Xorg", 400, 1);
        g_assert_true(g_str_has_suffix(one, "and with it 1 other process"));
        /* a class that freezes keeps nothing running */
        g_autofree char *late = process_rules_reason("d.conf:3", CLASS_LATE, "rsync", 5, 3);
        g_assert_cmpstr(late, ==, "config d.conf:3: rsync (pid 5)");

        g_autofree char *deleted = process_rules_exe_name("/usr/lib/xorg/Xorg (deleted)");
        g_assert_cmpstr(deleted, ==, "Xorg");
        g_assert_null(process_rules_exe_name(""));
        g_assert_null(process_rules_exe_name(NULL));
}

#define U CLASS_UI

static PlanNode *node(const char *path, CgroupClass class, const char *reason, bool procs) {
        PlanNode *n = NULL;
        g_assert_cmpint(plan_node_new(path, class, reason, procs, &n), ==, 0);
        return n;
}

static PlanNode *add(PlanNode *parent, const char *name, CgroupClass class, bool procs, const char *reason) {
        g_autofree char *path = g_strdup_printf("%s/%s", parent->path, name);
        return plan_node_add_child(parent, node(path, class, reason, procs));
}

static const PlanEntry *entry(const Plan *p, guint i) {
        g_assert_cmpuint(i, <, p->entries->len);
        return p->entries->pdata[i];
}

/* ui cgroups come after nofreeze ones and are in no stage */
static void test_plan_with_ui(void) {
        g_autoptr(PlanNode) root = node("user.slice", CLASS_EARLY, "default", false);
        PlanNode *u = add(root, "user-1000.slice", CLASS_EARLY, false, "default");
        add(u, "session-2.scope", U, true, "config d.conf:3: Xorg (pid 400)");
        add(u, "app.service", CLASS_EARLY, true, "default");
        add(u, "keep.service", CLASS_NOFREEZE, true, "config k.conf:2");
        /* an inner ui cgroup with processes of its own keeps its reason */
        PlanNode *term = add(u, "term.scope", U, true, "terminal of the caller: xterm (pid 9) holds /dev/pts/3's master");
        add(term, "child", CLASS_EARLY, true, "default");
        /* a subtree all ui is one entry */
        PlanNode *shell = add(u, "shell.slice", U, false, "config d.conf:4");
        add(shell, "a.service", U, true, "config d.conf:4");
        add(shell, "b.service", U, true, "config d.conf:4");

        PlanNode *roots[] = { root };
        g_autoptr(Plan) p = plan_build(roots, 1);
        g_assert_cmpuint(p->entries->len, ==, 6);
        g_assert_cmpuint(p->n_early, ==, 2);
        g_assert_cmpuint(p->n_late, ==, 0);
        g_assert_cmpuint(p->n_ui, ==, 3);
        g_assert_cmpstr(entry(p, 0)->cgroup, ==, "user.slice/user-1000.slice/app.service");
        g_assert_cmpstr(entry(p, 1)->cgroup, ==, "user.slice/user-1000.slice/term.scope/child");
        g_assert_cmpint(entry(p, 2)->class, ==, CLASS_NOFREEZE);
        g_assert_cmpstr(entry(p, 3)->cgroup, ==, "user.slice/user-1000.slice/session-2.scope");
        g_assert_cmpstr(plan_entry_class_name(entry(p, 3)), ==, "ui");
        g_assert_cmpstr(entry(p, 3)->reason, ==, "config d.conf:3: Xorg (pid 400)");
        g_assert_cmpstr(entry(p, 4)->cgroup, ==, "user.slice/user-1000.slice/shell.slice");
        g_assert_cmpint(entry(p, 4)->class, ==, U);
        g_assert_cmpstr(entry(p, 4)->reason, ==, "config d.conf:4");
        g_assert_cmpstr(entry(p, 5)->cgroup, ==, "user.slice/user-1000.slice/term.scope");
        g_assert_cmpint(entry(p, 5)->class, ==, U);
        g_assert_true(g_str_has_prefix(entry(p, 5)->reason, "terminal of the caller"));
}

/* ---- the walk with Processes= and the caller's ui cgroups, on a fake
 * cgroup mount and /proc ---- */

typedef struct Fixture {
        char *base;
        int proc_fd, cgroup_fd;
} Fixture;

static void put_proc(Fixture *f, int pid, const char *comm, const char *exe) {
        g_autofree char *c = g_strdup_printf("proc/%d/comm", pid), *e = g_strdup_printf("%s/proc/%d/exe", f->base, pid);
        g_autofree char *text = g_strdup_printf("%s\n", comm);
        testdir_put(f->base, c, text);
        if (exe)
                g_assert_cmpint(symlink(exe, e), ==, 0);
}

static Plan *walk_plan(Fixture *f, const ClassRules *rules, GHashTable *ui, GHashTable *private_reasons) {
        char *roots[] = { (char *) "user.slice", NULL };
        ClassifyInput in = { .cgroup_fd = f->cgroup_fd, .proc_fd = f->proc_fd, .roots = roots, .rules = rules,
                             .ui = ui, .private_reasons = private_reasons };
        g_autoptr(GPtrArray) trees = NULL;
        g_assert_cmpint(classify_tree(&in, &trees), ==, 0);
        return plan_build((PlanNode *const *) trees->pdata, trees->len);
}

static const PlanEntry *find(const Plan *p, const char *cgroup) {
        for (guint i = 0; i < p->entries->len; i++)
                if (g_str_equal(entry(p, i)->cgroup, cgroup))
                        return entry(p, i);
        g_error("no entry %s", cgroup);
}

static void test_walk_processes(void) {
        /* a process keeps its cgroup running by name only when it is root's
         * or a seated user's, and the fake /proc's entries are the test's
         * own user's (an unprivileged package build: neither) */
        if (geteuid() != 0) {
                g_test_skip("needs root: the fake /proc's processes must be root's to count by name");
                return;
        }
        Fixture f = { .base = g_dir_make_tmp("test-ui-XXXXXX", NULL) };
        g_assert_nonnull(f.base);
        /* an X11 session without user units: Xorg and two applications */
        testdir_put(f.base, "cg/user.slice/cgroup.procs", "");
        testdir_put(f.base, "cg/user.slice/user-1000.slice/cgroup.procs", "");
        testdir_put(f.base, "cg/user.slice/user-1000.slice/session-2.scope/cgroup.procs", "400\n401\n402\n");
        testdir_put(f.base, "cg/user.slice/user-1000.slice/session-2.scope/sub/cgroup.procs", "403\n");
        testdir_put(f.base, "cg/user.slice/user-1000.slice/app.scope/cgroup.procs", "500\n");
        testdir_put(f.base, "cg/user.slice/user-1000.slice/term.scope/cgroup.procs", "600\n");
        testdir_put(f.base, "cg/user.slice/user-1000.slice/dunst.scope/cgroup.procs", "700\n");
        testdir_put(f.base, "cg/user.slice/user-1000.slice/notify.scope/cgroup.procs", "800\n");
        testdir_put(f.base, "cg/user.slice/user-1000.slice/weather.scope/cgroup.procs", "801\n");
        put_proc(&f, 400, "Xorg", "/usr/lib/xorg/Xorg");
        put_proc(&f, 401, "firefox", "/usr/lib/firefox/firefox");
        put_proc(&f, 402, "gimp", NULL);
        put_proc(&f, 403, "child", NULL);
        put_proc(&f, 500, "Xorgish", "/usr/bin/Xorgish");
        put_proc(&f, 600, "xterm", "/usr/bin/xterm");
        put_proc(&f, 700, "dunst", "/usr/bin/dunst");
        put_proc(&f, 800, "gjs", "/usr/bin/gjs");
        put_proc(&f, 801, "gjs", "/usr/bin/gjs");
        testdir_put_bytes(f.base, "proc/800/cmdline", "/usr/bin/gjs\0-m\0/usr/share/gnome-shell/org.gnome.Shell.Notifications\0", 69);
        testdir_put_bytes(f.base, "proc/801/cmdline", "/usr/bin/gjs\0/usr/share/x/org.gnome.Weather\0", 44);
        f.proc_fd = testdir_open(f.base, "proc");
        f.cgroup_fd = testdir_open(f.base, "cg");

        g_autoptr(ClassRules) rules = rules_of("[UI]\nProcesses=Xorg;dunst\nCommands=gjs */org.gnome.Shell.Notifications\n");
        g_autoptr(GHashTable) ui = g_hash_table_new(g_str_hash, g_str_equal);
        g_hash_table_insert(ui, (char *) "user.slice/user-1000.slice/term.scope",
                            (char *) "terminal of the caller: xterm (pid 600) holds /dev/pts/3's master");
        g_autoptr(GHashTable) private_reasons = detect_private_reasons_new();
        g_autoptr(Plan) p = walk_plan(&f, rules, ui, private_reasons);

        const PlanEntry *s = find(p, "user.slice/user-1000.slice/session-2.scope");
        g_assert_cmpint(s->class, ==, CLASS_UI);
        g_assert_cmpstr(s->reason, ==, "config /etc/fridge/classes.d/t.conf:2: Xorg (pid 400) keeps its cgroup "
                                       "running, and with it 2 other processes");
        /* another user reads it redacted */
        g_assert_cmpstr(detect_reason_for(private_reasons, s->reason, 12345), ==,
                        "config /etc/fridge/classes.d/t.conf:2: [hidden] (pid 0) keeps its cgroup running, and with "
                        "it 2 other processes");
        /* Processes= is not inherited: the child cgroup has no Xorg */
        g_assert_cmpint(find(p, "user.slice/user-1000.slice/session-2.scope/sub")->class, ==, CLASS_EARLY);
        g_assert_cmpint(find(p, "user.slice/user-1000.slice/app.scope")->class, ==, CLASS_EARLY);
        const PlanEntry *d = find(p, "user.slice/user-1000.slice/dunst.scope");
        g_assert_cmpint(d->class, ==, CLASS_UI);
        g_assert_cmpstr(d->reason, ==, "config /etc/fridge/classes.d/t.conf:2: dunst (pid 700)");
        const PlanEntry *t = find(p, "user.slice/user-1000.slice/term.scope");
        g_assert_cmpint(t->class, ==, CLASS_UI);
        g_assert_true(g_str_has_prefix(t->reason, "terminal of the caller: xterm (pid 600)"));
        /* Commands=: gjs by the script it runs */
        const PlanEntry *n = find(p, "user.slice/user-1000.slice/notify.scope");
        g_assert_cmpint(n->class, ==, CLASS_UI);
        g_assert_cmpstr(n->reason, ==, "config /etc/fridge/classes.d/t.conf:3: gjs (pid 800)");
        g_assert_cmpint(find(p, "user.slice/user-1000.slice/weather.scope")->class, ==, CLASS_EARLY);

        close(f.proc_fd);
        close(f.cgroup_fd);
        testdir_remove(f.base);
        g_free(f.base);
}

/* ---- the caller's terminal ---- */

static void test_parse_stat(void) {
        pid_t ppid;
        unsigned tty;
        g_assert_cmpint(terminal_parse_stat("812 (bash) S 800 812 812 34819 900 4194304 1 2 3\n", &ppid, &tty), ==, 0);
        g_assert_cmpint(ppid, ==, 800);
        g_assert_cmpuint(tty, ==, 34819);
        /* comm may hold ") " and spaces */
        g_assert_cmpint(terminal_parse_stat("9 (a) S 1 (b) R 77 1 1 0 -1 0\n", &ppid, &tty), ==, 0);
        g_assert_cmpint(ppid, ==, 77);
        g_assert_cmpuint(tty, ==, 0);
        g_assert_cmpint(terminal_parse_stat("9 (x) S 1 1 1\n", &ppid, &tty), ==, -EBADMSG);
        g_assert_cmpint(terminal_parse_stat("9 x S 1 1 1 0\n", &ppid, &tty), ==, -EBADMSG);
        g_assert_cmpint(terminal_parse_stat("9 (x) S y 1 1 0 1\n", &ppid, &tty), ==, -EBADMSG);
        g_assert_cmpint(terminal_parse_stat(NULL, &ppid, &tty), ==, -EBADMSG);
}

static void test_pts_of_tty_nr(void) {
        unsigned index;
        /* 136:3, /dev/pts/3 */
        g_assert_cmpint(terminal_pts_of_tty_nr(34819, &index), ==, 0);
        g_assert_cmpuint(index, ==, 3);
        /* 137:5 is pts 261 */
        g_assert_cmpint(terminal_pts_of_tty_nr((137u << 8) | 5, &index), ==, 0);
        g_assert_cmpuint(index, ==, 261);
        /* minors past 255 go to bits 20 and up */
        g_assert_cmpint(terminal_pts_of_tty_nr((136u << 8) | 0x12 | (0x3u << 20), &index), ==, 0);
        g_assert_cmpuint(index, ==, 0x312);
        /* no terminal, a VT (4:1), a serial line (4:64) */
        g_assert_cmpint(terminal_pts_of_tty_nr(0, &index), ==, -ENOTTY);
        g_assert_cmpint(terminal_pts_of_tty_nr((4u << 8) | 1, &index), ==, -ENOTTY);
        g_assert_cmpint(terminal_pts_of_tty_nr((4u << 8) | 64, &index), ==, -ENOTTY);
        g_assert_cmpint(terminal_pts_of_tty_nr((144u << 8) | 1, &index), ==, -ENOTTY);
        g_assert_cmpint(terminal_pts_of_tty_nr((unsigned) -1, &index), ==, -ENOTTY);
}

static void test_fdinfo(void) {
        unsigned index;
        g_assert_cmpint(terminal_parse_fdinfo_tty_index("pos:\t0\nflags:\t0100002\nmnt_id:\t25\nino:\t2\n"
                                                        "tty-index:\t3\n", &index), ==, 0);
        g_assert_cmpuint(index, ==, 3);
        g_assert_cmpint(terminal_parse_fdinfo_tty_index("tty-index:\t17", &index), ==, 0);
        g_assert_cmpuint(index, ==, 17);
        g_assert_cmpint(terminal_parse_fdinfo_tty_index("pos:\t0\nflags:\t02\n", &index), ==, -ENOENT);
        g_assert_cmpint(terminal_parse_fdinfo_tty_index("pos:\t0\nx-tty-index:\t3\n", &index), ==, -ENOENT);
        g_assert_cmpint(terminal_parse_fdinfo_tty_index("tty-index:\tx\n", &index), ==, -EBADMSG);
        g_assert_cmpint(terminal_parse_fdinfo_tty_index("", &index), ==, -ENOENT);
        g_assert_true(terminal_is_ptmx("/dev/ptmx"));
        g_assert_true(terminal_is_ptmx("/dev/pts/ptmx"));
        g_assert_false(terminal_is_ptmx("/dev/pts/3"));
        g_assert_false(terminal_is_ptmx(NULL));
}

/* ---- the terminal chain, on real ptys ---- */

/* A process of a chain: forked, in a session of its own, on `ctty` as its
 * controlling terminal where given, holding a new pty's master where
 * asked (as `uid`, dropped before or after opening it) */
typedef struct ProcSpec {
        const char *ctty;
        bool master;
        uid_t uid;              /* 0: stays root */
        bool drop_first;
        bool listen;            /* waits on a unix socket, as a multiplexer's server does */
} ProcSpec;

typedef struct Proc {
        pid_t pid;
        int release;            /* closing it ends the process */
        char *pts;              /* the name of the pty whose master it holds */
} Proc;

/* dumpable again, as a program the user started is: /proc/PID is then
 * the user's, not root's */
static void drop_to(uid_t uid) {
        if (uid != 0 && (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0 ||
                         prctl(PR_SET_DUMPABLE, 1) < 0))
                _exit(50);
}

static void proc_child(const ProcSpec *spec, int ready, int release, int release_end) {
        close(release_end); /* else the read below never sees its end */
        if (setsid() < 0)
                _exit(10);
        if (spec->ctty) {
                int fd = open(spec->ctty, O_RDWR);
                if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0)
                        _exit(20);
        }
        if (spec->drop_first)
                drop_to(spec->uid);
        if (spec->master) {
                int m = posix_openpt(O_RDWR | O_NOCTTY);
                if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
                        _exit(30);
                dprintf(ready, "%s", ptsname(m));
        }
        if (!spec->drop_first)
                drop_to(spec->uid);
        if (spec->listen) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                int n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "fridge-test-ui-%d", (int) getpid());
                int fd = socket(AF_UNIX, SOCK_STREAM, 0);
                if (fd < 0 || bind(fd, (struct sockaddr *) &sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0 ||
                    listen(fd, 1) < 0)
                        _exit(40);
        }
        dprintf(ready, "\n");
        char c;
        (void) !read(release, &c, 1); /* until the test closes its end */
        _exit(0);
}

static Proc proc_start(const ProcSpec *spec) {
        int ready[2], release[2];
        g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(release, O_CLOEXEC), ==, 0);
        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0)
                proc_child(spec, ready[1], release[0], release[1]);
        close(ready[1]);
        close(release[0]);
        char buf[64] = "";
        size_t n = 0;
        for (ssize_t k; n < sizeof(buf) - 1 && !memchr(buf, '\n', n) &&
                        (k = read(ready[0], buf + n, sizeof(buf) - 1 - n)) > 0;)
                n += (size_t) k;
        close(ready[0]);
        if (!memchr(buf, '\n', n)) {
                int st;
                g_assert_cmpint(waitpid(pid, &st, 0), ==, pid);
                g_error("a chain process could not start: exit %d", WEXITSTATUS(st));
        }
        *strchr(buf, '\n') = '\0';
        return (Proc) { .pid = pid, .release = release[1], .pts = *buf ? g_strdup(buf) : NULL };
}

static void proc_stop(Proc *p) {
        int st;
        close(p->release);
        g_assert_cmpint(waitpid(p->pid, &st, 0), ==, p->pid);
        g_free(p->pts);
}

static bool have_ptys(void) {
        int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (m < 0)
                return false;
        close(m);
        return true;
}

static GArray *chain_of(pid_t pid) {
        int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        GArray *hops = NULL;
        g_assert_cmpint(terminal_find_chain(proc_fd, pid, &hops), >=, 0);
        close(proc_fd);
        for (guint i = 0; i < hops->len; i++)
                g_test_message("hop %u: pid %d: %s", i + 1, (int) g_array_index(hops, TerminalHop, i).pid,
                               g_array_index(hops, TerminalHop, i).reason);
        return hops;
}

static const TerminalHop *hop_at(GArray *hops, guint i) {
        g_assert_cmpuint(i, <, hops->len);
        return &g_array_index(hops, TerminalHop, i);
}

static void assert_hop(GArray *hops, guint i, pid_t pid, const char *reason_start, const char *pts) {
        const TerminalHop *h = hop_at(hops, i);
        g_assert_cmpint(h->pid, ==, pid);
        if (!g_str_has_prefix(h->reason, reason_start))
                g_error("hop %u: \"%s\" does not start \"%s\"", i + 1, h->reason, reason_start);
        g_autofree char *master = pts ? g_strdup_printf("holds %s's master", pts) : NULL;
        if (master && !strstr(h->reason, master))
                g_error("hop %u: \"%s\" lacks \"%s\"", i + 1, h->reason, master);
}

/* An emulator holds a pty's master and the caller runs on it: one hop */
static void test_find_master(void) {
        if (!have_ptys()) {
                g_test_skip("no pseudo-terminals here");
                return;
        }
        Proc emulator = proc_start(&(ProcSpec) { .master = true });
        Proc caller = proc_start(&(ProcSpec) { .ctty = emulator.pts });
        g_autoptr(GArray) hops = chain_of(caller.pid);
        g_assert_cmpuint(hops->len, ==, 1);
        assert_hop(hops, 0, emulator.pid, "terminal of the caller: ", emulator.pts);

        /* a process without a terminal has none to keep */
        Proc bare = proc_start(&(ProcSpec) { 0 });
        g_autoptr(GArray) none = chain_of(bare.pid);
        g_assert_cmpuint(none->len, ==, 0);
        proc_stop(&bare);
        proc_stop(&caller);
        proc_stop(&emulator);
}

/* sudo with use_pty: sudo holds the master of the caller's pty and runs
 * on the emulator's; the chain goes on through sudo's own terminal */
static void test_chain_through_sudo(void) {
        if (!have_ptys()) {
                g_test_skip("no pseudo-terminals here");
                return;
        }
        Proc emulator = proc_start(&(ProcSpec) { .master = true });
        Proc sudo = proc_start(&(ProcSpec) { .ctty = emulator.pts, .master = true });
        Proc caller = proc_start(&(ProcSpec) { .ctty = sudo.pts });
        g_autoptr(GArray) hops = chain_of(caller.pid);
        g_assert_cmpuint(hops->len, ==, 2);
        assert_hop(hops, 0, sudo.pid, "terminal of the caller: ", sudo.pts);
        assert_hop(hops, 1, emulator.pid, "terminal of the caller, hop 2: ", emulator.pts);
        g_autofree char *of_sudo = g_strdup_printf("the terminal of test-ui (pid %d)", (int) sudo.pid);
        g_assert_nonnull(strstr(hop_at(hops, 1)->reason, of_sudo));
        proc_stop(&caller);
        proc_stop(&sudo);
        proc_stop(&emulator);
}

/* A multiplexer: its server holds the caller's master with no terminal
 * of its own; its client (the same executable, on the emulator's pty,
 * holding no master) leads on to the emulator */
static void test_chain_through_multiplexer(void) {
        if (!have_ptys()) {
                g_test_skip("no pseudo-terminals here");
                return;
        }
        Proc emulator = proc_start(&(ProcSpec) { .master = true });
        Proc client = proc_start(&(ProcSpec) { .ctty = emulator.pts });
        Proc server = proc_start(&(ProcSpec) { .master = true, .listen = true });
        Proc caller = proc_start(&(ProcSpec) { .ctty = server.pts });
        g_autoptr(GArray) hops = chain_of(caller.pid);
        g_assert_cmpuint(hops->len, ==, 3);
        assert_hop(hops, 0, server.pid, "terminal of the caller: ", server.pts);
        assert_hop(hops, 1, client.pid, "terminal of the caller, hop 2: ", NULL);
        g_autofree char *client_of = g_strdup_printf("is a client of test-ui (pid %d)", (int) server.pid);
        g_assert_nonnull(strstr(hop_at(hops, 1)->reason, client_of));
        assert_hop(hops, 2, emulator.pid, "terminal of the caller, hop 3: ", emulator.pts);
        proc_stop(&caller);
        proc_stop(&server);
        proc_stop(&client);
        proc_stop(&emulator);
}

/* A holder without a terminal that waits on no socket is a terminal
 * emulator, not a multiplexer: the same executable elsewhere on a pty is
 * not its client */
static void test_chain_emulator_has_no_clients(void) {
        if (!have_ptys()) {
                g_test_skip("no pseudo-terminals here");
                return;
        }
        Proc other_term = proc_start(&(ProcSpec) { .master = true });
        Proc other_shell = proc_start(&(ProcSpec) { .ctty = other_term.pts });
        Proc emulator = proc_start(&(ProcSpec) { .master = true });
        Proc caller = proc_start(&(ProcSpec) { .ctty = emulator.pts });
        g_autoptr(GArray) hops = chain_of(caller.pid);
        g_assert_cmpuint(hops->len, ==, 1);
        assert_hop(hops, 0, emulator.pid, "terminal of the caller: ", emulator.pts);
        proc_stop(&caller);
        proc_stop(&emulator);
        proc_stop(&other_shell);
        proc_stop(&other_term);
}

static void test_unix_listening(void) {
        g_autoptr(GHashTable) inodes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        const char *text =
                "Num       RefCount Protocol Flags    Type St Inode Path\n"
                "0000000000000000: 00000002 00000000 00010000 0001 01 20971 /tmp/tmux-0/default\n"
                "0000000000000000: 00000003 00000000 00000000 0001 03 20999 /tmp/tmux-0/default\n"
                "0000000000000000: 00000002 00000000 00010000 0001 01 31337 @fridge\n"
                "0000000000000000: 00000003 00000000 00000000 0001 03 41000\n";
        g_assert_cmpint(terminal_parse_unix_listening(text, inodes), ==, 0);
        g_assert_cmpuint(g_hash_table_size(inodes), ==, 2);
        gint64 a = 20971, b = 31337, c = 20999;
        g_assert_true(g_hash_table_contains(inodes, &a));
        g_assert_true(g_hash_table_contains(inodes, &b));
        g_assert_false(g_hash_table_contains(inodes, &c));
        g_assert_cmpint(terminal_parse_unix_listening("", inodes), ==, -EBADMSG);
        g_assert_cmpint(terminal_parse_unix_listening("Num x\n0: 1 2 zz 4 5 6\n", inodes), ==, -EBADMSG);
        g_assert_cmpint(terminal_parse_unix_listening("Num x\n0: 1 2\n", inodes), ==, -EBADMSG);
}

/* Each hop's holder is checked on its own: a user's emulator that opened
 * the pty (its owner) holds it for root's caller, as under sudo; one
 * that holds a master root opened is another user's and is not taken */
static void test_chain_owners(void) {
        if (!have_ptys()) {
                g_test_skip("no pseudo-terminals here");
                return;
        }
        if (getuid() != 0) {
                g_test_skip("needs root: the holders run as uid 65534");
                return;
        }
        Proc user_term = proc_start(&(ProcSpec) { .master = true, .uid = 65534, .drop_first = true });
        Proc caller = proc_start(&(ProcSpec) { .ctty = user_term.pts });
        g_autoptr(GArray) hops = chain_of(caller.pid);
        g_assert_cmpuint(hops->len, ==, 1);
        assert_hop(hops, 0, user_term.pid, "terminal of the caller: ", user_term.pts);
        proc_stop(&caller);
        proc_stop(&user_term);

        Proc taken = proc_start(&(ProcSpec) { .master = true, .uid = 65534 });
        Proc victim = proc_start(&(ProcSpec) { .ctty = taken.pts });
        g_autoptr(GArray) none = chain_of(victim.pid);
        g_assert_cmpuint(none->len, ==, 0);
        proc_stop(&victim);
        proc_stop(&taken);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        /* Run from a terminal, this process (on a pty, holding no master,
         * the same executable as the chain's) would count as a client of
         * the chains' multiplexers and lead on to that terminal */
        int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (tty >= 0) {
                (void) ioctl(tty, TIOCNOTTY);
                close(tty);
        }
        g_test_add_func("/ui/class-string", test_class_string);
        g_test_add_func("/ui/ui-group", test_ui_group);
        g_test_add_func("/ui/bad-processes", test_bad_processes);
        g_test_add_func("/ui/rank", test_rank);
        g_test_add_func("/ui/reason", test_reason);
        g_test_add_func("/ui/plan", test_plan_with_ui);
        g_test_add_func("/ui/walk-processes", test_walk_processes);
        g_test_add_func("/ui/parse-stat", test_parse_stat);
        g_test_add_func("/ui/pts-of-tty-nr", test_pts_of_tty_nr);
        g_test_add_func("/ui/fdinfo", test_fdinfo);
        g_test_add_func("/ui/find-master", test_find_master);
        g_test_add_func("/ui/chain-through-sudo", test_chain_through_sudo);
        g_test_add_func("/ui/chain-through-multiplexer", test_chain_through_multiplexer);
        g_test_add_func("/ui/chain-owners", test_chain_owners);
        g_test_add_func("/ui/chain-emulator-has-no-clients", test_chain_emulator_has_no_clients);
        g_test_add_func("/ui/unix-listening", test_unix_listening);
        return g_test_run();
}
