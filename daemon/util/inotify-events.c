/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "inotify-events.h"

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

int inotify_events_drain(int fd, InotifyEventHandler handler, void *userdata) {
        _Alignas(struct inotify_event) char buf[4096];
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? 0 : -errno;
                if (n == 0)
                        return 0;
                for (size_t off = 0; off + sizeof(struct inotify_event) <= (size_t) n;) {
                        const struct inotify_event *ev = (const void *) (buf + off);
                        off += sizeof(*ev) + ev->len;
                        if (!handler(ev, userdata))
                                return 1;
                }
        }
}
