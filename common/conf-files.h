/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Where configuration files are found, as systemd finds its own
 * (systemd.unit(5), "Configuration Directories and Precedence"): the
 * directories /etc, /run, /usr/local/lib and /usr/lib, in that order of
 * priority; the main file is the first found; drop-ins (*.conf) of all the
 * directories are merged by name, a name in a higher directory hiding the
 * same name below it, and applied in the lexical order of their names
 * after the main file. A file that is empty or a symlink to /dev/null
 * masks: it is in effect and says nothing. fridged reads fridge.conf,
 * classes.d and systemd's sleep.conf this way; fridgectl cat-config shows
 * what it reads. Plain C: fridgectl has no GLib. */

#include <stdbool.h>
#include <stddef.h>

/* ROOT/etc/SUBDIR, ROOT/run/SUBDIR, ROOT/usr/local/lib/SUBDIR,
 * ROOT/usr/lib/SUBDIR (root NULL: /); free with strv_free() */
int conf_search_dirs(const char *root, const char *subdir, char ***ret);

/* fridge's own search path. Without root, the built-in configuration and
 * vendor directories stand for /etc/fridge and /usr/lib/fridge; etc_dir and
 * vendor_dir, when given, replace those two (fridged's --config-dir and
 * --vendor-dir). */
int conf_fridge_dirs(const char *root, const char *etc_dir, const char *vendor_dir, char ***ret);

typedef struct ConfFile {
        char *path;
        bool main;      /* the main file; else a drop-in */
        bool masked;    /* empty or a symlink to /dev/null */
        int error;      /* < 0: a directory that cannot be listed (path), no file */
} ConfFile;

typedef struct ConfFiles {
        ConfFile *files;
        size_t n;
} ConfFiles;

/* The files in effect, in the order they apply: the first DIR/MAIN_NAME
 * found (none when main_name is NULL), then the drop-ins: *.conf in
 * DIR/DROPIN_DIR (in DIR itself when dropin_dir is NULL) of every dir.
 * `dirs` is highest priority first. Missing directories are no error. */
int conf_files_list(char *const *dirs, const char *main_name, const char *dropin_dir, ConfFiles **ret);
ConfFiles *conf_files_free(ConfFiles *f);
static inline void conf_files_freep(ConfFiles **f) {
        conf_files_free(*f);
}

/* Whether the file at `path` masks: empty, or a symlink to /dev/null */
bool conf_file_is_masked(const char *path);
