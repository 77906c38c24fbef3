/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The harness's life: skip checks, start-up, teardown (also from atexit and
 * fatal signals) and fridged's restarts. */
#include "harness.h"
#include "harness-private.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Live harnesses, for the emergency teardown (atexit, SIGABRT, SIGTERM). */
#define MAX_LIVE 4
static Harness *live[MAX_LIVE];
static bool handlers_installed;
static pid_t harness_owner_pid;

static void harness_stop_internal(Harness *h);

const char *harness_env(const char *name) {
        const char *v = getenv(name);
        return v && *v ? v : NULL;
}

static bool have_program(const char *name) {
        g_autofree char *p = g_find_program_in_path(name);
        return p != NULL;
}

const char *harness_skip_reason(void) {
        if (geteuid() != 0)
                return "not running as root (FUSE mounts and the private bus need it)";
        if (access("/dev/fuse", R_OK | W_OK) < 0)
                return "/dev/fuse is missing or not accessible";
        if (!have_program("fusermount3"))
                return "fusermount3 is not installed";
        if (!have_program("dbus-daemon"))
                return "dbus-daemon is not installed";
        if (!harness_env("FRIDGED"))
                return "FRIDGED is not set (run through meson test)";
        if (!harness_env("FAKESYS"))
                return "FAKESYS is not set (run through meson test)";
        return NULL;
}

void harness_init(int *argc, char ***argv) {
        g_test_init(argc, argv, NULL);
        const char *why = harness_skip_reason();
        if (why) {
                printf("SKIP: %s\n", why);
                exit(77);
        }
}

/* ---------------------------------------------------------------- mounts */

static bool is_mounted(const char *path) {
        g_autofree char *text = NULL;
        g_auto(GStrv) lines = NULL;

        if (!g_file_get_contents("/proc/self/mountinfo", &text, NULL, NULL))
                return false;
        lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                g_auto(GStrv) f = g_strsplit(*l, " ", 6);
                if (g_strv_length(f) >= 5 && g_str_equal(f[4], path))
                        return true;
        }
        return false;
}
static void unmount(const char *path, bool *mounted) {
        if (!*mounted && !is_mounted(path))
                return;
        char *u[] = { (char *) "/usr/bin/fusermount3", (char *) "-u", (char *) path, NULL };
        g_autofree char *fm = g_find_program_in_path("fusermount3");
        if (fm)
                u[0] = fm;
        int status = harness_run(u, 5000, NULL);
        if (status != 0 || is_mounted(path)) {
                char *uz[] = { u[0], (char *) "-uz", (char *) path, NULL };
                fprintf(stderr, "harness: fusermount3 -u %s failed, trying -uz\n", path);
                (void) harness_run(uz, 5000, NULL);
        }
        *mounted = is_mounted(path);
        if (*mounted)
                fprintf(stderr, "harness: %s is still mounted!\n", path);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        if (flag == FTW_DP)
                (void) rmdir(path);
        else
                (void) unlink(path);
        return 0;
}

/* ---------------------------------------------------------------- emergency */

static void emergency_cleanup(void) {
        if (getpid() != harness_owner_pid)
                return;
        for (int i = 0; i < MAX_LIVE; i++) {
                Harness *h = live[i];
                if (!h)
                        continue;
                harness_dump_fridged_log(h);
                harness_stop_internal(h);
        }
        harness_remove_exe_copies();
}

static struct sigaction previous_handlers[NSIG];

/* Clean up, then hand the signal to whoever had it before (scratch cgroups
 * thaw and go there), which in the end is the default: the process dies */
static void fatal_signal(int sig) {
        emergency_cleanup();
        sigaction(sig, &previous_handlers[sig], NULL);
        raise(sig);
}

static void install_handlers(void) {
        struct sigaction sa = { .sa_handler = fatal_signal, .sa_flags = SA_RESETHAND | SA_NODEFER };
        static const int fatal[] = { SIGABRT, SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGTRAP };

        if (handlers_installed)
                return;
        handlers_installed = true;
        harness_owner_pid = getpid();
        atexit(emergency_cleanup);
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < G_N_ELEMENTS(fatal); i++)
                sigaction(fatal[i], &sa, &previous_handlers[fatal[i]]);
        signal(SIGPIPE, SIG_IGN);
}

static void live_add(Harness *h) {
        for (int i = 0; i < MAX_LIVE; i++)
                if (!live[i]) {
                        live[i] = h;
                        return;
                }
        g_error("too many live harnesses");
}

static void live_remove(Harness *h) {
        for (int i = 0; i < MAX_LIVE; i++)
                if (live[i] == h)
                        live[i] = NULL;
}

