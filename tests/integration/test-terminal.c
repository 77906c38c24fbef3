/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The caller's terminal through more than one pty, with the real tools: a
 * terminal emulator (script(1): it holds a pty's master, draws what it
 * gets to a file and types what the test writes to it) runs tmux's client,
 * GNU screen's, or sudo with use_pty, and behind that fridgectl suspend
 * runs against the harness's fridged and fakesys. Each process sits in a
 * scratch cgroup of its own, as the desktops' units lay them out. Across
 * the whole cycle none of the chain's cgroups is frozen, the plan names
 * each hop, the bar reaches the emulator after the early freeze, and Esc
 * typed into the emulator crosses every pty and cancels the cycle.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness.h"
#include "scratch.h"

typedef struct Fixture {
        Harness *h;
        Scratch *s;
        char *tmp;              /* sockets, scripts, the emulator's screen, the exit code */
        const char *term, *mux, *shell, *app, *stuck;
        pid_t emulator;
        int keys;               /* what is typed into the emulator */
} Fixture;

static bool have_tool(const char *tool) {
        g_autofree char *path = g_find_program_in_path(tool);
        if (!path)
                g_test_skip_printf("%s is not installed (tools/lib/setup.sh installs it)", tool);
        return path != NULL;
}

static bool setup(Fixture *f, const char *mux_tool) {
        f->keys = -1;
        const char *why = harness_scratch_skip_reason();
        if (why) {
                g_test_skip(why);
                return false;
        }
        if (!harness_env("SLOWFS") || !harness_env("FRIDGECTL")) {
                g_test_skip("SLOWFS or FRIDGECTL is not set");
                return false;
        }
        if (!have_tool("script") || !have_tool(mux_tool))
                return false;
        f->s = scratch_new();
        f->tmp = g_dir_make_tmp("fridge-terminal-XXXXXX", NULL);
        g_assert_nonnull(f->tmp);
        /* uid 65534's emulator and shell read the scripts here */
        g_assert_cmpint(chmod(f->tmp, 0755), ==, 0);
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\nTimeoutMs=120000\n"
                                                  "[Flush]\nTimeoutMs=1500\nOnTimeout=continue\n", f->s->root);
        HarnessOptions o = { .config = config, .real_cgroups = true, .slowfs = true };
        f->h = harness_new(&o);
        f->term = scratch_add(f->s, "term.scope");
        f->mux = scratch_add(f->s, "mux.scope");
        f->shell = scratch_add(f->s, "shell.scope");
        f->app = scratch_add(f->s, "app.service");
        f->stuck = scratch_add(f->s, "stuck.service");
        scratch_spawn(f->s, f->app, NULL);
        return true;
}

static void teardown(Fixture *f, gconstpointer data) {
        if (f->h && g_test_failed())
                harness_dump_fridged_log(f->h);
        if (f->h && f->h->slowfs_held)
                harness_slowfs_release(f->h);
        if (f->keys >= 0)
                close(f->keys);
        harness_free(f->h);
        scratch_free(f->s); /* after fridged: it must not hold anything frozen */
        if (f->tmp) {
                g_autofree char *rm = g_strdup_printf("rm -rf '%s'", f->tmp);
                (void) !system(rm);
                g_free(f->tmp);
        }
}

static char *tmp_path(Fixture *f, const char *name) {
        return g_build_filename(f->tmp, name, NULL);
}

static void write_script(Fixture *f, const char *name, const char *text) {
        g_autofree char *path = tmp_path(f, name);
        g_assert_true(g_file_set_contents(path, text, -1, NULL));
        g_assert_cmpint(chmod(path, 0755), ==, 0);
}

/* The caller: waits for the go-ahead (the emulator attached), moves its
 * shell to shell.scope and runs fridgectl suspend there */
static void write_caller(Fixture *f) {
        g_autofree char *go = tmp_path(f, "go"), *rc = tmp_path(f, "fridgectl.rc");
        g_autofree char *shell_dir = scratch_abs(f->s, f->shell);
        g_autofree char *text = g_strdup_printf("while [ ! -e '%s' ]; do sleep 0.05; done\n"
                                                "echo $$ > '%s/cgroup.procs' && '%s' --bus-address='%s' suspend\n"
                                                "echo $? > '%s'\n",
                                                go, shell_dir, harness_exe_for_others(harness_env("FRIDGECTL")),
                                                f->h->bus_address, rc);
        write_script(f, "caller.sh", text);
}

