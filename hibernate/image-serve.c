/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-serve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "fridge-config.h"
#include "image-write.h"
#include "initramfs-scan.h"
#include "macro.h"
#include "serve-parse.h"
#include "writer-protocol.h"

#define say(...) fprintf(stderr, "fridge-image-writer: " __VA_ARGS__)

/* A root client that connects and says nothing (or never reads) does not
 * hold the writer */
#define REQUEST_TIMEOUT_SEC 30

/* The room a message= field has on a line */
#define REPLY_TEXT_MAX (WRITER_LINE_MAX - 32u)

/* One result line, said on stderr too. Blocking: whatever the outcome,
 * user space runs again by now and fridged reads. */
__attribute__((format(printf, 3, 4))) static void reply(int c, WriterMessageType t, const char *fmt, ...) {
        WriterMessage m = { .type = t };
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m.message, REPLY_TEXT_MAX, fmt, ap);
        va_end(ap);
        m.message[strcspn(m.message, "\n")] = '\0';
        say("%s: %s\n", writer_message_type_to_string(t), m.message);
        char line[WRITER_LINE_MAX];
        int n = writer_message_format(&m, line, sizeof(line));
        if (n > 0 && send(c, line, (size_t) n, MSG_NOSIGNAL) != n)
                say("could not answer fridged: %m\n");
}

static void reply_resumed(int c, const ImageFigures *f) {
        WriterMessage m = { .type = WRITER_MSG_RESUMED, .raw = f->raw_bytes, .written = f->compressed_bytes,
                            .usec = f->usec };
        char line[WRITER_LINE_MAX];
        int n = writer_message_format(&m, line, sizeof(line));
        say("resumed: %" PRIu64 " bytes of image as %" PRIu64 " in %" PRIu64 " usec\n", m.raw, m.written, m.usec);
        if (n > 0 && send(c, line, (size_t) n, MSG_NOSIGNAL) != n)
                say("could not answer fridged: %m\n");
}

/* A small file below --sysfs, its text in buf; a negative errno */
static int sysfs_read(const ServeArgs *a, const char *name, char *buf, size_t size) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", a->sysfs, name);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return 0;
}

/* "none [integrity] confidentiality": anything but [none] stops it */
static bool locked_down(const ServeArgs *a, char *mode, size_t size) {
        char s[256];
        if (sysfs_read(a, "kernel/security/lockdown", s, sizeof(s)) < 0)
                return false;
        const char *open = strchr(s, '['), *close = open ? strchr(open, ']') : NULL;
        if (!close || strncmp(open + 1, "none]", 5) == 0)
                return false;
        snprintf(mode, size, "%.*s", (int) (close - open - 1), open + 1);
        return true;
}

/* The node of a block device: udev's /dev/block/MAJ:MIN, else (an
 * initramfs with devtmpfs only) the node in /dev with that number */
static int block_node(unsigned maj, unsigned min, char *path, size_t size) {
        struct stat st;
        snprintf(path, size, "/dev/block/%u:%u", maj, min);
        if (stat(path, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == makedev(maj, min))
                return 0;
        DIR *d = opendir("/dev");
        if (!d)
                return -errno;
        int r = -ENODEV;
        for (struct dirent *e; r < 0 && (e = readdir(d));)
                if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISBLK(st.st_mode) &&
                    st.st_rdev == makedev(maj, min) && snprintf(path, size, "/dev/%s", e->d_name) < (int) size)
                        r = 0;
        closedir(d);
        return r;
}

