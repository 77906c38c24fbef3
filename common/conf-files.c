/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "conf-files.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fridge-config.h"
#include "macro.h"

static const char *const search_dirs[] = { "etc", "run", "usr/local/lib", "usr/lib" };

static char *path_join3(const char *a, const char *b, const char *c) {
        char *p = NULL;
        bool slash_a = *a && a[strlen(a) - 1] == '/';
        if (asprintf(&p, "%s%s%s%s%s", a, slash_a || !*b ? "" : "/", b, c ? "/" : "", c ? c : "") < 0)
                return NULL;
        return p;
}

int conf_search_dirs(const char *root, const char *subdir, char ***ret) {
        char **l = calloc(ELEMENTSOF(search_dirs) + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(search_dirs); i++) {
                l[i] = path_join3(root ? root : "/", search_dirs[i], subdir);
                if (!l[i])
                        return strv_free(l), -ENOMEM;
        }
        *ret = l;
        return 0;
}

static int replace(char **slot, const char *value) {
        char *v = strdup(value);
        if (!v)
                return -ENOMEM;
        free(*slot);
        *slot = v;
        return 0;
}

int conf_fridge_dirs(const char *root, const char *etc_dir, const char *vendor_dir, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r = conf_search_dirs(root, "fridge", &l);
        if (r < 0)
                return r;
        if (!root) {
                etc_dir = etc_dir ? etc_dir : FRIDGE_CONFIG_DIR;
                vendor_dir = vendor_dir ? vendor_dir : FRIDGE_VENDOR_DIR;
        }
        if ((etc_dir && (r = replace(&l[0], etc_dir)) < 0) || (vendor_dir && (r = replace(&l[3], vendor_dir)) < 0))
                return r;
        /* a /usr/local build's vendor directory is /usr/local/lib/fridge: once */
        if (strcmp(l[2], l[3]) == 0) {
                free(l[2]);
                l[2] = l[3];
                l[3] = NULL;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

bool conf_file_is_masked(const char *path) {
        char target[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n >= 0) {
                target[n] = 0;
                if (strcmp(target, "/dev/null") == 0)
                        return true;
        }
        struct stat st;
        return stat(path, &st) == 0 && ((S_ISREG(st.st_mode) && st.st_size == 0) || S_ISCHR(st.st_mode));
}

static int files_add(ConfFiles *f, char *path, bool main, int error) {
        if (!path)
                return -ENOMEM;
        ConfFile *n = realloc(f->files, (f->n + 1) * sizeof(ConfFile));
        if (!n) {
                free(path);
                return -ENOMEM;
        }
        f->files = n;
        f->files[f->n++] = (ConfFile) { .path = path, .main = main, .masked = !error && conf_file_is_masked(path),
                                        .error = error };
        return 0;
}

static bool is_dropin_name(const char *n) {
        size_t len = strlen(n);
        return n[0] != '.' && len > 5 && strcmp(n + len - 5, ".conf") == 0;
}

static const char *base_name(const char *path) {
        const char *s = strrchr(path, '/');
        return s ? s + 1 : path;
}

/* The drop-ins of one directory whose names no higher one has taken */
static int add_dir(ConfFiles *f, size_t first, const char *dir) {
        DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT || errno == ENOTDIR ? 0 : files_add(f, strdup(dir), false, -errno);
        int r = 0;
        for (struct dirent *de; r >= 0 && (de = readdir(d));) {
                if (!is_dropin_name(de->d_name))
                        continue;
                bool taken = false;
                for (size_t i = first; i < f->n && !taken; i++)
                        taken = !f->files[i].error && strcmp(base_name(f->files[i].path), de->d_name) == 0;
                char *p = path_join3(dir, de->d_name, NULL);
                struct stat st;
                if (!taken && p && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
                        taken = true; /* a directory named *.conf is no file */
                if (!taken || !p)
                        r = files_add(f, p, false, 0);
                else
                        free(p);
        }
        closedir(d);
        return r;
}

static int compare_dropins(const void *a, const void *b) {
        const ConfFile *x = a, *y = b;
        if (!!x->error != !!y->error)
                return x->error ? -1 : 1; /* unlistable directories first: said before what they hide */
        return strcmp(base_name(x->path), base_name(y->path));
}

int conf_files_list(char *const *dirs, const char *main_name, const char *dropin_dir, ConfFiles **ret) {
        ConfFiles *f = calloc(1, sizeof(ConfFiles));
        if (!f)
                return -ENOMEM;
        int r = 0;
        for (char *const *d = dirs; main_name && *d && r >= 0; d++) {
                char *p = path_join3(*d, main_name, NULL);
                if (p && access(p, F_OK) == 0) {
                        r = files_add(f, p, true, 0);
                        break;
                }
                free(p);
        }
        size_t first = f->n;
        for (char *const *d = dirs; *d && r >= 0; d++) {
                char *dir = dropin_dir ? path_join3(*d, dropin_dir, NULL) : strdup(*d);
                r = dir ? add_dir(f, first, dir) : -ENOMEM;
                free(dir);
        }
        if (r < 0)
                return conf_files_free(f), r;
        if (f->n > first)
                qsort(f->files + first, f->n - first, sizeof(ConfFile), compare_dropins);
        *ret = f;
        return 0;
}

ConfFiles *conf_files_free(ConfFiles *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n; i++)
                free(f->files[i].path);
        free(f->files);
        free(f);
        return NULL;
}
