/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What fridge-image-writer --serve reads from its environment and from
 * /sys/power, parsed without touching anything (unit-tested). */

#include <sys/types.h>

#include "image-write.h"

/* The first fd systemd passes (sd_listen_fds(3)) */
#define SERVE_LISTEN_FDS_START 3

/* LISTEN_PID and LISTEN_FDS (either NULL: unset): how many fds systemd
 * passed to self; 0 when they are unset or meant for another process;
 * -EINVAL when malformed. */
int serve_listen_fds(const char *listen_pid, const char *listen_fds, pid_t self);

/* /sys/power/resume's "MAJ:MIN" (a trailing newline allowed); -EINVAL
 * when it is not that. 0:0 parses: the caller says no device is set. */
int serve_parse_devnum(const char *s, unsigned *ret_major, unsigned *ret_minor);

/* /sys/power/resume_offset's page count; -EINVAL when not a number */
int serve_parse_offset(const char *s, uint64_t *ret);

/* fridged's mode (/sys/power/disk's word) to what follows the write:
 * -EOPNOTSUPP for test_resume (the kernel's own test: its writer does
 * it), -EINVAL for a word that is no mode. */
int serve_mode_after(const char *mode, ImageAfter *ret);
