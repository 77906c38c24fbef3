/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starting the harness's processes: fakesys, slowfs, dbus-daemon, the
 * polkit and logind stand-ins, the fake /proc and fridged. */
#include "harness.h"
#include "harness-private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "umockdev-preload.h"

bool harness_wait_for_file(const char *path, pid_t pid, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;

        /* fakesys mounts asynchronously; the brief allows a bounded poll */
        for (;;) {
                int status;
                if (access(path, F_OK) == 0)
                        return true;
                if (waitpid(pid, &status, WNOHANG) == pid)
                        return false;
                if (remaining_ms(deadline) <= 0)
                        return false;
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
}

void harness_start_fakesys(Harness *h, const HarnessOptions *opts) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_autofree char *logpath = g_build_filename(h->dir, "fakesys.log", NULL);
        g_autofree char *control = g_build_filename(h->root, "control", NULL);
        int err = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

        g_assert_cmpint(err, >=, 0);
        g_ptr_array_add(argv, (char *) harness_env("FAKESYS"));
        for (const char *const *a = opts ? opts->fakesys_args : NULL; a && *a; a++)
                g_ptr_array_add(argv, (char *) *a);
        g_ptr_array_add(argv, h->root);
        g_ptr_array_add(argv, NULL);

        HarnessSpawn s = { .argv = (char **) argv->pdata, .stdin_fd = -1, .stdout_fd = err,
                        .stderr_fd = err, .extra_fd = -1 };
        h->fakesys_pid = harness_spawn(&s);
        close(err);
        h->root_mounted = true;   /* assume so; unmount() checks mountinfo */

        if (!harness_wait_for_file(control, h->fakesys_pid, 5000)) {
                g_autofree char *txt = NULL;
                g_file_get_contents(logpath, &txt, NULL, NULL);
                g_test_message("fakesys output:\n%s", txt ? txt : "");
                g_error("fakesys did not mount %s within 5 s", h->root);
        }
}

void harness_start_slowfs(Harness *h) {
        const char *slowfs = harness_env("SLOWFS");
        g_autofree char *logpath = g_build_filename(h->dir, "slowfs.log", NULL);
        g_autofree char *control = NULL;
        int err;

        if (!slowfs) {
                g_test_skip("SLOWFS is not set (slowfs not built)");
                return;
        }
        h->slow = g_build_filename(h->dir, "slow", NULL);
        g_assert_cmpint(mkdir(h->slow, 0755), ==, 0);
        control = g_build_filename(h->slow, ".control", NULL);
        err = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        g_assert_cmpint(err, >=, 0);

        char *argv[] = { (char *) slowfs, h->slow, NULL };
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = err, .stderr_fd = err, .extra_fd = -1 };
        h->slowfs_pid = harness_spawn(&s);
        close(err);
        h->slowfs_mounted = true;
        if (!harness_wait_for_file(control, h->slowfs_pid, 5000))
                g_error("slowfs did not mount %s within 5 s", h->slow);
}

/* A session-type bus any uid may connect to (the stock session.conf lets
 * in only the daemon's own uid) */
static char *write_open_bus_config(Harness *h) {
        g_autofree char *path = g_build_filename(h->dir, "bus.conf", NULL);
        g_autofree char *text = g_strdup_printf(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<busconfig><type>session</type><listen>unix:path=%s/bus</listen><auth>EXTERNAL</auth>\n"
                "<policy context=\"default\"><allow user=\"*\"/><allow send_destination=\"*\" eavesdrop=\"true\"/>"
                "<allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>\n", h->dir);
        harness_write_file(path, text);
        g_assert_cmpint(chmod(h->dir, 0755), ==, 0);   /* the socket must be reachable */
        return g_strdup_printf("--config-file=%s", path);
}

