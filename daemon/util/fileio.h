/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <dirent.h>
#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* Every kernel file is reached relative to a root directory fd (the sysfs,
 * proc or cgroup root), so tests can point fridged at a simulated kernel. */

/* Opens DIR as an O_PATH directory fd. */
int root_open(const char *dir);

/* Reads a small (≤ 1 MiB) file below the root. On success *ret is a
 * NUL-terminated string the caller frees. */
int read_file_at(int root_fd, const char *path, char **ret);
/* The same with its own cap (-EFBIG past it): READ_FILE_UNBOUNDED for what
 * the kernel makes as big as the machine is (mountinfo on a host with
 * thousands of mounts), where a cap would silently lose entries */
#define READ_FILE_UNBOUNDED SIZE_MAX
int read_file_at_max(int root_fd, const char *path, size_t max, char **ret);
/* read_file_at() of a file the kernel makes whole by one show(): a sysfs
 * attribute, a cgroup file of one record (cgroup.events, cgroup.freeze),
 * a single_open() file of /proc (/proc/PID/stat, meminfo). A first read
 * short of the buffer is all of it, so the read that would return 0 is
 * saved, which counts when it is done for every process, or on every
 * property read. Not for files of many records (cgroup.procs, mountinfo),
 * whose short read may stop at a full page. */
int read_file_at_single(int root_fd, const char *path, char **ret);
/* The same by an absolute path, opened with open(2): what a preload
 * library standing in for /sys (umockdev's) redirects, as it does libudev's */
int read_path_single(const char *path, char **ret);

/* The whole of `value` in one write(2), as sysfs attributes want. */
int write_file_at(int root_fd, const char *path, const char *value);

/* All of buf, however many write(2)s it takes (EINTR retried). */
int write_all_fd(int fd, const char *buf, size_t len);

/* Replaces the file `name` in the directory dir_fd with `content`
 * atomically and durably: writes `tmp`, fsyncs it, renames it over `name`,
 * fsyncs the directory. A crash leaves the old file or the new one. */
int write_file_atomic_at(int dir_fd, const char *name, const char *tmp, const char *content);
/* The same without the fsyncs: a crash or power cut may keep the old
 * content (or none), never a torn one. For updates of a record whose loss
 * only makes a report older, on the loop, where an fsync may wait seconds
 * behind the file system's other data. */
int write_file_replace_at(int dir_fd, const char *name, const char *tmp, const char *content);

/* The directory PATH below root_fd, opened one component at a time with
 * O_NOFOLLOW: a symlink anywhere on the way, not only at its end, fails
 * (-ENOTDIR or -ELOOP), as does a ".." (-EINVAL), so nothing it opens is
 * outside the root. An O_PATH fd, or a negative errno. */
int open_dir_beneath(int root_fd, const char *path);

/* opendir() of PATH relative to dir_fd; NULL with errno set */
DIR *opendir_at(int dir_fd, const char *path);

/* Reads the file PATH below the root and hands its text to one of the
 * parse_*() functions: read_parsed_at(fd, POWER_WAKEUP_COUNT, parse_uint32,
 * &count). The read's error, else the parser's answer. */
#define read_parsed_at(root_fd, path, parse, ...)                              \
        ({                                                                      \
                g_autofree char *_text = NULL;                                  \
                int _r = read_file_at((root_fd), (path), &_text);               \
                _r < 0 ? _r : parse(_text, __VA_ARGS__);                        \
        })

/* Drops trailing white space in place; returns s. */
char *strstrip_right(char *s);
