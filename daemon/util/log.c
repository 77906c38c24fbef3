/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

#include <errno.h>
#include <inttypes.h>
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
static uint64_t cycle_id;
static LogSink sink;
static void *sink_userdata;

void log_set_cycle(uint64_t id) {
        cycle_id = id;
}

uint64_t log_get_cycle(void) {
        return cycle_id;
}

void log_set_sink(LogSink s, void *userdata) {
        sink = s;
        sink_userdata = userdata;
}

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

static bool under_journal(void) {
        return getenv("JOURNAL_STREAM") || getenv("INVOCATION_ID");
}

#define MAX_FIELDS 16

/* One entry: to the sink, to stderr (unless the structured copy goes to
 * the journal that stderr also reaches: every line would show twice), and
 * as a structured entry when there are fields to keep */
static void log_emit(int level, const char *message, const char *const *fields, bool structured) {
        char cycle_field[64];
        const char *all[MAX_FIELDS + 2];
        size_t n = 0;

        for (; fields && fields[n] && n < MAX_FIELDS; n++)
                all[n] = fields[n];
        if (cycle_id != 0) {
                snprintf(cycle_field, sizeof(cycle_field), "FRIDGE_CYCLE=%" PRIu64, cycle_id);
                all[n++] = cycle_field;
        }
        all[n] = NULL;
        if (sink)
                sink(level, message, all, sink_userdata);

        bool journal = under_journal() && (structured || n > 0);
        if (level <= max_level && !(journal && stderr_is_journal())) {
                /* The <N> prefix lets journald assign the priority when stderr is a journal stream */
                if (getenv("JOURNAL_STREAM"))
                        fprintf(stderr, "<%d>", level);
                fprintf(stderr, "%s\n", message);
        }
        if (!journal || (!structured && level > max_level))
                return;

        struct iovec iov[MAX_FIELDS + 4];
        char *owned[MAX_FIELDS + 4];
        size_t k = 0;
        if (asprintf(&owned[k], "MESSAGE=%s", message) >= 0)
                k++;
        if (asprintf(&owned[k], "PRIORITY=%d", level) >= 0)
                k++;
        for (size_t i = 0; i < n; i++)
                if ((owned[k] = strdup(all[i])))
                        k++;
        for (size_t i = 0; i < k; i++)
                iov[i] = (struct iovec) { .iov_base = owned[i], .iov_len = strlen(owned[i]) };
        (void) sd_journal_sendv(iov, (int) k);
        for (size_t i = 0; i < k; i++)
                free(owned[i]);
}

int log_internal(int level, int error, const char *fmt, ...) {
        int r = error < 0 ? error : -error;

        if (level > max_level && !sink)
                return r;

        /* "%m" must name `error`, not whatever errno happens to be now */
        int saved = errno;
        if (error != 0)
                errno = -r;

        va_list ap;
        va_start(ap, fmt);
        char *message = NULL;
        if (vasprintf(&message, fmt, ap) < 0)
                message = NULL;
        va_end(ap);
        if (message)
                log_emit(level, message, NULL, false);
        free(message);

        errno = saved;
        return r;
}

void log_struct_event(int level, const char *message_id, const char *message, ...) {
        char id_field[64];
        const char *fields[MAX_FIELDS + 1];
        size_t n = 0;

        snprintf(id_field, sizeof(id_field), "MESSAGE_ID=%s", message_id);
        fields[n++] = id_field;
        va_list ap;
        va_start(ap, message);
        for (const char *f; n < MAX_FIELDS - 1 && (f = va_arg(ap, const char *)); n++)
                fields[n] = f;
        va_end(ap);
        fields[n] = NULL;
        log_emit(level, message, fields, true);
}
