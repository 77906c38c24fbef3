/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "writer-verdict.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
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
        /* its initramfs's directory, watched: -1, or the watch */
        int inotify_fd, wd;
        sd_event_source *watch_io;
        bool watch_gone;        /* its file system was unmounted: the TTL alone bounds the answer */
        char *said;             /* the last answer logged: a new one is logged once */
};

static void watch_stop(WriterVerdict *v) {
        if (v->wd >= 0)
                (void) inotify_rm_watch(v->inotify_fd, v->wd);
        v->wd = -1;
        v->watch_gone = false;
}

static void answer_drop(WriterVerdict *v) {
        v->known = false;
        g_clear_pointer(&v->refusal, g_free);
        watch_stop(v);
}

static void question_end(WriterVerdict *v) {
        v->io = sd_event_source_disable_unref(v->io);
        v->timer = sd_event_source_disable_unref(v->timer);
        if (v->fd >= 0)
                close(v->fd);
        v->fd = -1;
        v->in.len = 0;
}

static int on_watch(sd_event_source *s, int fd, uint32_t revents, void *userdata);

WriterVerdict *writer_verdict_new(sd_event *e, const char *socket_path, uint64_t ttl_usec) {
        WriterVerdict *v = g_new0(WriterVerdict, 1);
        v->ttl_usec = ttl_usec;
        v->event = sd_event_ref(e);
        v->socket_path = g_strdup(socket_path);
        v->fd = -1;
        v->wd = -1;
        /* without inotify, each read looks at the file instead */
        v->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (v->inotify_fd >= 0 && sd_event_add_io(e, &v->watch_io, v->inotify_fd, EPOLLIN, on_watch, v) < 0) {
                close(v->inotify_fd);
                v->inotify_fd = -1;
        }
        return v;
}

WriterVerdict *writer_verdict_free(WriterVerdict *v) {
        if (!v)
                return NULL;
        question_end(v);
        v->watch_io = sd_event_source_disable_unref(v->watch_io);
        if (v->inotify_fd >= 0)
                close(v->inotify_fd);
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

#define WATCH_MASK                                                                                           \
        (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB |      \
         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

/* A change to the initramfs (a rewrite, a rename over it), or any new
 * file beside one the writer did not find, drops the answer: seen without
 * looking at /boot at each read, so that an automounted /boot is left
 * unmounted. Reads, the writer's own among them, are not changes. */
static void watch_start(WriterVerdict *v) {
        watch_stop(v);
        if (v->inotify_fd < 0 || strcmp(v->path, "-") == 0)
                return;
        g_autofree char *dir = g_path_get_dirname(v->path);
        v->wd = inotify_add_watch(v->inotify_fd, dir, WATCH_MASK);
        if (v->wd < 0)
                log_debug_errno(-errno, "Cannot watch %s for a new initramfs (%m); looked at on each read", dir);
        else if (!answer_of_this_file(v))
                answer_drop(v); /* changed between the writer's look and the watch */
}

/* Whether the event is of the initramfs the answer names: of that name,
 * of the directory itself, or of any name when the writer found none */
static bool event_of_answer(const WriterVerdict *v, const struct inotify_event *ev) {
        if (ev->len == 0 || strcmp(v->key, "absent") == 0)
                return true;
        const char *base = strrchr(v->path, '/');
        return strcmp(ev->name, base ? base + 1 : v->path) == 0;
}

/* Whether anything happened to the initramfs. Its file system unmounted
 * (an automount expiring) changes nothing: the watch is gone, and the
 * answer stands to its TTL. */
static bool watch_saw_change(WriterVerdict *v) {
        _Alignas(struct inotify_event) char buf[4096];
        bool changed = false;
        ssize_t n;
        while ((n = read(v->inotify_fd, buf, sizeof(buf))) > 0) {
                const struct inotify_event *ev;
                for (char *p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
                        ev = (const struct inotify_event *) p;
                        if (ev->mask & IN_Q_OVERFLOW)
                                changed = true;
                        else if (ev->wd != v->wd)
                                continue; /* of a watch already dropped */
                        else if (ev->mask & (IN_UNMOUNT | IN_IGNORED))
                                v->watch_gone = true;
                        else if (event_of_answer(v, ev))
                                changed = true;
                }
        }
        if (v->watch_gone)
                v->wd = -1;
        return changed;
}

/* Whether the answer still holds its initramfs: a path the writer could
 * not say, "-", cannot be looked at, and only the TTL bounds it */
static bool answer_holds(WriterVerdict *v) {
        if (strcmp(v->path, "-") == 0 || v->watch_gone)
                return true;
        if (v->wd < 0)
                return answer_of_this_file(v); /* no watch could be set */
        return !watch_saw_change(v);
}

/* On the loop too, so that no event waits in the kernel for a read */
static int on_watch(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        WriterVerdict *v = userdata;
        if (watch_saw_change(v) && v->known)
                answer_drop(v);
        return 0;
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
        watch_start(v); /* last: it drops the answer if the file changed meanwhile */
}

static int on_answer(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        WriterVerdict *v = userdata;
        char chunk[WRITER_LINE_MAX], line[WRITER_LINE_MAX], err[256] = "";
        ssize_t n = read(fd, chunk, WRITER_LINE_MAX - v->in.len);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n > 0) {
                writer_line_buffer_feed(&v->in, chunk, (size_t) n);
                int r = writer_line_buffer_take(&v->in, line);
                if (r == 0)
                        return 0; /* more to come */
                WriterMessage m;
                if (r > 0 && writer_message_parse(line, &m, err, sizeof(err)) == 0 &&
                    (m.type == WRITER_MSG_USABLE || m.type == WRITER_MSG_UNUSABLE))
                        answer_take(v, &m);
                else
                        log_warning("fridge-image-writer answered the check with '%.*s' %s", 200, r > 0 ? line : "",
                                    err);
        } else {
                log_debug("fridge-image-writer hung up on the check: %s", n < 0 ? strerror(errno) : "no answer");
                answer_drop(v); /* an old answer outlives its TTL only while a new one is on its way */
        }
        question_end(v);
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

const char *writer_verdict_refusal(WriterVerdict *v) {
        if (v->known && !answer_holds(v))
                answer_drop(v); /* of another file: wrong now, whatever comes next */
        bool old = v->known && now(CLOCK_MONOTONIC) - v->at > v->ttl_usec;
        if ((!v->known || old) && v->fd < 0)
                question_ask(v);
        /* an old answer stands until the new one comes (or the asking fails) */
        return v->known ? v->refusal : NULL;
}
