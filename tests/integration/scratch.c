/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static GPtrArray *live; /* Scratch* not yet freed, for the atexit handler */

static char *find_cgroup2_mount(void) {
        g_autofree char *text = NULL;
        if (!g_file_get_contents("/proc/self/mountinfo", &text, NULL, NULL))
                return NULL;
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                const char *sep = strstr(*l, " - ");
                if (!sep || !g_str_has_prefix(sep + 3, "cgroup2 "))
                        continue;
                g_auto(GStrv) f = g_strsplit(*l, " ", 6);
                if (g_strv_length(f) >= 5)
                        return g_strcompress(f[4]);
        }
        return NULL;
}

const char *scratch_skip_reason(void) {
        static char why[256];
        if (geteuid() != 0)
                return "not root: scratch cgroups need root";
        g_autofree char *mount = find_cgroup2_mount();
        if (!mount)
                return "no cgroup v2 mount in /proc/self/mountinfo";
        g_autofree char *probe = g_build_filename(mount, "fridge-probe-XXXXXX", NULL);
        if (!g_mkdtemp(probe)) {
                snprintf(why, sizeof(why), "cannot create a cgroup below %s: %s", mount, g_strerror(errno));
                return why;
        }
        g_autofree char *freeze = g_build_filename(probe, "cgroup.freeze", NULL);
        bool ok = access(freeze, W_OK) == 0;
        rmdir(probe);
        if (!ok)
                return "the cgroup v2 freezer (cgroup.freeze) is not available";
        return NULL;
}

static void scratch_free_all(void) {
        while (live && live->len > 0)
                scratch_free(live->pdata[live->len - 1]);
}

static struct sigaction previous[NSIG];

/* Thaw first, then hand over to whoever handled the signal before (the
 * harness unmounts and stops its daemons there) */
static void on_fatal(int sig) {
        scratch_free_all();
        sigaction(sig, &previous[sig], NULL);
        raise(sig);
}

static void chain_handler(int sig) {
        struct sigaction sa = { .sa_handler = on_fatal };
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, &previous[sig]);
}

char *scratch_abs(Scratch *s, const char *cgroup) {
        return g_build_filename(s->mount, cgroup, NULL);
}

static void write_attr(Scratch *s, const char *cgroup, const char *attr, const char *value) {
        g_autofree char *dir = scratch_abs(s, cgroup);
        g_autofree char *p = g_build_filename(dir, attr, NULL);
        int fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        (void) !write(fd, value, strlen(value));
        close(fd);
}

Scratch *scratch_new(void) {
        static unsigned n;
        Scratch *s = g_new0(Scratch, 1);
        s->mount = find_cgroup2_mount();
        g_assert_nonnull(s->mount);
        s->root = g_strdup_printf("fridge-itest-%d-%u", (int) getpid(), n++);
        s->cgroups = g_ptr_array_new_with_free_func(g_free);
        s->pids = g_array_new(FALSE, FALSE, sizeof(pid_t));

        if (!live) {
                live = g_ptr_array_new();
                atexit(scratch_free_all);
                chain_handler(SIGABRT);
                chain_handler(SIGTRAP);
                chain_handler(SIGSEGV);
                chain_handler(SIGTERM);
        }
        g_ptr_array_add(live, s);

        g_autofree char *abs = scratch_abs(s, s->root);
        g_assert_cmpint(mkdir(abs, 0755), ==, 0);
        g_ptr_array_add(s->cgroups, g_strdup(s->root));
        return s;
}

const char *scratch_add(Scratch *s, const char *name) {
        return scratch_add_in(s, s->root, name);
}

/* One level at a time, so scratch_free can remove what it made */
const char *scratch_add_in(Scratch *s, const char *parent, const char *name) {
        g_assert_null(strchr(name, '/'));
        char *rel = g_build_filename(parent, name, NULL);
        g_autofree char *abs = scratch_abs(s, rel);
        g_assert_cmpint(mkdir(abs, 0755), ==, 0);
        g_ptr_array_add(s->cgroups, rel);
        return rel;
}

pid_t scratch_spawn(Scratch *s, const char *cgroup, char *const *argv) {
        g_autofree char *dir = scratch_abs(s, cgroup);
        g_autofree char *procs = g_build_filename(dir, "cgroup.procs", NULL);
        int p[2];
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);

        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                int fd = open(procs, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, "0", 1) != 1)
                        _exit(90);
                close(fd);
                (void) !write(p[1], "x", 1);
                if (!argv) {
                        for (;;)
                                pause();
                }
                execvp(argv[0], argv);
                _exit(91);
        }
        close(p[1]);
        char c;
        ssize_t n = read(p[0], &c, 1);
        close(p[0]);
        g_assert_cmpint(n, ==, 1);
        g_array_append_val(s->pids, pid);
        return pid;
}

bool scratch_is_frozen(Scratch *s, const char *cgroup) {
        g_autofree char *dir = scratch_abs(s, cgroup);
        g_autofree char *p = g_build_filename(dir, "cgroup.events", NULL);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
        return strstr(text, "frozen 1") != NULL;
}

/* Children of the processes we started (a shell's sleep) live in our
 * cgroups too: end each one listed there, by PID, until none is left. */