/* The device fridged set in power/resume, and its node; why not in why */
static int resume_device_find(const ServeArgs *a, char *path, size_t size, uint64_t *offset, char *why,
                              size_t whylen) {
        char s[64];
        unsigned maj, min;
        int r = sysfs_read(a, "power/resume", s, sizeof(s));
        if (r < 0)
                return snprintf(why, whylen, "cannot read %s/power/resume: %s", a->sysfs, strerror(-r)), r;
        if (serve_parse_devnum(s, &maj, &min) < 0)
                return snprintf(why, whylen, "%s/power/resume says \"%.*s\", not MAJ:MIN", a->sysfs,
                                (int) strcspn(s, "\n"), s),
                       -EINVAL;
        if (maj == 0 && min == 0)
                return snprintf(why, whylen, "no resume device set (%s/power/resume is 0:0)", a->sysfs), -ENODEV;
        *offset = 0;
        if (sysfs_read(a, "power/resume_offset", s, sizeof(s)) == 0 && serve_parse_offset(s, offset) < 0)
                return snprintf(why, whylen, "%s/power/resume_offset says \"%.*s\", not a page count", a->sysfs,
                                (int) strcspn(s, "\n"), s),
                       -EINVAL;
        r = block_node(maj, min, path, size);
        if (r < 0)
                return snprintf(why, whylen, "no node for the resume device %u:%u in /dev: %s", maj, min, strerror(-r)),
                       r;
        return 0;
}

