/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tasks that keep a cgroup from freezing, named in the cycle's error:
 * a task in fsync on held slowfs, an odd comm, a plain FUSE server
 * (bindfs), a FUSE mount made between two plans, and fridged with the installed unit's capabilities only: scratch cgroups with real
 * processes under a scratch freeze root, the real fridged on a private bus,
 * fakesys as the kernel. Every scratch cgroup is thawed and removed at the
 * end whatever happens (scratch.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "fridge-config.h"
#include "freeze-fixture.h"

/* ---- a task that cannot freeze ---- */

/* stuck.service with a task in fsync on held slowfs (late, and it will not
 * freeze), once the task is in state D */
static pid_t spawn_stuck_service(Fixture *f, const char **ret_cgroup) {
        const char *stuck = *ret_cgroup = scratch_add(f->s, "stuck.service");
        pid_t pid = harness_scratch_stuck_in_fsync(f->h, f->s, stuck, NULL, f->stuck_comm);
        harness_assert_task_in_state_d(pid);
        return pid;
}

static void test_freeze_timeout_names_blocker(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        if (!f->h->slow) {
                g_test_skip("SLOWFS is not set");
                return;
        }
        const char *stuck;
        pid_t pid = spawn_stuck_service(f, &stuck);

        /* a process inside fsync is a data cleaner: late, reason "syncing" */
        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        const PlanRow *row = freeze_plan_find(rows, stuck, NULL);
        g_assert_cmpstr(row->class, ==, "late");
        g_assert_nonnull(strstr(row->reason, "syncing"));
        g_assert_nonnull(strstr(row->reason, "fsync"));

        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *res = NULL, *error = NULL, *message = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, "freeze-timeout-ms", "u", 1000, NULL), ==, 0);
        g_assert_true(harness_wait_finished(f->h, cycle, 30000, &res, &error, &message));
        g_test_message("%s %s: %s", res, error, message);
        g_assert_cmpstr(res, ==, "failed");
        g_assert_cmpstr(error, ==, FRIDGE_INTERFACE ".Error.FreezeTimeout");
        g_autofree char *pid_text = g_strdup_printf("pid %d", (int) pid);
        g_assert_nonnull(strstr(message, stuck));
        g_assert_nonnull(strstr(message, pid_text));
        g_autofree char *on_mount = g_strdup_printf("on FUSE mount %s", f->h->slow);
        g_assert_nonnull(strstr(message, on_mount));
        if (f->stuck_comm) /* CycleFinished came at all (D-Bus strings are UTF-8), and escaped */
                g_assert_nonnull(strstr(message, "(stuck\\xff\\xfe)"));
        harness_slowfs_release(f->h);
        freeze_assert_none_frozen(f);
}

/* The ProgressTexts recorded so far that say how long the stage waits for `unit` */
static GPtrArray *countdown_texts(Harness *h, const char *unit) {
        GPtrArray *texts = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *waiting = g_strdup_printf(": waiting for %s, ", unit);
        for (guint i = 0; i < h->signals->len; i++) {
                g_autoptr(GPtrArray) changes = harness_parse_props_changed(h->signals->pdata[i]);
                for (guint k = 0; k < changes->len; k++) {
                        HarnessPropChange *c = changes->pdata[k];
                        if (g_str_equal(c->name, "ProgressText") && c->type == 's' && strstr(c->s, waiting) &&
                            g_str_has_suffix(c->s, " s until the timeout"))
                                g_ptr_array_add(texts, g_strdup(c->s));
                }
        }
        return texts;
}

static bool has_three_countdowns(Harness *h, void *unit) {
        g_autoptr(GPtrArray) texts = countdown_texts(h, unit);
        return texts->len >= 3;
}

/* While a stage waits on a cgroup that will not freeze, the progress names
 * it and counts the seconds to the timeout down, anew each second: the
 * bar on screen moves */
