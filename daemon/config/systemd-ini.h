/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd's own configuration format (sleep.conf, unit files and their
 * drop-ins) read as systemd reads it, not as GKeyFile does (which refuses
 * what systemd accepts: ';' comments, continued lines, stray bytes). */

#include <glib.h>
#include <stdbool.h>

/* One KEY=VALUE of `section` (NULL before the first [section]), both
 * stripped; `origin` names the file, `line` the line it starts on */
typedef void (*SystemdIniAssign)(const char *section, const char *key, const char *value, const char *origin,
                                 unsigned line, void *userdata);

/* Comments (# or ;), [sections], KEY=VALUE, a trailing backslash joining
 * the next line; a line that is none of these is logged and ends the file
 * (-EINVAL), keeping what came before it, as systemd does. */
int systemd_ini_parse(const char *text, const char *origin, SystemdIniAssign assign, void *userdata);
/* The same for a file: -ENOENT quietly when it is not there, another
 * read error logged */
int systemd_ini_parse_file(const char *path, SystemdIniAssign assign, void *userdata);

/* The main file and the drop-ins found in `dirs` as systemd finds them
 * (conf_files_list() in conf-files.h: masked ones skipped), each parsed in
 * turn. -ENOENT when `need_main` and there is no main file. */
int systemd_ini_parse_conf(char *const *dirs, const char *main_name, const char *dropin_dir, bool need_main,
                           SystemdIniAssign assign, void *userdata);
