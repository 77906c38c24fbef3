/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "terminal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define FALLBACK_COLUMNS 80

/* Global because the atexit() handler takes no argument. */
static struct termios saved_termios;
static int saved_fd = -1;

void terminal_restore(void) {
        if (saved_fd < 0)
                return;
        /* TCSANOW: TCSADRAIN could hang on a stopped (^S) terminal. */
        (void) tcsetattr(saved_fd, TCSANOW, &saved_termios);
        saved_fd = -1;
}

int terminal_enter_keys_mode(int fd) {
        static bool atexit_registered = false;
        struct termios t;

        if (saved_fd >= 0)
                return 1;
        if (!isatty(fd))
                return 0;
        /* In a background job tcsetattr() would stop us with SIGTTOU. */
        if (tcgetpgrp(fd) != getpgrp())
                return 0;
        if (tcgetattr(fd, &saved_termios) < 0)
                return -errno;

        if (!atexit_registered) {
                if (atexit(terminal_restore) != 0)
                        return -ENOMEM;
                atexit_registered = true;
        }

        t = saved_termios;
        t.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
        t.c_lflag |= ISIG;
        t.c_cc[VMIN] = 1;
        t.c_cc[VTIME] = 0;
        /* Ctrl-Z would stop us with the terminal in this mode and the bar
         * half drawn; a cycle is short and has its own cancel key. */
        t.c_cc[VSUSP] = _POSIX_VDISABLE;

        saved_fd = fd;
        if (tcsetattr(fd, TCSANOW, &t) < 0) {
                saved_fd = -1;
                return -errno;
        }
        return 1;
}

unsigned terminal_columns(int fd) {
        struct winsize ws;

        if (ioctl(fd, TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0)
                return FALLBACK_COLUMNS;
        return ws.ws_col;
}

unsigned terminal_lines(int fd) {
        struct winsize ws;

        if (ioctl(fd, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0)
                return 24;
        return ws.ws_row;
}