static void test_freeze_wait_counts_down(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        if (!f->h->slow) {
                g_test_skip("SLOWFS is not set");
                return;
        }
        const char *stuck;
        (void) spawn_stuck_service(f, &stuck);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *res = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, "freeze-timeout-ms", "u", 8000, NULL), ==, 0);
        g_assert_true(harness_process_until(f->h, 20000, has_three_countdowns, (void *) "stuck.service"));
        g_autoptr(GPtrArray) texts = countdown_texts(f->h, "stuck.service");
        unsigned last = 9;
        for (guint i = 0; i < texts->len; i++) {
                const char *t = texts->pdata[i];
                g_test_message("%s", t);
                const char *n = strstr(t, ", ") + 2;
                unsigned left = (unsigned) g_ascii_strtoull(n, NULL, 10);
                g_assert_cmpuint(left, <, last); /* down, and each text new */
                g_assert_cmpuint(left, <=, 8);
                last = left;
        }
        g_assert_cmpint(harness_cancel(f->h, cycle, NULL, NULL), ==, 0);
        g_assert_true(harness_wait_finished(f->h, cycle, 30000, &res, NULL, NULL));
        g_assert_cmpstr(res, ==, "aborted");
        harness_slowfs_release(f->h);
        freeze_assert_none_frozen(f);
}

/* Twenty tasks stuck in fsync in one cgroup: the message names sixteen and
 * counts the rest, whoever leaves how many tasks stuck */
static void test_freeze_timeout_bounded(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        if (!f->h->slow) {
                g_test_skip("SLOWFS is not set");
                return;
        }
        const char *stuck = scratch_add(f->s, "stuck.service");
        pid_t pids[20];
        for (unsigned i = 0; i < G_N_ELEMENTS(pids); i++) {
                g_autofree char *file = g_strdup_printf("%s/journal-%u", f->h->slow, i);
                pids[i] = harness_scratch_stuck_in_fsync(f->h, f->s, stuck, file, f->stuck_comm);
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(pids); i++)
                harness_assert_task_in_state_d(pids[i]);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *res = NULL, *error = NULL, *message = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, "freeze-timeout-ms", "u", 1000, NULL), ==, 0);
        g_assert_true(harness_wait_finished(f->h, cycle, 30000, &res, &error, &message));
        g_test_message("%s %s: %s", res, error, message);
        g_assert_cmpstr(error, ==, FRIDGE_INTERFACE ".Error.FreezeTimeout");
        g_assert_true(g_str_has_suffix(message, " and 4 more tasks not looked at"));
        g_autoptr(GRegex) pid_re = g_regex_new(" pid [0-9]+ ", 0, 0, NULL);
        g_autoptr(GMatchInfo) mi = NULL;
        unsigned named = 0;
        for (g_regex_match(pid_re, message, 0, &mi); g_match_info_matches(mi); g_match_info_next(mi, NULL))
                named++;
        g_assert_cmpuint(named, ==, 16);
        harness_slowfs_release(f->h);
        freeze_assert_none_frozen(f);
}

/* A blocker whose name is not UTF-8 (anyone may name a task so) is named
 * escaped: unescaped, sd-bus refused the message and CycleFinished never came */
static void test_freeze_timeout_odd_comm(Fixture *f, gconstpointer data) {
        f->stuck_comm = "stuck\xff\xfe";
        test_freeze_timeout_names_blocker(f, data);
}

/* Bit `cap` of the CapEff line of /proc/PID/status. */
static bool has_capability(pid_t pid, int cap) {
        g_autofree char *path = g_strdup_printf("/proc/%d/status", (int) pid);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        const char *line = strstr(text, "\nCapEff:");
        g_assert_nonnull(line);
        return (g_ascii_strtoull(line + strlen("\nCapEff:"), NULL, 16) >> cap) & 1;
}

/* As the installed unit runs it: without CAP_SYS_ADMIN, PROC/TID/stack is
 * closed to fridged, and the wait channel of a task in fsync() on FUSE is a
 * generic one (folio_wait_bit); the mount is still named, from the call. */
static void test_freeze_timeout_names_mount_unit_caps(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_assert_false(has_capability(f->h->fridged_pid, CAP_SYS_ADMIN));
        g_assert_true(has_capability(f->h->fridged_pid, CAP_SYS_PTRACE));
        test_freeze_timeout_names_blocker(f, data);
}

/* ---- a plain "fuse" server: bindfs through a wrapper ---- */

/* The pid in `cgroup` whose comm is `comm`, or 0. */
static pid_t find_in_cgroup(Fixture *f, const char *cgroup, const char *comm) {
        g_autofree char *dir = scratch_abs(f->s, cgroup);
        g_autofree char *procs = g_build_filename(dir, "cgroup.procs", NULL);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(procs, &text, NULL, NULL));
        g_auto(GStrv) pids = g_strsplit(text, "\n", -1);
        for (char **p = pids; *p && **p; p++) {
                g_autofree char *path = g_strdup_printf("/proc/%s/comm", *p);
                g_autofree char *c = NULL;
                if (g_file_get_contents(path, &c, NULL, NULL) && g_str_equal(g_strstrip(c), comm))
                        return (pid_t) atoi(*p);
        }
        return 0;
}

