/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The writer's own console while user space is frozen (issue 17): nothing
 * else runs to draw a progress bar or take a key, so the writer draws it
 * itself on a text console or serial line (--console=TTY), or on a VT of
 * its own it brings to the front (--console=vt, image-vt.c): MiB written of
 * the total, MiB/s, time left; and reads the keys there: Esc or Backspace
 * aborts the write. Keys typed before the write began are dropped, so a
 * stale Esc does not abort it. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#include "image-vt.h"
#include "writer-protocol.h"

/* --console=vt: not a path */
#define IMAGE_CONSOLE_VT "vt"

/* In --serve, fridged's connection is a console too: the progress goes
 * there as lines that never wait (dropped when they do not fit: once user
 * space is frozen nobody reads them), and its cancel aborts as Esc does. */
typedef struct ImageConsole {
        int fd;                 /* the tty, or -1 */
        struct termios saved;
        bool saved_ok;
        bool want_vt;           /* --console=vt: taken by image_console_show */
        ImageVt vt;             /* the VT taken (its fd is fd) */
        uint64_t t0, drawn;     /* CLOCK_MONOTONIC usec: start, last bar */
        bool has_peer;
        int peer;               /* fridged's connection (has_peer) */
        WriterLineBuffer in;    /* what it sent, not yet taken */
        bool peer_cancelled;    /* the abort was its cancel (or its hang-up), not a key */
        bool peer_hung_up;      /* fridged closed the connection: nobody waits for the image */
} ImageConsole;

/* Opens and sets the line raw and non-blocking; a negative errno. "vt"
 * (IMAGE_CONSOLE_VT) is only noted: image_console_show takes the VT. */
int image_console_open(ImageConsole *c, const char *path);
/* Just before the freeze: --console=vt's VT taken and brought to the
 * front, once; without one the write goes on without a bar */
void image_console_show(ImageConsole *c);
/* The line as it was, the bar ended with a newline; --console=vt's VT
 * given back, the one in front before in front again */
void image_console_close(ImageConsole *c);
/* The write begins: MiB/s and time left count from here */
void image_console_start(ImageConsole *c);
/* Redrawn at most every 100 ms, and always when done == total */
void image_console_progress(ImageConsole *c, uint64_t done, uint64_t total);
/* Progress to peer and cancel from it, as well as (or instead of) a tty */
void image_console_attach_peer(ImageConsole *c, int peer);
/* Has the peer sent cancel, or hung up (read without waiting)? Sets
 * peer_cancelled */
bool image_console_peer_cancelled(ImageConsole *c);
/* Why the write stops, once image_console_abort_typed or
 * image_console_peer_cancelled said so: fridged's cancel or hang-up, or Esc */
const char *image_console_abort_reason(const ImageConsole *c);
/* Was Esc (or Backspace) typed, or the peer's cancel sent, since the last call? */
bool image_console_abort_typed(ImageConsole *c);
/* One line of text of the bar (for tests): buf holds size bytes */
void image_console_format(char *buf, size_t size, uint64_t done, uint64_t total, uint64_t usec);