void harness_start_dbus(Harness *h, bool open_bus) {
        g_autofree char *dbus = g_find_program_in_path("dbus-daemon");
        g_autofree char *address = g_strdup_printf("--address=unix:path=%s/bus", h->dir);
        g_autofree char *config = open_bus ? write_open_bus_config(h) : g_strdup("--session");
        g_autofree char *logpath = g_build_filename(h->dir, "dbus.log", NULL);
        int p[2];
        int err = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

        g_assert_cmpint(err, >=, 0);
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        char *argv[] = { dbus, config, (char *) "--nofork", address, (char *) "--print-address=3", NULL };
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = err, .stderr_fd = err, .extra_fd = p[1] };
        h->dbus_pid = harness_spawn(&s);
        close(err);
        close(p[1]);
        h->bus_address = harness_read_line(p[0], 10000);
        close(p[0]);
        if (!h->bus_address) {
                g_autofree char *txt = NULL;
                g_file_get_contents(logpath, &txt, NULL, NULL);
                g_error("dbus-daemon did not print its address: %s", txt ? txt : "");
        }
        g_strstrip(h->bus_address);
}

void harness_start_polkit(Harness *h, const char *table) {
        const char *standin = harness_env("POLKIT_STANDIN");
        if (!standin)
                g_error("POLKIT_STANDIN is not set (tests/polkit not built)");
        g_autofree char *table_path = g_build_filename(h->dir, "polkit.table", NULL);
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", h->bus_address);
        g_autofree char *a_table = g_strdup_printf("--table=%s", table_path);
        h->polkit_log = g_build_filename(h->dir, "polkit.log", NULL);
        g_autofree char *a_log = g_strdup_printf("--log=%s", h->polkit_log);
        g_autofree char *a_hold = g_strdup_printf("--hold=%s/polkit.hold", h->dir);
        int p[2];

        harness_write_file(table_path, table);
        harness_write_file(h->polkit_log, "");
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        char *argv[] = { (char *) standin, a_bus, a_table, a_log, a_hold, NULL };
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = p[1], .stderr_fd = 2, .extra_fd = -1 };
        h->polkit_pid = harness_spawn(&s);
        close(p[1]);
        g_autofree char *ready = harness_read_line(p[0], 10000);
        close(p[0]);
        if (!ready || !g_str_has_prefix(ready, "READY"))
                g_error("polkit-standin did not start");
}

/* Hooks as systemd-sleep runs them: the hook (fridgectl by the name
 * "fridge") finds the bus through DBUS_SYSTEM_BUS_ADDRESS (set by the
 * stand-in) */
void harness_start_logind(Harness *h, const HarnessOptions *opts) {
        const char *standin = harness_env("LOGIND_STANDIN"), *fridgectl = harness_env("FRIDGECTL");
        const char *script = harness_env("FRIDGE_SLEEP_HOOK");
        if (!standin || !fridgectl || (opts->logind_hook_script && !script))
                g_error("LOGIND_STANDIN, FRIDGECTL or FRIDGE_SLEEP_HOOK is not set");
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", h->bus_address);
        g_autofree char *a_root = g_strdup_printf("--sysfs-root=%s", h->root);
        h->logind_log = g_build_filename(h->dir, "logind.log", NULL);
        g_autofree char *a_log = g_strdup_printf("--log=%s", h->logind_log);
        g_autofree char *a_delay = g_strdup_printf("--delay-max-ms=%u",
                                                   opts->logind_delay_max_ms ? opts->logind_delay_max_ms : 5000);
        g_autofree char *err_path = g_build_filename(h->dir, "logind.stderr", NULL);
        char *script_hook[] = { (char *) script, NULL };
        char *direct_hook[] = { (char *) fridgectl, a_bus, (char *) "--no-progress", (char *) "hook", NULL };
        char **hook = opts->logind_hook_script ? script_hook : direct_hook;
        g_autofree char *a_sleep_conf = g_strdup_printf("--sleep-conf=%s/sleep-root/etc/systemd/sleep.conf", h->dir);
        char *argv[16] = { (char *) standin, a_bus, a_root, a_log, a_delay, a_sleep_conf, (char *) "--" };
        for (int i = 0; hook[i]; i++)
                argv[7 + i] = hook[i];

        harness_write_file(h->logind_log, "");
        int err = open(err_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        int p[2];
        g_assert_cmpint(err, >=, 0);
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = p[1], .stderr_fd = err, .extra_fd = -1 };
        h->logind_pid = harness_spawn(&s);
        close(p[1]);
        close(err);
        g_autofree char *ready = harness_read_line(p[0], 10000);
        close(p[0]);
        if (!ready || !g_str_has_prefix(ready, "READY"))
                g_error("logind-standin did not start");
}