static bool is_mounted(const char *mount_point) {
        g_autofree char *text = NULL;
        g_autofree char *needle = g_strdup_printf(" %s ", mount_point);
        return g_file_get_contents("/proc/self/mountinfo", &text, NULL, NULL) && strstr(text, needle);
}

/* bindfs mirrors DIR/src onto DIR/mirror (type "fuse", source DIR/src: no
 * server's name), started by a wrapper shell with relative arguments, in
 * `cgroup`. Returns bindfs's pid. */
static pid_t start_bindfs(Fixture *f, const char *cgroup, const char *bindfs) {
        g_autofree char *src = g_build_filename(f->h->dir, "src", NULL);
        g_autofree char *file = g_build_filename(src, "file", NULL);
        const char *mnt = f->fuse_mount = g_build_filename(f->h->dir, "mirror", NULL);
        g_assert_cmpint(g_mkdir(src, 0755), ==, 0);
        g_assert_cmpint(g_mkdir(mnt, 0755), ==, 0);
        g_assert_true(g_file_set_contents(file, "data\n", -1, NULL));
        /* not exec'd: the wrapper stays, bindfs is its child */
        g_autofree char *script = g_strdup_printf("cd '%s' && '%s' -f src mirror; exit $?", f->h->dir, bindfs);
        char *argv[] = { (char *) "sh", (char *) "-c", script, NULL };
        scratch_spawn(f->s, cgroup, argv);
        for (int i = 0; i < 500 && !is_mounted(mnt); i++)
                g_usleep(10000); /* bounded wait for the mount to appear */
        g_assert_true(is_mounted(mnt));
        pid_t pid = find_in_cgroup(f, cgroup, "bindfs");
        g_assert_cmpint(pid, >, 0);
        return pid;
}

/* Whether pid sleeps in system call nr. */
static bool blocked_in(pid_t pid, long nr) {
        g_autofree char *path = g_strdup_printf("/proc/%d/syscall", (int) pid);
        g_autofree char *text = NULL, *prefix = g_strdup_printf("%ld ", nr);
        return g_file_get_contents(path, &text, NULL, NULL) && g_str_has_prefix(text, prefix);
}

/* The plan names the mount of a plain-fuse server; a reader blocked
 * opening a file on it (bindfs stopped) is named with the mount in the
 * freeze timeout, by fridged with the installed unit's capabilities. */
static void test_plain_fuse_server_named(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        g_autofree char *bindfs = g_find_program_in_path("bindfs");
        if (!bindfs) {
                g_test_skip("bindfs is not installed (tools/lib/setup.sh: FRIDGE_PACKAGES)");
                return;
        }
        const char *d = scratch_add(f->s, "mirror.service");
        pid_t server = start_bindfs(f, d, bindfs);
        const char *mnt = f->fuse_mount;

        g_autoptr(GPtrArray) rows = freeze_get_plan(f->h);
        const PlanRow *row = freeze_plan_find(rows, d, NULL);
        g_test_message("mirror.service: %s (%s)", row->class, row->reason);
        g_assert_cmpstr(row->class, ==, "late");
        g_autofree char *of_mnt = g_strdup_printf("FUSE server bindfs (pid %d) of %s", (int) server, mnt);
        g_assert_cmpstr(row->reason, ==, of_mnt);

        const char *reader_cg = scratch_add(f->s, "reader.service");
        g_autofree char *file = g_build_filename(mnt, "file", NULL);
        g_assert_cmpint(kill(server, SIGSTOP), ==, 0);
        char *cat[] = { (char *) "cat", file, NULL };
        pid_t reader = scratch_spawn(f->s, reader_cg, cat);
        for (int i = 0; i < 500 && !blocked_in(reader, SYS_openat); i++)
                g_usleep(10000);
        g_assert_true(blocked_in(reader, SYS_openat));

        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *res = NULL, *error = NULL, *message = NULL;
        g_assert_cmpint(harness_sleep(f->h, "suspend", &cycle, &err, &msg, "freeze-timeout-ms", "u", 1000, NULL), ==, 0);
        g_assert_true(harness_wait_finished(f->h, cycle, 30000, &res, &error, &message));
        g_test_message("%s %s: %s", res, error, message);
        g_assert_cmpint(kill(server, SIGCONT), ==, 0);
        g_assert_cmpstr(error, ==, FRIDGE_INTERFACE ".Error.FreezeTimeout");
        g_autofree char *named = g_strdup_printf("pid %d (cat)", (int) reader);
        g_autofree char *on_mount = g_strdup_printf("on FUSE mount %s", mnt);
        g_assert_nonnull(strstr(message, reader_cg));
        g_assert_nonnull(strstr(message, named));
        g_assert_nonnull(strstr(message, on_mount));
        freeze_assert_none_frozen(f);
}

