/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"
#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "util.h"

#define LEDGER_FILE "frozen"
#define LEDGER_TMP ".frozen.tmp"
/* Format 2: this line, then "ID PATH" a line. Format 1 (no header) was
 * "PATH" a line: read as id 0, "not recorded". */
#define LEDGER_HEADER "fridge-ledger 2"

struct Ledger {
        char *dir;
        int dir_fd;     /* O_RDONLY, so it can be fsynced after a rename */
};

int ledger_open(const char *dir, Ledger **ret) {
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;

        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;

        Ledger *l = g_new0(Ledger, 1);
        l->dir = g_strdup(dir);
        l->dir_fd = TAKE_FD(fd);
        *ret = l;
        return 0;
}

Ledger *ledger_free(Ledger *l) {
        if (!l)
                return NULL;
        closep(&l->dir_fd);
        g_free(l->dir);
        g_free(l);
        return NULL;
}

int ledger_cgroup_open(int cgroup_fd, const char *cgroup) {
        if (!cgroups_path_is_valid(cgroup))
                return -EINVAL;
        return open_dir_beneath(cgroup_fd, cgroup);
}

/* Replaces the whole ledger atomically: a crash leaves the old or the new. */
static int ledger_rewrite(Ledger *l, const char *content) {
        return write_file_atomic_at(l->dir_fd, LEDGER_FILE, LEDGER_TMP, content);
}

static char *entry_line(const char *cgroup, uint64_t id) {
        return g_strdup_printf("%" G_GUINT64_FORMAT " %s", id, cgroup);
}

/* The lines in format 2 ("ID PATH"), whatever the file's format */
static int ledger_read(Ledger *l, char ***ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at(l->dir_fd, LEDGER_FILE, &text);
        if (r == -ENOENT) {
                *ret = g_new0(char *, 1);
                return 0;
        }
        if (r < 0)
                return r;

        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        bool v2 = lines[0] && g_str_equal(lines[0], LEDGER_HEADER);
        g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
        for (char **p = lines + v2; *p; p++)
                if (**p)
                        g_ptr_array_add(out, v2 ? g_strdup(*p) : entry_line(*p, 0));
        g_ptr_array_add(out, NULL);
        *ret = (char **) g_ptr_array_free(g_steal_pointer(&out), FALSE);
        return 0;
}

/* The path of a format 2 line and its id; a line without a number reads
 * as the path "" (malformed), id 0 */
static const char *entry_parse(const char *line, uint64_t *ret_id) {
        const char *space = strchr(line, ' ');
        g_autofree char *number = space ? g_strndup(line, space - line) : NULL;
        if (!number || parse_uint64(number, ret_id) < 0) {
                *ret_id = 0;
                return "";
        }
        return space + 1;
}

/* An empty ledger is an empty file, in either format */
static char *join_lines(char **lines) {
        GString *s = g_string_new(lines && *lines ? LEDGER_HEADER "\n" : NULL);
        for (char **p = lines; p && *p; p++)
                g_string_append_printf(s, "%s\n", *p);
        return g_string_free(s, FALSE);
}

/* Drops from `lines`, in place, the first line of each cgroup in
 * `cgroups` (one per mention: a cgroup frozen twice is in the ledger
 * twice), in one pass: a thaw after the resume removes every line at
 * once, and a scan per cgroup made that quadratic. Whether any went. */
static bool remove_lines(char **lines, char *const *cgroups) {
        g_autoptr(GHashTable) left = g_hash_table_new(g_str_hash, g_str_equal); /* path → mentions left */
        for (char *const *c = cgroups; *c; c++)
                g_hash_table_insert(left, *c, GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(left, *c)) + 1));
        char **out = lines, **p;
        for (p = lines; *p; p++) {
                uint64_t id;
                const char *path = entry_parse(*p, &id);
                guint n = GPOINTER_TO_UINT(g_hash_table_lookup(left, path));
                if (n == 0) {
                        *out++ = *p;
                        continue;
                }
                g_hash_table_insert(left, (char *) path, GUINT_TO_POINTER(n - 1));
                g_free(*p);
        }
        *out = NULL;
        return out != p;
}

/* A format 1 ledger (left by an older fridged) is rewritten whole with the
 * new lines: one file never mixes the two formats. */
static int ledger_add_rewrite(Ledger *l, char *const *cgroups, const uint64_t *ids) {
        g_auto(GStrv) lines = NULL;
        int r = ledger_read(l, &lines);
        if (r < 0)
                return r;
        g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(g_free);
        for (char **p = lines; *p; p++)
                g_ptr_array_add(all, g_strdup(*p));
        for (size_t i = 0; cgroups[i]; i++)
                g_ptr_array_add(all, entry_line(cgroups[i], ids ? ids[i] : 0));
        g_ptr_array_add(all, NULL);
        g_autofree char *content = join_lines((char **) all->pdata);
        return ledger_rewrite(l, content);
}

