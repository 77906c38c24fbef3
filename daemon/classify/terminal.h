/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include <glib.h>

/* The caller's terminal: whoever holds the master side of the pseudo-
 * terminal a client (fridgectl) runs on draws what the client prints and
 * carries the keys (Esc) that cancel; a terminal emulator in a cgroup of
 * its own (gnome-terminal-server, konsole, xterm in a scope) must stay
 * running for the cycle to stay visible and cancellable. Between the two
 * there may be more ptys: sudo, su and run0 with use_pty hold a new pty's
 * master and run on the caller's terminal; a multiplexer's server (tmux,
 * screen) holds it with no terminal of its own and waits for its clients
 * on a unix socket, and its clients run on the terminals the emulators
 * draw. Every process of that chain must run. */

/* How much of /proc one lookup may read: the processes whose fds it lists
 * and the fd links it reads in all, so a machine with a million open fds
 * costs a bounded walk (the worker's, never the loop's) */
#define TERMINAL_PROCESSES_MAX 32768
#define TERMINAL_FDS_MAX 262144
/* The caller's ancestors looked at first: the terminal emulator, sshd,
 * tmux and screen are usually one of them */
#define TERMINAL_ANCESTORS_MAX 64
/* The processes of one chain: sudo inside tmux inside ssh is four; a
 * multiplexer's clients each count */
#define TERMINAL_HOPS_MAX 16
/* The clients of one multiplexer's server followed */
#define TERMINAL_CLIENTS_MAX 8

/* /proc/PID/stat: field 4 (ppid) and field 7 (tty_nr), counted after the
 * last ')' since comm may hold spaces and parentheses. -EBADMSG. */
int terminal_parse_stat(const char *text, pid_t *ret_ppid, unsigned *ret_tty_nr);

/* The pts number of a tty_nr (the kernel's new_encode_dev() of the
 * terminal): majors 136 to 143 are the Unix98 pty slaves. -ENOTTY when
 * there is no terminal (0) or it is no pseudo-terminal (a VT, a serial
 * line). */
int terminal_pts_of_tty_nr(unsigned tty_nr, unsigned *ret_index);

/* A /proc/PID/fdinfo/FD text's "tty-index:" (ptmx fds have it), -ENOENT
 * when it has none, -EBADMSG when it is not a number. */
int terminal_parse_fdinfo_tty_index(const char *text, unsigned *ret_index);

/* Whether an fd link's target is the pty multiplexer (/dev/ptmx, or
 * /dev/pts/ptmx opened directly). */
bool terminal_is_ptmx(const char *target);

/* What every hop's reason starts with */
#define TERMINAL_REASON_PREFIX "terminal of the caller"

/* The listening flag of PROC/net/unix's Flags column (__SO_ACCEPTCON) */
#define TERMINAL_SO_ACCEPTCON (1u << 16)

/* PROC/PID/net/unix: the inodes (guint64, g_free'd keys of a table made
 * with g_int64_hash) of the sockets that listen. -EBADMSG when it is not
 * that table. */
int terminal_parse_unix_listening(const char *text, GHashTable *ret_inodes);

/* One process of the chain and why it is there ("terminal of the caller:
 * xterm (pid 812) holds /dev/pts/3's master") */
typedef struct TerminalHop {
        pid_t pid;
        char *reason;           /* owned */
} TerminalHop;

void terminal_hop_clear(TerminalHop *hop);

/* The chain from pid's controlling terminal to what draws it, under the
 * proc root, in order: the holder of each pty's master (looked for among
 * the hop's ancestors first, then every process) and a multiplexer
 * server's clients, within the bounds above, each holder checked on its
 * own (root's, its hop's client's user's, or the pts owner's: under sudo
 * the emulator is the user's and the caller root). A kernel VT, a serial
 * line or a remote login (sshd has no terminal) ends it with what it
 * found. Returns the number of hops in *ret_hops (a GArray of
 * TerminalHop; empty when pid has no pseudo-terminal or no holder was
 * found), <0 when pid's stat cannot be read. */
int terminal_find_chain(int proc_fd, pid_t pid, GArray **ret_hops);
