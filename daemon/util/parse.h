/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* Parsers for the kernel's text files. Pure: they take the text, so unit
 * tests feed them odd contents without a kernel. Malformed text is -EBADMSG. */

/* A sysfs word list such as "s2idle [deep]" or "freeze mem disk".
 * *ret_words gets every word without brackets (NULL-terminated, g_strfreev);
 * *ret_current the bracketed one, or NULL when none is bracketed. */
int parse_word_list(const char *text, char ***ret_words, char **ret_current);

/* A decimal unsigned number with optional trailing white space. */
int parse_uint64(const char *text, uint64_t *ret);
int parse_uint32(const char *text, uint32_t *ret);

typedef struct MeminfoDirty {
        uint64_t dirty_kib;
        uint64_t writeback_kib;
} MeminfoDirty;

/* /proc/meminfo: Dirty and Writeback (not WritebackTmp). */
int parse_meminfo(const char *text, MeminfoDirty *ret);

typedef struct MountEntry {
        unsigned mount_id;
        unsigned parent_id;
        unsigned major, minor;
        char *root;
        char *mount_point;
        char *mount_options;
        char *fstype;
        char *source;
        char *super_options;
} MountEntry;

MountEntry *mount_entry_free(MountEntry *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MountEntry, mount_entry_free)

/* /proc/PID/mountinfo into a GPtrArray of MountEntry (owning). Octal escapes
 * (\040 for a space) in paths are decoded. */
int parse_mountinfo(const char *text, GPtrArray **ret);

/* One line of /proc/swaps. Sizes in KiB. */
typedef struct SwapEntry {
        char *path;             /* octal escapes decoded */
        bool is_partition;      /* "partition"; else a file */
        uint64_t size_kib;
        uint64_t used_kib;
        int priority;
} SwapEntry;

SwapEntry *swap_entry_free(SwapEntry *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SwapEntry, swap_entry_free)

/* /proc/swaps (header line first) into a GPtrArray of SwapEntry (owning). */
int parse_swaps(const char *text, GPtrArray **ret);

/* One "Key:  N kB" field of /proc/meminfo; -ENOENT when absent. */
int parse_meminfo_kib(const char *text, const char *key, uint64_t *ret);

/* A device number as "MAJ:MIN" (the form of /sys/power/resume). */
/* The state letter of /proc/PID/stat (field 3, after the comm in
 * parentheses, which may itself hold spaces and ')'); '?' when malformed */
char parse_stat_state(const char *text);
/* Its fields after the comm: [0] the empty word after ')', [1] field 3
 * (state), [N] field N+2; NULL when malformed or fewer than min (g_strfreev) */
char **parse_stat_fields(const char *text, unsigned min);
/* Its start time (field 22), in clock ticks since boot; -EBADMSG when malformed */
int parse_stat_starttime(const char *text, uint64_t *ret);
int parse_devnum(const char *text, unsigned *ret_major, unsigned *ret_minor);

/* "rw" appears in a comma-separated option string. */
bool mount_options_has(const char *options, const char *option);
