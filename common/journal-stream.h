/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Whether fd is the journal's stream systemd connected a service to: the
 * device and inode JOURNAL_STREAM names, as sd-journal's docs say to check
 * (an inherited variable alone may name another stream). Lines there may
 * carry sd-daemon's "<N>" priority prefix. */
static inline bool journal_stream_is(int fd) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(fd, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}
