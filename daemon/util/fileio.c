/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fileio.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

#define READ_FILE_MAX (1024 * 1024)

int root_open(const char *dir) {
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static const char *relative(const char *path) {
        /* The root fd is the "/": an absolute-looking path is taken below it */
        while (*path == '/')
                path++;
        return *path ? path : ".";
}

int read_file_at(int root_fd, const char *path, char **ret) {
        return read_file_at_max(root_fd, path, READ_FILE_MAX, ret);
}

/* All of fd (up to max bytes) as a string; single: a first read short of
 * the buffer is all of it */
static int read_fd(int fd, size_t max, bool single, char **ret) {
        size_t size = 0, allocated = 4096;
        g_autofree char *buf = g_malloc(allocated + 1);

        for (;;) {
                if (size == allocated) {
                        if (allocated >= max)
                                return -EFBIG;
                        allocated *= 2;
                        buf = g_realloc(buf, allocated + 1);
                }
                ssize_t k = read(fd, buf + size, allocated - size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                size += (size_t) k;
                if (single && size < allocated)
                        break;
        }
        buf[size] = '\0';
        if (memchr(buf, '\0', size))
                return -EBADMSG;
        *ret = g_steal_pointer(&buf);
        return 0;
}

static int read_file(int root_fd, const char *path, size_t max, bool single, char **ret) {
        _cleanup_close_ int fd = openat(root_fd, relative(path), O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_fd(fd, max, single, ret);
}

int read_file_at_max(int root_fd, const char *path, size_t max, char **ret) {
        return read_file(root_fd, path, max, false, ret);
}

int read_file_at_single(int root_fd, const char *path, char **ret) {
        return read_file(root_fd, path, READ_FILE_MAX, true, ret);
}

int read_path_single(const char *path, char **ret) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_fd(fd, READ_FILE_MAX, true, ret);
}

int write_file_at(int root_fd, const char *path, const char *value) {
        _cleanup_close_ int fd = openat(root_fd, relative(path), O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;

        size_t len = strlen(value);
        ssize_t k;
        do
                k = write(fd, value, len);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        if ((size_t) k != len)
                return -EIO;
        return 0;
}

int write_all_fd(int fd, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t k = write(fd, buf, len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                buf += k;
                len -= (size_t) k;
        }
        return 0;
}

/* 0600: what fridged keeps (who slept when, what was frozen) is its own,
 * whatever umask it was started with */
static int write_file_rename_at(int dir_fd, const char *name, const char *tmp, const char *content, bool durable) {
        _cleanup_close_ int fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;

        int r = write_all_fd(fd, content, strlen(content));
        if (r >= 0 && durable && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlinkat(dir_fd, tmp, 0);
                return r;
        }
        return durable && fsync(dir_fd) < 0 ? -errno : 0;
}

int write_file_atomic_at(int dir_fd, const char *name, const char *tmp, const char *content) {
        return write_file_rename_at(dir_fd, name, tmp, content, true);
}

int write_file_replace_at(int dir_fd, const char *name, const char *tmp, const char *content) {
        return write_file_rename_at(dir_fd, name, tmp, content, false);
}

/* Whether every component of path is a name (no "..", none too long),
 * and whether there is one at all */
static int beneath_components(const char *path, bool *ret_any) {
        *ret_any = false;
        for (const char *p = path; *p;) {
                size_t n = strcspn(p, "/");
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return -EINVAL;
                *ret_any |= n > 0;
                p += n + (p[n] == '/');
        }
        return 0;
}

/* The same in one system call (the thaw after a resume opens hundreds of
 * cgroups, each a few components deep); -ENOSYS where openat2 is missing
 * or refused (seccomp), and the walk below does it */
static int open_dir_openat2(int root_fd, const char *path) {
#ifdef SYS_openat2
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        path += strspn(path, "/"); /* below the root, as the walk reads it */
        int fd = (int) syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
        if (fd >= 0)
                return fd;
        if (errno == ELOOP) /* a symlink on the way: the walk's answer */
                return -ENOTDIR;
        return errno == EPERM || errno == E2BIG ? -ENOSYS : -errno;
#else
        return -ENOSYS;
#endif
}

int open_dir_beneath(int root_fd, const char *path) {
        bool any;
        int r = beneath_components(path, &any);
        if (r < 0)
                return r;
        if (any && (r = open_dir_openat2(root_fd, path)) != -ENOSYS)
                return r;
        _cleanup_close_ int fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;

        for (const char *p = path; *p;) {
                size_t n = strcspn(p, "/");
                if (n == 0) {
                        p++;
                        continue;
                }
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                char name[NAME_MAX + 1];
                memcpy(name, p, n);
                name[n] = '\0';
                if (strcmp(name, "..") == 0)
                        return -EINVAL;
                int next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                closep(&fd);
                fd = next;
                p += n;
        }
        return TAKE_FD(fd);
}

char *strstrip_right(char *s) {
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char) s[n - 1]))
                s[--n] = '\0';
        return s;
}

DIR *opendir_at(int dir_fd, const char *path) {
        int fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        DIR *d = fdopendir(fd);
        if (!d) {
                int e = errno;
                close(fd);
                errno = e;
        }
        return d;
}
