/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "terminal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

static unsigned tty_nr_major(unsigned tty_nr) {
        return (tty_nr >> 8) & 0xfff;
}

static unsigned tty_nr_minor(unsigned tty_nr) {
        return (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00);
}

int terminal_pts_of_tty_nr(unsigned tty_nr, unsigned *ret_index) {
        unsigned major = tty_nr_major(tty_nr);
        if (tty_nr == 0 || major < PTS_MAJOR_FIRST || major >= PTS_MAJOR_FIRST + PTS_MAJORS)
                return -ENOTTY;
        *ret_index = (major - PTS_MAJOR_FIRST) * 256 + tty_nr_minor(tty_nr);
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

void terminal_hop_clear(TerminalHop *hop) {
        g_clear_pointer(&hop->reason, g_free);
}

/* ---- one walk of the chain ---- */

/* What the whole chain may read (TERMINAL_*_MAX) and what it found */
typedef struct Chain {
        int proc_fd;
        unsigned n_processes;
        unsigned n_fds;
        GHashTable *seen;       /* pids in the chain, and the caller: a loop ends there */
        GArray *hops;           /* TerminalHop */
} Chain;

/* One hop: the master of `index` looked for, on behalf of a process
 * (`client`) whose controlling terminal it is */
typedef struct Hop {
        pid_t client;
        unsigned tty_nr;
        unsigned index;
        uid_t client_uid;
        uid_t pts_owner;        /* of the pts itself, (uid_t) -1 when no fd of the client shows it */
} Hop;

static bool chain_exhausted(const Chain *c) {
        return c->n_processes >= TERMINAL_PROCESSES_MAX || c->n_fds >= TERMINAL_FDS_MAX;
}

static int read_stat(int proc_fd, pid_t pid, pid_t *ret_ppid, unsigned *ret_tty_nr) {
        char path[32];
        g_autofree char *text = NULL;
        snprintf(path, sizeof(path), "%d/stat", (int) pid);
        int r = read_file_at(proc_fd, path, &text);
        return r < 0 ? r : terminal_parse_stat(text, ret_ppid, ret_tty_nr);
}

/* Calls f on each fd link of pid until it returns true, within the
 * chain's bounds; whether one did. A process we may not look into, or one
 * gone meanwhile, has none. */
typedef bool (*FdFunc)(Chain *c, pid_t pid, int dir_fd, const char *fd, void *data);

static bool any_fd(Chain *c, pid_t pid, FdFunc f, void *data) {
        char path[32];
        snprintf(path, sizeof(path), "%d/fd", (int) pid);
        DIR *d = opendir_at(c->proc_fd, path);
        if (!d)
                return false;
        c->n_processes++;
        bool found = false;
        for (struct dirent *de; !found && !chain_exhausted(c) && (de = readdir(d));) {
                if (de->d_name[0] == '.')
                        continue;
                c->n_fds++;
                found = f(c, pid, dirfd(d), de->d_name, data);
        }
        closedir(d);
        return found;
}

/* A master of any pty (index NULL) or of *index */
static bool fd_is_master(Chain *c, pid_t pid, int dir_fd, const char *fd, void *data) {
        const unsigned *want = data;
        g_autofree char *target = detect_readlink_at(dir_fd, fd);
        if (!terminal_is_ptmx(target))
                return false;
        if (!want)
                return true;
        g_autofree char *path = g_strdup_printf("%d/fdinfo/%s", (int) pid, fd);
        g_autofree char *info = NULL;
        unsigned index;
        return read_file_at(c->proc_fd, path, &info) >= 0 && terminal_parse_fdinfo_tty_index(info, &index) >= 0 &&
               index == *want;
}

/* The client's fd on its own terminal: stat() through /proc reaches the
 * pts in the client's devpts instance, whose owner opened its master */
static bool fd_is_pts(Chain *c, pid_t pid, int dir_fd, const char *fd, void *data) {
        Hop *hop = data;
        struct stat st;
        if (fstatat(dir_fd, fd, &st, 0) < 0 || !S_ISCHR(st.st_mode) ||
            major(st.st_rdev) != tty_nr_major(hop->tty_nr) || minor(st.st_rdev) != tty_nr_minor(hop->tty_nr))
                return false;
        hop->pts_owner = st.st_uid;
        return true;
}

/* A pts number is unique only within its devpts instance, where another
 * user's container may hold a master of the same number: a holder counts
 * when it is root's, the client's user's, or the user's who owns the pts
 * (under sudo the client is root's and its terminal emulator the user's) */
static bool holder_trusted(const Chain *c, const Hop *hop, pid_t pid) {
        uid_t owner = detect_pid_owner(c->proc_fd, pid);
        return owner == 0 || owner == hop->client_uid || (owner != (uid_t) -1 && owner == hop->pts_owner);
}

static bool holds_master(Chain *c, const Hop *hop, pid_t pid) {
        unsigned index = hop->index;
        return holder_trusted(c, hop, pid) && any_fd(c, pid, fd_is_master, &index);
}

static pid_t search_ancestors(Chain *c, const Hop *hop) {
        pid_t pid = hop->client;
        for (unsigned i = 0; i < TERMINAL_ANCESTORS_MAX && pid > 1; i++) {
                pid_t ppid;
                unsigned tty;
                if (read_stat(c->proc_fd, pid, &ppid, &tty) < 0 || ppid <= 0)
                        return 0;
                if (holds_master(c, hop, ppid))
                        return ppid;
                pid = ppid;
        }
        return 0;
}

/* Calls f on every process until it returns true, within the bounds */
typedef bool (*PidFunc)(Chain *c, pid_t pid, void *data);

static void each_process(Chain *c, PidFunc f, void *data) {
        int fd = openat(c->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        bool done = false;
        for (struct dirent *de; !done && !chain_exhausted(c) && (de = readdir(d));) {
                uint32_t pid;
                if (parse_uint32(de->d_name, &pid) >= 0 && pid > 0 && pid <= INT_MAX)
                        done = f(c, (pid_t) pid, data);
        }
        closedir(d);
}

typedef struct Found {
        const Hop *hop;
        pid_t pid;
} Found;

static bool check_holder(Chain *c, pid_t pid, void *data) {
        Found *found = data;
        if (holds_master(c, found->hop, pid))
                found->pid = pid;
        return found->pid != 0;
}

static pid_t search_all(Chain *c, const Hop *hop) {
        Found found = { .hop = hop };
        each_process(c, check_holder, &found);
        if (!found.pid && chain_exhausted(c))
                log_info("The caller's terminal /dev/pts/%u: no holder of its master among the first %u processes "
                         "and %u fds; its terminal emulator may be frozen", hop->index, c->n_processes, c->n_fds);
        return found.pid;
}

/* The hop of pid's controlling terminal; false when it has no pty (none,
 * a kernel VT, a serial line: the chain ends there) */
static bool hop_of(Chain *c, pid_t pid, Hop *ret) {
        pid_t ppid;
        Hop hop = { .client = pid, .pts_owner = (uid_t) -1 };
        if (read_stat(c->proc_fd, pid, &ppid, &hop.tty_nr) < 0 || terminal_pts_of_tty_nr(hop.tty_nr, &hop.index) < 0)
                return false;
        hop.client_uid = detect_pid_owner(c->proc_fd, pid);
        if (hop.client_uid == (uid_t) -1)
                return false;
        (void) any_fd(c, pid, fd_is_pts, &hop);
        *ret = hop;
        return true;
}

static char *escaped_comm(const Chain *c, pid_t pid) {
        g_autofree char *raw = detect_read_comm(c->proc_fd, pid);
        /* anyone's bytes: the reason goes to the log and on D-Bus */
        return cgroups_escape(raw);
}

static void chain_add(Chain *c, pid_t pid, char *reason) {
        TerminalHop hop = { .pid = pid, .reason = reason };
        g_array_append_val(c->hops, hop);
        g_hash_table_add(c->seen, GINT_TO_POINTER((int) pid));
}

static char *hop_reason(const Chain *c, pid_t holder, const Hop *hop) {
        g_autofree char *comm = escaped_comm(c, holder);
        if (c->hops->len == 0)
                return g_strdup_printf(TERMINAL_REASON_PREFIX ": %s (pid %d) holds /dev/pts/%u's master", comm,
                                       (int) holder, hop->index);
        g_autofree char *client = escaped_comm(c, hop->client);
        return g_strdup_printf(TERMINAL_REASON_PREFIX ", hop %u: %s (pid %d) holds /dev/pts/%u's master, the "
                               "terminal of %s (pid %d)", c->hops->len + 1, comm, (int) holder, hop->index, client,
                               (int) hop->client);
}

static void walk(Chain *c, pid_t client, unsigned depth);

/* ---- a multiplexer's clients ---- */

/* A terminal multiplexer's server (tmux, screen, zellij, dtach) holds the
 * master of the caller's pty and has no terminal of its own; what draws
 * it are its clients, attached over a unix socket: the same executable
 * running on a pty of its own, holding no master (which a terminal
 * emulator started from a shell would), of the server's user or root */
typedef struct Server {
        pid_t pid;
        uid_t uid;
        dev_t exe_dev;
        ino_t exe_ino;
        GArray *clients;        /* pid_t */
} Server;

static bool same_executable(const Chain *c, pid_t pid, const Server *s) {
        char path[32];
        struct stat st;
        snprintf(path, sizeof(path), "%d/exe", (int) pid);
        return fstatat(c->proc_fd, path, &st, 0) >= 0 && st.st_dev == s->exe_dev && st.st_ino == s->exe_ino;
}

static bool check_client(Chain *c, pid_t pid, void *data) {
        Server *s = data;
        pid_t ppid;
        unsigned tty_nr, index;
        /* the exe first: one fstatat() rules out nearly every process */
        if (pid == s->pid || g_hash_table_contains(c->seen, GINT_TO_POINTER((int) pid)) ||
            !same_executable(c, pid, s) || read_stat(c->proc_fd, pid, &ppid, &tty_nr) < 0 ||
            terminal_pts_of_tty_nr(tty_nr, &index) < 0)
                return false;
        uid_t owner = detect_pid_owner(c->proc_fd, pid);
        if ((owner != s->uid && owner != 0) || any_fd(c, pid, fd_is_master, NULL))
                return false;
        if (s->clients->len < TERMINAL_CLIENTS_MAX)
                g_array_append_val(s->clients, pid);
        return false;
}

int terminal_parse_unix_listening(const char *text, GHashTable *ret_inodes) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        if (!lines[0] || !g_str_has_prefix(lines[0], "Num "))
                return -EBADMSG;
        for (char **l = lines + 1; *l; l++) {
                if (!**l)
                        continue;
                g_auto(GStrv) f = g_strsplit_set(*l, " ", -1);
                g_autoptr(GPtrArray) words = g_ptr_array_new();
                for (char **w = f; *w; w++)
                        if (**w)
                                g_ptr_array_add(words, *w);
                guint64 flags, inode;
                if (words->len < 7 || !g_ascii_string_to_unsigned(words->pdata[3], 16, 0, G_MAXUINT64, &flags, NULL) ||
                    !g_ascii_string_to_unsigned(words->pdata[6], 10, 0, G_MAXUINT64, &inode, NULL))
                        return -EBADMSG;
                if (flags & TERMINAL_SO_ACCEPTCON)
                        g_hash_table_add(ret_inodes, g_memdup2(&inode, sizeof(inode)));
        }
        return 0;
}

static bool fd_is_listening(Chain *c, pid_t pid, int dir_fd, const char *fd, void *data) {
        GHashTable *listening = data;
        g_autofree char *target = detect_readlink_at(dir_fd, fd);
        uint64_t inode;
        char end;
        return target && sscanf(target, "socket:[%" SCNu64 "%c", &inode, &end) == 2 && end == ']' &&
               g_hash_table_contains(listening, &inode);
}

/* Whether the holder waits for clients on a unix socket, as a
 * multiplexer's server does and a terminal emulator does not: only then
 * are all processes searched for its clients. Its own network namespace's
 * sockets (PROC/PID/net/unix), which fridged's PrivateNetwork= hides from
 * fridged's own; unreadable or too large: taken to be one. */
static bool holds_listening_socket(Chain *c, pid_t pid) {
        char path[32];
        g_autofree char *text = NULL;
        snprintf(path, sizeof(path), "%d/net/unix", (int) pid);
        g_autoptr(GHashTable) listening = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        if (read_file_at(c->proc_fd, path, &text) < 0 || terminal_parse_unix_listening(text, listening) < 0)
                return true;
        return g_hash_table_size(listening) > 0 && any_fd(c, pid, fd_is_listening, listening);
}

static void walk_clients(Chain *c, pid_t server, unsigned depth) {
        char path[32];
        struct stat st;
        snprintf(path, sizeof(path), "%d/exe", (int) server);
        if (!holds_listening_socket(c, server) || fstatat(c->proc_fd, path, &st, 0) < 0)
                return;
        g_autoptr(GArray) clients = g_array_new(FALSE, FALSE, sizeof(pid_t));
        Server s = { .pid = server, .uid = detect_pid_owner(c->proc_fd, server), .exe_dev = st.st_dev,
                     .exe_ino = st.st_ino, .clients = clients };
        each_process(c, check_client, &s);
        g_autofree char *server_comm = escaped_comm(c, server);
        for (guint i = 0; i < clients->len && c->hops->len < TERMINAL_HOPS_MAX; i++) {
                pid_t client = g_array_index(clients, pid_t, i);
                g_autofree char *comm = escaped_comm(c, client);
                chain_add(c, client, g_strdup_printf(TERMINAL_REASON_PREFIX ", hop %u: %s (pid %d) is a client of "
                                                     "%s (pid %d), which holds the terminal's master",
                                                     c->hops->len + 1, comm, (int) client, server_comm,
                                                     (int) server));
                walk(c, client, depth + 1);
        }
}

/* ---- the walk ---- */

/* From a process on a pty to whoever holds its master, and on from there:
 * through the holder's own terminal (sudo, su and run0 with use_pty hold
 * the new pty's master and run on the caller's) or, where the holder has
 * none, through its clients (a multiplexer). A kernel VT, a serial line
 * or a holder with neither (sshd: a remote login) ends it. */
static void walk(Chain *c, pid_t client, unsigned depth) {
        Hop hop;
        if (depth >= TERMINAL_HOPS_MAX || c->hops->len >= TERMINAL_HOPS_MAX || !hop_of(c, client, &hop))
                return;
        pid_t holder = search_ancestors(c, &hop);
        if (holder == 0)
                holder = search_all(c, &hop);
        if (holder == 0 || g_hash_table_contains(c->seen, GINT_TO_POINTER((int) holder)))
                return;
        chain_add(c, holder, hop_reason(c, holder, &hop));
        pid_t ppid;
        unsigned tty_nr, index;
        if (read_stat(c->proc_fd, holder, &ppid, &tty_nr) < 0)
                return;
        if (terminal_pts_of_tty_nr(tty_nr, &index) >= 0)
                walk(c, holder, depth + 1);
        else if (tty_nr == 0)
                walk_clients(c, holder, depth + 1);
}

int terminal_find_chain(int proc_fd, pid_t pid, GArray **ret_hops) {
        pid_t ppid;
        unsigned tty_nr;
        int r = read_stat(proc_fd, pid, &ppid, &tty_nr);
        if (r < 0)
                return r;
        g_autoptr(GArray) hops = g_array_new(FALSE, FALSE, sizeof(TerminalHop));
        g_array_set_clear_func(hops, (GDestroyNotify) terminal_hop_clear);
        Chain c = { .proc_fd = proc_fd, .hops = hops, .seen = g_hash_table_new(NULL, NULL) };
        g_hash_table_add(c.seen, GINT_TO_POINTER((int) pid));
        walk(&c, pid, 0);
        g_hash_table_unref(c.seen);
        *ret_hops = g_steal_pointer(&hops);
        return (int) (*ret_hops)->len;
}
