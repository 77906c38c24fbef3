/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "writer-verdict.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "initramfs-watch.h"
#include "time-util.h"
#include "writer-protocol.h"

struct WriterVerdict {
        sd_event *event;
        char *socket_path;
        uint64_t ttl_usec;
        /* the question out: its connection, and the time it may take */
        int fd;
        sd_event_source *io, *timer;
        WriterLineBuffer in;
        /* the last answer */
        bool known;
        char *refusal;          /* NULL: usable */
        char path[WRITER_PATH_MAX], key[WRITER_KEY_MAX];
        uint64_t at;            /* CLOCK_MONOTONIC */
        uint64_t asked;         /* CLOCK_REALTIME_COARSE: when the question went out */
        InitramfsWatch *watch;  /* whether its initramfs is the same file */
        sd_event_source *reask; /* after a change, the question again */
        char *said;             /* the last answer logged: a new one is logged once */
};

static void answer_drop(WriterVerdict *v) {
        v->known = false;
        g_clear_pointer(&v->refusal, g_free);
        initramfs_watch_stop(v->watch);
}

static void question_end(WriterVerdict *v) {
        v->io = sd_event_source_disable_unref(v->io);
        v->timer = sd_event_source_disable_unref(v->timer);
        if (v->fd >= 0)
                close(v->fd);
        v->fd = -1;
        v->in.len = 0;
}

static void on_initramfs_changed(void *userdata);

WriterVerdict *writer_verdict_new(sd_event *e, const char *socket_path, uint64_t ttl_usec) {
        WriterVerdict *v = g_new0(WriterVerdict, 1);
        v->ttl_usec = ttl_usec;
        v->event = sd_event_ref(e);
        v->socket_path = g_strdup(socket_path);
        v->fd = -1;
        v->watch = initramfs_watch_new(e, on_initramfs_changed, v);
        return v;
}

WriterVerdict *writer_verdict_free(WriterVerdict *v) {
        if (!v)
                return NULL;
        question_end(v);
        v->reask = sd_event_source_disable_unref(v->reask);
        initramfs_watch_free(v->watch);
        sd_event_unref(v->event);
        g_free(v->socket_path);
        g_free(v->refusal);
        g_free(v->said);
        g_free(v);
        return NULL;
}

/* Whether the answer is of the initramfs there now */
static bool answer_of_this_file(const WriterVerdict *v) {
        char key[WRITER_KEY_MAX];
        writer_file_key(v->path, key, sizeof(key));
        return strcmp(key, v->key) == 0;
}

/* A path the writer could not say ("-") or a relative one cannot be looked
 * at: only the TTL bounds the answer */
static bool answer_names_file(const WriterVerdict *v) {
        return v->path[0] == '/';
}

/* Whether the answer still holds its initramfs */
static bool answer_holds(WriterVerdict *v) {
        if (!answer_names_file(v))
                return true;
        switch (initramfs_watch_poll(v->watch)) {
        case INITRAMFS_WATCH_NONE:
                return answer_of_this_file(v); /* no watch could be set */
        case INITRAMFS_WATCH_CHANGED:
                return false;
        default:
                return true; /* the same, or unmounted (an automount expiring) */
        }
}

/* The watch, from the answer on: a change between the writer's look and
 * the watch is seen by the key (the writer found the file) or by the
 * directory's times (it did not) */
static void watch_answer(WriterVerdict *v) {
        if (!answer_names_file(v))
                return;
        bool absent = strcmp(v->key, "absent") == 0;
        int r = initramfs_watch_start(v->watch, v->path, absent, v->asked);
        if (r > 0 || (r == 0 && !absent && !answer_of_this_file(v)))
                on_initramfs_changed(v);
}

static void answer_take(WriterVerdict *v, const WriterMessage *m) {
        v->known = true;
        g_clear_pointer(&v->refusal, g_free);
        if (m->type == WRITER_MSG_UNUSABLE)
                v->refusal = g_strdup(m->message);
        g_strlcpy(v->path, m->path, sizeof(v->path));
        g_strlcpy(v->key, m->key, sizeof(v->key));
        v->at = now(CLOCK_MONOTONIC);
        g_autofree char *text = v->refusal ? g_strdup_printf("fridge-image-writer cannot write a hibernation image "
                                                             "(the kernel's writer will): %s", v->refusal)
                                           : g_strdup_printf("fridge-image-writer can write a hibernation image "
                                                             "(initramfs %s)", m->path);
        if (g_strcmp0(text, v->said) != 0) {
                if (v->refusal)
                        log_notice("%s", text);
                else
                        log_info("%s", text);
                g_free(v->said);
                v->said = g_steal_pointer(&text);
        }
        watch_answer(v); /* last: it drops the answer if the file changed meanwhile */
}

