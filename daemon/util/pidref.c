/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "pidref.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "parse.h"
#include "util.h"

int pidref_read_starttime(int proc_fd, pid_t pid, uint64_t *ret) {
        g_autofree char *path = g_strdup_printf("%d/stat", (int) pid);
        g_autofree char *text = NULL;
        int r = read_file_at_single(proc_fd, path, &text);
        if (r < 0)
                return r;
        return parse_stat_starttime(text, ret);
}

int pidref_set(PidRef *p, int proc_fd, pid_t pid) {
        *p = PIDREF_NULL;
        if (pid <= 0)
                return -EINVAL;
        p->pid = pid;
#ifdef SYS_pidfd_open
        p->fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (p->fd < 0 && errno == ESRCH)
                return -ESRCH;
#endif
        int r = pidref_read_starttime(proc_fd, pid, &p->starttime);
        if (r < 0 && p->fd < 0)
                return r;
        return 0;
}

int pidref_copy(const PidRef *p, PidRef *ret) {
        *ret = *p;
        if (p->fd >= 0 && (ret->fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 3)) < 0)
                return -errno;
        return 0;
}

void pidref_done(PidRef *p) {
        if (p->fd >= 0)
                close(p->fd);
        *p = PIDREF_NULL;
}

bool pidref_is_alive(const PidRef *p, int proc_fd) {
        if (p->pid <= 0)
                return false;
#ifdef SYS_pidfd_send_signal
        /* Signal 0 through the pidfd reaches only that process: ESRCH once it exited */
        if (p->fd >= 0)
                return syscall(SYS_pidfd_send_signal, p->fd, 0, NULL, 0) == 0 || errno == EPERM;
#endif
        uint64_t now_start;
        return p->starttime != 0 && pidref_read_starttime(proc_fd, p->pid, &now_start) >= 0 &&
               now_start == p->starttime;
}
