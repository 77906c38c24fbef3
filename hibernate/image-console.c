/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-console.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "time-util.h"

#define BAR_WIDTH 20
#define REDRAW_USEC 100000u
#define KEY_ESC 0x1b
#define KEY_BACKSPACE 0x7f
#define KEY_CTRL_H 0x08

int image_console_open(ImageConsole *c, const char *path) {
        *c = (ImageConsole) { .fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC) };
        if (c->fd < 0)
                return -errno;
        if (tcgetattr(c->fd, &c->saved) == 0) {
                struct termios t = c->saved;
                t.c_lflag &= ~(tcflag_t) (ICANON | ECHO | ISIG);
                t.c_cc[VMIN] = 0;
                t.c_cc[VTIME] = 0;
                c->saved_ok = tcsetattr(c->fd, TCSANOW, &t) == 0;
        }
        (void) tcflush(c->fd, TCIFLUSH); /* a key typed before the write is not for it */
        c->t0 = now(CLOCK_MONOTONIC);
        return 0;
}

void image_console_close(ImageConsole *c) {
        if (c->fd < 0)
                return;
        (void) !write(c->fd, "\r\n", 2);
        if (c->saved_ok)
                (void) tcsetattr(c->fd, TCSANOW, &c->saved);
        close(c->fd);
        c->fd = -1;
}

void image_console_format(char *buf, size_t size, uint64_t done, uint64_t total, uint64_t usec) {
        char bar[BAR_WIDTH + 1];
        unsigned full = total ? (unsigned) (done * BAR_WIDTH / total) : 0;
        for (unsigned i = 0; i < BAR_WIDTH; i++)
                bar[i] = i < full ? '#' : '.';
        bar[BAR_WIDTH] = 0;
        double mibs = usec ? (double) done / (1 << 20) / ((double) usec / 1e6) : 0.0;
        uint64_t left = done && total > done ? (total - done) * usec / done / 1000000u : 0;
        snprintf(buf, size, "[%s] %" PRIu64 " of %" PRIu64 " MiB, %.1f MiB/s, %" PRIu64 " s left (Esc aborts)", bar,
                 done >> 20, total >> 20, mibs, left);
}

void image_console_start(ImageConsole *c) {
        c->t0 = now(CLOCK_MONOTONIC);
}

void image_console_progress(ImageConsole *c, uint64_t done, uint64_t total) {
        uint64_t t = now(CLOCK_MONOTONIC);
        if (c->fd < 0 || (done < total && t - c->drawn < REDRAW_USEC))
                return;
        c->drawn = t;
        char line[160];
        image_console_format(line, sizeof(line), done, total, t - c->t0);
        dprintf(c->fd, "\rfridge: writing the image %s\033[K", line);
}

bool image_console_abort_typed(ImageConsole *c) {
        unsigned char keys[64];
        ssize_t n;
        bool abort = false;
        while (c->fd >= 0 && (n = read(c->fd, keys, sizeof(keys))) > 0)
                for (ssize_t i = 0; i < n; i++)
                        abort |= keys[i] == KEY_ESC || keys[i] == KEY_BACKSPACE || keys[i] == KEY_CTRL_H;
        return abort;
}