static int on_answer(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        WriterVerdict *v = userdata;
        char chunk[WRITER_LINE_MAX], line[WRITER_LINE_MAX], err[256] = "";
        WriterMessage m;
        bool take = false;
        ssize_t n = read(fd, chunk, WRITER_LINE_MAX - v->in.len);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n > 0) {
                writer_line_buffer_feed(&v->in, chunk, (size_t) n);
                int r = writer_line_buffer_take(&v->in, line);
                if (r == 0)
                        return 0; /* more to come */
                take = r > 0 && writer_message_parse(line, &m, err, sizeof(err)) == 0 &&
                       (m.type == WRITER_MSG_USABLE || m.type == WRITER_MSG_UNUSABLE);
                if (!take)
                        log_warning("fridge-image-writer answered the check with '%.*s' %s", 200, r > 0 ? line : "",
                                    err);
        } else {
                log_debug("fridge-image-writer hung up on the check: %s", n < 0 ? strerror(errno) : "no answer");
                answer_drop(v); /* an old answer outlives its TTL only while a new one is on its way */
        }
        question_end(v);
        if (take) /* after the question's end: a change found meanwhile asks again */
                answer_take(v, &m);
        return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        WriterVerdict *v = userdata;
        log_warning("fridge-image-writer did not answer the check in %u s; asked again when next needed",
                    (unsigned) (WRITER_VERDICT_TIMEOUT_USEC / USEC_PER_SEC));
        answer_drop(v);
        question_end(v);
        return 0;
}

/* Connect and ask; a writer not there (yet) is asked when next needed */
static void question_ask(WriterVerdict *v) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (!v->socket_path || strlen(v->socket_path) >= sizeof(sa.sun_path))
                return;
        strcpy(sa.sun_path, v->socket_path);
        v->asked = now(CLOCK_REALTIME_COARSE); /* the clock of the files' times */
        v->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        static const char check[] = "check\n";
        int r = v->fd < 0 ? -errno : 0;
        if (r == 0 && connect(v->fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                r = -errno;
        if (r == 0 && send(v->fd, check, sizeof(check) - 1, MSG_NOSIGNAL) != sizeof(check) - 1)
                r = -errno;
        if (r == 0)
                r = sd_event_add_io(v->event, &v->io, v->fd, EPOLLIN, on_answer, v);
        if (r == 0)
                r = sd_event_add_time_relative(v->event, &v->timer, CLOCK_MONOTONIC, WRITER_VERDICT_TIMEOUT_USEC, 0,
                                               on_timeout, v);
        if (r < 0) {
                log_debug_errno(r, "Cannot ask fridge-image-writer at %s whether it can write: %m", v->socket_path);
                answer_drop(v);
                question_end(v);
                return;
        }
        (void) sd_event_source_set_description(v->io, "writer-verdict");
}

static int on_reask(sd_event_source *s, uint64_t usec, void *userdata) {
        WriterVerdict *v = userdata;
        v->reask = sd_event_source_disable_unref(v->reask);
        if (!v->known && v->fd < 0)
                question_ask(v);
        return 0;
}

/* update-initramfs ran, say: the answer is wrong now, and the writer is
 * asked again once the writing has settled (a read asks at once), so that
 * the next read finds its new answer */
static void on_initramfs_changed(void *userdata) {
        WriterVerdict *v = userdata;
        answer_drop(v);
        if (v->fd >= 0 || v->reask)
                return;
        int r = sd_event_add_time_relative(v->event, &v->reask, CLOCK_MONOTONIC, WRITER_VERDICT_REASK_USEC,
                                           10 * USEC_PER_MSEC,
                                           on_reask, v);
        if (r < 0)
                log_debug_errno(r, "Cannot ask fridge-image-writer again after its initramfs changed: %m");
}

const char *writer_verdict_refusal(WriterVerdict *v) {
        if (v->known && !answer_holds(v))
                answer_drop(v); /* of another file: wrong now, whatever comes next */
        bool old = v->known && now(CLOCK_MONOTONIC) - v->at > v->ttl_usec;
        if ((!v->known || old) && v->fd < 0)
                question_ask(v);
        /* an old answer stands until the new one comes (or the asking fails) */
        return v->known ? v->refusal : NULL;
}
