/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * freezer and ledger on the real cgroup v2 freezer of this machine.
 *
 * Safety: the test freezes only scratch cgroups it creates below the
 * cgroup2 mount (found in /proc/self/mountinfo), holding only processes it
 * forked. Every cgroup is thawed, every child killed by PID and every
 * scratch cgroup removed by one async-signal-safe cleanup that runs after
 * each case, at exit, and from handlers for fatal signals, so a failed
 * assertion leaves nothing frozen. Never touches /sys/power.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "cgroups.h"
#include "fileio.h"
#include "freezer.h"
#include "ledger.h"
#include "log.h"
#include "parse.h"

#define MAX_CGROUPS 32
#define MAX_KIDS 64
#define SKIP 77

/* ---- what must be undone, in fixed buffers: cleanup runs in signal handlers ---- */

static struct {
        pid_t owner;                    /* forked children must not clean up */
        char mount[PATH_MAX];           /* the cgroup2 mount */
        char cgroups[MAX_CGROUPS][PATH_MAX];    /* absolute, parents first */
        int n_cgroups;
        pid_t kids[MAX_KIDS];
        int n_kids;
        char fuse_dir[PATH_MAX];        /* slowfs mount point (our mkdtemp dir) */
        pid_t fuse_pid;
} T;

static int cgroup_fd = -1, proc_fd = -1;
static unsigned scratch_counter;

static void put_file(const char *dir, const char *name, const char *value) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        int fd = open(p, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0) {
                (void) !write(fd, value, strlen(value));
                close(fd);
        }
}

static void pause_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
}

/* Reaps pid for up to ~5 s; a task stuck in the kernel must not hang us. */
static void reap(pid_t pid) {
        for (int i = 0; i < 500; i++) {
                pid_t r = waitpid(pid, NULL, WNOHANG);
                if (r == pid || (r < 0 && errno != EINTR))
                        return;
                pause_ms(10);
        }
}

/* Async-signal-safe and idempotent: thaw, release, kill, reap, remove. */
static void cleanup_all(void) {
        if (getpid() != T.owner)
                return;
        for (int i = T.n_cgroups; i-- > 0;)
                put_file(T.cgroups[i], "cgroup.freeze", "0");
        if (T.fuse_dir[0])
                put_file(T.fuse_dir, ".control", "release");
        for (int i = 0; i < T.n_kids; i++)
                kill(T.kids[i], SIGKILL);
        for (int i = 0; i < T.n_kids; i++)
                reap(T.kids[i]);
        T.n_kids = 0;
        if (T.fuse_pid > 0) {
                kill(T.fuse_pid, SIGTERM);
                reap(T.fuse_pid);
                kill(T.fuse_pid, SIGKILL);
                reap(T.fuse_pid);
                T.fuse_pid = 0;
        }
        if (T.fuse_dir[0]) {
                umount2(T.fuse_dir, MNT_DETACH);
                rmdir(T.fuse_dir);
                T.fuse_dir[0] = '\0';
        }
        /* An emptied cgroup can stay busy for a moment after the reap */
        for (int i = T.n_cgroups; i-- > 0;)
                for (int k = 0; k < 100 && rmdir(T.cgroups[i]) < 0 && errno == EBUSY; k++)
                        pause_ms(10);
        T.n_cgroups = 0;
}

static void on_fatal_signal(int sig) {
        cleanup_all();
        signal(sig, SIG_DFL);
        raise(sig);
}

static void install_safety_net(void) {
        T.owner = getpid();
        atexit(cleanup_all);
        struct sigaction sa = { .sa_handler = on_fatal_signal, .sa_flags = SA_RESETHAND };
        sigemptyset(&sa.sa_mask);
        int sigs[] = { SIGABRT, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT, SIGHUP };
        for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++)
                sigaction(sigs[i], &sa, NULL);
}

/* ---- scratch cgroups and children ---- */

/* Creates <mount>/<rel>; returns rel (g_free). */
static char *scratch_mkdir(const char *rel) {
        g_assert_cmpint(T.n_cgroups, <, MAX_CGROUPS);
        char *abs = T.cgroups[T.n_cgroups];
        g_snprintf(abs, PATH_MAX, "%s/%s", T.mount, rel);
        g_assert_no_errno(mkdir(abs, 0755));
        T.n_cgroups++;
        return g_strdup(rel);
}

/* A new scratch parent fridge-test-<pid>-<n> with n_children leaves. */
static char **scratch_cgroups(unsigned n_children) {
        g_autofree char *top = g_strdup_printf("fridge-test-%d-%u", (int) getpid(), ++scratch_counter);
        g_free(scratch_mkdir(top));
        char **out = g_new0(char *, n_children + 1);
        for (unsigned i = 0; i < n_children; i++) {
                g_autofree char *leaf = g_strdup_printf("%s/cg%u", top, i);
                out[i] = scratch_mkdir(leaf);
        }
        return out;
}

