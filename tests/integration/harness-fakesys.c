/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The simulated kernel from the test's side: fakesys's log and control
 * file, /sys reads and writes, slowfs's hold and dirty data. */
#include "harness.h"
#include "harness-private.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* ---------------------------------------------------------------- fakesys */

char *harness_fakesys_log(Harness *h) {
        g_autofree char *path = g_build_filename(h->root, "log", NULL);
        g_autoptr(GError) e = NULL;
        char *txt = NULL;

        if (!g_file_get_contents(path, &txt, NULL, &e))
                g_error("read %s: %s", path, e->message);
        return txt;
}

void harness_assert_sys(Harness *h, const char *rel, const char *want) {
        g_autofree char *v = harness_read_sys(h, rel);
        g_strstrip(v);
        if (!g_str_equal(v, want))
                g_error("%s reads \"%s\", expected \"%s\"", rel, v, want);
}

char **harness_fakesys_log_lines(Harness *h) {
        g_autofree char *txt = harness_fakesys_log(h);
        g_autoptr(GPtrArray) a = g_ptr_array_new();
        g_auto(GStrv) lines = g_strsplit(txt, "\n", -1);

        for (char **l = lines; *l; l++) {
                g_strstrip(*l);
                if (**l)
                        g_ptr_array_add(a, g_strdup(*l));
        }
        g_ptr_array_add(a, NULL);
        return (char **) g_ptr_array_free(g_steal_pointer(&a), FALSE);
}

static void write_control(const char *path, const char *cmd) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                g_error("open %s: %s", path, g_strerror(errno));
        g_autofree char *line = g_str_has_suffix(cmd, "\n") ? g_strdup(cmd) : g_strconcat(cmd, "\n", NULL);
        ssize_t n = write(fd, line, strlen(line));
        int e = errno;
        close(fd);
        if (n != (ssize_t) strlen(line))
                g_error("write '%s' to %s: %s", cmd, path, n < 0 ? g_strerror(e) : "short write");
}

void harness_control(Harness *h, const char *cmd) {
        g_autofree char *path = g_build_filename(h->root, "control", NULL);
        write_control(path, cmd);
}

char *harness_read_sys(Harness *h, const char *rel) {
        g_autofree char *path = g_build_filename(h->root, "sys", rel, NULL);
        g_autoptr(GError) e = NULL;
        char *txt = NULL;

        if (!g_file_get_contents(path, &txt, NULL, &e))
                g_error("read %s: %s", path, e->message);
        return txt;
}

void harness_write_sys(Harness *h, const char *rel, const char *value) {
        g_autofree char *path = g_build_filename(h->root, "sys", rel, NULL);
        write_control(path, value);
}

bool harness_wait_log_line(Harness *h, const char *line, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;

        /* FUSE files give no change notification: a bounded poll, and the
         * bus is processed meanwhile so no signal is lost or delayed */
        for (;;) {
                g_auto(GStrv) lines = harness_fakesys_log_lines(h);
                if (g_strv_contains((const char *const *) lines, line))
                        return true;
                if (remaining_ms(deadline) <= 0)
                        return false;
                harness_process_until(h, MIN(20, remaining_ms(deadline)), NULL, NULL);
        }
}

/* ---------------------------------------------------------------- slowfs */

void harness_slowfs_control(Harness *h, const char *cmd) {
        g_autofree char *path = g_build_filename(h->slow, ".control", NULL);
        g_assert_nonnull(h->slow);
        write_control(path, cmd);
}

char *harness_slowfs_stats(Harness *h) {
        g_autofree char *path = g_build_filename(h->slow, ".stats", NULL);
        char *txt = NULL;
        if (!g_file_get_contents(path, &txt, NULL, NULL))
                return g_strdup("");
        g_strstrip(txt);
        return txt;
}

void harness_slowfs_make_dirty(Harness *h, size_t bytes) {
        g_autofree char *path = g_build_filename(h->slow, "dirty", NULL);
        int ready[2], hold[2];
        pid_t parent = getpid();
        char c;

        g_assert_nonnull(h->slow);
        g_assert_cmpint(h->dirty_pid, ==, 0);
        g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(hold, O_CLOEXEC), ==, 0);

        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
                if (getppid() != parent)
                        _exit(1);
                close(ready[0]);
                close(hold[1]);
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0)
                        _exit(2);
                char *buf = malloc(65536);
                if (!buf)
                        _exit(3);
                memset(buf, 'f', 65536);
                for (size_t done = 0; done < bytes;) {
                        size_t n = MIN((size_t) 65536, bytes - done);
                        ssize_t w = write(fd, buf, n);
                        if (w <= 0)
                                _exit(4);
                        done += (size_t) w;
                }
                free(buf);
                (void) !write(ready[1], "r", 1);
                /* keep the data dirty: no close until the parent lets go */
                while (read(hold[0], &c, 1) < 0 && errno == EINTR)
                        ;
                close(fd);
                _exit(0);
        }
        close(ready[1]);
        close(hold[0]);
        h->dirty_pid = pid;
        h->dirty_pipe = hold[1];

        struct pollfd p = { .fd = ready[0], .events = POLLIN };
        int r = poll(&p, 1, 10000);
        ssize_t n = r > 0 ? read(ready[0], &c, 1) : 0;
        close(ready[0]);
        if (n != 1)
                g_error("the dirty-data child did not write %zu bytes to %s", bytes, path);
}

