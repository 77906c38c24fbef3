/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The user-space hibernation backend ([Sleep] HibernateWriter=fridge):
 * the same /sys/power steps as the mainline backend (resume, the wakeup
 * count, the knobs put back), but the image is written by
 * fridge-image-writer, a privileged helper fridged talks to over its socket
 * (STATE_DIR/image-writer.sock; see hibernate/writer-protocol.h), so
 * fridged's own unit keeps neither CAP_SYS_ADMIN nor /dev/snapshot. Until
 * the writer freezes user space its progress reaches the bus and a Cancel
 * stops it; a writer that cannot run (no snapshot device, no capability)
 * says so before freezing anything and the kernel's own writer goes on. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fileio.h"
#include "hibernate.h"
#include "log.h"
#include "macro.h"
#include "power-backend.h"
#include "power.h"
#include "writer-protocol.h"

/* A refusal that says why in the caller's buffer */
__attribute__((format(printf, 4, 5))) static int say(int r, char *err, size_t errlen, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return r;
}

#define LOCKDOWN_FILE "sys/kernel/security/lockdown"

typedef struct UserspaceRequest {
        PowerSysfsRequest sysfs;        /* first: the manager and power.c see this */
        char *socket_path;
        int fd;                         /* the writer's connection while enter runs; -1 */
        pthread_mutex_t lock;           /* guards what the loop reads while enter runs: */
        uint64_t done, total;           /*   the writer's progress */
        bool cancelled;                 /*   a Cancel was sent */
        bool abandoned;                 /*   it went unanswered: fridged hung up */
        WriterMessage outcome;          /*   the writer's result (enter writes it under the lock too) */
        /* results, read after enter returned */
        bool fell_back;                 /* the writer was unavailable: the kernel wrote the image */
        char *unavailable;              /* why */
} UserspaceRequest;

static bool userspace_serves(SleepKind kind, bool pm_test) {
        return kind == SLEEP_HIBERNATE && !pm_test;
}

/* "none [integrity] confidentiality": the bracketed word is the mode */
static bool locked_down(int sysfs_fd, char **ret_mode) {
        g_autofree char *s = NULL;
        if (read_file_at_max(sysfs_fd, LOCKDOWN_FILE, 256, &s) < 0)
                return false; /* no LSM, or not ours to read: the writer finds out */
        const char *open = strchr(s, '['), *close = open ? strchr(open, ']') : NULL;
        if (!close || strncmp(open + 1, "none", 4) == 0)
                return false;
        *ret_mode = g_strndup(open + 1, (size_t) (close - open - 1));
        return true;
}

static char *userspace_unusable(const PowerContext *ctx) {
        if (!ctx->config || ctx->config->hibernate_writer != HIBERNATE_WRITER_FRIDGE)
                return g_strdup("HibernateWriter=kernel");
        g_autofree char *mode = NULL;
        if (locked_down(ctx->sysfs_fd, &mode))
                return g_strdup_printf("the kernel is locked down (%s): /dev/snapshot cannot be opened", mode);
        struct stat st;
        if (!ctx->image_writer_socket || stat(ctx->image_writer_socket, &st) < 0 || !S_ISSOCK(st.st_mode))
                return g_strdup_printf("fridge-image-writer does not listen on %s",
                                       ctx->image_writer_socket ? ctx->image_writer_socket : "its socket");
        return NULL;
}

static bool userspace_probe(const PowerContext *ctx) {
        return true;
}

/* What the kernel offers and the swap's pre-flight are the mainline
 * backend's: the image goes to the same swap, the next boot looks there */
static PowerAnswer userspace_can(const PowerContext *ctx, SleepKind kind, char **ret_reason) {
        return power_backend_mainline.can(ctx, kind, ret_reason);
}

static int userspace_check(const PowerContext *ctx, const PowerCycle *cycle, char **ret_set_resume,
                           char **ret_message) {
        return power_backend_mainline.check(ctx, cycle, ret_set_resume, ret_message);
}

static void userspace_free(PowerRequest *r) {
        UserspaceRequest *u = (UserspaceRequest *) r;
        power_sysfs_request_clear(&u->sysfs);
        g_free(u->socket_path);
        g_free(u->unavailable);
        if (u->fd >= 0)
                close(u->fd);
        pthread_mutex_destroy(&u->lock);
        g_free(u);
}

