/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The controlling terminal while a cycle is followed: key-at-a-time input
 * without echo, and a guarantee that the user's settings come back. */

#include <stdbool.h>

/* Switches fd to non-canonical, no-echo input, keeping ISIG so Ctrl-C is
 * still SIGINT. The previous settings are saved first and an atexit()
 * handler restores them, so every exit path (return from main, exit() on
 * an error, the signal handlers that end the loop) gives them back. Does
 * nothing and returns 0 when fd is not a terminal we own in the
 * foreground. Returns 1 when the mode was changed. */
int terminal_enter_keys_mode(int fd);

/* Restores the saved settings; idempotent and async-signal-safe. */
void terminal_restore(void);

/* Width of the terminal on fd, 80 when it cannot be told. */
unsigned terminal_columns(int fd);
/* Its height, 24 when it cannot be told. */
unsigned terminal_lines(int fd);
