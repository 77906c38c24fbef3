/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "standin-writer.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "writer-protocol.h"

#define MIB (1024u * 1024u)

static void writer_say(int fd, const WriterMessage *m) {
        char line[WRITER_LINE_MAX];
        int n = writer_message_format(m, line, sizeof(line));
        g_assert_cmpint(n, >, 0);
        g_assert_cmpint(send(fd, line, (size_t) n, MSG_NOSIGNAL), ==, n);
}

/* The next line from fridged (recorded), or false at its hang-up */
static bool writer_hear(StandinWriter *w, int fd, WriterLineBuffer *b, WriterMessage *ret) {
        char line[WRITER_LINE_MAX], chunk[WRITER_LINE_MAX];
        while (writer_line_buffer_take(b, line) == 0) {
                ssize_t n = read(fd, chunk, sizeof(chunk) - b->len);
                if (n <= 0)
                        return false;
                writer_line_buffer_feed(b, chunk, (size_t) n);
        }
        g_mutex_lock(&w->lock);
        if (strcmp(line, "check") != 0) /* fridged's question at its start: not the cycle's */
                g_string_append_printf(w->heard, "%s\n", line);
        g_mutex_unlock(&w->lock);
        char err[256];
        if (writer_message_parse(line, ret, err, sizeof(err)) < 0)
                g_error("fridged sent '%s': %s", line, err);
        return true;
}

/* One connection; false when it was fridged's check, answered: the
 * hibernation's comes next */
static bool writer_serve(StandinWriter *w, int fd) {
        WriterLineBuffer b = {};
        WriterMessage m;
        if (!writer_hear(w, fd, &b, &m))
                return true;
        if (m.type == WRITER_MSG_CHECK) {
                writer_say(fd, &(WriterMessage) { .type = WRITER_MSG_USABLE, .path = "-", .key = "unchecked" });
                return false;
        }
        if (m.type != WRITER_MSG_HIBERNATE)
                return true;
        if (w->script == SCRIPT_UNAVAILABLE) {
                WriterMessage u = { .type = WRITER_MSG_UNAVAILABLE };
                g_strlcpy(u.message, "/dev/snapshot: No such file or directory", sizeof(u.message));
                writer_say(fd, &u);
                return true;
        }
        writer_say(fd, &(WriterMessage) { .type = WRITER_MSG_PROGRESS, .done = 2 * MIB, .total = 4 * MIB });
        if (w->script == SCRIPT_HANG_UP)
                return true;
        if (w->script == SCRIPT_WAIT_CANCEL || w->script == SCRIPT_LATE_CANCEL || w->script == SCRIPT_DEAF) {
                while (writer_hear(w, fd, &b, &m) && m.type != WRITER_MSG_CANCEL)
                        ;
        }
        if (w->script == SCRIPT_DEAF) {
                bool gone = !writer_hear(w, fd, &b, &m);
                g_mutex_lock(&w->lock);
                w->hung_up = gone;
                g_mutex_unlock(&w->lock);
                return true;
        }
        if (w->script == SCRIPT_WAIT_CANCEL) {
                WriterMessage c = { .type = WRITER_MSG_CANCELLED };
                g_strlcpy(c.message, "asked by fridged before the freeze", sizeof(c.message));
                writer_say(fd, &c);
                return true;
        }
        g_mutex_lock(&w->lock);
        while (!w->go && w->script != SCRIPT_LATE_CANCEL)
                g_cond_wait(&w->cond, &w->lock);
        g_mutex_unlock(&w->lock);
        writer_say(fd, &(WriterMessage) { .type = WRITER_MSG_RESUMED, .raw = 8 * MIB, .written = 2 * MIB,
                                          .usec = 500000 });
        return true;
}

static gpointer writer_thread(gpointer data) {
        StandinWriter *w = data;
        for (bool done = false; !done;) {
                int fd = accept4(w->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        break;
                done = writer_serve(w, fd);
                close(fd);
        }
        return NULL;
}

/* Listens on fridged's socket before fridged looks */
StandinWriter *standin_writer_start(Harness *h, WriterScript script) {
        StandinWriter *w = g_new0(StandinWriter, 1);
        w->script = script;
        w->heard = g_string_new(NULL);
        g_mutex_init(&w->lock);
        g_cond_init(&w->cond);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        g_autofree char *path = g_build_filename(h->dir, "state", WRITER_SOCKET_NAME, NULL);
        g_assert_cmpuint(strlen(path), <, sizeof(sa.sun_path));
        strcpy(sa.sun_path, path);
        w->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        g_assert_cmpint(w->listen_fd, >=, 0);
        g_assert_cmpint(bind(w->listen_fd, (struct sockaddr *) &sa, sizeof(sa)), ==, 0);
        g_assert_cmpint(listen(w->listen_fd, 4), ==, 0);
        w->thread = g_thread_new("writer", writer_thread, w);
        return w;
}

void standin_writer_let_go(StandinWriter *w) {
        g_mutex_lock(&w->lock);
        w->go = true;
        g_cond_signal(&w->cond);
        g_mutex_unlock(&w->lock);
}

char *standin_writer_heard(StandinWriter *w) {
        g_mutex_lock(&w->lock);
        char *s = g_strdup(w->heard->str);
        g_mutex_unlock(&w->lock);
        return s;
}

/* Until the thread has ended (fridged hung up, or the script ran out) */
void standin_writer_join(StandinWriter *w) {
        standin_writer_let_go(w);
        shutdown(w->listen_fd, SHUT_RDWR);
        if (w->thread)
                g_thread_join(w->thread);
        w->thread = NULL;
}

void standin_writer_free(StandinWriter *w) {
        standin_writer_join(w);
        close(w->listen_fd);
        g_string_free(w->heard, TRUE);
        g_mutex_clear(&w->lock);
        g_cond_clear(&w->cond);
        g_free(w);
}
