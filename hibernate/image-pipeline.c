/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-pipeline.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/suspend_ioctls.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "time-util.h"

/* One thread a core, no more than this; each compresses every
 * workers-th block of a batch of BATCH_PER_WORKER blocks a thread */
#define WORKERS_MAX 4u
#define BATCH_PER_WORKER 4u
#define BATCH_MAX (WORKERS_MAX * BATCH_PER_WORKER)

#define say(...) fprintf(stderr, "fridge-image-writer: " __VA_ARGS__)

typedef struct Pipeline {
        FridgeImageHeader *h;
        size_t room, bound;          /* a block's raw and most compressed bytes */
        unsigned workers;
        size_t nblocks;              /* in this batch */
        uint64_t first;              /* the image's index of the batch's first block */
        uint8_t *raw, *out;
        size_t raw_len[BATCH_MAX], out_len[BATCH_MAX];
        ZSTD_CCtx *cctx[WORKERS_MAX]; /* one a thread, kept: a fresh one clears megabytes */
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
        for (size_t b = w->id; w->r == 0 && b < p->nblocks; b += p->workers)
                w->r = fridge_image_block_encode(p->h, p->cctx[w->id], p->first + b, p->raw + b * p->room,
                                                 p->raw_len[b], FRIDGE_IMAGE_ZSTD_LEVEL, p->out + b * p->bound,
                                                 p->bound, &p->out_len[b], w->err, sizeof(w->err));
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

/* Up to one block's pages from the snapshot device; 0 bytes at its end */
static int block_read(int snap, uint8_t *buf, size_t room, uint32_t page_size, size_t *ret_len) {
        size_t len = 0;
        for (ssize_t n = 1; n > 0 && len < room; len += (size_t) n)
                if ((n = read(snap, buf + len, page_size)) < 0) {
                        int e = errno;
                        say("reading the image: %s\n", strerror(e));
                        return -e;
                }
        *ret_len = len;
        return 0;
}

static int batch_read(int snap, Pipeline *p) {
        p->nblocks = 0;
        for (size_t b = 0; b < (size_t) p->workers * BATCH_PER_WORKER; b++) {
                int r = block_read(snap, p->raw + b * p->room, p->room, p->h->page_size, &p->raw_len[b]);
                if (r < 0)
                        return r;
                if (p->raw_len[b] == 0)
                        break;
                p->nblocks++;
                if (p->raw_len[b] < p->room)
                        break;
        }
        return 0;
}

/* The batch's blocks in order to out, counted; a line every 10% */
static int batch_emit(Pipeline *p, ImageOutput *out, ImageFigures *f, int64_t total) {
        for (size_t b = 0; b < p->nblocks; b++) {
                int r = out ? image_output_put(out, p->out + b * p->bound, p->out_len[b]) : 0;
                if (r < 0)
                        return r;
                uint64_t before = f->raw_bytes * 10 / (uint64_t) total;
                f->blocks++;
                f->raw_bytes += p->raw_len[b];
                f->compressed_bytes += p->out_len[b];
                if (f->raw_bytes * 10 / (uint64_t) total > before)
                        say("%" PRIu64 " of %" PRId64 " MiB\n", f->raw_bytes >> 20, total >> 20);
        }
        p->first += p->nblocks;
        return 0;
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
                return say("aborted: %s\n", con->peer_cancelled ? "fridged cancelled the write" : "Esc typed on the console"),
                       -ECANCELED;
        return 0;
}

static int pipeline_loop(int snap, Pipeline *p, ImageOutput *out, ImageConsole *con, ImageFigures *f) {
        int64_t total = 0;
        if (ioctl(snap, SNAPSHOT_GET_IMAGE_SIZE, &total) < 0 || total <= 0)
                total = INT64_MAX; /* no progress lines */
        for (;;) {
                int r = batch_read(snap, p);
                if (r == 0 && p->nblocks == 0)
                        return 0;
                if (r == 0)
                        r = batch_compress(p);
                if (r == 0)
                        r = batch_emit(p, out, f, total);
                if (r == 0)
                        r = batch_console(con, f, total);
                if (r < 0)
                        return r;
        }
}

int image_pipeline_run(int snap, FridgeImageHeader *h, ImageOutput *out, ImageConsole *con, ImageFigures *f) {
        Pipeline p = { .h = h, .room = (size_t) h->block_pages * h->page_size, .workers = workers_count() };
        p.bound = fridge_image_block_bound(p.room);
        p.raw = malloc(BATCH_MAX * p.room);
        p.out = malloc(BATCH_MAX * p.bound);
        int r = p.raw && p.out ? 0 : (say("out of memory for a batch\n"), -ENOMEM);
        for (unsigned i = 0; r == 0 && i < p.workers; i++)
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
        if (r == 0 && out)
                r = image_output_finish(out, h);
        f->usec = now(CLOCK_MONOTONIC) - t0;
        for (unsigned i = 0; i < p.workers; i++)
                ZSTD_freeCCtx(p.cctx[i]);
        free(p.raw);
        free(p.out);
        return r;
}
