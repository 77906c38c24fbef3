/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "systemd-ini.h"

#include <errno.h>
#include <string.h>

#include "conf-files.h"
#include "log.h"
#include "macro.h"

/* The next logical line from *p: a trailing backslash joins the next
 * physical line, as systemd's parser does; NULL at the end */
static char *next_line(const char **p, unsigned *next_no) {
        if (!**p)
                return NULL;
        g_autoptr(GString) line = g_string_new(NULL);
        for (;;) {
                const char *nl = strchr(*p, '\n');
                size_t n = nl ? (size_t) (nl - *p) : strlen(*p);
                g_string_append_len(line, *p, n);
                *p += n + (nl ? 1 : 0);
                (*next_no)++;
                if (line->len == 0 || line->str[line->len - 1] != '\\')
                        break;
                line->str[line->len - 1] = ' ';
                if (!nl)
                        break;
        }
        return g_string_free(g_steal_pointer(&line), FALSE);
}

static int parse_line(char *line, char **section, const char *origin, unsigned no, SystemdIniAssign assign,
                      void *userdata) {
        g_strstrip(line);
        if (!*line || *line == '#' || *line == ';')
                return 0;
        size_t n = strlen(line);
        if (*line == '[') {
                if (line[n - 1] != ']')
                        return -EINVAL;
                g_free(*section);
                *section = g_strndup(line + 1, n - 2);
                return 0;
        }
        char *eq = strchr(line, '=');
        if (!eq)
                return -EINVAL;
        *eq = '\0';
        assign(*section, g_strstrip(line), g_strstrip(eq + 1), origin, no, userdata);
        return 0;
}

int systemd_ini_parse(const char *text, const char *origin, SystemdIniAssign assign, void *userdata) {
        g_autofree char *section = NULL;
        unsigned no = 1, next = 1;
        for (char *line; (line = next_line(&text, &next)); g_free(line), no = next) {
                if (parse_line(line, &section, origin, no, assign, userdata) < 0) {
                        log_warning("%s:%u: not a section, a comment or KEY=VALUE; as systemd does, "
                                    "the rest of the file is not read", origin, no);
                        g_free(line);
                        return -EINVAL;
                }
        }
        return 0;
}

int systemd_ini_parse_file(const char *path, SystemdIniAssign assign, void *userdata) {
        g_autofree char *text = NULL;
        g_autoptr(GError) error = NULL;
        if (!g_file_get_contents(path, &text, NULL, &error)) {
                if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
                        return -ENOENT;
                log_warning("%s: cannot read it: %s; skipped", path, error->message);
                return -EIO;
        }
        return systemd_ini_parse(text, path, assign, userdata);
}

int systemd_ini_parse_conf(char *const *dirs, const char *main_name, const char *dropin_dir, bool need_main,
                           SystemdIniAssign assign, void *userdata) {
        _cleanup_(conf_files_freep) ConfFiles *files = NULL;
        int r = conf_files_list(dirs, main_name, dropin_dir, &files);
        if (r < 0)
                return r;
        if (need_main && (files->n == 0 || !files->files[0].main))
                return -ENOENT;
        for (size_t i = 0; i < files->n; i++) {
                const ConfFile *f = &files->files[i];
                if (f->error < 0)
                        log_warning("%s: cannot list it: %s; skipped", f->path, g_strerror(-f->error));
                else if (!f->masked)
                        (void) systemd_ini_parse_file(f->path, assign, userdata);
        }
        return 0;
}
