/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "serve-parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A whole decimal number, nothing around it but an optional newline */
static int parse_ull(const char *s, size_t len, unsigned long long max, unsigned long long *ret) {
        if (len == 0 || strspn(s, "0123456789") != len)
                return -EINVAL;
        if (s[len] != '\0' && !(s[len] == '\n' && s[len + 1] == '\0') && s[len] != ':')
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, NULL, 10);
        if (errno != 0 || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int serve_listen_fds(const char *listen_pid, const char *listen_fds, pid_t self) {
        if (!listen_pid || !listen_fds)
                return 0;
        unsigned long long pid, n;
        if (parse_ull(listen_pid, strlen(listen_pid), (unsigned long long) INT32_MAX, &pid) < 0 ||
            parse_ull(listen_fds, strlen(listen_fds), 1024, &n) < 0)
                return -EINVAL;
        return (pid_t) pid == self ? (int) n : 0;
}

int serve_parse_devnum(const char *s, unsigned *ret_major, unsigned *ret_minor) {
        const char *colon = strchr(s, ':');
        unsigned long long maj, min;
        if (!colon || parse_ull(s, (size_t) (colon - s), 0xfffu, &maj) < 0 ||
            parse_ull(colon + 1, strcspn(colon + 1, "\n"), 0xfffffu, &min) < 0 || strchr(colon + 1, ':'))
                return -EINVAL;
        *ret_major = (unsigned) maj;
        *ret_minor = (unsigned) min;
        return 0;
}

int serve_parse_offset(const char *s, uint64_t *ret) {
        unsigned long long v;
        if (parse_ull(s, strcspn(s, "\n"), UINT64_MAX, &v) < 0 || strchr(s, ':'))
                return -EINVAL;
        *ret = v;
        return 0;
}

static const struct {
        const char *mode;
        ImageAfter after;
} modes[] = {
        { "platform", IMAGE_AFTER_PLATFORM },
        { "shutdown", IMAGE_AFTER_POWEROFF },
        { "reboot", IMAGE_AFTER_REBOOT },
        { "suspend", IMAGE_AFTER_SUSPEND },
};

int serve_mode_after(const char *mode, ImageAfter *ret) {
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
                if (strcmp(mode, modes[i].mode) == 0) {
                        *ret = modes[i].after;
                        return 0;
                }
        return strcmp(mode, "test_resume") == 0 ? -EOPNOTSUPP : -EINVAL;
}
