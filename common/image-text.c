/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fridge-config.h"
#include "macro.h"

#if ENABLE_NLS
#include <libintl.h>
#define _(msgid) gettext(msgid)
#else
#define _(msgid) (msgid)
#endif

#define MIB (1024.0 * 1024.0)

const char *image_writer_name(const char *writer) {
        static const char *const writers[] = { "fridge", "kernel" };
        for (size_t i = 0; i < ELEMENTSOF(writers); i++)
                if (writer && strcmp(writer, writers[i]) == 0)
                        return writers[i];
        return NULL;
}

char *image_write_line(const ImageWrite *w) {
        char *s = NULL;
        int r;

        if (isempty(w->writer))
                return NULL;
        if (strcmp(w->writer, "fridge") != 0)
                return strdup(_("image: written by the kernel"));
        if (w->raw_bytes == 0 || w->written_bytes == 0) {
                if (w->total_bytes == 0)
                        return NULL;
                /* Translators: MiB written so far, MiB in all */
                r = asprintf(&s, _("image: the write stopped at %llu of %llu MiB"),
                             (unsigned long long) (w->done_bytes >> 20), (unsigned long long) (w->total_bytes >> 20));
                return r < 0 ? NULL : s;
        }
        double raw = (double) w->raw_bytes / MIB, secs = (double) w->usec / 1e6;
        /* Translators: MiB before and after compression, the ratio, seconds, MiB per second */
        r = asprintf(&s, _("image: %.1f MiB written as %.1f MiB (%.1fx) in %.1f s, %.0f MiB/s"), raw,
                     (double) w->written_bytes / MIB, (double) w->raw_bytes / (double) w->written_bytes, secs,
                     secs > 0 ? raw / secs : 0.0);
        return r < 0 ? NULL : s;
}