static void go(Fixture *f) {
        g_autofree char *path = tmp_path(f, "go");
        g_assert_true(g_file_set_contents(path, "", 0, NULL));
}

/* harness_run() with argv[0] looked up in PATH */
static int run_tool(char **argv, char **ret_out) {
        g_autofree char *path = g_find_program_in_path(argv[0]);
        g_assert_nonnull(path);
        char *first = argv[0];
        argv[0] = path;
        int status = harness_run(argv, 10000, ret_out);
        argv[0] = first;
        return status;
}

/* The terminal emulator in term.scope: script(1) holding a pty's master,
 * running `command` on it, its screen to a file, its keys from a pipe */
static void start_emulator(Fixture *f, char *const *prefix, const char *command) {
        g_autofree char *dir = scratch_abs(f->s, f->term);
        g_autofree char *procs = g_build_filename(dir, "cgroup.procs", NULL);
        g_autofree char *screen = tmp_path(f, "screen.log");
        int keys[2], p[2];
        g_assert_cmpint(pipe2(keys, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        for (char *const *a = prefix; a && *a; a++)
                g_ptr_array_add(argv, *a);
        const char *tail[] = { "env", "TERM=xterm", "script", "-q", "-f", "-c", command, "/dev/null", NULL };
        for (const char *const *a = tail; *a; a++)
                g_ptr_array_add(argv, (char *) *a);
        g_ptr_array_add(argv, NULL);
        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                int fd = open(procs, O_WRONLY | O_CLOEXEC);
                int out = open(screen, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0 || write(fd, "0", 1) != 1 || out < 0 || dup2(keys[0], 0) < 0 || dup2(out, 1) < 0)
                        _exit(90);
                (void) !write(p[1], "x", 1);
                execvp(argv->pdata[0], (char **) argv->pdata);
                _exit(91);
        }
        close(keys[0]);
        close(p[1]);
        char c;
        g_assert_cmpint(read(p[0], &c, 1), ==, 1);
        close(p[0]);
        g_array_append_val(f->s->pids, pid);
        f->emulator = pid;
        f->keys = keys[1];
}

/* A data cleaner in fsync on held slowfs, which cannot freeze: the late
 * stage waits for it, so the cycle stays cancellable as long as we like */
static void hold_in_late_stage(Fixture *f) {
        harness_assert_task_in_state_d(harness_scratch_stuck_in_fsync(f->h, f->s, f->stuck, NULL, NULL));
}

/* The chain's cgroups, watched from before the emulator starts */
static ScratchWatch *watch_chain(Fixture *f) {
        const char *watched[] = { f->term, f->mux, f->shell, NULL };
        return scratch_watch_start(f->s, watched);
}

static void assert_log_has(Fixture *f, const char *what) {
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(f->h->fridged_log, &log, NULL, NULL));
        if (!strstr(log, what))
                g_error("fridged's log lacks \"%s\"", what);
}

static void assert_ui(Fixture *f, const char *cgroup, const char *reason_start) {
        g_autofree char *line = g_strdup_printf("%s is ui: %s", cgroup, reason_start);
        assert_log_has(f, line);
}

/* The cycle from the go-ahead to Esc: the early stage frozen, the late one
 * waiting on the stuck cleaner; the bar reached the emulator meanwhile; Esc
 * typed there cancels it and fridgectl says so (exit 3). */