static char *cg_read(const char *rel, const char *file) {
        g_autofree char *p = g_strdup_printf("%s/%s", rel, file);
        char *text = NULL;
        g_assert_cmpint(read_file_at(cgroup_fd, p, &text), ==, 0);
        return strstrip_right(text);
}

static void cg_write(const char *rel, const char *file, const char *value) {
        g_autofree char *p = g_strdup_printf("%s/%s/%s", T.mount, rel, file);
        int fd = open(p, O_WRONLY | O_CLOEXEC);
        g_assert_no_errno(fd);
        g_assert_cmpint(write(fd, value, strlen(value)), ==, (gssize) strlen(value));
        close(fd);
}

static bool cg_is_frozen(const char *rel) {
        g_autofree char *ev = cg_read(rel, "cgroup.events");
        return strstr(ev, "frozen 1\n") || g_str_has_suffix(ev, "frozen 1");
}

static pid_t track_kid(pid_t pid) {
        g_assert_cmpint(pid, >=, 0);
        g_assert_cmpint(T.n_kids, <, MAX_KIDS);
        T.kids[T.n_kids++] = pid;
        return pid;
}

/* A child that sleeps in pause(), moved into cgroup rel. */
static pid_t spawn_sleeper(const char *rel) {
        pid_t pid = fork();
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                prctl(PR_SET_NAME, "frz-sleeper");
                for (;;)
                        pause();
        }
        track_kid(pid);
        g_autofree char *s = g_strdup_printf("%d", (int) pid);
        cg_write(rel, "cgroup.procs", s);
        return pid;
}

static bool kid_alive(pid_t pid) {
        return waitpid(pid, NULL, WNOHANG) == 0 && kill(pid, 0) == 0;
}

/* ---- the ledger directory ---- */

static char *ledger_dir_new(void) {
        g_autoptr(GError) error = NULL;
        char *dir = g_dir_make_tmp("fridge-ledger-XXXXXX", &error);
        g_assert_no_error(error);
        return dir;
}

static void ledger_dir_remove(const char *dir) {
        g_autofree char *f = g_build_filename(dir, "frozen", NULL);
        g_autofree char *t = g_build_filename(dir, ".frozen.tmp", NULL);
        (void) g_unlink(f);
        (void) g_unlink(t);
        (void) g_rmdir(dir);
}

static bool strv_has(char **v, const char *s) {
        return g_strv_contains((const char *const *) v, s);
}

/* ---- observing freezer writes: the test links with --wrap=write_file_at ---- */

int __real_write_file_at(int root_fd, const char *path, const char *value);
int __wrap_write_file_at(int root_fd, const char *path, const char *value);

static struct {
        GPtrArray *writes;      /* "VALUE CGROUP" of each cgroup.freeze write */
        Ledger *ledger;         /* when set: a "1" must find its cgroup listed */
        unsigned unlisted;
} W;

/* The cgroup a (dirfd, ".../cgroup.freeze") write goes to, relative to the mount. */
static char *written_cgroup(int fd, const char *path) {
        char link[64], dir[PATH_MAX];
        g_snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t k = readlink(link, dir, sizeof(dir) - 1);
        if (k < 0)
                return NULL;
        dir[k] = '\0';
        g_autofree char *full = g_strdup_printf("%s/%s", dir, path);
        size_t m = strlen(T.mount);
        if (!g_str_has_suffix(full, "/cgroup.freeze") || strncmp(full, T.mount, m) != 0 || full[m] != '/')
                return NULL;
        full[strlen(full) - strlen("/cgroup.freeze")] = '\0';
        return g_strdup(full + m + 1);
}

int __wrap_write_file_at(int root_fd, const char *path, const char *value) {
        g_autofree char *cg = written_cgroup(root_fd, path);
        if (cg && W.writes)
                g_ptr_array_add(W.writes, g_strdup_printf("%s %s", value, cg));
        if (cg && W.ledger && g_str_equal(value, "1")) {
                g_auto(GStrv) listed = ledger_list(W.ledger);
                W.unlisted += !strv_has(listed, cg);
        }
        return __real_write_file_at(root_fd, path, value);
}

static void writes_reset(Ledger *l) {
        g_clear_pointer(&W.writes, g_ptr_array_unref);
        W.writes = g_ptr_array_new_with_free_func(g_free);
        W.ledger = l;
        W.unlisted = 0;
}

/* ---- the loop ---- */

typedef struct Run {
        int done_r;
        bool done;
        unsigned calls, last_frozen, last_total;
        bool ledger_had_all;    /* at the first progress call */
        Ledger *ledger;
        char **stage;
        int64_t done_at;
} Run;

static void on_progress(Freezer *f, unsigned frozen, unsigned total, void *userdata) {
        Run *run = userdata;
        if (run->calls++ == 0 && run->ledger) {
                g_auto(GStrv) listed = ledger_list(run->ledger);
                run->ledger_had_all = true;
                for (char **p = run->stage; *p; p++)
                        run->ledger_had_all &= strv_has(listed, *p);
        }
        run->last_frozen = frozen;
        run->last_total = total;
}