static bool mount_line_is_ours(const char *line, int mount_point_field, const char *dir) {
        g_auto(GStrv) f = g_strsplit(line, " ", mount_point_field + 2);
        g_autofree char *prefix = g_strconcat(dir, "/", NULL);
        return (int) g_strv_length(f) > mount_point_field && g_str_has_prefix(f[mount_point_field], prefix);
}

/* The cgroup2 mount, for a test on real scratch cgroups: fridged finds
 * the cgroup root in mountinfo */
static bool mount_line_is_cgroup2(const char *line, int mount_point_field) {
        return mount_point_field == 4 ? strstr(line, " - cgroup2 ") != NULL : strstr(line, " cgroup2 ") != NULL;
}

static void write_filtered_mounts(const char *src, const char *dst, int mount_point_field, const char *dir,
                                  bool cgroup2) {
        g_autofree char *text = NULL;
        g_autoptr(GString) out = g_string_new(NULL);

        if (!g_file_get_contents(src, &text, NULL, NULL))
                g_error("read %s", src);
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++)
                if (**l && (mount_line_is_ours(*l, mount_point_field, dir) ||
                            (cgroup2 && mount_line_is_cgroup2(*l, mount_point_field))))
                        g_string_append_printf(out, "%s\n", *l);
        harness_write_file(dst, out->str);
}

static void symlink_entries(const char *from_dir, const char *to_dir, const char *const *except) {
        g_autoptr(GDir) d = g_dir_open(from_dir, 0, NULL);
        const char *name;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d))) {
                if (g_ascii_isdigit(name[0]) || g_strv_contains(except, name))
                        continue;
                g_autofree char *target = g_build_filename(from_dir, name, NULL);
                g_autofree char *link = g_build_filename(to_dir, name, NULL);
                if (symlink(target, link) < 0)
                        g_error("symlink %s -> %s: %s", link, target, g_strerror(errno));
        }
}

/* With HARNESS_FAKE_PROC=1: a /proc whose mount tables hold only our mounts
 * (and the cgroup2 mount, with real_cgroups),
 * so a file system stuck elsewhere on the host cannot stall the flush. Off
 * by default: its PID entries are a snapshot, so processes a test starts
 * later (clients, FUSE servers, syncing tasks) would be invisible. */
void harness_make_proc_root(Harness *h, const HarnessOptions *opts) {
        static const char *const top_except[] = { "self", "thread-self", "mounts", NULL };
        static const char *const self_except[] = { "mountinfo", "mounts", NULL };
        g_autofree char *self = NULL, *mi = NULL, *mounts = NULL, *mounts_link = NULL;
        const char *const *files = opts ? opts->proc_files : NULL;

        if (g_strcmp0(g_getenv("HARNESS_FAKE_PROC"), "1") != 0 && !files)
                return;
        h->proc = g_build_filename(h->dir, "proc", NULL);
        self = g_build_filename(h->proc, "self", NULL);
        g_assert_cmpint(mkdir(h->proc, 0755), ==, 0);
        g_assert_cmpint(mkdir(self, 0755), ==, 0);
        /* the /proc/self/... targets resolve to fridged itself when it reads them */
        symlink_entries("/proc", h->proc, top_except);
        symlink_entries("/proc/self", self, self_except);
        mi = g_build_filename(self, "mountinfo", NULL);
        mounts = g_build_filename(self, "mounts", NULL);
        write_filtered_mounts("/proc/self/mountinfo", mi, 4, h->dir, h->real_cgroups);
        write_filtered_mounts("/proc/self/mounts", mounts, 1, h->dir, h->real_cgroups);
        mounts_link = g_build_filename(h->proc, "mounts", NULL);
        g_assert_cmpint(symlink("self/mounts", mounts_link), ==, 0);
        for (; files && files[0] && files[1]; files += 2) {
                g_autofree char *path = g_build_filename(h->proc, files[0], NULL);
                g_assert_true(unlink(path) == 0 || errno == ENOENT);
                harness_write_file(path, files[1]);
        }
}

/* NAME=VALUE strings for fridged's environment to run it in the testbed
 * h->umockdev_dir; they go into `env`, which owns them. */