int ledger_add(Ledger *l, char *const *cgroups, const uint64_t *ids) {
        for (char *const *c = cgroups; *c; c++)
                if (!cgroups_path_is_valid(*c))
                        return -EINVAL;
        if (!*cgroups)
                return 0;

        /* Only a newly created file needs the directory fsynced as well */
        bool created = false;
        _cleanup_close_ int fd = openat(l->dir_fd, LEDGER_FILE, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 && errno == ENOENT) {
                fd = openat(l->dir_fd, LEDGER_FILE, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
                created = true;
        }
        if (fd < 0)
                return -errno;

        char head[sizeof(LEDGER_HEADER)] = "";
        ssize_t n = pread(fd, head, sizeof(head), 0);
        if (n < 0)
                return -errno;
        if (n > 0 && (n < (ssize_t) sizeof(head) || memcmp(head, LEDGER_HEADER "\n", sizeof(head)) != 0))
                return ledger_add_rewrite(l, cgroups, ids);

        g_autoptr(GString) lines = g_string_new(n == 0 ? LEDGER_HEADER "\n" : NULL);
        for (size_t i = 0; cgroups[i]; i++)
                g_string_append_printf(lines, "%" G_GUINT64_FORMAT " %s\n", ids ? ids[i] : 0, cgroups[i]);
        int r = write_all_fd(fd, lines->str, lines->len);
        if (r < 0)
                return r;
        /* On disk before the caller writes cgroup.freeze: a crash in between
         * leaves at worst a line for a cgroup that is not frozen. */
        if (fsync(fd) < 0)
                return -errno;
        if (created && fsync(l->dir_fd) < 0)
                return -errno;
        return 0;
}

int ledger_remove(Ledger *l, char *const *cgroups) {
        g_auto(GStrv) lines = NULL;
        int r = ledger_read(l, &lines);
        if (r < 0)
                return r;

        if (!remove_lines(lines, cgroups))
                return 0;
        g_autofree char *content = join_lines(lines);
        return ledger_rewrite(l, content);
}

char **ledger_list(Ledger *l) {
        g_auto(GStrv) lines = NULL;
        int r = ledger_read(l, &lines);
        if (r < 0) {
                log_warning_errno(r, "Failed to read %s/" LEDGER_FILE ": %m", l->dir);
                return g_new0(char *, 1);
        }
        uint64_t id;
        for (char **p = lines; *p; p++) {
                char *path = g_strdup(entry_parse(*p, &id));
                g_free(*p);
                *p = path;
        }
        return g_steal_pointer(&lines);
}

bool ledger_cgroup_is(int fd, const char *path, uint64_t id) {
        struct stat st;
        if (id == 0) {
                log_info("Ledger entry %s has no cgroup id (an older fridged's ledger); going by its path", path);
                return true;
        }
        if (fstat(fd, &st) < 0 || (uint64_t) st.st_ino == id)
                return true; /* fstat on an open fd fails only for a bad fd: keep the old behaviour */
        log_warning("Not thawing %s: it is cgroup %" G_GUINT64_FORMAT " now, fridged froze cgroup %" G_GUINT64_FORMAT
                    " (removed and made again since)", path, (uint64_t) st.st_ino, id);
        return false;
}

/* 1 if it thawed the cgroup, 0 if there was nothing to do, <0 on failure. */
static int thaw_entry(int cgroup_fd, const char *line) {
        uint64_t id;
        const char *path = entry_parse(line, &id);
        if (!cgroups_path_is_valid(path)) {
                log_warning("Skipping malformed ledger entry \"%s\"", line);
                return 0;
        }
        _cleanup_close_ int fd = ledger_cgroup_open(cgroup_fd, path);
        if (fd == -ENOENT) {
                log_info("Cgroup %s from the ledger is gone, nothing to thaw", path);
                return 0;
        }
        if (fd == -EINVAL || fd == -ELOOP || fd == -ENOTDIR) {
                /* can never be a cgroup of ours (a symlink, a file): drop it */
                log_warning_errno(fd, "Skipping ledger entry %s: %m", path);
                return 0;
        }
        if (fd < 0) /* maybe passing (EMFILE, ENOMEM): keep the entry for the next try */
                return log_warning_errno(fd, "Cannot open %s from the ledger now: %m", path);
        if (!ledger_cgroup_is(fd, path, id))
                return 0;

        _cleanup_free_ char *value = NULL;
        int r = read_file_at(fd, "cgroup.freeze", &value);
        if (r == -ENOENT)
                return 0;       /* removed between the open and the read */
        if (r < 0)
                return log_warning_errno(r, "Failed to read %s/cgroup.freeze: %m", path);
        if (!g_str_equal(strstrip_right(value), "1"))
                return 0;

        r = write_file_at(fd, "cgroup.freeze", "0");
        if (r < 0)
                return log_warning_errno(r, "Failed to thaw %s: %m", path);
        log_info("Thawed %s, left frozen by an earlier fridged", path);
        return 1;
}

int ledger_thaw_all(Ledger *l, int cgroup_fd) {
        g_auto(GStrv) lines = NULL;
        int r = ledger_read(l, &lines);
        if (r < 0)
                return log_warning_errno(r, "Failed to read %s/" LEDGER_FILE ": %m", l->dir);

        /* Entries that could not be thawed stay, so a later run retries them */
        g_autoptr(GPtrArray) kept = g_ptr_array_new();
        int thawed = 0, failed = 0;
        for (char **p = lines; *p; p++) {
                int k = thaw_entry(cgroup_fd, *p);
                if (k < 0) {
                        failed = k;
                        g_ptr_array_add(kept, *p);
                } else
                        thawed += k;
        }
        g_ptr_array_add(kept, NULL);

        g_autofree char *content = join_lines((char **) kept->pdata);
        r = ledger_rewrite(l, content);
        if (r < 0)
                return log_warning_errno(r, "Failed to rewrite %s/" LEDGER_FILE ": %m", l->dir);
        return failed < 0 ? failed : thawed;
}