static void on_done(Freezer *f, int r, void *userdata) {
        Run *run = userdata;
        g_assert_false(run->done);
        run->done = true;
        run->done_r = r;
        run->done_at = g_get_monotonic_time();
}

/* Runs the loop until `done` or the deadline; false on the deadline. */
static bool run_until_done(sd_event *e, Run *run, int64_t max_usec) {
        int64_t deadline = g_get_monotonic_time() + max_usec;
        while (!run->done && g_get_monotonic_time() < deadline)
                g_assert_cmpint(sd_event_run(e, 50 * 1000), >=, 0);
        return run->done;
}

/* One stage, start to end; returns how long it took in µs. */
static int64_t freeze_stage_sync(sd_event *e, Freezer *f, Run *run, uint64_t timeout_usec) {
        int64_t start = g_get_monotonic_time();
        g_assert_cmpint(freezer_freeze_stage(f, run->stage, timeout_usec, on_progress, on_done, run), ==, 0);
        g_assert_false(run->done); /* never from inside the call */
        g_assert_true(run_until_done(e, run, (int64_t) timeout_usec + 5 * G_USEC_PER_SEC));
        return run->done_at - start;
}

typedef struct Fixture {
        sd_event *event;
        char *ledger_dir;
        Ledger *ledger;
        Freezer *freezer;
} Fixture;

static void fixture_setup(Fixture *fx, gconstpointer data) {
        g_assert_cmpint(sd_event_new(&fx->event), >=, 0);
        fx->ledger_dir = ledger_dir_new();
        g_assert_cmpint(ledger_open(fx->ledger_dir, &fx->ledger), ==, 0);
        g_assert_cmpint(freezer_new(fx->event, cgroup_fd, proc_fd, fx->ledger, &fx->freezer), ==, 0);
}

static void fixture_teardown(Fixture *fx, gconstpointer data) {
        freezer_free(fx->freezer);
        cleanup_all();
        ledger_free(fx->ledger);
        ledger_dir_remove(fx->ledger_dir);
        g_free(fx->ledger_dir);
        sd_event_unref(fx->event);
        writes_reset(NULL);
}

/* The freezer wakes for nothing when idle: the loop has nothing to run. */
/* The snapshot and its description, as the manager's worker makes them */
static char *describe_blockers(Freezer *f) {
        g_autoptr(Blockers) b = NULL;
        g_assert_cmpint(freezer_blockers(f, &b), ==, 0);
        return blockers_describe(b);
}

static void assert_idle(sd_event *e) {
        g_assert_cmpint(sd_event_run(e, 200 * 1000), ==, 0);
}

static void wait_frozen(const char *rel) {
        for (int i = 0; i < 200 && !cg_is_frozen(rel); i++)
                pause_ms(10);
        g_assert_true(cg_is_frozen(rel));
}

static void set_ledger_file(const char *dir, const char *content) {
        g_autofree char *p = g_build_filename(dir, "frozen", NULL);
        g_assert_true(g_file_set_contents(p, content, -1, NULL));
}

/* ---- (1) the ledger ---- */

static void test_ledger_round_trip(Fixture *fx, gconstpointer data) {
        Ledger *l = fx->ledger;
        char *a[] = { (char *) "user.slice/a.service", NULL };
        char *b_and_c[] = { (char *) "user.slice/b.service", (char *) "user.slice/c.service", NULL };
        char *none_given[] = { NULL };
        g_assert_cmpint(ledger_add(l, a, NULL), ==, 0);
        g_assert_cmpint(ledger_add(l, none_given, NULL), ==, 0);
        g_assert_cmpint(ledger_add(l, b_and_c, NULL), ==, 0);
        g_auto(GStrv) three = ledger_list(l);
        g_assert_cmpuint(g_strv_length(three), ==, 3);
        g_assert_cmpstr(three[0], ==, "user.slice/a.service");
        g_assert_cmpstr(three[1], ==, "user.slice/b.service");
        g_assert_cmpstr(three[2], ==, "user.slice/c.service");

        g_assert_cmpint(ledger_remove(l, a), ==, 0);
        g_auto(GStrv) two = ledger_list(l);
        g_assert_cmpuint(g_strv_length(two), ==, 2);
        g_assert_cmpstr(two[0], ==, "user.slice/b.service");
        char *not_there[] = { (char *) "not/there", NULL };
        g_assert_cmpint(ledger_remove(l, not_there), ==, 0);
        g_assert_cmpint(ledger_remove(l, b_and_c), ==, 0);
        g_auto(GStrv) none = ledger_list(l);
        g_assert_cmpuint(g_strv_length(none), ==, 0);

        const char *bad[] = { "", "/abs", "../x", "a/../b", "a/./b", "a//b", "a/", ".", "x\ny" };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_assert_false(cgroups_path_is_valid(bad[i]));
                /* one bad path refuses the whole batch: nothing is written */
                char *batch[] = { (char *) "user.slice/ok.service", (char *) bad[i], NULL };
                g_assert_cmpint(ledger_add(l, batch, NULL), ==, -EINVAL);
                g_auto(GStrv) still_none = ledger_list(l);
                g_assert_cmpuint(g_strv_length(still_none), ==, 0);
        }
        g_assert_true(cgroups_path_is_valid("user.slice/x..y/.hidden"));
}

