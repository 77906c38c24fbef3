/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "util.h"

static int max_level = LOG_INFO;

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

const char *errno_text(int negative_errno) {
        static __thread char buf[128];
        int e = negative_errno < 0 ? -negative_errno : negative_errno;
        /* strerror_r is the GNU variant under _GNU_SOURCE: it may return a static string */
        return strerror_r(e, buf, sizeof(buf));
}

int log_internal(int level, int error, const char *fmt, ...) {
        int r = error < 0 ? error : -error;

        if (level > max_level)
                return r;

        /* "%m" must name `error`, not whatever errno happens to be now */
        int saved = errno;
        if (error != 0)
                errno = -r;

        va_list ap;
        va_start(ap, fmt);
        /* The <N> prefix lets journald assign the priority when stderr is a journal stream */
        if (getenv("JOURNAL_STREAM"))
                fprintf(stderr, "<%d>", level);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);

        errno = saved;
        return r;
}

/* JOURNAL_STREAM names the journal's stream as DEV:INODE; it may be
 * inherited by a process whose stderr went elsewhere */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void log_struct_event(int level, const char *message_id, const char *message, ...) {
        /* Under systemd the structured entry is the journal's copy; a second
         * one through stderr would show every event twice */
        bool journal = getenv("JOURNAL_STREAM") || getenv("INVOCATION_ID");
        if (level <= max_level && !(journal && stderr_is_journal()))
                fprintf(stderr, "%s\n", message);
        if (!journal)
                return;

        struct iovec iov[16];
        char *owned[16];
        size_t n = 0;
        owned[n] = NULL;
        if (asprintf(&owned[n], "MESSAGE_ID=%s", message_id) < 0)
                return;
        n++;
        if (asprintf(&owned[n], "MESSAGE=%s", message) < 0)
                goto finish;
        n++;
        if (asprintf(&owned[n], "PRIORITY=%d", level) < 0)
                goto finish;
        n++;

        va_list ap;
        va_start(ap, message);
        for (const char *f; n < ELEMENTSOF(owned) && (f = va_arg(ap, const char *)); n++)
                if (!(owned[n] = strdup(f)))
                        break;
        va_end(ap);

        for (size_t i = 0; i < n; i++)
                iov[i] = (struct iovec) { .iov_base = owned[i], .iov_len = strlen(owned[i]) };
        (void) sd_journal_sendv(iov, (int) n);
finish:
        for (size_t i = 0; i < n; i++)
                free(owned[i]);
}
