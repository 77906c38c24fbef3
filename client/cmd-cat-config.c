/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cat-config: the files fridged reads its configuration from, in the order
 * they apply, each under a "# PATH" line, as `systemd-analyze cat-config`
 * shows systemd's. Read here, with fridged's own search order
 * (conf-files.h): no daemon is needed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "conf-files.h"
#include "exit-code.h"
#include "i18n.h"
#include "macro.h"
#include "report.h"

static void closefilep(FILE **f) {
        if (*f)
                fclose(*f);
}

static int cat_file(const Args *a, const char *path) {
        _cleanup_(closefilep) FILE *f = fopen(path, "re");
        char what[4200];
        if (!f) {
                snprintf(what, sizeof(what), _("cannot read %s"), path);
                return report_errno(a, what, -errno);
        }
        char buf[4096];
        int last = '\n';
        for (size_t n; (n = fread(buf, 1, sizeof(buf), f)) > 0; last = buf[n - 1])
                fwrite(buf, 1, n, stdout);
        if (last != '\n')
                putchar('\n');
        return EXIT_CODE_DONE;
}

int cmd_cat_config(const Args *a) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_(conf_files_freep) ConfFiles *files = NULL;
        int r = conf_fridge_dirs(a->root, NULL, NULL, &dirs);
        if (r >= 0)
                r = conf_files_list(dirs, "fridge.conf", "fridge.conf.d", &files);
        if (r < 0)
                return report_errno(a, _("cannot list the configuration files"), r);
        if (files->n == 0)
                fputs(_("No fridge.conf nor fridge.conf.d/*.conf found; fridged runs with its defaults.\n"), stderr);

        int ret = EXIT_CODE_DONE;
        for (size_t i = 0; i < files->n; i++) {
                const ConfFile *f = &files->files[i];
                if (i > 0)
                        putchar('\n');
                if (f->error < 0) {
                        printf(_("# %s: cannot list: %s\n"), f->path, strerror(-f->error));
                        ret = EXIT_CODE_FAILED;
                } else if (f->masked)
                        printf(_("# %s (masked: empty or a link to /dev/null)\n"), f->path);
                else {
                        printf("# %s\n", f->path);
                        fflush(stdout);
                        r = cat_file(a, f->path);
                        ret = r != EXIT_CODE_DONE ? r : ret;
                }
        }
        return ret;
}