static void empty_cgroup(Scratch *s, const char *cgroup) {
        g_autofree char *dir = scratch_abs(s, cgroup);
        g_autofree char *procs = g_build_filename(dir, "cgroup.procs", NULL);
        for (int attempt = 0; attempt < 200; attempt++) {
                g_autofree char *text = NULL;
                if (!g_file_get_contents(procs, &text, NULL, NULL) || !*g_strstrip(text))
                        return;
                g_auto(GStrv) pids = g_strsplit(text, "\n", -1);
                for (char **p = pids; *p; p++)
                        if (**p)
                                kill((pid_t) atoi(*p), SIGKILL);
                g_usleep(5000); /* bounded: the kernel reaps them asynchronously */
        }
}

void scratch_free(Scratch *s) {
        if (!s)
                return;
        /* Thaw deepest first, then end our processes and remove the cgroups */
        for (guint i = s->cgroups->len; i > 0; i--)
                write_attr(s, s->cgroups->pdata[i - 1], "cgroup.freeze", "0");
        for (guint i = 0; i < s->pids->len; i++) {
                pid_t pid = g_array_index(s->pids, pid_t, i);
                kill(pid, SIGCONT);
                kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
        }
        for (guint i = s->cgroups->len; i > 0; i--) {
                empty_cgroup(s, s->cgroups->pdata[i - 1]);
                g_autofree char *abs = scratch_abs(s, s->cgroups->pdata[i - 1]);
                if (rmdir(abs) < 0)
                        fprintf(stderr, "scratch: cannot remove %s: %s\n", abs, g_strerror(errno));
        }
        if (live)
                g_ptr_array_remove(live, s);
        g_ptr_array_unref(s->cgroups);
        g_array_unref(s->pids);
        g_free(s->mount);
        g_free(s->root);
        g_free(s);
}

void scratch_pair_new(ScratchPair *ret) {
        ret->s = scratch_new();
        ret->a = scratch_add(ret->s, "a.service");
        ret->b = scratch_add(ret->s, "b.service");
        scratch_spawn(ret->s, ret->a, NULL);
        scratch_spawn(ret->s, ret->b, NULL);
}

/* Other helpers run X servers on this machine too: Xvfb picks its display
 * itself and says which on -displayfd */
unsigned scratch_spawn_xvfb(Scratch *s, const char *cgroup, const char *geometry) {
        int p[2];
        g_assert_cmpint(pipe(p), ==, 0);
        fcntl(p[0], F_SETFD, FD_CLOEXEC);
        g_autofree char *fd = g_strdup_printf("%d", p[1]);
        char *argv[] = { (char *) "Xvfb", (char *) "-displayfd", fd, (char *) "-screen", (char *) "0",
                         (char *) geometry, (char *) "-nolisten", (char *) "tcp", NULL };
        scratch_spawn(s, cgroup, argv);
        close(p[1]);
        char buf[32] = "";
        size_t n = 0;
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        while (n < sizeof(buf) - 1 && !memchr(buf, '\n', n) && poll(&pfd, 1, 20000) > 0) {
                ssize_t k = read(p[0], buf + n, sizeof(buf) - 1 - n);
                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        close(p[0]);
        buf[n] = '\0';
        guint64 display;
        g_autofree char *line = g_strstrip(g_strdup(buf));
        if (!g_ascii_string_to_unsigned(line, 10, 0, 65535, &display, NULL))
                g_error("Xvfb did not say its display (got \"%s\")", buf);
        return (unsigned) display;
}

/* ---- watching cgroups that must never freeze ---- */

struct ScratchWatch {
        char **dirs;            /* absolute cgroup directories */
        gint stop;
        unsigned rounds;
        char *frozen;           /* the first one seen frozen, or NULL */
        GThread *thread;
};

static bool cgroup_frozen_now(const char *dir) {
        g_autofree char *freeze = g_build_filename(dir, "cgroup.freeze", NULL);
        g_autofree char *events = g_build_filename(dir, "cgroup.events", NULL);
        g_autofree char *a = NULL, *b = NULL;
        return (g_file_get_contents(freeze, &a, NULL, NULL) && a[0] == '1') ||
               (g_file_get_contents(events, &b, NULL, NULL) && strstr(b, "frozen 1"));
}

static gpointer watch_run(gpointer data) {
        ScratchWatch *w = data;
        while (!g_atomic_int_get(&w->stop)) {
                for (char **d = w->dirs; *d && !w->frozen; d++)
                        if (cgroup_frozen_now(*d))
                                w->frozen = g_strdup(*d);
                w->rounds++;
                g_usleep(1000);
        }
        return NULL;
}

ScratchWatch *scratch_watch_start(Scratch *s, const char *const *cgroups) {
        ScratchWatch *w = g_new0(ScratchWatch, 1);
        w->dirs = g_new0(char *, g_strv_length((char **) cgroups) + 1);
        for (size_t i = 0; cgroups[i]; i++)
                w->dirs[i] = scratch_abs(s, cgroups[i]);
        w->thread = g_thread_new("scratch-watch", watch_run, w);
        return w;
}

void scratch_watch_end(ScratchWatch *w) {
        g_atomic_int_set(&w->stop, 1);
        g_thread_join(w->thread);
        g_test_message("the watched cgroups were read %u times", w->rounds);
        g_autofree char *frozen = w->frozen;
        g_strfreev(w->dirs);
        g_free(w);
        if (frozen)
                g_error("%s was frozen while it was watched", frozen);
}