/* The snapshot device; why not in why (EPERM: lockdown or no CAP_SYS_ADMIN) */
static int snapshot_open(const ServeArgs *a, char *why, size_t whylen) {
        int fd = open(a->snapshot, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
                return fd;
        int e = errno;
        if (e == ENOENT)
                snprintf(why, whylen, "no snapshot device: %s does not exist", a->snapshot);
        else if (e == EPERM || e == EACCES)
                snprintf(why, whylen, "cannot open %s: %s (fridge-image-writer needs CAP_SYS_ADMIN and the device)",
                         a->snapshot, strerror(e));
        else
                snprintf(why, whylen, "cannot open %s: %s", a->snapshot, strerror(e));
        return -e;
}

/* The running kernel's initramfs where the distribution keeps it; why
 * not, with the first place looked in path */
static int initramfs_find(char *path, size_t size, char *why, size_t whylen) {
        struct utsname u;
        if (uname(&u) < 0) {
                int r = -errno;
                snprintf(path, size, "-");
                return snprintf(why, whylen, "cannot tell the running kernel: %s", strerror(-r)), r;
        }
        char first[256] = "", second[256] = "";
        /* (a path past 200 bytes is cut short where it is said) */
        for (unsigned i = 0; initramfs_candidate(u.release, i, path, size); i++) {
                if (access(path, F_OK) == 0)
                        return 0;
                snprintf(i == 0 ? first : second, sizeof(first), "%.200s", path);
        }
        (void) initramfs_candidate(u.release, 0, path, size);
        return snprintf(why, whylen, "no initramfs for kernel %s (neither %s nor %s): the next boot could not "
                        "resume fridge's image; --initramfs= names it", u.release, first, second),
               -ENOENT;
}

/* The initramfs the next boot starts: --initramfs's, or the running
 * kernel's where the distribution keeps it (when none is found, the
 * first place looked: fridged watches beside it for one to appear) */
static int initramfs_path(const ServeArgs *a, char *path, size_t size, char *why, size_t whylen) {
        if (a->initramfs)
                return snprintf(path, size, "%s", a->initramfs), 0;
        return initramfs_find(path, size, why, whylen);
}

/* The last initramfs read and what it held: a check or a cycle after it
 * reads it again only once its key changed (update-initramfs ran) */
static struct {
        char path[4096], key[WRITER_KEY_MAX];
        int r;
        char why[REPLY_TEXT_MAX];
} scanned;

static int initramfs_scan_cached(const char *path, const char *key, char *why, size_t whylen) {
        if (strcmp(scanned.path, path) == 0 && strcmp(scanned.key, key) == 0)
                return snprintf(why, whylen, "%s", scanned.why), scanned.r;
        char err[256];
        InitramfsScan scan = { .name = &FRIDGE_RESUME_PATH[1] }; /* as the archive names it */
        int r = initramfs_scan_file(path, &scan, err, sizeof(err));
        if (r < 0)
                /* not kept: a read that failed may not fail again */
                return snprintf(why, whylen, "cannot read the initramfs %.200s (%.160s): whether the next boot can "
                                "resume fridge's image is unknown", path, err), r;
        if (!scan.found)
                r = -ENOENT, snprintf(why, whylen, "the initramfs %.200s holds no %s: the next boot could not resume "
                                      "fridge's image (update-initramfs -u puts it there)", path, FRIDGE_RESUME_PATH);
        if (strncmp(key, "unknown", 7) == 0)
                return r;
        snprintf(scanned.path, sizeof(scanned.path), "%s", path);
        snprintf(scanned.key, sizeof(scanned.key), "%s", key);
        scanned.r = r;
        snprintf(scanned.why, sizeof(scanned.why), "%s", r < 0 ? why : "");
        return r;
}

/* The next boot must be able to resume the image: its initramfs holds
 * fridge-resume (installed beside the writer, put there by the package's
 * initramfs-tools hook), or the image would be a session lost. path and
 * key (writer_file_key()) say which file was looked at and when. */
static int initramfs_check(const ServeArgs *a, char *path, size_t size, char *key, char *why, size_t whylen) {
        snprintf(key, WRITER_KEY_MAX, "unchecked");
        if (a->initramfs && strcmp(a->initramfs, "unchecked") == 0)
                return snprintf(path, size, "-"), 0;
        int r = initramfs_path(a, path, size, why, whylen);
        if (r < 0)
                return snprintf(key, WRITER_KEY_MAX, "absent"), r;
        writer_file_key(path, key, WRITER_KEY_MAX);
        return initramfs_scan_cached(path, key, why, whylen);
}

/* The first line, blocking (SO_RCVTIMEO bounds it); what follows it stays
 * in con->in, where a cancel is found */
static int request_read(ImageConsole *con, WriterMessage *m, char *why, size_t whylen) {
        char line[WRITER_LINE_MAX], chunk[WRITER_LINE_MAX];
        int r;
        while ((r = writer_line_buffer_take(&con->in, line)) == 0) {
                ssize_t n = recv(con->peer, chunk, WRITER_LINE_MAX - con->in.len, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return snprintf(why, whylen, "no request: %s", n < 0 ? strerror(errno) : "hung up"), -EPIPE;
                writer_line_buffer_feed(&con->in, chunk, (size_t) n);
        }
        if (r < 0)
                return snprintf(why, whylen, "a request longer than %u bytes", WRITER_LINE_MAX), r;
        char err[256];
        if (writer_message_parse(line, m, err, sizeof(err)) < 0)
                return snprintf(why, whylen, "cannot parse the request: %s", err), -EBADMSG;
        if (m->type != WRITER_MSG_HIBERNATE && m->type != WRITER_MSG_CHECK)
                return snprintf(why, whylen, "the first request must be hibernate or check, not %s",
                                writer_message_type_to_string(m->type)),
                       -EBADMSG;
        return 0;
}

static void reply_outcome(int c, const ImageWriteResult *res) {
        switch (res->outcome) {
        case IMAGE_WRITE_RESUMED:
        case IMAGE_WRITE_UNFROZEN:
                return reply_resumed(c, &res->figures);
        case IMAGE_WRITE_UNAVAILABLE: return reply(c, WRITER_MSG_UNAVAILABLE, "%s", res->why);
        case IMAGE_WRITE_CANCELLED: return reply(c, WRITER_MSG_CANCELLED, "%s", res->why);
        default: return reply(c, WRITER_MSG_FAILED, "%s", res->why);
        }
}

/* Whether the snapshot device would open, without opening it (an open
 * for reading starts the kernel's hibernation notifiers): no lockdown,
 * the device there, and the capability it needs */
static int snapshot_usable(const ServeArgs *a, char *why, size_t whylen) {
        char mode[64];
        if (locked_down(a, mode, sizeof(mode)))
                return snprintf(why, whylen, "the kernel is locked down (%s): %s cannot be used", mode, a->snapshot),
                       -EPERM;
        struct stat st;
        if (stat(a->snapshot, &st) < 0)
                return snprintf(why, whylen, errno == ENOENT ? "no snapshot device: %s does not exist"
                                                             : "cannot look at %s: %m", a->snapshot), -errno;
        if (!S_ISCHR(st.st_mode) && !S_ISREG(st.st_mode)) /* a file: the tests' stand-in */
                return snprintf(why, whylen, "%s is not a device", a->snapshot), -ENODEV;
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        if (syscall(SYS_capget, &h, d) == 0 && !(d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))))
                return snprintf(why, whylen, "fridge-image-writer lacks CAP_SYS_ADMIN: %s cannot be opened",
                                a->snapshot), -EPERM;
        return 0;
}