static void test_ledger_thaw_all_real(Fixture *fx, gconstpointer data) {
        g_auto(GStrv) cg = scratch_cgroups(1);
        pid_t kid = spawn_sleeper(cg[0]);
        cg_write(cg[0], "cgroup.freeze", "1");
        wait_frozen(cg[0]);

        g_autofree char *top = g_path_get_dirname(cg[0]);
        g_autofree char *content = g_strdup_printf("%s\n../x\n/abs\n%s/gone\n\n%s//cg0\n", cg[0], top, top);
        set_ledger_file(fx->ledger_dir, content);
        g_assert_cmpint(ledger_thaw_all(fx->ledger, cgroup_fd), ==, 1);

        g_autofree char *freeze = cg_read(cg[0], "cgroup.freeze");
        g_assert_cmpstr(freeze, ==, "0");
        g_auto(GStrv) left = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(left), ==, 0);
        g_assert_true(kid_alive(kid));
}

static void make_fake_cgroup(const char *dir, const char *freeze) {
        g_assert_no_errno(g_mkdir_with_parents(dir, 0755));
        g_autofree char *p = g_build_filename(dir, "cgroup.freeze", NULL);
        g_assert_true(g_file_set_contents(p, freeze, -1, NULL));
}

static char *fake_read(const char *dir) {
        g_autofree char *p = g_build_filename(dir, "cgroup.freeze", NULL);
        char *text = NULL;
        g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
        return strstrip_right(text);
}

/* The thaw emptied the ledger; the plain tree below `base` goes */
static void assert_ledger_empty_remove(Fixture *fx, const char *base) {
        g_auto(GStrv) left = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(left), ==, 0);
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", base);
        g_assert_cmpint(system(cmd), ==, 0);
}

/* cgroupfs has no symlinks, so this one runs on a plain directory tree:
 * a ledger line through a symlink must not reach a file outside the root. */
static void test_ledger_thaw_all_symlink(Fixture *fx, gconstpointer data) {
        g_autofree char *base = ledger_dir_new();
        g_autofree char *root = g_build_filename(base, "root", NULL);
        g_autofree char *ok = g_build_filename(root, "ok", NULL);
        g_autofree char *outside = g_build_filename(base, "outside", NULL);
        g_autofree char *outside_sub = g_build_filename(outside, "sub", NULL);
        g_autofree char *evil = g_build_filename(root, "evil", NULL);
        make_fake_cgroup(ok, "1");
        make_fake_cgroup(outside_sub, "1");
        make_fake_cgroup(outside, "1");
        g_assert_no_errno(symlink(outside, evil));

        set_ledger_file(fx->ledger_dir, "evil\nevil/sub\nok\n");
        int root_fd = root_open(root);
        g_assert_cmpint(root_fd, >=, 0);
        g_assert_cmpint(ledger_thaw_all(fx->ledger, root_fd), ==, 1);
        g_assert_cmpint(ledger_cgroup_open(root_fd, "evil"), ==, -ENOTDIR);
        close(root_fd);

        g_autofree char *v_ok = fake_read(ok), *v_out = fake_read(outside), *v_sub = fake_read(outside_sub);
        g_assert_cmpstr(v_ok, ==, "0");
        g_assert_cmpstr(v_out, ==, "1");
        g_assert_cmpstr(v_sub, ==, "1");
        assert_ledger_empty_remove(fx, base);
}

/* ---- cgroup ids: a cgroup made again under the same name is not ours ---- */

static GPtrArray *logged; /* char*: the messages of the case */

static void log_collect(int level, const char *message, const char *const *fields, void *userdata) {
        g_ptr_array_add(logged, g_strdup(message));
}

static void log_capture(void) {
        logged = g_ptr_array_new_with_free_func(g_free);
        log_set_sink(log_collect, NULL);
}

/* The one logged message naming all of `words`, or a test failure */
static void assert_logged(const char *const *words) {
        for (guint i = 0; i < logged->len; i++) {
                bool all = true;
                for (const char *const *w = words; *w; w++)
                        all &= strstr(logged->pdata[i], *w) != NULL;
                if (all)
                        return;
        }
        g_error("no log message names %s (and the rest)", words[0]);
}

static void log_release(void) {
        log_set_sink(NULL, NULL);
        g_clear_pointer(&logged, g_ptr_array_unref);
}

/* The thaw said it left `path` alone, with both ids; the capture ends */
static void assert_logged_not_thawed(const char *path, uint64_t old_id, uint64_t new_id) {
        g_autofree char *what = g_strdup_printf("Not thawing %s:", path);
        g_autofree char *was = g_strdup_printf("%" G_GUINT64_FORMAT, old_id);
        g_autofree char *now_id = g_strdup_printf("%" G_GUINT64_FORMAT, new_id);
        const char *const words[] = { what, was, now_id, NULL };
        assert_logged(words);
        log_release();
}

