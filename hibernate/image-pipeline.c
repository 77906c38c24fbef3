/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-pipeline.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/suspend_ioctls.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "macro.h"
#include "time-util.h"

/* One thread a core, no more than this; each compresses every
 * workers-th block of a batch of BATCH_PER_WORKER blocks a thread */
#define WORKERS_MAX 4u
#define BATCH_PER_WORKER 4u
#define BATCH_MAX (WORKERS_MAX * BATCH_PER_WORKER)

#define say(...) fprintf(stderr, "fridge-image-writer: " __VA_ARGS__)

/* A batch's blocks: read and compressed by the main thread and its
 * workers while the emitter thread puts the previous batch on the device */
typedef struct Batch {
        uint8_t *raw, *out;
        size_t nblocks;
        uint64_t first;              /* the image's index of the batch's first block */
        size_t raw_len[BATCH_MAX], out_len[BATCH_MAX];
} Batch;

typedef struct Pipeline {
        FridgeImageHeader *h;
        size_t room, bound;          /* a block's raw and most compressed bytes */
        unsigned workers;
        Batch batch[2];
        Batch *cur;                  /* the one being read and compressed */
        ZSTD_CCtx *cctx[WORKERS_MAX]; /* zstd's: one a thread, kept (a fresh one clears megabytes) */
} Pipeline;

typedef struct Worker {
        Pipeline *p;
        unsigned id;
        int r;
        char err[FRIDGE_IMAGE_ERR_MAX];
} Worker;

static void *worker_run(void *arg) {
        Worker *w = arg;
        Pipeline *p = w->p;
        Batch *b = p->cur;
        for (size_t i = w->id; w->r == 0 && i < b->nblocks; i += p->workers)
                w->r = fridge_image_block_encode(p->h, p->cctx[w->id], b->first + i, b->raw + i * p->room,
                                                 b->raw_len[i], p->h->level, b->out + i * p->bound,
                                                 p->bound, &b->out_len[i], w->err, sizeof(w->err));
        return NULL;
}

/* Threads started for the batch and joined: no queue to get wrong, and
 * starting two threads costs microseconds against a batch's milliseconds */
static int batch_compress(Pipeline *p) {
        pthread_t t[WORKERS_MAX];
        Worker w[WORKERS_MAX];
        unsigned started = 0;
        for (unsigned i = 0; i < p->workers; i++)
                w[i] = (Worker) { .p = p, .id = i };
        while (started < p->workers && pthread_create(&t[started], NULL, worker_run, &w[started]) == 0)
                started++;
        for (unsigned i = started; i < p->workers; i++) /* what a thread could not take */
                worker_run(&w[i]);
        for (unsigned i = 0; i < started; i++)
                pthread_join(t[i], NULL);
        for (unsigned i = 0; i < p->workers; i++)
                if (w[i].r < 0)
                        return say("%s\n", w[i].err), w[i].r;
        return 0;
}

/* Up to one block's pages from the snapshot device; 0 bytes at its end.
 * The device hands out a page a read(2), but readv(2) takes a block's
 * worth in one call (the kernel loops over the vector: a page each). */
static int block_read(int snap, uint8_t *buf, size_t room, uint32_t page_size, size_t *ret_len) {
        struct iovec iov[FRIDGE_IMAGE_BLOCK_PAGES_MAX];
        size_t len = 0;
        for (ssize_t n = 1; n > 0 && len < room; len += (size_t) n) {
                size_t k = 0;
                for (size_t at = len; at < room && k < ELEMENTSOF(iov); at += page_size)
                        iov[k++] = (struct iovec) { buf + at, page_size };
                if ((n = readv(snap, iov, (int) k)) < 0) {
                        int e = errno;
                        say("reading the image: %s\n", strerror(e));
                        return -e;
                }
        }
        *ret_len = len;
        return 0;
}

static int batch_read(int snap, Pipeline *p, uint64_t first) {
        Batch *b = p->cur;
        b->nblocks = 0;
        b->first = first;
        for (size_t i = 0; i < (size_t) p->workers * BATCH_PER_WORKER; i++) {
                int r = block_read(snap, b->raw + i * p->room, p->room, p->h->page_size, &b->raw_len[i]);
                if (r < 0)
                        return r;
                if (b->raw_len[i] == 0)
                        break;
                b->nblocks++;
                if (b->raw_len[i] < p->room)
                        break;
        }
        return 0;
}

/* The batch's blocks in order to out, counted; a line every 10% */
static int batch_emit(const Pipeline *p, const Batch *b, ImageOutput *out, ImageFigures *f, int64_t total) {
        for (size_t i = 0; i < b->nblocks; i++) {
                int r = out ? image_output_put(out, b->out + i * p->bound, b->out_len[i]) : 0;
                if (r < 0)
                        return r;
                uint64_t before = f->raw_bytes * 10 / (uint64_t) total;
                f->blocks++;
                f->raw_bytes += b->raw_len[i];
                f->compressed_bytes += b->out_len[i];
                if (f->raw_bytes * 10 / (uint64_t) total > before)
                        say("%" PRIu64 " of %" PRId64 " MiB\n", f->raw_bytes >> 20, total >> 20);
        }
        return 0;
}

/* One batch going out on a thread of its own (started after the freeze,
 * like the workers), so the device's writes overlap the next batch's
 * reading and compression; joined before the next one starts, so the
 * blocks reach the device in order and f is only ever one thread's. */
typedef struct Emitter {
        const Pipeline *p;
        const Batch *b;
        ImageOutput *out;
        ImageFigures *f;
        int64_t total;
        pthread_t thread;
        bool running;
        int r;
} Emitter;