/* ---- what fridged keeps between plans is fresh ---- */

/* A process seen by one plan becomes a FUSE server (it execs slowfs,
 * which mounts: the same pid and start time, a new mount): the next plan
 * reads its fd table again and classes its cgroup late. Fails if the
 * cache of fd tables (detect-cache.c) outlived the mount table. */
static void test_fuse_mount_between_plans(Fixture *f, gconstpointer data) {
        SKIP_IF_UNSET(f);
        const char *slowfs = harness_env("SLOWFS");
        if (!slowfs) {
                g_test_skip("SLOWFS is not set");
                return;
        }
        const char *d = scratch_add(f->s, "later-fuse.service");
        const char *mnt = f->fuse_mount = g_build_filename(f->h->dir, "later-fusemnt", NULL);
        g_autofree char *go = g_build_filename(f->h->dir, "later-go", NULL);
        g_assert_cmpint(g_mkdir(mnt, 0755), ==, 0);
        g_assert_cmpint(mkfifo(go, 0600), ==, 0);
        g_autofree char *script = g_strdup_printf("read x < '%s'; exec '%s' '%s'", go, slowfs, mnt);
        char *argv[] = { (char *) "sh", (char *) "-c", script, NULL };
        pid_t server = scratch_spawn(f->s, d, argv);

        g_autoptr(GPtrArray) before = freeze_get_plan(f->h);
        const PlanRow *row = freeze_plan_find(before, d, NULL);
        g_test_message("before the mount: %s (%s)", row->class, row->reason);
        g_assert_cmpstr(row->class, ==, "early");

        int fd = open(go, O_WRONLY | O_CLOEXEC); /* waits for the reader: sh is there */
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, "go\n", 3), ==, 3);
        close(fd);
        freeze_wait_fuse_mount(f);

        g_autoptr(GPtrArray) after = freeze_get_plan(f->h);
        row = freeze_plan_find(after, d, NULL);
        g_autofree char *named = g_strdup_printf("(pid %d)", (int) server);
        g_test_message("after the mount: %s (%s)", row->class, row->reason);
        g_assert_cmpstr(row->class, ==, "late");
        g_assert_nonnull(strstr(row->reason, "FUSE server"));
        g_assert_nonnull(strstr(row->reason, named));

        freeze_fuse_unmount(f, server);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
#define ADD(name, fn, data) g_test_add("/blockers/" name, Fixture, data, freeze_fixture_setup, fn, freeze_fixture_teardown)
        /* the held slowfs also holds the flush: go on after it, to reach the freeze */
#define FLUSH_GOES_ON "[Flush]\nTimeoutMs=300\nOnTimeout=continue\n"
        static const CaseOptions stuck = { .slowfs = true, .extra_config = FLUSH_GOES_ON };
        static const CaseOptions stuck_unit_caps = { .slowfs = true, .extra_config = FLUSH_GOES_ON,
                                                     .unit_capabilities = true };
        ADD("freeze-timeout-names-blocker", test_freeze_timeout_names_blocker, &stuck);
        ADD("freeze-timeout-odd-comm", test_freeze_timeout_odd_comm, &stuck);
        ADD("freeze-wait-counts-down", test_freeze_wait_counts_down, &stuck);
        ADD("freeze-timeout-bounded", test_freeze_timeout_bounded, &stuck);
        ADD("plain-fuse-server-named", test_plain_fuse_server_named, &stuck_unit_caps);
        ADD("freeze-timeout-names-mount-unit-caps", test_freeze_timeout_names_mount_unit_caps, &stuck_unit_caps);
        ADD("fuse-mount-between-plans", test_fuse_mount_between_plans, NULL);
#undef ADD
        return g_test_run();
}