static uint64_t ino_of(const char *path) {
        struct stat st;
        g_assert_no_errno(stat(path, &st));
        return st.st_ino;
}

/* A plain directory tree: "b" is replaced by a new directory (a new inode:
 * both exist at once) after the ledger recorded it, as a cgroup removed and
 * made again would be; only "a" is thawed, "b" is logged with both ids. */
static void test_ledger_id_mismatch(Fixture *fx, gconstpointer data) {
        g_autofree char *base = ledger_dir_new();
        g_autofree char *a = g_build_filename(base, "a", NULL);
        g_autofree char *b = g_build_filename(base, "b", NULL);
        g_autofree char *b_new = g_build_filename(base, "b.new", NULL);
        make_fake_cgroup(a, "1");
        make_fake_cgroup(b, "1");
        char *paths[] = { (char *) "a", (char *) "b", NULL };
        uint64_t ids[] = { ino_of(a), ino_of(b) };
        g_assert_cmpint(ledger_add(fx->ledger, paths, ids), ==, 0);

        make_fake_cgroup(b_new, "1");
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s' && mv '%s' '%s'", b, b_new, b);
        g_assert_cmpint(system(cmd), ==, 0);
        uint64_t b_now = ino_of(b);
        g_assert_cmpuint(b_now, !=, ids[1]);

        log_capture();
        int root_fd = root_open(base);
        g_assert_cmpint(root_fd, >=, 0);
        g_assert_cmpint(ledger_thaw_all(fx->ledger, root_fd), ==, 1);
        close(root_fd);
        assert_logged_not_thawed("b", ids[1], b_now);

        g_autofree char *v_a = fake_read(a), *v_b = fake_read(b);
        g_assert_cmpstr(v_a, ==, "0");
        g_assert_cmpstr(v_b, ==, "1");
        assert_ledger_empty_remove(fx, base);
}

/* An older fridged's ledger (paths only) is read, its entries by path, and
 * a new stage appended to it turns the file into the new format whole */
static void test_ledger_old_format(Fixture *fx, gconstpointer data) {
        set_ledger_file(fx->ledger_dir, "old/one\nold/two\n");
        char *paths[] = { (char *) "new/three", NULL };
        uint64_t ids[] = { 42 };
        g_assert_cmpint(ledger_add(fx->ledger, paths, ids), ==, 0);
        g_autofree char *p = g_build_filename(fx->ledger_dir, "frozen", NULL);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
        g_assert_cmpstr(text, ==, "fridge-ledger 2\n0 old/one\n0 old/two\n42 new/three\n");
        g_auto(GStrv) listed = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(listed), ==, 3);
        g_assert_cmpstr(listed[0], ==, "old/one");
        g_assert_cmpstr(listed[2], ==, "new/three");
}

/* The real thing: the freezer freezes a scratch cgroup (recording its id),
 * the cgroup is removed and made again under its name and frozen by hand
 * (someone else's now); a restarted fridged's thaw leaves it and logs it. */
/* Freezes `stage` through the freezer (which records the ids), then
 * removes `victim` and makes it again, frozen by hand: someone else's now.
 * Its old id, and the new one in *ret_new_id. */
static uint64_t freeze_then_recreate(Fixture *fx, char **stage, const char *victim, uint64_t *ret_new_id) {
        Run run = { .ledger = fx->ledger, .stage = stage };
        freeze_stage_sync(fx->event, fx->freezer, &run, 10 * G_USEC_PER_SEC);
        g_assert_cmpint(run.done_r, ==, 0);
        g_autofree char *abs = g_strdup_printf("%s/%s", T.mount, victim);
        uint64_t old_id = ino_of(abs);
        g_assert_no_errno(rmdir(abs));
        g_assert_no_errno(mkdir(abs, 0755));
        cg_write(victim, "cgroup.freeze", "1");
        wait_frozen(victim);
        *ret_new_id = ino_of(abs);
        g_assert_cmpuint(*ret_new_id, !=, old_id);
        return old_id;
}

static void test_ledger_recreated_cgroup(Fixture *fx, gconstpointer data) {
        g_auto(GStrv) cg = scratch_cgroups(1);
        uint64_t new_id, old_id = freeze_then_recreate(fx, cg, cg[0], &new_id);

        g_autoptr(Ledger) restarted = NULL;
        g_assert_cmpint(ledger_open(fx->ledger_dir, &restarted), ==, 0);
        log_capture();
        g_assert_cmpint(ledger_thaw_all(restarted, cgroup_fd), ==, 0);
        assert_logged_not_thawed(cg[0], old_id, new_id);
        g_assert_true(cg_is_frozen(cg[0]));
        cg_write(cg[0], "cgroup.freeze", "0");
}

/* The same within one fridged: the cgroup it froze is removed and made
 * again (frozen by its new owner) before the thaw; the thaw leaves it */