static void add_umockdev_env(Harness *h, GPtrArray *env) {
        static const char *const names[] = { "LD_PRELOAD", "ASAN_OPTIONS" };
        g_auto(GStrv) preloaded = umockdev_preload_environ(g_get_environ());

        for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
                g_ptr_array_add(env, g_strdup_printf("%s=%s", names[i], g_environ_getenv(preloaded, names[i])));
        g_ptr_array_add(env, g_strdup_printf("UMOCKDEV_DIR=%s", h->umockdev_dir));
        if (h->real_cgroups) {
                /* The preload library sends every /sys path into the testbed,
                 * the cgroup2 mount's too (/sys/fs/cgroup or below). The
                 * kernel, not the library, follows a symlink's target, so
                 * this one leads back to the real /sys/fs */
                g_autofree char *link = g_build_filename(h->umockdev_dir, "sys", "fs", NULL);
                if (symlink("/sys/fs", link) < 0 && errno != EEXIST)
                        g_error("symlink %s: %s", link, g_strerror(errno));
        }
}

/* The shell that stands a seat in for fridged: a tmpfs over
 * /run/systemd/users (over /run/systemd where that is missing) in its own
 * mount namespace, holding the file logind writes for a user active on
 * seat0; then fridged, exec'd as "$@" */
static char *seat_wrapper(Harness *h) {
        const char *dir = g_file_test("/run/systemd/users", G_FILE_TEST_IS_DIR) ? "/run/systemd/users"
                                                                               : "/run/systemd";
        return g_strdup_printf("mount -t tmpfs -o size=64k,mode=0755 fridge-seat %s && mkdir -p /run/systemd/users && "
                               "printf 'NAME=user%u\\nSTATE=active\\nONLINE_SEATS=seat0\\nACTIVE_SEATS=seat0\\n' "
                               "> /run/systemd/users/%u && exec \"$@\"", dir, (unsigned) h->seated_uid,
                               (unsigned) h->seated_uid);
}