static int userspace_prepare(const PowerContext *ctx, PowerCycle *cycle, PowerRequest **ret) {
        UserspaceRequest *u = g_new0(UserspaceRequest, 1);
        u->fd = -1;
        pthread_mutex_init(&u->lock, NULL);
        u->sysfs.base.backend = &power_backend_userspace;
        u->socket_path = g_strdup(ctx->image_writer_socket);
        int e = power_sysfs_request_init(&u->sysfs, ctx->sysfs_fd, cycle);
        if (e < 0) {
                userspace_free(&u->sysfs.base);
                return e;
        }
        u->sysfs.disk_mode = g_strdup(ctx->config->hibernate_mode);
        *ret = &u->sysfs.base;
        return 0;
}

static int writer_connect(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* One line, whole or not at all: never SIGPIPE (the writer may be gone),
 * and never a wait on the loop (flags MSG_DONTWAIT: a cancel) */
static int writer_send(int fd, const WriterMessage *m, int flags) {
        char line[WRITER_LINE_MAX];
        int n = writer_message_format(m, line, sizeof(line));
        if (n < 0)
                return n;
        ssize_t k = send(fd, line, (size_t) n, MSG_NOSIGNAL | flags);
        if (k < 0)
                return -errno;
        return k == n ? 0 : -EIO;
}

/* The next message from the writer; -EPIPE when it hung up without a result */
static int writer_receive(int fd, WriterLineBuffer *b, WriterMessage *ret, char *err, size_t errlen) {
        char line[WRITER_LINE_MAX];
        for (;;) {
                int r = writer_line_buffer_take(b, line);
                if (r < 0)
                        return say(r, err, errlen, "a line longer than %u bytes", WRITER_LINE_MAX);
                if (r > 0)
                        return writer_message_parse(line, ret, err, errlen);
                char chunk[WRITER_LINE_MAX];
                ssize_t n = read(fd, chunk, WRITER_LINE_MAX - b->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return say(-errno, err, errlen, "reading from it: %s", strerror(errno));
                if (n == 0)
                        return say(-EPIPE, err, errlen, "it hung up without a result");
                writer_line_buffer_feed(b, chunk, (size_t) n);
        }
}

static bool is_result(WriterMessageType t) {
        return t == WRITER_MSG_UNAVAILABLE || t == WRITER_MSG_CANCELLED || t == WRITER_MSG_FAILED ||
               t == WRITER_MSG_RESUMED;
}

/* The request, under the lock: a cancel either comes before it (and finds
 * no writer asked) or after it, never inside or ahead of it. -ECANCELED:
 * cancelled already, nothing asked. */
static int writer_ask(UserspaceRequest *u, int fd) {
        WriterMessage m = { .type = WRITER_MSG_HIBERNATE };
        g_strlcpy(m.mode, u->sysfs.disk_mode ? u->sysfs.disk_mode : "platform", sizeof(m.mode));
        pthread_mutex_lock(&u->lock);
        u->fd = fd;
        int r = u->cancelled ? -ECANCELED : writer_send(fd, &m, 0);
        pthread_mutex_unlock(&u->lock);
        return r;
}

/* Until a result: progress goes where the loop reads it */
static int writer_run(UserspaceRequest *u, char *err, size_t errlen) {
        WriterLineBuffer b = {};
        WriterMessage m;
        for (;;) {
                int r = writer_receive(u->fd, &b, &m, err, errlen);
                if (r < 0)
                        return r;
                if (is_result(m.type)) {
                        pthread_mutex_lock(&u->lock);
                        u->outcome = m;
                        pthread_mutex_unlock(&u->lock);
                        return 0;
                }
                if (m.type == WRITER_MSG_PROGRESS) {
                        pthread_mutex_lock(&u->lock);
                        u->done = m.done;
                        u->total = m.total;
                        pthread_mutex_unlock(&u->lock);
                }
        }
}

/* The kernel writes the image after all: from here Cancel is too late */
static int fall_back(UserspaceRequest *u, char *why) {
        pthread_mutex_lock(&u->lock);
        bool cancelled = u->cancelled;
        u->fell_back = !cancelled; /* cancelled: nobody wrote it */
        pthread_mutex_unlock(&u->lock);
        u->unavailable = why;
        if (cancelled)
                return -ECANCELED;
        log_notice("fridge-image-writer cannot write the image (%s); the kernel writes it", why);
        return power_sysfs_write_state(&u->sysfs);
}

/* In place of the state write (the knobs are set, wakeup_count written) */
static int userspace_write(PowerSysfsRequest *s) {
        UserspaceRequest *u = (UserspaceRequest *) s;
        char err[WRITER_LINE_MAX + 64] = "";
        int fd = writer_connect(u->socket_path);
        if (fd < 0)
                return fall_back(u, g_strdup_printf("cannot connect to fridge-image-writer at %s: %s",
                                                    u->socket_path, strerror(-fd)));
        int r = writer_ask(u, fd);
        if (r == -ECANCELED)
                return r;
        if (r < 0)
                snprintf(err, sizeof(err), "cannot ask it to write the image: %s", strerror(-r));
        else
                r = writer_run(u, err, sizeof(err));
        if (r < 0) {
                pthread_mutex_lock(&u->lock);
                bool abandoned = u->abandoned;
                u->outcome = (WriterMessage) { .type = abandoned ? WRITER_MSG_CANCELLED : WRITER_MSG_FAILED };
                if (abandoned)
                        g_strlcpy(u->outcome.message, "fridge-image-writer did not answer the Cancel; fridged hung up on it",
                                  sizeof(u->outcome.message));
                else
                        snprintf(u->outcome.message, sizeof(u->outcome.message), "fridge-image-writer: %s", err);
                pthread_mutex_unlock(&u->lock);
                return abandoned ? -ECANCELED : -EIO;
        }
        switch (u->outcome.type) {
        case WRITER_MSG_RESUMED:
                return 0;
        case WRITER_MSG_UNAVAILABLE:
                return fall_back(u, g_strdup(u->outcome.message));
        case WRITER_MSG_CANCELLED:
                return -ECANCELED;
        default:
                return -EIO;
        }
}

static int userspace_enter(PowerRequest *r) {
        return power_sysfs_enter((PowerSysfsRequest *) r, NULL, userspace_write);
}

static CycleResult userspace_describe_failure(const PowerRequest *r, FridgeError *ret_error, char **ret_message) {
        const UserspaceRequest *u = (const UserspaceRequest *) r;
        if (u->sysfs.failed_step != POWER_STEP_BACKEND || u->fell_back)
                return power_sysfs_describe_failure(&u->sysfs, ret_error, ret_message);
        if (u->outcome.type == WRITER_MSG_CANCELLED || u->sysfs.error == -ECANCELED) {
                /* the writer's word on it; not an unavailable's reason */
                bool says = u->outcome.type == WRITER_MSG_CANCELLED && u->outcome.message[0];
                *ret_error = FRIDGE_ERROR_CANCELLED;
                *ret_message = g_strdup_printf("the image write was cancelled%s%s", says ? ": " : "",
                                               says ? u->outcome.message : "");
                return RESULT_ABORTED;
        }
        *ret_error = FRIDGE_ERROR_KERNEL;
        /* the writer says whether an image was written (and withdrawn) */
        *ret_message = g_strdup_printf("fridge-image-writer failed: %s", u->outcome.message);
        return RESULT_FAILED;
}

static char *userspace_summary(const PowerRequest *r) {
        return power_sysfs_summary((const PowerSysfsRequest *) r, ", written by fridge-image-writer");
}

/* The write's figures, for the log and the cycle's message */
static char *userspace_notes(const PowerRequest *r) {
        const UserspaceRequest *u = (const UserspaceRequest *) r;
        if (u->fell_back)
                return g_strdup_printf("the kernel wrote the image: %s", u->unavailable);
        const WriterMessage *m = &u->outcome;
        double secs = (double) m->usec / 1e6, mib = (double) m->raw / (1024.0 * 1024.0);
        return g_strdup_printf("image written by fridge: %.1f MiB, %.1f MiB on disk (%.2fx), in %.1f s (%.0f MiB/s)",
                               mib, (double) m->written / (1024.0 * 1024.0),
                               m->written ? (double) m->raw / (double) m->written : 0.0, secs,
                               secs > 0 ? mib / secs : 0.0);
}

/* After enter: fridge's figures of a done write, how far a stopped one
 * got, or that the kernel wrote it (its figures are its own) */
static void userspace_image_write(const PowerRequest *r, PowerImageWrite *ret) {
        UserspaceRequest *u = (UserspaceRequest *) r;
        pthread_mutex_lock(&u->lock);
        if (u->fell_back)
                ret->writer = "kernel";
        else if (u->fd >= 0 || u->outcome.type != WRITER_MSG_HIBERNATE) { /* it was asked */
                ret->writer = "fridge";
                ret->done_bytes = u->done;
                ret->total_bytes = u->total;
        }
        if (!u->fell_back && u->outcome.type == WRITER_MSG_RESUMED) {
                ret->raw_bytes = u->outcome.raw;
                ret->written_bytes = u->outcome.written;
                ret->usec = u->outcome.usec;
        }
        pthread_mutex_unlock(&u->lock);
}

/* From the loop. The line reaches the writer before any freeze that
 * could follow (fridged runs, so user space is not frozen): the writer
 * reads it before it writes a page, or right after its freeze. Unless
 * this Cancel is itself late: sent before the writer froze user space but
 * read by fridged only after the resume, when the image was written and
 * restored. So once the writer was asked, its answer says how the cycle
 * ended (cancelled, or resumed), not this call (1). */
static int userspace_cancel(PowerRequest *r) {
        UserspaceRequest *u = (UserspaceRequest *) r;
        pthread_mutex_lock(&u->lock);
        bool too_late = u->fell_back, again = u->cancelled, asked = u->fd >= 0;
        u->cancelled = !too_late;
        if (!too_late && !again && asked) {
                WriterMessage m = { .type = WRITER_MSG_CANCEL };
                (void) writer_send(u->fd, &m, MSG_DONTWAIT);
        }
        pthread_mutex_unlock(&u->lock);
        return too_late ? -EINPROGRESS : asked ? 1 : 0;
}

/* A writer silent after the Cancel is hung before its freeze (had it
 * frozen user space, fridged would not be running to count the time):
 * the hang-up ends enter's read, and tells the writer, should it ever get
 * that far, that nobody waits for its image (it counts it as a cancel) */
static void userspace_abandon(PowerRequest *r) {
        UserspaceRequest *u = (UserspaceRequest *) r;
        pthread_mutex_lock(&u->lock);
        if (u->fd >= 0 && u->cancelled && !u->abandoned && !is_result(u->outcome.type)) {
                u->abandoned = true;
                (void) shutdown(u->fd, SHUT_RDWR);
        }
        pthread_mutex_unlock(&u->lock);
}

static double userspace_progress(const PowerRequest *r, char **ret_text) {
        UserspaceRequest *u = (UserspaceRequest *) r;
        pthread_mutex_lock(&u->lock);
        uint64_t done = u->done, total = u->total;
        pthread_mutex_unlock(&u->lock);
        if (ret_text)
                *ret_text = total ? g_strdup_printf("writing the image: %" PRIu64 " of %" PRIu64 " MiB",
                                                    done >> 20, total >> 20)
                                  : g_strdup("writing the image");
        return total ? MIN(1.0, (double) done / (double) total) : 0.0;
}

const PowerBackend power_backend_userspace = {
        .name = "userspace",
        .serves = userspace_serves,
        .probe = userspace_probe,
        .unusable = userspace_unusable,
        .can = userspace_can,
        .check = userspace_check,
        .prepare = userspace_prepare,
        .enter = userspace_enter,
        .finish = power_sysfs_finish,
        .restore_after_abort = power_sysfs_restore_after_abort,
        .describe_failure = userspace_describe_failure,
        .transient = power_sysfs_transient,
        .summary = userspace_summary,
        .notes = userspace_notes,
        .image_write = userspace_image_write,
        .free = userspace_free,
        .cancel = userspace_cancel,
        .progress = userspace_progress,
        .abandon = userspace_abandon,
};