static void test_freezer_thaw_recreated_cgroup(Fixture *fx, gconstpointer data) {
        g_auto(GStrv) cg = scratch_cgroups(2);
        uint64_t new_id, old_id = freeze_then_recreate(fx, cg, cg[1], &new_id);

        log_capture();
        g_assert_cmpuint(freezer_thaw_all(fx->freezer), ==, 1);
        assert_logged_not_thawed(cg[1], old_id, new_id);
        g_assert_false(cg_is_frozen(cg[0]));
        g_assert_true(cg_is_frozen(cg[1]));
        g_assert_cmpuint(freezer_n_frozen(fx->freezer), ==, 0);
        g_auto(GStrv) left = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(left), ==, 0);
        cg_write(cg[1], "cgroup.freeze", "0");
}

/* ---- (2) one stage of five cgroups ---- */

static void test_freeze_stage(Fixture *fx, gconstpointer data) {
        g_auto(GStrv) cg = scratch_cgroups(5);
        pid_t kids[10];
        for (unsigned i = 0; i < 10; i++)
                kids[i] = spawn_sleeper(cg[i / 2]);

        writes_reset(fx->ledger);
        Run run = { .ledger = fx->ledger, .stage = cg };
        int64_t took = freeze_stage_sync(fx->event, fx->freezer, &run, 10 * G_USEC_PER_SEC);
        g_test_message("freeze of 5 cgroups (10 tasks) took %.1f ms", took / 1000.0);

        g_assert_cmpint(run.done_r, ==, 0);
        g_assert_cmpuint(W.writes->len, ==, 5); /* the wrap saw every freeze write */
        g_assert_cmpuint(W.unlisted, ==, 0);
        g_assert_true(run.ledger_had_all);
        g_assert_cmpuint(run.calls, ==, 5);
        g_assert_cmpuint(run.last_frozen, ==, 5);
        g_assert_cmpuint(run.last_total, ==, 5);
        for (unsigned i = 0; i < 5; i++)
                g_assert_true(cg_is_frozen(cg[i]));
        g_assert_cmpuint(freezer_n_frozen(fx->freezer), ==, 5);
        g_autofree char *none = describe_blockers(fx->freezer);
        g_assert_cmpstr(none, ==, "");
        assert_idle(fx->event);

        int64_t start = g_get_monotonic_time();
        g_assert_cmpuint(freezer_thaw_all(fx->freezer), ==, 5);
        g_test_message("thaw of 5 cgroups took %.1f ms", (g_get_monotonic_time() - start) / 1000.0);
        for (unsigned i = 0; i < 5; i++) {
                g_autofree char *v = cg_read(cg[i], "cgroup.freeze");
                g_assert_cmpstr(v, ==, "0");
        }
        for (unsigned i = 0; i < 10; i++)
                g_assert_true(kid_alive(kids[i]));
        g_auto(GStrv) left = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(left), ==, 0);
        g_assert_cmpuint(freezer_n_frozen(fx->freezer), ==, 0);
        g_assert_cmpuint(freezer_thaw_all(fx->freezer), ==, 0);
        assert_idle(fx->event);
}

/* ---- (3) two stages, thawed in reverse ---- */

static void test_two_stages_reverse(Fixture *fx, gconstpointer data) {
        g_auto(GStrv) cg = scratch_cgroups(4);
        for (unsigned i = 0; i < 4; i++)
                spawn_sleeper(cg[i]);
        char *first[] = { cg[0], cg[1], NULL }, *second[] = { cg[2], cg[3], NULL };

        writes_reset(fx->ledger);
        Run a = { .ledger = fx->ledger, .stage = first };
        freeze_stage_sync(fx->event, fx->freezer, &a, 10 * G_USEC_PER_SEC);
        g_assert_cmpint(a.done_r, ==, 0);
        g_auto(GStrv) after_a = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(after_a), ==, 2);

        Run b = { .ledger = fx->ledger, .stage = second };
        freeze_stage_sync(fx->event, fx->freezer, &b, 10 * G_USEC_PER_SEC);
        g_assert_cmpint(b.done_r, ==, 0);
        g_auto(GStrv) after_b = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(after_b), ==, 4);
        for (unsigned i = 0; i < 4; i++)
                g_assert_cmpstr(after_b[i], ==, cg[i]);
        g_assert_cmpuint(freezer_n_frozen(fx->freezer), ==, 4);

        g_assert_cmpuint(freezer_thaw_all(fx->freezer), ==, 4);
        const unsigned order[] = { 0, 1, 2, 3, 3, 2, 1, 0 };
        g_assert_cmpuint(W.writes->len, ==, G_N_ELEMENTS(order));
        for (unsigned i = 0; i < G_N_ELEMENTS(order); i++) {
                g_autofree char *want = g_strdup_printf("%s %s", i < 4 ? "1" : "0", cg[order[i]]);
                g_assert_cmpstr(W.writes->pdata[i], ==, want);
        }
        g_auto(GStrv) left = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(left), ==, 0);
}

/* ---- (4) a cgroup that cannot freeze: a task in fsync() on held slowfs ---- */

static bool is_mounted(const char *dir) {
        g_autofree char *info = NULL, *needle = g_strdup_printf(" %s ", dir);
        return g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL) && strstr(info, needle);
}

