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
#include "util.h"

#define LEDGER_FILE "frozen"
#define LEDGER_TMP ".frozen.tmp"

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

int ledger_add(Ledger *l, char *const *cgroups) {
        for (char *const *c = cgroups; *c; c++)
                if (!cgroups_path_is_valid(*c))
                        return -EINVAL;
        if (!*cgroups)
                return 0;

        /* Only a newly created file needs the directory fsynced as well */
        bool created = false;
        _cleanup_close_ int fd = openat(l->dir_fd, LEDGER_FILE, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 && errno == ENOENT) {
                fd = openat(l->dir_fd, LEDGER_FILE, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
                created = true;
        }
        if (fd < 0)
                return -errno;

        g_autoptr(GString) lines = g_string_new(NULL);
        for (char *const *c = cgroups; *c; c++)
                g_string_append_printf(lines, "%s\n", *c);
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

/* Replaces the whole ledger atomically: a crash leaves the old or the new. */
static int ledger_rewrite(Ledger *l, const char *content) {
        return write_file_atomic_at(l->dir_fd, LEDGER_FILE, LEDGER_TMP, content);
}

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
        g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
        for (char **p = lines; *p; p++)
                if (**p)
                        g_ptr_array_add(out, g_strdup(*p));
        g_ptr_array_add(out, NULL);
        *ret = (char **) g_ptr_array_free(g_steal_pointer(&out), FALSE);
        return 0;
}

static char *join_lines(char **lines) {
        GString *s = g_string_new(NULL);
        for (char **p = lines; p && *p; p++)
                g_string_append_printf(s, "%s\n", *p);
        return g_string_free(s, FALSE);
}

/* Drops the first line equal to cgroup; whether one was there. */
static bool remove_line(char **lines, const char *cgroup) {
        guint n = g_strv_length(lines), i;
        for (i = 0; i < n && !g_str_equal(lines[i], cgroup); i++)
                ;
        if (i == n)
                return false;
        g_free(lines[i]);
        memmove(lines + i, lines + i + 1, (n - i) * sizeof(char *));
        return true;
}

int ledger_remove(Ledger *l, char *const *cgroups) {
        g_auto(GStrv) lines = NULL;
        int r = ledger_read(l, &lines);
        if (r < 0)
                return r;

        /* One line each: a cgroup frozen twice is in the ledger twice */
        bool changed = false;
        for (char *const *c = cgroups; *c; c++)
                changed |= remove_line(lines, *c);
        if (!changed)
                return 0;
        g_autofree char *content = join_lines(lines);
        return ledger_rewrite(l, content);
}

char **ledger_list(Ledger *l) {
        char **lines = NULL;
        int r = ledger_read(l, &lines);
        if (r < 0) {
                log_warning_errno(r, "Failed to read %s/" LEDGER_FILE ": %m", l->dir);
                return g_new0(char *, 1);
        }
        return lines;
}

/* 1 if it thawed the cgroup, 0 if there was nothing to do, <0 on failure. */
static int thaw_entry(int cgroup_fd, const char *path) {
        if (!cgroups_path_is_valid(path)) {
                log_warning("Skipping malformed ledger entry \"%s\"", path);
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
