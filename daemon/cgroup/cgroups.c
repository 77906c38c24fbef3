/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroups.h"

#include <errno.h>
#include <string.h>

#include "fileio.h"
#include "parse.h"
#include "util.h"

int cgroups_find_mount(int proc_fd, char **ret) {
        g_autofree char *text = NULL;
        g_autoptr(GPtrArray) mounts = NULL;

        int r = read_file_at_max(proc_fd, "self/mountinfo", READ_FILE_UNBOUNDED, &text);
        if (r < 0)
                return r;
        r = parse_mountinfo(text, &mounts);
        if (r < 0)
                return r;
        for (guint i = 0; i < mounts->len; i++) {
                const MountEntry *m = mounts->pdata[i];
                if (strcmp(m->fstype, "cgroup2") == 0) {
                        *ret = g_strdup(m->mount_point);
                        return 0;
                }
        }
        return -ENOENT;
}

int cgroups_of_pid(int proc_fd, pid_t pid, char **ret) {
        g_autofree char *path = g_strdup_printf("%d/cgroup", (int) pid);
        g_autofree char *text = NULL;

        int r = read_file_at_single(proc_fd, path, &text);
        if (r < 0)
                return r;
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++)
                if (g_str_has_prefix(*l, "0::/")) {
                        *ret = g_strdup(*l + 4);
                        return 0;
                }
        return -ENODATA; /* no cgroup v2 membership line */
}

bool cgroups_is_below(const char *path, const char *root) {
        size_t n = strlen(root);
        if (n == 0)
                return true;
        return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool cgroups_in_roots(const char *path, char *const *roots) {
        for (char *const *r = roots; r && *r; r++)
                if (cgroups_is_below(path, *r))
                        return true;
        return false;
}

bool cgroups_path_is_valid(const char *path) {
        if (!path || !*path || *path == '/' || strlen(path) > CGROUPS_PATH_MAX || strchr(path, '\n'))
                return false;
        for (const char *p = path;;) {
                size_t n = strcspn(p, "/");
                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                if (!p[n])
                        return true;
                p += n + 1;
        }
}

char *cgroups_escape(const char *path) {
        if (!path)
                return g_strdup("");
        GString *s = g_string_sized_new(strlen(path));
        for (const char *p = path; *p;) {
                const char *end = p + strlen(p);
                gunichar c = g_utf8_get_char_validated(p, end - p);
                if (c == (gunichar) -1 || c == (gunichar) -2 || c < 0x20 || c == 0x7f) {
                        g_string_append_printf(s, "\\x%02x", (unsigned char) *p);
                        p++;
                        continue;
                }
                const char *next = g_utf8_next_char(p);
                g_string_append_len(s, p, next - p);
                p = next;
        }
        return g_string_free(s, FALSE);
}

int cgroups_check_path(int cgroup_fd, const char *path, char *const *roots) {
        if (!cgroups_path_is_valid(path))
                return -EINVAL;
        if (!cgroups_in_roots(path, roots))
                return -EPERM;

        _cleanup_close_ int dir = open_dir_beneath(cgroup_fd, path);
        if (dir == -ELOOP || dir == -ENOTDIR)
                return -EINVAL;
        return dir < 0 ? dir : 0;
}
