/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The soak's tree: scratch cgroups over every class, a real libfuse server
 * (bindfs) with a client writing through it, writers keeping dirty data on
 * slowfs, fridge-agent on a stand-in notification server, a client that
 * holds and drops inhibitors, and fridged's state directory on a small
 * tmpfs (so that it can be filled). Everything is removed again by
 * soak_tree_free(), and by the harness's and the scratch cgroups' own
 * handlers when a violation aborts the run.
 */
#include "soak.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "fridge-config.h"

#define PYTHON "/usr/bin/python3"
#define N_WRITERS 4
#define FILES_KEPT 40
#define STATE_TMPFS_SIZE "size=512k"

static const char classes_conf[] =
        "[Late]\nUnits=late*.service\n"
        "[NoFreeze]\nUnits=nf*.service\n"
        "[UI]\nUnits=ui*.service;agent.service\n";

static const char *const prefixes[] = { "e", "late", "nf", "ui" };

static bool is_mounted(const char *mount_point) {
        g_autofree char *text = NULL;
        g_autofree char *needle = g_strdup_printf(" %s ", mount_point);
        return g_file_get_contents("/proc/self/mountinfo", &text, NULL, NULL) && strstr(text, needle);
}

/* n cgroups spread over the classes; every tenth one is a slice with a
 * service below it, so the walk has depth */
static void add_cgroups(Soak *k, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                const char *prefix = prefixes[i % G_N_ELEMENTS(prefixes)];
                g_autofree char *name = g_strdup_printf("%s%03u.service", prefix, i);
                const char *cg;
                if (i % 10 == 9) {
                        g_autofree char *slice = g_strdup_printf("s%03u.slice", i);
                        const char *parent = scratch_add(k->s, slice);
                        g_ptr_array_add(k->cgroups, (char *) parent);
                        cg = scratch_add_in(k->s, parent, name);
                } else
                        cg = scratch_add(k->s, name);
                scratch_spawn(k->s, cg, NULL);
                g_ptr_array_add(k->cgroups, (char *) cg);
        }
}

static const char *add_one(Soak *k, const char *name) {
        const char *cg = scratch_add(k->s, name);
        g_ptr_array_add(k->cgroups, (char *) cg);
        return cg;
}

/* Writers that keep dirty data in flight on slowfs */
static void start_writers(Soak *k) {
        for (unsigned i = 0; i < N_WRITERS; i++) {
                g_autofree char *name = g_strdup_printf("writer%u.service", i);
                const char *cg = add_one(k, name);
                g_autofree char *script = g_strdup_printf(
                        "while :; do head -c 262144 /dev/urandom > '%s/w%u'; sleep 0.1; done", k->h->slow, i);
                char *argv[] = { (char *) "sh", (char *) "-c", script, NULL };
                scratch_spawn(k->s, cg, argv);
        }
}

/* bindfs mirrors DIR/fsrc onto DIR/fmnt, a client writes through it */
static void start_fuse(Soak *k) {
        g_autofree char *bindfs = g_find_program_in_path("bindfs");
        if (!bindfs) {
                g_print("soak: bindfs is not installed: no FUSE server in the tree\n");
                return;
        }
        g_autofree char *src = g_build_filename(k->h->dir, "fsrc", NULL);
        k->fuse_mnt = g_build_filename(k->h->dir, "fmnt", NULL);
        g_assert_cmpint(g_mkdir(src, 0755), ==, 0);
        g_assert_cmpint(g_mkdir(k->fuse_mnt, 0755), ==, 0);
        k->fuse_cg = add_one(k, "fuse.service");
        g_autofree char *script = g_strdup_printf("exec '%s' -f '%s' '%s'", bindfs, src, k->fuse_mnt);
        char *argv[] = { (char *) "sh", (char *) "-c", script, NULL };
        k->fuse_pid = scratch_spawn(k->s, k->fuse_cg, argv);
        for (int i = 0; i < 500 && !is_mounted(k->fuse_mnt); i++)
                g_usleep(10000);
        g_assert_true(is_mounted(k->fuse_mnt));
        k->writer_cg = add_one(k, "fusewriter.service");
        g_autofree char *w = g_strdup_printf("i=0; while :; do echo $i >> '%s/log'; i=$((i+1)); sleep 0.05; done",
                                             k->fuse_mnt);
        char *wargv[] = { (char *) "sh", (char *) "-c", w, NULL };
        scratch_spawn(k->s, k->writer_cg, wargv);
}

