/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The writer's own console while user space is frozen (issue 17): nothing
 * else runs to draw a progress bar or take a key, so the writer draws it
 * itself on a text console or serial line (--console=TTY): MiB written of
 * the total, MiB/s, time left; and reads the keys there: Esc or Backspace
 * aborts the write. Keys typed before the write began are dropped, so a
 * stale Esc does not abort it. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

typedef struct ImageConsole {
        int fd;
        struct termios saved;
        bool saved_ok;
        uint64_t t0, drawn;     /* CLOCK_MONOTONIC usec: start, last bar */
} ImageConsole;

/* Opens and sets the line raw and non-blocking; a negative errno */
int image_console_open(ImageConsole *c, const char *path);
/* The line as it was, the bar ended with a newline */
void image_console_close(ImageConsole *c);
/* The write begins: MiB/s and time left count from here */
void image_console_start(ImageConsole *c);
/* Redrawn at most every 100 ms, and always when done == total */
void image_console_progress(ImageConsole *c, uint64_t done, uint64_t total);
/* Was Esc (or Backspace) typed since the last call? */
bool image_console_abort_typed(ImageConsole *c);
/* One line of text of the bar (for tests): buf holds size bytes */
void image_console_format(char *buf, size_t size, uint64_t done, uint64_t total, uint64_t usec);
