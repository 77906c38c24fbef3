/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

struct Worker {
        atomic_int n_ref; /* the thread's and the loop's */
        int efd;
        sd_event_source *source;
        WorkerFunc fn;
        void *data;
        WorkerFreeFunc free_data;
        WorkerDone done;
        void *userdata;
        int result;
        uint64_t log_cycle; /* the cycle that started it: its lines say so, even abandoned */
};

static void worker_unref(Worker *w) {
        if (atomic_fetch_sub(&w->n_ref, 1) != 1)
                return;
        if (w->free_data)
                w->free_data(w->data);
        if (w->efd >= 0)
                close(w->efd);
        g_free(w);
}

static void *worker_thread(void *p) {
        Worker *w = p;
        log_set_thread_cycle(w->log_cycle);
        w->result = w->fn(w->data);
        uint64_t one = 1;
        /* An eventfd write of 1 cannot block or fail short */
        (void) !write(w->efd, &one, sizeof(one));
        worker_unref(w);
        return NULL;
}

static int worker_on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Worker *w = userdata;
        uint64_t v;
        (void) !read(fd, &v, sizeof(v));

        w->source = sd_event_source_disable_unref(w->source);
        /* The eventfd read orders us after the thread's store of the result */
        w->done(w->result, w->data, w->userdata);
        worker_unref(w);
        return 0;
}

int worker_start(sd_event *e, WorkerFunc fn, void *data, WorkerFreeFunc free_data, WorkerDone done,
                 void *userdata, Worker **ret) {
        Worker *w = g_new(Worker, 1);
        *w = (Worker) {
                .n_ref = 1, .efd = -1, .fn = fn, .data = data, .free_data = free_data,
                .done = done, .userdata = userdata, .log_cycle = log_get_cycle(),
        };

        int r;
        w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->efd < 0) {
                r = -errno;
                goto fail;
        }
        r = sd_event_add_io(e, &w->source, w->efd, EPOLLIN, worker_on_done, w);
        if (r < 0)
                goto fail;
        (void) sd_event_source_set_description(w->source, "worker");

        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        atomic_fetch_add(&w->n_ref, 1);
        r = -pthread_create(&t, &attr, worker_thread, w);
        pthread_attr_destroy(&attr);
        if (r < 0) {
                atomic_fetch_sub(&w->n_ref, 1);
                w->source = sd_event_source_disable_unref(w->source);
                goto fail;
        }
        if (ret)
                *ret = w;
        return 0;

fail:
        worker_unref(w);
        return r;
}

void *worker_take_data(Worker *w) {
        w->free_data = NULL;
        return w->data;
}

void worker_abandon(Worker *w) {
        if (!w)
                return;
        w->source = sd_event_source_disable_unref(w->source);
        worker_unref(w);
}
