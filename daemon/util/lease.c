/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "lease.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "util.h"

struct Lease {
        sd_event_source *source; /* our end of the pipe, owned by the source */
        LeaseEnded ended;
        void *userdata;
};

static int on_hangup(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Lease *l = userdata;
        /* A hung-up pipe stays readable: without an owner to end it, stop
         * watching, or the loop would spin on it */
        if (!l->ended)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        l->ended(l->userdata);
        return 0;
}

int lease_new(sd_event *e, const char *description, LeaseEnded ended, void *userdata, Lease **ret,
              int *ret_fd) {
        int p[2];
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        _cleanup_close_ int holder = p[1];

        g_autoptr(Lease) l = g_new0(Lease, 1);
        l->ended = ended;
        l->userdata = userdata;
        int r = sd_event_add_io(e, &l->source, p[0], 0 /* HUP and ERR are always reported */, on_hangup, l);
        if (r < 0) {
                close(p[0]);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(l->source, true);
        (void) sd_event_source_set_description(l->source, description);

        *ret = g_steal_pointer(&l);
        *ret_fd = TAKE_FD(holder);
        return 0;
}

Lease *lease_free(Lease *l) {
        if (!l)
                return NULL;
        sd_event_source_disable_unref(l->source);
        g_free(l);
        return NULL;
}