static void *emitter_run(void *arg) {
        Emitter *e = arg;
        e->r = batch_emit(e->p, e->b, e->out, e->f, e->total);
        return NULL;
}

/* The batch's pages asked for here, on the thread that reads the
 * snapshot device (see image_output_reserve), then the batch out */
static int emitter_start(Emitter *e, const Batch *b) {
        uint64_t len = 0;
        for (size_t i = 0; i < b->nblocks; i++)
                len += b->out_len[i];
        int r = e->out ? image_output_reserve(e->out, len) : 0;
        if (r < 0)
                return r;
        e->b = b;
        e->r = 0;
        e->running = pthread_create(&e->thread, NULL, emitter_run, e) == 0;
        if (!e->running) /* no thread to be had: the batch goes out now */
                emitter_run(e);
        return 0;
}

/* Waits for the batch going out; its result, or the one that went out inline */
static int emitter_wait(Emitter *e, ImageFigures *f) {
        if (e->running) {
                uint64_t t0 = now(CLOCK_MONOTONIC);
                pthread_join(e->thread, NULL);
                e->running = false;
                f->output_usec += now(CLOCK_MONOTONIC) - t0;
        }
        return e->r;
}

static unsigned workers_count(void) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n < 1 ? 1 : n > (long) WORKERS_MAX ? WORKERS_MAX : (unsigned) n;
}

/* The bar, and the user's say: checked once a batch, some milliseconds */
static int batch_console(ImageConsole *con, const ImageFigures *f, int64_t total) {
        if (!con)
                return 0;
        image_console_progress(con, f->raw_bytes, total == INT64_MAX ? f->raw_bytes : (uint64_t) total);
        if (image_console_abort_typed(con))
                return say("aborted: %s\n", image_console_abort_reason(con)), -ECANCELED;
        return 0;
}

/* Read and compress a batch into p->cur; the time each took in f */
static int batch_make(int snap, Pipeline *p, uint64_t first, ImageFigures *f) {
        uint64_t t0 = now(CLOCK_MONOTONIC);
        int r = batch_read(snap, p, first);
        uint64_t t1 = now(CLOCK_MONOTONIC);
        f->read_usec += t1 - t0;
        if (r == 0 && p->cur->nblocks > 0)
                r = batch_compress(p);
        f->compress_usec += now(CLOCK_MONOTONIC) - t1;
        return r;
}

static int pipeline_loop(int snap, Pipeline *p, ImageOutput *out, ImageConsole *con, ImageFigures *f) {
        int64_t total = 0;
        if (ioctl(snap, SNAPSHOT_GET_IMAGE_SIZE, &total) < 0 || total <= 0)
                total = INT64_MAX; /* no progress lines */
        Emitter e = { .p = p, .out = out, .f = f, .total = total };
        uint64_t first = 0;
        for (unsigned k = 0;; k ^= 1) {
                p->cur = &p->batch[k];
                int r = batch_make(snap, p, first, f);
                /* the previous batch out before this one, whatever happened */
                int w = emitter_wait(&e, f);
                if (r == 0)
                        r = w;
                if (r == 0)
                        r = batch_console(con, f, total);
                if (r < 0 || p->cur->nblocks == 0)
                        return r;
                first += p->cur->nblocks;
                if ((r = emitter_start(&e, p->cur)) < 0)
                        return r;
        }
}

static int batches_alloc(Pipeline *p) {
        for (size_t k = 0; k < ELEMENTSOF(p->batch); k++) {
                p->batch[k].raw = malloc(BATCH_MAX * p->room);
                p->batch[k].out = malloc(BATCH_MAX * p->bound);
                if (!p->batch[k].raw || !p->batch[k].out)
                        return say("out of memory for a batch\n"), -ENOMEM;
        }
        return 0;
}

int image_pipeline_sign(ImageOutput *out, FridgeImageHeader *h, ImageConsole *con) {
        int r = image_output_finish(out, h);
        /* an Esc typed while the last pages went out still counts: nothing is signed yet */
        if (r == 0 && con && image_console_abort_typed(con)) {
                say("aborted: %s\n", image_console_abort_reason(con));
                r = -ECANCELED;
        }
        return r < 0 ? r : image_output_sign(out, h);
}

int image_pipeline_run(int snap, FridgeImageHeader *h, ImageOutput *out, ImageConsole *con, ImageFigures *f) {
        Pipeline p = { .h = h, .room = (size_t) h->block_pages * h->page_size, .workers = workers_count() };
        p.bound = fridge_image_block_bound(p.room);
        int r = batches_alloc(&p);
        for (unsigned i = 0; r == 0 && h->compressor == FRIDGE_IMAGE_ZSTD && i < p.workers; i++)
                if (!(p.cctx[i] = ZSTD_createCCtx()))
                        r = (say("out of memory for zstd\n"), -ENOMEM);
        uint64_t t0 = now(CLOCK_MONOTONIC);
        *f = (ImageFigures) { .threads = p.workers };
        if (con)
                image_console_start(con);
        if (r == 0)
                r = pipeline_loop(snap, &p, out, con, f);
        h->compressed_bytes = f->compressed_bytes;
        h->image_pages = f->raw_bytes / h->page_size;
        h->block_count = f->blocks;
        uint64_t t1 = now(CLOCK_MONOTONIC);
        if (r == 0 && out)
                r = image_pipeline_sign(out, h, con);
        f->output_usec += now(CLOCK_MONOTONIC) - t1;
        f->usec = now(CLOCK_MONOTONIC) - t0;
        for (unsigned i = 0; i < p.workers; i++)
                ZSTD_freeCCtx(p.cctx[i]);
        for (size_t k = 0; k < ELEMENTSOF(p.batch); k++) {
                free(p.batch[k].raw);
                free(p.batch[k].out);
        }
        return r;
}