static bool slowfs_start(void) {
        const char *exe = g_getenv("SLOWFS");
        if (!exe || access("/dev/fuse", R_OK | W_OK) < 0) {
                g_test_skip(exe ? "no /dev/fuse" : "SLOWFS not set (run through meson test)");
                return false;
        }
        g_strlcpy(T.fuse_dir, "/tmp/frz-slowfs-XXXXXX", sizeof(T.fuse_dir));
        g_assert_nonnull(mkdtemp(T.fuse_dir));
        pid_t pid = fork();
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGTERM);
                execl(exe, exe, T.fuse_dir, (char *) NULL);
                _exit(127);
        }
        g_assert_cmpint(pid, >, 0);
        T.fuse_pid = pid;
        for (int i = 0; i < 500 && !is_mounted(T.fuse_dir); i++)
                pause_ms(10);
        g_assert_true(is_mounted(T.fuse_dir));
        return true;
}

/* A child that dirties a slowfs file and fsync()s it, in cgroup rel. */
static pid_t spawn_fsyncer(const char *rel, const char *dir) {
        g_autofree char *file = g_build_filename(dir, "data", NULL);
        int go[2];
        g_assert_no_errno(pipe2(go, O_CLOEXEC));
        pid_t pid = fork();
        if (pid == 0) {
                char c, buf[8192];
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                prctl(PR_SET_NAME, "frz-fsync");
                if (read(go[0], &c, 1) != 1)
                        _exit(1);
                int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                memset(buf, 'x', sizeof(buf));
                if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t) sizeof(buf))
                        _exit(2);
                (void) fsync(fd);
                for (;;)
                        pause();
        }
        track_kid(pid);
        g_autofree char *s = g_strdup_printf("%d", (int) pid);
        cg_write(rel, "cgroup.procs", s);
        g_assert_cmpint(write(go[1], "g", 1), ==, 1);
        close(go[0]);
        close(go[1]);
        return pid;
}

static bool blocked_in_fuse(pid_t pid) {
        g_autofree char *stat_p = g_strdup_printf("/proc/%d/stat", (int) pid);
        g_autofree char *stack_p = g_strdup_printf("/proc/%d/stack", (int) pid);
        g_autofree char *stat = NULL, *stack = NULL;
        if (!g_file_get_contents(stat_p, &stat, NULL, NULL) || !g_file_get_contents(stack_p, &stack, NULL, NULL))
                return false;
        const char *p = strrchr(stat, ')');
        return p && p[1] == ' ' && p[2] == 'D' && strstr(stack, "fuse");
}

static void test_freeze_timeout(Fixture *fx, gconstpointer data) {
        if (!slowfs_start())
                return;
        put_file(T.fuse_dir, ".control", "hold");
        g_auto(GStrv) cg = scratch_cgroups(2);
        pid_t stuck = spawn_fsyncer(cg[0], T.fuse_dir);
        pid_t beside = spawn_sleeper(cg[0]); /* freezes; must not be named */
        spawn_sleeper(cg[1]);
        for (int i = 0; i < 500 && !blocked_in_fuse(stuck); i++)
                pause_ms(10);
        g_assert_true(blocked_in_fuse(stuck));

        const uint64_t timeout = 500 * 1000;
        Run run = { .ledger = fx->ledger, .stage = cg };
        int64_t took = freeze_stage_sync(fx->event, fx->freezer, &run, timeout);
        g_test_message("timeout %.0f ms: done(-ETIMEDOUT) after %.1f ms", timeout / 1000.0, took / 1000.0);
        g_assert_cmpint(run.done_r, ==, -ETIMEDOUT);
        g_assert_cmpint(took, >=, (int64_t) timeout);
        g_assert_cmpint(took, <, (int64_t) timeout + G_USEC_PER_SEC);
        g_assert_cmpuint(run.last_frozen, ==, 1); /* the sleeper's cgroup did freeze */
        assert_idle(fx->event);

        g_autofree char *why = describe_blockers(fx->freezer);
        g_test_message("blockers: %s", why);
        g_assert_cmpstr(freezer_first_pending(fx->freezer), ==, cg[0]); /* what ProgressText names */
        g_autofree char *cg_part = g_strdup_printf("%s:", cg[0]);
        g_autofree char *pid_part = g_strdup_printf("pid %d (frz-fsync) state D", (int) stuck);
        g_autofree char *mount_part = g_strdup_printf("on FUSE mount %s", T.fuse_dir);
        g_assert_nonnull(strstr(why, cg_part));
        g_assert_nonnull(strstr(why, pid_part));
        g_assert_nonnull(strstr(why, mount_part));
        g_assert_null(strstr(why, cg[1]));
        g_autofree char *beside_part = g_strdup_printf("pid %d ", (int) beside);
        g_assert_null(strstr(why, beside_part));

        g_assert_cmpuint(freezer_thaw_all(fx->freezer), ==, 2);
        g_autofree char *v = cg_read(cg[0], "cgroup.freeze");
        g_assert_cmpstr(v, ==, "0");
        g_auto(GStrv) left = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(left), ==, 0);
}

