/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "terminal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroups.h"
#include "detect.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "parse.h"

#define PTS_MAJOR_FIRST 136     /* UNIX98_PTY_SLAVE_MAJOR */
#define PTS_MAJORS 8            /* UNIX98_PTY_MAJOR_COUNT */

int terminal_parse_stat(const char *text, pid_t *ret_ppid, unsigned *ret_tty_nr) {
        g_auto(GStrv) fields = parse_stat_fields(text, 6);
        if (!fields)
                return -EBADMSG;
        uint32_t ppid;
        int32_t tty;
        char *end;
        errno = 0;
        long t = strtol(fields[5], &end, 10);
        /* tty_nr is printed as a signed int; a negative one is no device */
        if (parse_uint32(fields[2], &ppid) < 0 || ppid > INT_MAX || errno != 0 || end == fields[5] || *end ||
            t < INT32_MIN || t > INT32_MAX)
                return -EBADMSG;
        tty = (int32_t) t;
        *ret_ppid = (pid_t) ppid;
        *ret_tty_nr = (unsigned) tty;
        return 0;
}

int terminal_pts_of_tty_nr(unsigned tty_nr, unsigned *ret_index) {
        unsigned major = (tty_nr >> 8) & 0xfff;
        unsigned minor = (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00);
        if (tty_nr == 0 || major < PTS_MAJOR_FIRST || major >= PTS_MAJOR_FIRST + PTS_MAJORS)
                return -ENOTTY;
        *ret_index = (major - PTS_MAJOR_FIRST) * 256 + minor;
        return 0;
}

int terminal_parse_fdinfo_tty_index(const char *text, unsigned *ret_index) {
        static const char key[] = "tty-index:";
        for (const char *l = text; l && *l;) {
                size_t len = strcspn(l, "\n");
                if (strncmp(l, key, sizeof(key) - 1) == 0) {
                        g_autofree char *v = g_strstrip(g_strndup(l + sizeof(key) - 1, len - (sizeof(key) - 1)));
                        uint32_t index;
                        if (parse_uint32(v, &index) < 0)
                                return -EBADMSG;
                        *ret_index = index;
                        return 0;
                }
                l += len + (l[len] == '\n');
        }
        return -ENOENT;
}

bool terminal_is_ptmx(const char *target) {
        return target && (g_str_equal(target, "/dev/ptmx") || g_str_equal(target, "/dev/pts/ptmx"));
}

typedef struct Search {
        int proc_fd;
        uid_t uid;              /* the caller's: a holder is its or root's */
        unsigned index;         /* the pts number looked for */
        unsigned n_processes;
        unsigned n_fds;
} Search;

static bool search_exhausted(const Search *s) {
        return s->n_processes >= TERMINAL_PROCESSES_MAX || s->n_fds >= TERMINAL_FDS_MAX;
}

static bool fd_is_master(Search *s, pid_t pid, int dir_fd, const char *fd) {
        g_autofree char *target = detect_readlink_at(dir_fd, fd);
        if (!terminal_is_ptmx(target))
                return false;
        g_autofree char *path = g_strdup_printf("%d/fdinfo/%s", (int) pid, fd);
        g_autofree char *info = NULL;
        unsigned index;
        return read_file_at(s->proc_fd, path, &info) >= 0 && terminal_parse_fdinfo_tty_index(info, &index) >= 0 &&
               index == s->index;
}

/* Whether pid holds the master; a process we may not look into, or one
 * gone meanwhile, does not */
static bool holds_master(Search *s, pid_t pid) {
        /* A pts number is unique only within its devpts instance: another
         * user's container may hold a master of the same number */
        uid_t owner = detect_pid_owner(s->proc_fd, pid);
        if (owner != s->uid && owner != 0)
                return false;
        char path[32];
        snprintf(path, sizeof(path), "%d/fd", (int) pid);
        DIR *d = opendir_at(s->proc_fd, path);
        if (!d)
                return false;
        s->n_processes++;
        bool found = false;
        for (struct dirent *de; !found && !search_exhausted(s) && (de = readdir(d));) {
                if (de->d_name[0] == '.')
                        continue;
                s->n_fds++;
                found = fd_is_master(s, pid, dirfd(d), de->d_name);
        }
        closedir(d);
        return found;
}

static int read_stat(int proc_fd, pid_t pid, pid_t *ret_ppid, unsigned *ret_tty_nr) {
        char path[32];
        g_autofree char *text = NULL;
        snprintf(path, sizeof(path), "%d/stat", (int) pid);
        int r = read_file_at(proc_fd, path, &text);
        return r < 0 ? r : terminal_parse_stat(text, ret_ppid, ret_tty_nr);
}

static pid_t search_ancestors(Search *s, pid_t pid) {
        for (unsigned i = 0; i < TERMINAL_ANCESTORS_MAX && pid > 1; i++) {
                pid_t ppid;
                unsigned tty;
                if (read_stat(s->proc_fd, pid, &ppid, &tty) < 0 || ppid <= 0)
                        return 0;
                if (holds_master(s, ppid))
                        return ppid;
                pid = ppid;
        }
        return 0;
}

static pid_t search_all(Search *s) {
        int fd = openat(s->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        pid_t found = 0;
        for (struct dirent *de; !found && !search_exhausted(s) && (de = readdir(d));) {
                uint32_t pid;
                if (parse_uint32(de->d_name, &pid) >= 0 && pid > 0 && pid <= INT_MAX && holds_master(s, (pid_t) pid))
                        found = (pid_t) pid;
        }
        closedir(d);
        if (!found && search_exhausted(s))
                log_info("The caller's terminal /dev/pts/%u: no holder of its master among the first %u processes "
                         "and %u fds; its terminal emulator may be frozen", s->index, s->n_processes, s->n_fds);
        return found;
}

int terminal_find_master(int proc_fd, pid_t pid, pid_t *ret_holder, char **ret_reason) {
        pid_t ppid;
        unsigned tty_nr;
        int r = read_stat(proc_fd, pid, &ppid, &tty_nr);
        if (r < 0)
                return r;
        Search s = { .proc_fd = proc_fd, .uid = detect_pid_owner(proc_fd, pid) };
        if (s.uid == (uid_t) -1)
                return 0;
        if (terminal_pts_of_tty_nr(tty_nr, &s.index) < 0)
                return 0;
        pid_t holder = search_ancestors(&s, pid);
        if (holder == 0)
                holder = search_all(&s);
        if (holder == 0)
                return 0;
        g_autofree char *raw = detect_read_comm(proc_fd, holder);
        /* anyone's bytes: the reason goes to the log and on D-Bus */
        g_autofree char *comm = cgroups_escape(raw);
        *ret_holder = holder;
        *ret_reason = g_strdup_printf("terminal of the caller: %s (pid %d) holds /dev/pts/%u's master", comm,
                                      (int) holder, s.index);
        return 1;
}