/* fridged's --state-dir on a small tmpfs (the disk-full fault fills it):
 * fridged is stopped for the mount and started again */
static void mount_state_tmpfs(Soak *k) {
        k->state_dir = g_build_filename(k->h->dir, "state", NULL);
        harness_kill_fridged(k->h, SIGTERM);
        g_assert_cmpint(harness_wait_pid(k->h->fridged_pid, 10000), !=, -1);
        k->h->fridged_pid = 0;
        g_assert_cmpint(g_mkdir_with_parents(k->state_dir, 0755), ==, 0);
        if (mount("soak-state", k->state_dir, "tmpfs", MS_NOSUID | MS_NODEV, STATE_TMPFS_SIZE) < 0)
                g_error("mount tmpfs on %s: %s", k->state_dir, g_strerror(errno));
        k->state_mounted = true;
        harness_restart_fridged(k->h);
}

void soak_tree_build(Soak *k, unsigned n_cgroups) {
        k->s = scratch_new();
        k->cgroups = g_ptr_array_new();
        k->files = g_ptr_array_new();
        k->inhibit_fds = g_array_new(FALSE, FALSE, sizeof(int));
        add_cgroups(k, n_cgroups);
        k->stuck_cg = add_one(k, "stuck.service");
        k->agent_cg = add_one(k, "agent.service");
        /* Delay: our inhibitor client drops its inhibitor late sometimes */
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n[Flush]\nOnTimeout=continue\n"
                                                  "[Delay]\nTimeoutMs=300\n", k->s->root);
        HarnessOptions o = { .config = config, .classes = classes_conf, .real_cgroups = true, .slowfs = true,
                             .open_bus = true, .polkit_table = SOAK_POLKIT_TABLE };
        k->h = harness_new(&o);
        harness_control(k->h, "sleep-ms 20");
        harness_control(k->h, "pm-test-delay-ms 20");
        mount_state_tmpfs(k);
        g_autofree char *files = g_build_filename(k->h->slow, "files", NULL);
        g_assert_cmpint(g_mkdir(files, 0755), ==, 0);
        start_writers(k);
        start_fuse(k);
        soak_tree_start_agent(k);
}

/* ---- fridge-agent on a stand-in notification server ---- */

static const char *agent_skip_reason(void) {
        if (!harness_env("FRIDGE_AGENT"))
                return "FRIDGE_AGENT is not set";
        char *argv[] = { (char *) PYTHON, (char *) "-c", (char *) "import dbusmock", NULL };
        if (harness_run(argv, 30000, NULL) != 0)
                return "python3-dbusmock is not installed (" PYTHON " -c 'import dbusmock' failed)";
        return NULL;
}

static pid_t spawn_in(Soak *k, const char *cgroup, const char *script) {
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) script, NULL };
        return scratch_spawn(k->s, cgroup, argv);
}

static void start_session(Soak *k, const char *cg) {
        g_autofree char *sock = g_build_filename(k->h->dir, "session-bus", NULL);
        k->session_address = g_strdup_printf("unix:path=%s", sock);
        g_autofree char *script = g_strdup_printf(
                "exec dbus-daemon --session --nofork --address='%s' 2>>'%s/session-bus.log'", k->session_address,
                k->h->dir);
        k->session_pid = spawn_in(k, cg, script);
        for (int i = 0; i < 500 && access(sock, F_OK) < 0; i++)
                g_usleep(10000);
        g_assert_cmpint(access(sock, F_OK), ==, 0);
        g_autofree char *mock = g_strdup_printf(
                "export DBUS_SESSION_BUS_ADDRESS='%s'; exec " PYTHON
                " -m dbusmock --template notification_daemon >>'%s/mock.log' 2>&1",
                k->session_address, k->h->dir);
        k->mock_pid = spawn_in(k, cg, mock);
}