/* ---- (5) cancel ---- */

static void test_cancel(Fixture *fx, gconstpointer data) {
        g_auto(GStrv) cg = scratch_cgroups(3);
        for (unsigned i = 0; i < 3; i++)
                spawn_sleeper(cg[i]);

        Run run = { .ledger = fx->ledger, .stage = cg };
        g_assert_cmpint(freezer_freeze_stage(fx->freezer, cg, 10 * G_USEC_PER_SEC, on_progress, on_done, &run), ==, 0);
        g_assert_cmpint(freezer_freeze_stage(fx->freezer, cg, G_USEC_PER_SEC, on_progress, on_done, &run), ==, -EBUSY);
        freezer_cancel_stage(fx->freezer);
        assert_idle(fx->event);
        g_assert_false(run.done);
        g_assert_cmpuint(freezer_n_frozen(fx->freezer), ==, 3);

        g_assert_cmpuint(freezer_thaw_all(fx->freezer), ==, 3);
        for (unsigned i = 0; i < 3; i++) {
                g_autofree char *v = cg_read(cg[i], "cgroup.freeze");
                g_assert_cmpstr(v, ==, "0");
        }
        g_auto(GStrv) left = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(left), ==, 0);
        g_assert_cmpuint(freezer_n_frozen(fx->freezer), ==, 0);
        g_assert_false(run.done);
}

/* An empty stage is done from the loop, with 0, and invalid paths change nothing. */
static void test_empty_and_invalid(Fixture *fx, gconstpointer data) {
        char *empty[] = { NULL };
        Run run = { .stage = empty };
        g_assert_cmpint(freezer_freeze_stage(fx->freezer, empty, G_USEC_PER_SEC, on_progress, on_done, &run), ==, 0);
        g_assert_false(run.done);
        g_assert_true(run_until_done(fx->event, &run, G_USEC_PER_SEC));
        g_assert_cmpint(run.done_r, ==, 0);

        char *bad[] = { (char *) "../etc", NULL };
        g_assert_cmpint(freezer_freeze_stage(fx->freezer, bad, G_USEC_PER_SEC, NULL, on_done, &run), ==, -EINVAL);
        g_auto(GStrv) left = ledger_list(fx->ledger);
        g_assert_cmpuint(g_strv_length(left), ==, 0);
        assert_idle(fx->event);
}

/* ---- setup ---- */

static const char *environment_problem(void) {
        if (geteuid() != 0)
                return "not root: the cgroup freezer tests need to create cgroups";
        g_autofree char *info = NULL;
        g_autoptr(GPtrArray) mounts = NULL;
        if (!g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL) || parse_mountinfo(info, &mounts) < 0)
                return "cannot read /proc/self/mountinfo";
        for (guint i = 0; i < mounts->len && !T.mount[0]; i++) {
                const MountEntry *m = mounts->pdata[i];
                if (g_str_equal(m->fstype, "cgroup2"))
                        g_strlcpy(T.mount, m->mount_point, sizeof(T.mount));
        }
        if (!T.mount[0])
                return "no cgroup2 mount in /proc/self/mountinfo";
        cgroup_fd = root_open(T.mount);
        proc_fd = root_open("/proc");
        if (cgroup_fd < 0 || proc_fd < 0)
                return "cannot open the cgroup2 mount or /proc";

        g_autofree char *probe = g_strdup_printf("fridge-test-%d-probe", (int) getpid());
        g_autofree char *rel = scratch_mkdir(probe);
        g_autofree char *freeze = g_strdup_printf("%s/%s/cgroup.freeze", T.mount, rel);
        bool has_freeze = access(freeze, W_OK) == 0;
        cleanup_all();
        return has_freeze ? NULL : "cgroup.freeze missing: the kernel has no cgroup v2 freezer";
}

#define ADD(name, fn) g_test_add("/cgroup/" name, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        install_safety_net();
        const char *why = environment_problem();
        if (why) {
                printf("SKIP: %s\n", why);
                return SKIP;
        }
        g_test_message("cgroup2 mount: %s", T.mount);

        ADD("ledger-round-trip", test_ledger_round_trip);
        ADD("ledger-thaw-all", test_ledger_thaw_all_real);
        ADD("ledger-thaw-all-symlink", test_ledger_thaw_all_symlink);
        ADD("ledger-id-mismatch", test_ledger_id_mismatch);
        ADD("ledger-old-format", test_ledger_old_format);
        ADD("ledger-recreated-cgroup", test_ledger_recreated_cgroup);
        ADD("freezer-thaw-recreated-cgroup", test_freezer_thaw_recreated_cgroup);
        ADD("freeze-stage", test_freeze_stage);
        ADD("two-stages-reverse", test_two_stages_reverse);
        ADD("freeze-timeout", test_freeze_timeout);
        ADD("cancel", test_cancel);
        ADD("empty-and-invalid", test_empty_and_invalid);
        return g_test_run();
}
