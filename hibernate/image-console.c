/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-console.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "image-vt.h"
#include "time-util.h"

#define BAR_WIDTH 20
#define REDRAW_USEC 100000u
#define KEY_ESC 0x1b
#define KEY_BACKSPACE 0x7f
#define KEY_CTRL_H 0x08

/* Raw and non-blocking, what was typed before thrown away */
static void console_raw(ImageConsole *c) {
        if (tcgetattr(c->fd, &c->saved) == 0) {
                struct termios t = c->saved;
                t.c_lflag &= ~(tcflag_t) (ICANON | ECHO | ISIG);
                t.c_cc[VMIN] = 0;
                t.c_cc[VTIME] = 0;
                c->saved_ok = tcsetattr(c->fd, TCSANOW, &t) == 0;
        }
        (void) tcflush(c->fd, TCIFLUSH); /* a key typed before the write is not for it */
        c->t0 = now(CLOCK_MONOTONIC);
}

int image_console_open(ImageConsole *c, const char *path) {
        if (strcmp(path, IMAGE_CONSOLE_VT) == 0) {
                *c = (ImageConsole) { .fd = -1, .want_vt = true, .vt = IMAGE_VT_NONE };
                return 0;
        }
        *c = (ImageConsole) { .fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC), .vt = IMAGE_VT_NONE };
        if (c->fd < 0)
                return -errno;
        console_raw(c);
        return 0;
}

void image_console_show(ImageConsole *c) {
        if (!c->want_vt || c->fd >= 0)
                return;
        c->fd = image_vt_take(&c->vt);
        if (c->fd < 0)
                return;
        console_raw(c);
        /* a VT of its own: cleared, and a word on what this is */
        dprintf(c->fd, "\033[H\033[2Jfridge: hibernating: writing the memory's image to disk\r\n\r\n");
}

void image_console_close(ImageConsole *c) {
        if (c->fd < 0)
                return;
        (void) !write(c->fd, "\r\n", 2);
        if (c->saved_ok)
                (void) tcsetattr(c->fd, TCSANOW, &c->saved);
        if (c->want_vt)
                image_vt_release(&c->vt); /* closes it */
        else
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

void image_console_attach_peer(ImageConsole *c, int peer) {
        c->has_peer = true;
        c->peer = peer;
        c->in.len = 0;
        c->peer_cancelled = false;
        c->peer_hung_up = false;
}

/* Whole or not at all, never waiting, never SIGPIPE */
static void peer_progress(ImageConsole *c, uint64_t done, uint64_t total) {
        WriterMessage m = { .type = WRITER_MSG_PROGRESS, .done = done, .total = total };
        char line[WRITER_LINE_MAX];
        int n = writer_message_format(&m, line, sizeof(line));
        if (n > 0)
                (void) send(c->peer, line, (size_t) n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void image_console_progress(ImageConsole *c, uint64_t done, uint64_t total) {
        uint64_t t = now(CLOCK_MONOTONIC);
        if ((c->fd < 0 && !c->has_peer) || (done < total && t - c->drawn < REDRAW_USEC))
                return;
        c->drawn = t;
        if (c->has_peer)
                peer_progress(c, done, total);
        if (c->fd < 0)
                return;
        char line[160];
        image_console_format(line, sizeof(line), done, total, t - c->t0);
        dprintf(c->fd, "\rfridge: writing the image %s\033[K", line);
}

/* Lines already buffered first (what came with the request), then what
 * can be read without waiting */
bool image_console_peer_cancelled(ImageConsole *c) {
        char chunk[WRITER_LINE_MAX], line[WRITER_LINE_MAX];
        for (;;) {
                WriterMessage m;
                while (!c->peer_cancelled && writer_line_buffer_take(&c->in, line) > 0)
                        if (writer_message_parse(line, &m, NULL, 0) == 0 && m.type == WRITER_MSG_CANCEL)
                                c->peer_cancelled = true;
                if (!c->has_peer || c->peer_cancelled || c->in.len >= WRITER_LINE_MAX)
                        return c->peer_cancelled;
                ssize_t n = recv(c->peer, chunk, WRITER_LINE_MAX - c->in.len, MSG_DONTWAIT);
                if (n == 0) /* fridged gave up on the cycle (or died): an image would wake to nobody */
                        return c->peer_hung_up = c->peer_cancelled = true;
                if (n < 0)
                        return false;
                writer_line_buffer_feed(&c->in, chunk, (size_t) n);
        }
}

const char *image_console_abort_reason(const ImageConsole *c) {
        return c->peer_hung_up ? "fridged hung up" : c->peer_cancelled ? "fridged cancelled the write" : "Esc typed on the console";
}

bool image_console_abort_typed(ImageConsole *c) {
        unsigned char keys[64];
        ssize_t n;
        bool abort = false;
        while (c->fd >= 0 && (n = read(c->fd, keys, sizeof(keys))) > 0)
                for (ssize_t i = 0; i < n; i++)
                        abort |= keys[i] == KEY_ESC || keys[i] == KEY_BACKSPACE || keys[i] == KEY_CTRL_H;
        return image_console_peer_cancelled(c) || abort;
}
