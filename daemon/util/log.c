/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "journal-stream.h"
#include "util.h"

static int max_level = LOG_INFO;
/* Written by the loop, read by workers too */
static _Atomic uint64_t cycle_id;
/* A worker's own: the cycle that started it, which an abandoned worker
 * outlives */
static __thread bool thread_has_cycle;
static __thread uint64_t thread_cycle;
static LogSink sink;
static void *sink_userdata;
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_cycle(uint64_t id) {
        cycle_id = id;
}

uint64_t log_get_cycle(void) {
        return thread_has_cycle ? thread_cycle : cycle_id;
}

void log_set_thread_cycle(uint64_t id) {
        thread_has_cycle = true;
        thread_cycle = id;
}

void log_set_sink(LogSink s, void *userdata) {
        pthread_mutex_lock(&sink_lock);
        sink = s;
        sink_userdata = userdata;
        pthread_mutex_unlock(&sink_lock);
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
        return journal_stream_is(STDERR_FILENO);
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
        uint64_t id = log_get_cycle();
        if (id != 0) {
                snprintf(cycle_field, sizeof(cycle_field), "FRIDGE_CYCLE=%" PRIu64, id);
                all[n++] = cycle_field;
        }
        all[n] = NULL;
        /* Sinks see one entry at a time, whichever thread logs it */
        pthread_mutex_lock(&sink_lock);
        if (sink)
                sink(level, message, all, sink_userdata);
        pthread_mutex_unlock(&sink_lock);

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

        if (level > max_level && !__atomic_load_n(&sink, __ATOMIC_RELAXED))
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