void harness_slowfs_hold(Harness *h) {
        harness_slowfs_control(h, "hold");
        h->slowfs_held = true;
}

void harness_slowfs_release(Harness *h) {
        harness_slowfs_control(h, "release");
        h->slowfs_held = false;
}

void harness_slowfs_forget_dirty(Harness *h) {
        if (h->dirty_pid <= 0)
                return;
        if (h->dirty_pipe >= 0)
                close(h->dirty_pipe);
        h->dirty_pipe = -1;
        if (harness_wait_pid(h->dirty_pid, 5000) == -1)
                (void) harness_stop_pid(&h->dirty_pid, 2000);
        h->dirty_pid = 0;
}

bool harness_slowfs_syncfs_blocks(Harness *h, int within_ms) {
        pid_t parent = getpid();

        g_assert_nonnull(h->slow);
        g_assert_cmpint(h->probe_pid, ==, 0);
        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(1);
                int fd = open(h->slow, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0 || syncfs(fd) < 0)
                        _exit(2);
                _exit(0);
        }
        int status = harness_wait_pid(pid, within_ms);
        if (status != -1)
                return false;   /* syncfs returned while the writeback is held */
        h->probe_pid = pid;
        return true;
}

bool harness_slowfs_stall_flushes(Harness *h) {
        harness_slowfs_make_dirty(h, 1024 * 1024);
        harness_slowfs_hold(h);
        if (harness_slowfs_syncfs_blocks(h, 500))
                return true;
        harness_slowfs_release(h);
        return false;
}

pid_t harness_slowfs_stuck_in_fsync(Harness *h, const char *procs, const char *file, const char *comm) {
        int written[2], go[2];
        g_assert_cmpint(pipe2(written, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(go, O_CLOEXEC), ==, 0);
        pid_t pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                char c, buf[8192];
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                int cg = open(procs, O_WRONLY | O_CLOEXEC);
                if (cg < 0 || write(cg, "0", 1) != 1)
                        _exit(80);
                int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                memset(buf, 'x', sizeof(buf));
                if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t) sizeof(buf))
                        _exit(81);
                if (comm && prctl(PR_SET_NAME, comm) < 0)
                        _exit(83);
                (void) !write(written[1], "w", 1);
                if (read(go[0], &c, 1) != 1) /* the parent holds slowfs first */
                        _exit(82);
                (void) fsync(fd);
                _exit(0);
        }
        close(written[1]);
        close(go[0]);
        char c;
        g_assert_cmpint(read(written[0], &c, 1), ==, 1);
        close(written[0]);
        harness_slowfs_hold(h);
        g_assert_cmpint(write(go[1], "g", 1), ==, 1);
        close(go[1]);
        return pid;
}

bool harness_task_in_state_d(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid);
        g_autofree char *text = NULL;
        if (!g_file_get_contents(path, &text, NULL, NULL))
                return false;
        const char *close_paren = strrchr(text, ')');
        return close_paren && close_paren[1] == ' ' && close_paren[2] == 'D';
}

pid_t harness_scratch_stuck_in_fsync(Harness *h, Scratch *s, const char *cgroup, const char *file, const char *comm) {
        g_autofree char *journal = file ? NULL : g_build_filename(h->slow, "journal", NULL);
        g_autofree char *dir = scratch_abs(s, cgroup);
        g_autofree char *procs = g_build_filename(dir, "cgroup.procs", NULL);
        pid_t pid = harness_slowfs_stuck_in_fsync(h, procs, file ? file : journal, comm);
        g_array_append_val(s->pids, pid);
        return pid;
}

void harness_assert_task_in_state_d(pid_t pid) {
        for (int i = 0; i < 300 && !harness_task_in_state_d(pid); i++)
                g_usleep(10000);
        g_assert_true(harness_task_in_state_d(pid));
}