/* Everything that can stop the write, checked before anything is frozen */
static void hibernate(int c, const ServeArgs *a, ImageConsole *con, ImageAfter after) {
        char why[REPLY_TEXT_MAX], device[64], initramfs[4096], key[WRITER_KEY_MAX];
        ImageWriteJob j = { .resume_device = device, .console = con, .after = after };
        /* the device opened last: its open runs the kernel's hibernation notifiers */
        if (snapshot_usable(a, why, sizeof(why)) < 0 ||
            initramfs_check(a, initramfs, sizeof(initramfs), key, why, sizeof(why)) < 0 ||
            resume_device_find(a, device, sizeof(device), &j.resume_offset, why, sizeof(why)) < 0)
                return reply(c, WRITER_MSG_UNAVAILABLE, "%s", why);
        int snap = snapshot_open(a, why, sizeof(why));
        if (snap < 0)
                return reply(c, WRITER_MSG_UNAVAILABLE, "%s", why);
        ImageWriteResult res;
        image_write_run(snap, &j, &res);
        /* closed before the answer: told unavailable, fridged writes disk
         * to /sys/power/state at once, which the kernel refuses (EBUSY)
         * while the snapshot device is held */
        close(snap);
        /* --console=vt: the VT in front before is in front again by the
         * time fridged tells the desktop it resumed */
        image_console_close(con);
        reply_outcome(c, &res);
}

/* check: what a hibernation asked now would find first, short of the
 * resume device (fridged sets it for the cycle, and checks it itself) */
static void check(int c, const ServeArgs *a) {
        WriterMessage m = { .type = WRITER_MSG_USABLE };
        char why[REPLY_TEXT_MAX] = "", initramfs[4096];
        int r = initramfs_check(a, initramfs, sizeof(initramfs), m.key, why, sizeof(why));
        if (snapshot_usable(a, why, sizeof(why)) < 0) /* the device's reason before the initramfs's */
                r = -EPERM;
        /* a path too long or with a space cannot be said: "-", which
         * fridged cannot look at, so holds the answer for its TTL only */
        size_t len = strlen(initramfs);
        if (len < sizeof(m.path) && !strpbrk(initramfs, " \n"))
                memcpy(m.path, initramfs, len + 1);
        else
                strcpy(m.path, "-"), strcpy(m.key, "unsayable");
        if (r < 0) {
                /* the reason gets what the word, the path and the key leave of the line */
                size_t used = strlen("unusable path= key= message=\n") + strlen(m.path) + strlen(m.key);
                m.type = WRITER_MSG_UNUSABLE;
                snprintf(m.message, WRITER_LINE_MAX - 1 - used, "%s", why);
                m.message[strcspn(m.message, "\n")] = '\0';
        }
        char line[WRITER_LINE_MAX];
        int n = writer_message_format(&m, line, sizeof(line));
        if (n < 0 || send(c, line, (size_t) n, MSG_NOSIGNAL) != n)
                say("could not answer fridged's check: %s\n", n < 0 ? strerror(-n) : strerror(errno));
}

/* Opened before the freeze: after it, nothing could say why it failed (the
 * bar is optional). Only for a hibernation: a check touches no console.
 * What fridged sent after its request (a cancel) stays read. */
static void console_open(ImageConsole *con, const ServeArgs *a) {
        if (!a->console)
                return;
        WriterLineBuffer in = con->in;
        int peer = con->peer;
        if (image_console_open(con, a->console) < 0)
                say("cannot open the console %s: %m; writing without it\n", a->console);
        image_console_attach_peer(con, peer);
        con->in = in;
}