Harness *harness_new(const HarnessOptions *opts) {
        Harness *h = g_new0(Harness, 1);
        g_autofree char *tmpl = g_build_filename(g_get_tmp_dir(), "fridge-int-XXXXXX", NULL);

        install_handlers();
        h->fridged_status = -1;
        h->dirty_pipe = -1;
        h->notify_fd = -1;
        h->signals = g_ptr_array_new_with_free_func(harness_signal_free);
        h->dir = g_strdup(g_mkdtemp(tmpl));
        g_assert_nonnull(h->dir);
        h->root = g_build_filename(h->dir, "root", NULL);
        h->conf_dir = g_build_filename(h->dir, "conf", NULL);
        h->fridged_log = g_build_filename(h->dir, "fridged.log", NULL);
        g_assert_cmpint(mkdir(h->root, 0755), ==, 0);
        if (opts && opts->state_on_tmpfs) {
                g_autofree char *state = g_build_filename(h->dir, "state", NULL);
                g_assert_cmpint(mkdir(state, 0755), ==, 0);
                if (mount("tmpfs", state, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755") < 0)
                        g_error("cannot mount a tmpfs on %s: %s", state, g_strerror(errno));
                h->state_mounted = true;
        }
        g_assert_cmpint(mkdir(h->conf_dir, 0755), ==, 0);
        live_add(h);

        h->real_cgroups = opts && opts->real_cgroups;
        h->unit_capabilities = opts && opts->unit_capabilities;
        h->seated_uid = opts ? opts->seated_uid : 0;
        h->umockdev_dir = opts ? g_strdup(opts->umockdev_dir) : NULL;
        h->watchdog_usec = opts ? opts->watchdog_usec : 0;
        if (h->real_cgroups && (!opts->config || !strstr(opts->config, "Roots=")))
                g_error("real_cgroups needs a config naming the test's own scratch Roots=");
        if (opts && opts->config) {
                g_autofree char *conf = g_build_filename(h->conf_dir, "fridge.conf", NULL);
                harness_write_file(conf, opts->config);
        }
        g_autofree char *sleep_conf_dir = g_build_filename(h->dir, "sleep-root", "etc", "systemd", NULL);
        g_assert_cmpint(g_mkdir_with_parents(sleep_conf_dir, 0755), ==, 0);
        if (opts && opts->sleep_conf) {
                g_autofree char *conf = g_build_filename(sleep_conf_dir, "sleep.conf", NULL);
                harness_write_file(conf, opts->sleep_conf);
        }
        if (opts && opts->classes) {
                g_autofree char *dir = g_build_filename(h->conf_dir, "classes.d", NULL);
                g_autofree char *file = g_build_filename(dir, "test.conf", NULL);
                g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
                harness_write_file(file, opts->classes);
        }

        if (opts && opts->vendor_classes) {
                g_autofree char *dir = g_build_filename(h->dir, "vendor", "classes.d", NULL);
                g_autofree char *base = g_path_get_basename(opts->vendor_classes);
                g_autofree char *file = g_build_filename(dir, base, NULL);
                g_autofree char *text = NULL;
                g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
                if (!g_file_get_contents(opts->vendor_classes, &text, NULL, NULL))
                        g_error("cannot read %s", opts->vendor_classes);
                harness_write_file(file, text);
        }

        harness_start_fakesys(h, opts);
        if (opts && opts->slowfs) {
                harness_start_slowfs(h);
                if (g_test_failed() || !h->slow || !h->slowfs_pid)
                        return h;   /* skipped: the caller checks g_test_skipped-ish state */
        }
        h->persistent = g_build_filename(opts && opts->slowfs && opts->persistent_on_slowfs ? h->slow : h->dir,
                                         "lib", NULL);
        harness_start_dbus(h, opts && opts->open_bus);
        if (opts && opts->polkit_table)
                harness_start_polkit(h, opts->polkit_table);
        if (opts && opts->logind)
                harness_start_logind(h, opts);
        harness_make_proc_root(h, opts);
        harness_start_fridged(h);
        harness_connect_bus(h);
        return h;
}

void harness_kill_fridged(Harness *h, int sig) {
        g_assert_cmpint(h->fridged_pid, >, 0);
        g_assert_cmpint(kill(h->fridged_pid, sig), ==, 0);
}

void harness_restart_fridged(Harness *h) {
        if (h->fridged_pid > 0) {
                int status = harness_wait_pid(h->fridged_pid, 10000);
                if (status == -1)
                        g_error("fridged (pid %d) did not exit within 10 s", (int) h->fridged_pid);
                h->fridged_pid = 0;
                h->fridged_status = status;
        }
        if (h->notify_fd >= 0)
                close(h->notify_fd);
        h->notify_fd = -1;
        harness_start_fridged(h);
}

void harness_restart_bus(Harness *h, bool open_bus, const char *polkit_table) {
        (void) harness_stop_pid(&h->dbus_pid, 5000);
        (void) harness_stop_pid(&h->polkit_pid, 2000);
        while (sd_bus_process(h->bus, NULL) > 0) /* what reached us before the bus went */
                ;
        g_clear_pointer(&h->bus_address, g_free);
        g_clear_pointer(&h->polkit_log, g_free);
        g_autofree char *socket = g_build_filename(h->dir, "bus", NULL);
        (void) unlink(socket); /* the session config does not take over a stale one */
        harness_start_dbus(h, open_bus);
        if (polkit_table)
                harness_start_polkit(h, polkit_table);
        h->match_slot = sd_bus_slot_unref(h->match_slot);
        h->bus = sd_bus_flush_close_unref(h->bus);
        harness_connect_bus(h);
}

bool harness_wait_notify(Harness *h, const char *line, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;

        g_assert_cmpint(h->notify_fd, >=, 0);
        for (;;) {
                char buf[4096];
                if (!harness_wait_readable(h->notify_fd, deadline))
                        return false;
                ssize_t n = recv(h->notify_fd, buf, sizeof buf - 1, MSG_DONTWAIT);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                g_auto(GStrv) lines = g_strsplit(buf, "\n", -1);
                if (g_strv_contains((const char *const *) lines, line))
                        return true;
        }
}

void harness_dump_fridged_log(Harness *h) {
        g_autofree char *txt = NULL;

        if (!h || !h->fridged_log)
                return;
        if (!g_file_get_contents(h->fridged_log, &txt, NULL, NULL))
                return;
        fprintf(stderr, "----- fridged stderr (%s) -----\n%s----- end of fridged stderr -----\n",
                h->fridged_log, txt);
        if (h->root_mounted) {
                g_autofree char *path = g_build_filename(h->root, "log", NULL);
                g_autofree char *log = NULL;
                /* fakesys may already be gone; ignore errors */
                if (g_file_get_contents(path, &log, NULL, NULL))
                        fprintf(stderr, "----- fakesys log -----\n%s----- end of fakesys log -----\n", log);
        }
}

static void harness_stop_internal(Harness *h) {
        static bool stopping;

        if (!h || stopping)
                return;
        stopping = true;

        if (h->match_slot)
                h->match_slot = sd_bus_slot_unref(h->match_slot);
        if (h->bus)
                h->bus = sd_bus_flush_close_unref(h->bus);

        /* a held slowfs would keep fridged's syncfs (and its exit) stuck */
        if (h->slowfs_held && h->slow && h->slowfs_pid > 0) {
                g_autofree char *c = g_build_filename(h->slow, ".control", NULL);
                int fd = open(c, O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                        (void) !write(fd, "release\n", 8);
                        close(fd);
                }
                h->slowfs_held = false;
        }

        if (h->fridged_pid > 0)
                h->fridged_status = harness_stop_pid(&h->fridged_pid, 10000);
        /* before fakesys goes: it may be in the middle of a state write */
        if (h->logind_pid > 0)
                (void) harness_stop_pid(&h->logind_pid, 5000);

        harness_slowfs_forget_dirty(h);

        if (h->probe_pid > 0) {
                if (harness_wait_pid(h->probe_pid, 5000) == -1)
                        (void) harness_stop_pid(&h->probe_pid, 2000);
                h->probe_pid = 0;
        }

        if (h->slow) {
                unmount(h->slow, &h->slowfs_mounted);
                if (h->slowfs_pid > 0)
                        (void) harness_stop_pid(&h->slowfs_pid, 5000);
        }
        if (h->root) {
                unmount(h->root, &h->root_mounted);
                if (h->fakesys_pid > 0)
                        (void) harness_stop_pid(&h->fakesys_pid, 5000);
        }
        if (h->polkit_pid > 0)
                (void) harness_stop_pid(&h->polkit_pid, 5000);
        if (h->dbus_pid > 0)
                (void) harness_stop_pid(&h->dbus_pid, 5000);

        if (h->state_mounted) {
                g_autofree char *state = g_build_filename(h->dir, "state", NULL);
                h->state_mounted = umount2(state, MNT_DETACH) < 0;
        }
        if (h->dir) {
                if (h->root_mounted || h->slowfs_mounted || h->state_mounted) {
                        fprintf(stderr, "harness: leaving %s in place, something is still mounted\n", h->dir);
                } else if (g_getenv("HARNESS_KEEP_DIR")) {
                        fprintf(stderr, "harness: keeping %s\n", h->dir);
                } else {
                        (void) nftw(h->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
                }
        }
        live_remove(h);
        stopping = false;
}

int harness_stop(Harness *h) {
        harness_stop_internal(h);
        return h ? h->fridged_status : -1;
}

void harness_free(Harness *h) {
        if (!h)
                return;
        harness_stop_internal(h);
        if (h->notify_fd >= 0)
                close(h->notify_fd);
        g_ptr_array_unref(h->signals);
        g_free(h->dir);
        g_free(h->root);
        g_free(h->conf_dir);
        g_free(h->slow);
        g_free(h->persistent);
        g_free(h->bus_address);
        g_free(h->fridged_log);
        g_free(h->polkit_log);
        g_free(h->logind_log);
        g_free(h->proc);
        g_free(h->umockdev_dir);
        g_free(h);
}

void harness_fixture_setup(HarnessFixture *f, gconstpointer data) {
        f->h = NULL;
}

void harness_fixture_teardown(HarnessFixture *f, gconstpointer data) {
        if (f->h && g_test_failed())
                harness_dump_fridged_log(f->h);
        harness_free(f->h);
}