void soak_tree_start_agent(Soak *k) {
        static const char *why;
        static bool asked;
        if (!asked) {
                asked = true;
                why = agent_skip_reason();
                if (why)
                        g_print("soak: no fridge-agent in the tree: %s\n", why);
                else {
                        start_session(k, add_one(k, "ui-session.service"));
                }
        }
        if (why)
                return;
        g_autofree char *script = g_strdup_printf(
                "export DBUS_SESSION_BUS_ADDRESS='%s' DBUS_SYSTEM_BUS_ADDRESS='%s' G_MESSAGES_DEBUG=; "
                "exec '%s' >>'%s/agent.log' 2>&1", k->session_address, k->h->bus_address,
                harness_env("FRIDGE_AGENT"), k->h->dir);
        k->agent_pid = spawn_in(k, k->agent_cg, script);
}

/* ---- files and inhibitors ---- */

static void write_one(Soak *k, const char *dir) {
        g_autofree char *path = g_strdup_printf("%s/f%05u", dir, k->file_n++);
        gsize len = 4096 + g_rand_int_range(k->rand, 0, 60000);
        g_autofree guchar *buf = g_malloc(len);
        for (gsize i = 0; i < len; i++)
                buf[i] = (guchar) g_rand_int(k->rand);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, buf, len), ==, (gssize) len);
        g_assert_cmpint(fsync(fd), ==, 0);
        g_assert_cmpint(close(fd), ==, 0);
        SoakFile *f = g_new0(SoakFile, 1);
        f->path = g_steal_pointer(&path);
        f->sha256 = g_compute_checksum_for_data(G_CHECKSUM_SHA256, buf, len);
        g_ptr_array_add(k->files, f);
}

static void soak_file_free(SoakFile *f) {
        (void) unlink(f->path);
        g_free(f->path);
        g_free(f->sha256);
        g_free(f);
}

void soak_tree_write_files(Soak *k) {
        g_autofree char *files = g_build_filename(k->h->slow, "files", NULL);
        write_one(k, files);
        if (k->fuse_mnt)
                write_one(k, k->fuse_mnt);
        while (k->files->len > FILES_KEPT)
                soak_file_free(g_ptr_array_steal_index(k->files, 0));
}

void soak_tree_inhibit(Soak *k, bool take) {
        if (!take) {
                for (guint i = 0; i < k->inhibit_fds->len; i++)
                        close(g_array_index(k->inhibit_fds, int, i));
                g_array_set_size(k->inhibit_fds, 0);
                return;
        }
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(k->h, FRIDGE_INTERFACE, "Inhibit", &reply, &err, &msg, "sss", "soak", "a backup's last write",
                         "delay") < 0)
                soak_violation(k, "Inhibit refused: %s: %s", err, msg);
        int fd = -1;
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        int mine = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        sd_bus_message_unref(reply);
        g_array_append_val(k->inhibit_fds, mine);
}

unsigned soak_tree_count_frozen(Soak *k) {
        unsigned n = 0;
        for (guint i = 0; i < k->s->cgroups->len; i++)
                n += scratch_is_frozen(k->s, k->s->cgroups->pdata[i]);
        return n;
}

void soak_tree_unmount_fuse(Soak *k) {
        g_autofree char *fusermount = g_find_program_in_path("fusermount3");
        if (!fusermount || !k->fuse_mnt || !is_mounted(k->fuse_mnt))
                return;
        char *um[] = { fusermount, (char *) "-uz", k->fuse_mnt, NULL };
        (void) harness_run(um, 10000, NULL);
}

void soak_tree_free(Soak *k) {
        soak_tree_inhibit(k, false);
        if (k->fuse_pid > 0)
                (void) kill(k->fuse_pid, SIGCONT);
        soak_tree_unmount_fuse(k);
        g_ptr_array_set_free_func(k->files, (GDestroyNotify) soak_file_free);
        g_ptr_array_unref(k->files);
        harness_stop(k->h);
        if (k->state_mounted && umount2(k->state_dir, MNT_DETACH) == 0)
                k->state_mounted = false;
        harness_free(k->h);
        scratch_free(k->s); /* after fridged: nothing of it may stay frozen */
        g_ptr_array_unref(k->cgroups);
        g_array_unref(k->inhibit_fds);
        g_free(k->fuse_mnt);
        g_free(k->state_dir);
        g_free(k->session_address);
}
