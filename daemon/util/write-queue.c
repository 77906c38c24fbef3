/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "write-queue.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "log.h"
#include "util.h"

typedef struct Write {
        char *what;
        WriteQueueFunc fn;
        void *data;
        WriteQueueFreeFunc free_data;
        uint64_t log_cycle;     /* the cycle it is of: its lines say so */
} Write;

struct WriteQueue {
        pthread_mutex_t lock;
        pthread_cond_t cond;    /* a push, a write done, the stop */
        GQueue pending;         /* Write*, oldest first */
        Write *running;         /* the thread's, while it runs */
        unsigned n_ref;         /* the thread's and the loop's (under lock) */
        bool stopping;
};

static void write_free(Write *w) {
        if (!w)
                return;
        if (w->free_data)
                w->free_data(w->data);
        g_free(w->what);
        g_free(w);
}

/* Called with the lock held; the last one frees */
static bool unref_locked(WriteQueue *q) {
        return --q->n_ref == 0;
}

static void queue_free(WriteQueue *q) {
        Write *w;
        while ((w = g_queue_pop_head(&q->pending)))
                write_free(w);
        pthread_mutex_destroy(&q->lock);
        pthread_cond_destroy(&q->cond);
        g_free(q);
}

static void *write_queue_thread(void *p) {
        WriteQueue *q = p;
        pthread_mutex_lock(&q->lock);
        for (;;) {
                while (g_queue_is_empty(&q->pending) && !q->stopping)
                        pthread_cond_wait(&q->cond, &q->lock);
                Write *w = g_queue_pop_head(&q->pending);
                if (!w)
                        break;
                q->running = w;
                pthread_mutex_unlock(&q->lock);
                log_set_thread_cycle(w->log_cycle);
                w->fn(w->data);
                pthread_mutex_lock(&q->lock);
                q->running = NULL;
                write_free(w);
                pthread_cond_broadcast(&q->cond);
        }
        bool last = unref_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (last)
                queue_free(q);
        return NULL;
}

int write_queue_new(WriteQueue **ret) {
        WriteQueue *q = g_new0(WriteQueue, 1);
        pthread_mutex_init(&q->lock, NULL);
        pthread_cond_init(&q->cond, NULL);
        g_queue_init(&q->pending);
        q->n_ref = 2;

        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        int r = -pthread_create(&t, &attr, write_queue_thread, q);
        pthread_attr_destroy(&attr);
        if (r < 0) {
                queue_free(q);
                return r;
        }
        *ret = q;
        return 0;
}

void write_queue_push(WriteQueue *q, const char *what, WriteQueueFunc fn, void *data,
                      WriteQueueFreeFunc free_data) {
        Write *w = g_new(Write, 1);
        *w = (Write) { .what = g_strdup(what), .fn = fn, .data = data, .free_data = free_data,
                       .log_cycle = log_get_cycle() };
        pthread_mutex_lock(&q->lock);
        g_queue_push_tail(&q->pending, w);
        pthread_cond_broadcast(&q->cond);
        pthread_mutex_unlock(&q->lock);
}

static void log_not_done(const Write *w) {
        log_warning("Not written before fridged stopped (the disk did not take it in time): %s", w->what);
}

unsigned write_queue_drain_free(WriteQueue *q, uint64_t timeout_usec) {
        if (!q)
                return 0;
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += (time_t) (timeout_usec / 1000000);
        deadline.tv_nsec += (long) (timeout_usec % 1000000) * 1000;
        if (deadline.tv_nsec >= 1000000000) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&q->lock);
        q->stopping = true;
        pthread_cond_broadcast(&q->cond);
        while ((q->running || !g_queue_is_empty(&q->pending)) &&
               pthread_cond_clockwait(&q->cond, &q->lock, CLOCK_MONOTONIC, &deadline) != ETIMEDOUT)
                ;
        unsigned n = g_queue_get_length(&q->pending) + (q->running ? 1 : 0);
        if (q->running)
                log_not_done(q->running);
        /* The thread stops after the one it runs: the rest are dropped */
        Write *w;
        while ((w = g_queue_pop_head(&q->pending))) {
                log_not_done(w);
                write_free(w);
        }
        bool last = unref_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (last)
                queue_free(q);
        return n;
}