void harness_start_fridged(Harness *h) {
        g_autofree char *notify_path = g_build_filename(h->dir, "notify", NULL);
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", h->bus_address);
        g_autofree char *a_sys = g_strdup_printf("--sysfs-root=%s", h->root);
        g_autofree char *a_conf = g_strdup_printf("--config-dir=%s", h->conf_dir);
        g_autofree char *e_notify = g_strdup_printf("NOTIFY_SOCKET=%s", notify_path);
        /* belt and braces: whatever fridged falls back to is our private bus */
        g_autofree char *e_sys = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", h->bus_address);
        g_autofree char *e_ses = g_strdup_printf("DBUS_SESSION_BUS_ADDRESS=%s", h->bus_address);
        g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func(g_free);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int nfd, err, pidfd;
        bool ready = false;
        int64_t deadline;

        nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        g_assert_cmpint(nfd, >=, 0);
        g_assert_cmpuint(strlen(notify_path), <, sizeof sa.sun_path);
        strcpy(sa.sun_path, notify_path);
        (void) unlink(notify_path); /* left by an earlier fridged of this harness */
        g_assert_cmpint(bind(nfd, (struct sockaddr *) &sa, sizeof sa), ==, 0);

        g_ptr_array_add(env, g_strdup(e_notify));
        g_ptr_array_add(env, g_strdup(e_sys));
        g_ptr_array_add(env, g_strdup(e_ses));
        if (h->umockdev_dir)
                add_umockdev_env(h, env);
        if (h->watchdog_usec > 0)
                g_ptr_array_add(env, g_strdup_printf("WATCHDOG_USEC=%" PRIu64, h->watchdog_usec));
        g_ptr_array_add(env, NULL);

        err = open(h->fridged_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        g_assert_cmpint(err, >=, 0);
        g_autofree char *a_proc = NULL;
        if (h->proc)
                a_proc = g_strdup_printf("--proc-root=%s", h->proc);
        /* Never the host's cgroups unless the test made scratch ones and
         * named them as Roots: an empty directory is the cgroup root then */
        g_autofree char *no_cgroups = g_build_filename(h->dir, "no-cgroups", NULL);
        g_autofree char *a_cgroup = NULL;
        if (!h->real_cgroups) {
                g_assert_cmpint(g_mkdir_with_parents(no_cgroups, 0755), ==, 0);
                a_cgroup = g_strdup_printf("--cgroup-root=%s", no_cgroups);
        }
        /* never the host's /run/fridge ledger, /var/lib/fridge history nor /usr/lib/fridge classes */
        g_autofree char *a_state = g_strdup_printf("--state-dir=%s/state", h->dir);
        g_autofree char *a_persistent = g_strdup_printf("--persistent-dir=%s", h->persistent);
        g_autofree char *a_vendor = g_strdup_printf("--vendor-dir=%s/vendor", h->dir);
        /* the rest of the search path (run/, usr/local/lib/) stays in the test's tree */
        g_autofree char *a_config_root = g_strdup_printf("--config-root=%s/config-root", h->dir);
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_autofree char *seat_script = h->seated_uid ? seat_wrapper(h) : NULL;
        if (seat_script) {
                const char *const wrap[] = { "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh",
                                             "-c", seat_script, "sh" };
                for (size_t i = 0; i < G_N_ELEMENTS(wrap); i++)
                        g_ptr_array_add(argv, (char *) wrap[i]);
        }
        g_autofree char *setpriv = h->unit_capabilities ? g_find_program_in_path("setpriv") : NULL;
        if (h->unit_capabilities) {
                g_assert_nonnull(setpriv);
                /* the unit's CapabilityBoundingSet=; root gets all of its bounding set at exec */
                g_ptr_array_add(argv, setpriv);
                g_ptr_array_add(argv, (char *) "--bounding-set=-all,+dac_override,+dac_read_search,+sys_ptrace");
                g_ptr_array_add(argv, (char *) "--");
        }
        g_autofree char *a_sleep = g_strdup_printf("--sleep-conf-root=%s/sleep-root", h->dir);
        char *fixed[] = { (char *) harness_env("FRIDGED"), a_bus, a_sys, a_conf, a_state, a_persistent, a_vendor, a_config_root,
                          a_sleep, (char *) "-v" };
        for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
                g_ptr_array_add(argv, fixed[i]);
        if (a_cgroup)
                g_ptr_array_add(argv, a_cgroup);
        if (a_proc)
                g_ptr_array_add(argv, a_proc);
        g_ptr_array_add(argv, NULL);
        HarnessSpawn s = { .argv = (char **) argv->pdata, .stdin_fd = -1, .stdout_fd = err, .stderr_fd = err,
                        .extra_fd = -1, .env = (const char *const *) env->pdata };
        h->fridged_pid = harness_spawn(&s);
        h->fridged_started = true;
        close(err);

        pidfd = harness_pidfd_open(h->fridged_pid);
        deadline = now_usec() + 10 * G_USEC_PER_SEC;
        while (!ready) {
                struct pollfd p[2] = { { .fd = nfd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
                int ms = remaining_ms(deadline);
                if (ms <= 0)
                        break;
                int r = poll(p, pidfd >= 0 ? 2 : 1, ms);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        break;
                if (p[0].revents & POLLIN) {
                        char buf[4096];
                        ssize_t n = recv(nfd, buf, sizeof buf - 1, 0);
                        if (n > 0) {
                                buf[n] = '\0';
                                g_auto(GStrv) lines = g_strsplit(buf, "\n", -1);
                                for (char **l = lines; *l; l++)
                                        if (g_str_equal(*l, "READY=1"))
                                                ready = true;
                        }
                }
                if (!ready && pidfd >= 0 && (p[1].revents & POLLIN))
                        break;  /* fridged exited */
        }
        if (pidfd >= 0)
                close(pidfd);
        if (h->watchdog_usec > 0)
                h->notify_fd = nfd;
        else
                close(nfd);
        if (!ready) {
                int status;
                harness_dump_fridged_log(h);
                if (waitpid(h->fridged_pid, &status, WNOHANG) == h->fridged_pid) {
                        h->fridged_pid = 0;
                        h->fridged_started = false;
                        g_error("fridged exited (wait status 0x%x) before sending READY=1", (unsigned) status);
                }
                g_error("fridged did not send READY=1 within 10 s");
        }
}