static void serve_one(int c, const ServeArgs *a) {
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return reply(c, WRITER_MSG_FAILED, "cannot tell who is asking: %s", strerror(errno));
        if (cred.uid != 0)
                return reply(c, WRITER_MSG_FAILED, "fridge-image-writer serves uid 0 (fridged) only, not uid %u",
                             (unsigned) cred.uid);
        struct timeval tv = { .tv_sec = REQUEST_TIMEOUT_SEC };
        (void) setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void) setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* nor one that never reads the answer */
        ImageConsole con = { .fd = -1 };
        image_console_attach_peer(&con, c);
        char why[REPLY_TEXT_MAX];
        WriterMessage m;
        ImageAfter after;
        if (request_read(&con, &m, why, sizeof(why)) < 0)
                reply(c, WRITER_MSG_FAILED, "%s", why);
        else if (m.type == WRITER_MSG_CHECK)
                check(c, a);
        else if (serve_mode_after(m.mode, &after) == -EOPNOTSUPP)
                reply(c, WRITER_MSG_UNAVAILABLE, "mode %s is the kernel's own test of the image: its writer runs it",
                      m.mode);
        else if (serve_mode_after(m.mode, &after) < 0)
                reply(c, WRITER_MSG_FAILED, "unknown mode %s (platform, shutdown, reboot or suspend)", m.mode);
        else {
                console_open(&con, a);
                hibernate(c, a, &con, after);
        }
        image_console_close(&con);
}

/* --listen: made under a temporary name and renamed, so nobody finds the
 * path before it accepts; 0600 */
static int listen_path(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char tmp[sizeof(sa.sun_path)];
        if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int) sizeof(tmp))
                return say("--listen=%s is too long for a socket path\n", path), -ENAMETOOLONG;
        strcpy(sa.sun_path, tmp);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return say("socket: %m\n"), -EIO;
        (void) unlink(tmp);
        mode_t old = umask(0177);
        int r = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
        umask(old);
        if (r < 0 || listen(fd, 4) < 0 || rename(tmp, path) < 0)
                return say("cannot listen on %s: %m\n", path), -EIO;
        return TAKE_FD(fd);
}

/* systemd's socket (fridge-image-writer.socket), or --listen's */
static int listen_fd(const ServeArgs *a) {
        if (a->listen)
                return listen_path(a->listen);
        int n = serve_listen_fds(getenv("LISTEN_PID"), getenv("LISTEN_FDS"), getpid());
        if (n != 1)
                return say("--serve needs --listen=PATH or one socket from systemd (LISTEN_FDS=%s, LISTEN_PID=%s)\n",
                           getenv("LISTEN_FDS") ?: "unset", getenv("LISTEN_PID") ?: "unset"),
                       -EBADF;
        unsetenv("LISTEN_PID");
        unsetenv("LISTEN_FDS");
        (void) fcntl(SERVE_LISTEN_FDS_START, F_SETFD, FD_CLOEXEC);
        return SERVE_LISTEN_FDS_START;
}

/* 1: a connection waits; 0: none came in sec seconds */
static int idle_wait(int fd, unsigned sec) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        for (;;) {
                int r = poll(&p, 1, (int) (sec * 1000u));
                if (r >= 0 || errno != EINTR)
                        return r < 0 ? -errno : r;
        }
}

int image_serve(const ServeArgs *a) {
        _cleanup_close_ int fd = listen_fd(a);
        if (fd < 0)
                return 1;
        /* systemd holds its socket and starts the service again on the
         * next connection; --listen's would be gone with the process */
        unsigned idle = a->listen ? 0 : a->idle_exit_sec;
        say("serving fridged's hibernation requests\n");
        for (;;) {
                int w = idle ? idle_wait(fd, idle) : 1;
                if (w == 0)
                        return say("no request for %u s: exiting until the socket starts it again\n", idle), 0;
                if (w < 0)
                        return say("poll: %s\n", strerror(-w)), 1;
                _cleanup_close_ int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0 && (errno == EINTR || errno == ECONNABORTED))
                        continue;
                if (c < 0)
                        return say("accept: %m\n"), 1;
                serve_one(c, a);
        }
}
