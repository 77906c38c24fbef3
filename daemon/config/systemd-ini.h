/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd's own configuration format (sleep.conf, unit files and their
 * drop-ins) read as systemd reads it, not as GKeyFile does (which refuses
 * what systemd accepts: ';' comments, continued lines, stray bytes). */

#include <glib.h>

/* One KEY=VALUE of `section` (NULL before the first [section]), both
 * stripped; `origin` names the file */
typedef void (*SystemdIniAssign)(const char *section, const char *key, const char *value, const char *origin,
                                 void *userdata);

/* Comments (# or ;), [sections], KEY=VALUE, a trailing backslash joining
 * the next line; a line that is none of these is logged and ends the file
 * (-EINVAL), keeping what came before it, as systemd does. */
int systemd_ini_parse(const char *text, const char *origin, SystemdIniAssign assign, void *userdata);
/* The same for a file: -ENOENT quietly when it is not there, another
 * read error logged */
int systemd_ini_parse_file(const char *path, SystemdIniAssign assign, void *userdata);

/* The drop-ins ROOT/DIR/SUBDIR/\*.conf of each of `dirs` (in systemd's
 * search order, NULL-terminated), in name order; a name in an earlier
 * directory hides the same name in the later ones (/etc masks /usr/lib).
 * The paths, g_ptr_array_unref(). */
GPtrArray *systemd_ini_dropins(const char *root, const char *const *dirs, const char *subdir);