static void cycle_until_esc(Fixture *f, ScratchWatch *w) {
        go(f);
        g_assert_true(harness_wait_property_signal(f->h, "Phase", "freeze-late", 60000));
        g_assert_true(scratch_is_frozen(f->s, f->app));
        g_autofree char *screen_path = tmp_path(f, "screen.log");
        g_autofree char *before = NULL;
        g_assert_true(g_file_get_contents(screen_path, &before, NULL, NULL));
        uint64_t cycle = harness_get_u64(f->h, "CycleId");
        /* the bar keeps being drawn while the late stage waits: the emulator
         * gets more of it */
        bool drawn = false;
        for (int i = 0; i < 100 && !drawn; i++) {
                g_autofree char *now = NULL;
                g_assert_true(g_file_get_contents(screen_path, &now, NULL, NULL));
                drawn = strlen(now) > strlen(before);
                if (!drawn)
                        g_usleep(100000);
        }
        g_assert_true(drawn);
        g_assert_cmpint(write(f->keys, "\033", 1), ==, 1);
        g_autofree char *res = NULL, *error = NULL;
        g_assert_true(harness_wait_finished(f->h, cycle, 30000, &res, &error, NULL));
        g_assert_cmpstr(res, ==, "aborted");
        g_assert_cmpstr(error, ==, FRIDGE_INTERFACE ".Error.Cancelled");
        g_autofree char *rc_file = tmp_path(f, "fridgectl.rc");
        for (int i = 0; i < 1000 && !g_file_test(rc_file, G_FILE_TEST_EXISTS); i++)
                g_usleep(10000);
        g_autofree char *rc = NULL;
        g_assert_true(g_file_get_contents(rc_file, &rc, NULL, NULL));
        g_assert_cmpstr(g_strstrip(rc), ==, "3"); /* fridgectl: the cycle was cancelled */
        scratch_watch_end(w);
        for (guint i = 0; i < f->s->cgroups->len; i++)
                if (scratch_is_frozen(f->s, f->s->cgroups->pdata[i]))
                        g_error("%s is still frozen", (const char *) f->s->cgroups->pdata[i]);
        harness_slowfs_release(f->h);
}

/* Polls `argv` until its output holds `want` */
static void wait_output(char **argv, const char *want) {
        for (int i = 0; i < 200; i++) {
                g_autofree char *out = NULL;
                if (run_tool(argv, &out) == 0 && out && strstr(out, want))
                        return;
                g_usleep(50000);
        }
        g_error("%s never printed \"%s\"", argv[0], want);
}

/* tmux: its server (in mux.scope) holds fridgectl's pty and has no
 * terminal; its client runs in the emulator, which must stay running too */
static void test_tmux(Fixture *f, gconstpointer data) {
        if (!setup(f, "tmux"))
                return;
        write_caller(f);
        hold_in_late_stage(f);
        g_autofree char *sock = tmp_path(f, "tmux.sock"), *caller = tmp_path(f, "caller.sh");
        g_autofree char *session = g_strdup_printf("sh '%s'", caller);
        char *server[] = { (char *) "env", (char *) "TERM=xterm", (char *) "tmux", (char *) "-S", sock,
                           (char *) "-f", (char *) "/dev/null", (char *) "new-session", (char *) "-d",
                           (char *) "-x", (char *) "100", (char *) "-y", (char *) "8", session, NULL };
        scratch_spawn(f->s, f->mux, server);
        char *has[] = { (char *) "tmux", (char *) "-S", sock, (char *) "has-session", NULL };
        wait_output(has, "");
        ScratchWatch *w = watch_chain(f);
        g_autofree char *attach = g_strdup_printf("tmux -S '%s' attach", sock);
        start_emulator(f, NULL, attach);
        char *clients[] = { (char *) "tmux", (char *) "-S", sock, (char *) "list-clients", NULL };
        wait_output(clients, "/dev/pts/");
        cycle_until_esc(f, w);
        assert_ui(f, f->mux, "terminal of the caller: tmux");
        assert_ui(f, f->term, "terminal of the caller, hop 2: tmux");
        assert_log_has(f, "is a client of tmux");
        assert_log_has(f, "; hop 3: script (pid ");
        assert_ui(f, f->shell, "the client that started the cycle");
}

/* GNU screen: the same shape, its server started in the foreground */
static void test_screen(Fixture *f, gconstpointer data) {
        if (!setup(f, "screen"))
                return;
        write_caller(f);
        hold_in_late_stage(f);
        g_autofree char *dir = tmp_path(f, "screens"), *caller = tmp_path(f, "caller.sh");
        g_assert_cmpint(g_mkdir(dir, 0700), ==, 0);
        g_autofree char *env_dir = g_strdup_printf("SCREENDIR=%s", dir);
        char *server[] = { (char *) "env", env_dir, (char *) "TERM=xterm", (char *) "screen", (char *) "-D",
                           (char *) "-m", (char *) "-S", (char *) "fridge-test", (char *) "sh", caller, NULL };
        scratch_spawn(f->s, f->mux, server);
        char *ls[] = { (char *) "env", env_dir, (char *) "screen", (char *) "-ls", NULL };
        wait_output(ls, "fridge-test");
        ScratchWatch *w = watch_chain(f);
        g_autofree char *attach = g_strdup_printf("env '%s' screen -r fridge-test", env_dir);
        start_emulator(f, NULL, attach);
        wait_output(ls, "(Attached)");
        cycle_until_esc(f, w);
        assert_ui(f, f->mux, "terminal of the caller: screen");
        assert_ui(f, f->term, "terminal of the caller, hop 2: screen");
        assert_log_has(f, "is a client of screen");
        assert_ui(f, f->shell, "the client that started the cycle");
}

/* sudo with use_pty, as Debian's sudoers has it: uid 65534's emulator
 * runs sudo (in mux.scope), whose own pty fridgectl runs on as root. The
 * emulator is neither the caller's uid nor root: it counts as the owner
 * of sudo's terminal. The sudoers file is the test's own, bound over
 * /etc/sudoers in a mount namespace of the emulator's. */
static void test_sudo(Fixture *f, gconstpointer data) {
        if (!setup(f, "sudo") || !have_tool("unshare") || !have_tool("setpriv"))
                return;
        write_caller(f);
        hold_in_late_stage(f);
        write_script(f, "sudoers", "Defaults use_pty\nDefaults !lecture\nnobody ALL=(root) NOPASSWD: ALL\n");
        g_autofree char *sudoers = tmp_path(f, "sudoers"), *caller = tmp_path(f, "caller.sh");
        g_assert_cmpint(chmod(sudoers, 0440), ==, 0);
        /* uid 65534's shell moves itself to mux.scope before it runs sudo */
        g_autofree char *mux_dir = scratch_abs(f->s, f->mux);
        g_autofree char *mux_procs = g_build_filename(mux_dir, "cgroup.procs", NULL);
        g_autofree char *root_dir = scratch_abs(f->s, f->s->root);
        g_autofree char *root_procs = g_build_filename(root_dir, "cgroup.procs", NULL);
        g_assert_cmpint(chown(mux_procs, 65534, 65534), ==, 0);
        g_assert_cmpint(chown(root_procs, 65534, 65534), ==, 0);
        g_autofree char *outer = g_strdup_printf("echo $$ > '%s' && exec sudo -n sh '%s'\n", mux_procs, caller);
        write_script(f, "outer.sh", outer);
        g_autofree char *mount = g_strdup_printf("mount --bind '%s' /etc/sudoers && exec \"$0\" \"$@\"", sudoers);
        char *prefix[] = { (char *) "unshare", (char *) "-m", (char *) "sh", (char *) "-c", mount, (char *) "setpriv",
                           (char *) "--reuid=65534", (char *) "--regid=65534", (char *) "--clear-groups", NULL };
        ScratchWatch *w = watch_chain(f);
        g_autofree char *outer_path = tmp_path(f, "outer.sh");
        g_autofree char *command = g_strdup_printf("sh '%s'", outer_path);
        start_emulator(f, prefix, command);
        cycle_until_esc(f, w);
        assert_ui(f, f->mux, "terminal of the caller: sudo");
        assert_ui(f, f->term, "terminal of the caller, hop 2: script (pid ");
        assert_log_has(f, "'s master, the terminal of sudo (pid ");
        assert_ui(f, f->shell, "the client that started the cycle");
}

static void noop_setup(Fixture *f, gconstpointer data) {
}

#define ADD(name, fn) g_test_add("/terminal/" name, Fixture, NULL, noop_setup, fn, teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        ADD("tmux", test_tmux);
        ADD("screen", test_screen);
        ADD("sudo", test_sudo);
        return g_test_run();
}
