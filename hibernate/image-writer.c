/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge-image-writer: fridge's hibernation image through /dev/snapshot.
 * This first increment holds the proof the design rests on (issue 17):
 * after SNAPSHOT_FREEZE only the caller runs, its threads from before are
 * frozen with the rest of user space, and a thread created after the
 * freeze runs (so the compression and the writes may go to worker threads
 * started inside the write). --probe-threads prints what it saw as
 * key=value lines and exits 0 only when both hold. --discard makes the
 * kernel's image (SNAPSHOT_CREATE_IMAGE), reads it, compresses and
 * checksums it block by block in fridge's format, then throws it away
 * (SNAPSHOT_FREE, SNAPSHOT_UNFREEZE: the path an abort takes) and prints
 * the figures; nothing is written to any disk.
 *
 * It never picks a device itself: --snapshot names the snapshot device,
 * so nothing on a host or in a test reaches /dev/snapshot by default. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/suspend_ioctls.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "image-format.h"
#include "macro.h"
#include "time-util.h"

/* How long a thread may take to show it runs, or a spinning one to stop:
 * generous for qemu's TCG, and the probe only waits it out on failure */
#define PROBE_WAIT_MS 2000
#define PROBE_STEP_MS 10

typedef struct Args {
        const char *snapshot;
        bool probe_threads;
        bool discard;
} Args;

/* Pages of the snapshot a block holds: 128 KiB, zstd's sweet spot (see
 * the measurement in docs/ARCHITECTURE.md) */
#define WRITER_BLOCK_PAGES 32u

static atomic_ulong spins;   /* counted by the thread from before the freeze */
static atomic_bool new_ran;  /* set by the thread from after the freeze */
static atomic_bool stop_spinning;

static void *spin(void *unused) {
        while (!atomic_load(&stop_spinning)) {
                atomic_fetch_add(&spins, 1);
                struct timespec ts = { 0, 1000000 };
                nanosleep(&ts, NULL);
        }
        return NULL;
}

static void *mark_ran(void *unused) {
        atomic_store(&new_ran, true);
        return NULL;
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Did the thread from before the freeze count on while frozen? */
static bool spinner_frozen(void) {
        unsigned long a = atomic_load(&spins);
        sleep_ms(10 * PROBE_STEP_MS);
        return atomic_load(&spins) == a;
}

static bool new_thread_runs(void) {
        pthread_t t;
        if (pthread_create(&t, NULL, mark_ran, NULL) != 0)
                return false;
        for (int waited = 0; !atomic_load(&new_ran) && waited < PROBE_WAIT_MS; waited += PROBE_STEP_MS)
                sleep_ms(PROBE_STEP_MS);
        bool ran = atomic_load(&new_ran);
        if (ran)
                pthread_join(t, NULL);
        else
                pthread_detach(t); /* it runs after the unfreeze */
        return ran;
}

static int probe_threads(int fd) {
        pthread_t spinner;
        if (pthread_create(&spinner, NULL, spin, NULL) != 0)
                return fprintf(stderr, "fridge-image-writer: cannot start a thread\n"), 1;
        while (atomic_load(&spins) < 3)
                sleep_ms(PROBE_STEP_MS);
        if (ioctl(fd, SNAPSHOT_FREEZE) < 0) {
                int e = errno;
                atomic_store(&stop_spinning, true);
                pthread_join(spinner, NULL);
                return fprintf(stderr, "fridge-image-writer: SNAPSHOT_FREEZE failed: %s\n", strerror(e)), 1;
        }
        bool frozen = spinner_frozen(), runs = new_thread_runs();
        if (ioctl(fd, SNAPSHOT_UNFREEZE) < 0)
                fprintf(stderr, "fridge-image-writer: SNAPSHOT_UNFREEZE failed: %m\n");
        atomic_store(&stop_spinning, true);
        pthread_join(spinner, NULL);
        printf("thread_before_freeze=%s\nthread_after_freeze=%s\n", frozen ? "frozen" : "ran",
               runs ? "runs" : "frozen");
        return frozen && runs ? 0 : 1;
}

typedef struct Figures {
        uint64_t raw_bytes, compressed_bytes, blocks, usec;
} Figures;

/* Reads the image the kernel made, page by page, into blocks of fridge's
 * format, compressed and checksummed, then dropped (this increment writes
 * nothing); a progress line every 10%. */
static int image_read_loop(int fd, FridgeImageHeader *h, ZSTD_CCtx *cctx, uint8_t *raw, uint8_t *out, Figures *f) {
        size_t room = (size_t) h->block_pages * h->page_size, bound = fridge_image_block_bound(room);
        int64_t total = 0;
        (void) ioctl(fd, SNAPSHOT_GET_IMAGE_SIZE, &total);
        char err[FRIDGE_IMAGE_ERR_MAX];
        for (uint64_t shown = 0;;) {
                size_t len = 0;
                for (ssize_t n = 1; n > 0 && len < room; len += (size_t) n)
                        if ((n = read(fd, raw + len, h->page_size)) < 0) {
                                int e = errno;
                                fprintf(stderr, "fridge-image-writer: reading the image: %s\n", strerror(e));
                                return -e;
                        }
                if (len == 0)
                        return 0;
                size_t used;
                int r = fridge_image_block_encode(h, cctx, f->blocks, raw, len, FRIDGE_IMAGE_ZSTD_LEVEL, out, bound,
                                                  &used, err, sizeof(err));
                if (r < 0)
                        return fprintf(stderr, "fridge-image-writer: %s\n", err), r;
                f->blocks++;
                f->raw_bytes += len;
                f->compressed_bytes += used;
                if (total > 0 && f->raw_bytes * 10 / (uint64_t) total > shown) {
                        shown = f->raw_bytes * 10 / (uint64_t) total;
                        fprintf(stderr, "fridge-image-writer: %" PRIu64 " of %" PRId64 " MiB\n", f->raw_bytes >> 20,
                                total >> 20);
                }
        }
}

/* The image into blocks; the header is encoded last, which checks the counts */
static int image_read_blocks(int fd, FridgeImageHeader *h, Figures *f) {
        size_t room = (size_t) h->block_pages * h->page_size, bound = fridge_image_block_bound(room);
        _cleanup_free_ uint8_t *raw = malloc(room), *out = malloc(bound);
        ZSTD_CCtx *cctx = ZSTD_createCCtx();
        int r = raw && out && cctx ? image_read_loop(fd, h, cctx, raw, out, f) : -ENOMEM;
        ZSTD_freeCCtx(cctx);
        if (r < 0)
                return r;
        h->image_pages = f->raw_bytes / h->page_size;
        h->block_count = f->blocks;
        h->compressed_bytes = f->compressed_bytes;
        uint8_t buf[FRIDGE_IMAGE_HEADER_SIZE];
        char err[FRIDGE_IMAGE_ERR_MAX];
        r = fridge_image_header_encode(h, buf, sizeof(buf), err, sizeof(err));
        if (r < 0)
                return fprintf(stderr, "fridge-image-writer: %s\n", err), r;
        return 0;
}

/* Freeze, make the image, read it into blocks, throw it away, unfreeze:
 * every exit path frees the image and thaws user space. */
static int discard_image(int fd) {
        FridgeImageHeader h = { .page_size = (uint32_t) sysconf(_SC_PAGESIZE), .block_pages = WRITER_BLOCK_PAGES,
                                .map_offset = 0, .zstd_level = FRIDGE_IMAGE_ZSTD_LEVEL };
        if (fridge_image_header_set_kernel(&h) < 0 || getrandom(&h.image_id, sizeof(h.image_id), 0) < 0)
                return fprintf(stderr, "fridge-image-writer: uname or getrandom failed: %m\n"), 1;
        fprintf(stderr, "fridge-image-writer: freezing user space\n");
        if (ioctl(fd, SNAPSHOT_FREEZE) < 0)
                return fprintf(stderr, "fridge-image-writer: SNAPSHOT_FREEZE failed: %m\n"), 1;
        fprintf(stderr, "fridge-image-writer: making the image\n");
        int in_suspend = -1, r = 0;
        Figures f = {};
        if (ioctl(fd, SNAPSHOT_CREATE_IMAGE, &in_suspend) < 0)
                r = (fprintf(stderr, "fridge-image-writer: SNAPSHOT_CREATE_IMAGE failed: %m\n"), -1);
        else if (in_suspend == 1) {
                fprintf(stderr, "fridge-image-writer: reading the image\n");
                uint64_t t0 = now(CLOCK_MONOTONIC);
                r = image_read_blocks(fd, &h, &f);
                f.usec = now(CLOCK_MONOTONIC) - t0;
        }
        /* in_suspend 0 would be the restored image, which --discard never writes */
        if (ioctl(fd, SNAPSHOT_FREE) < 0)
                fprintf(stderr, "fridge-image-writer: SNAPSHOT_FREE failed: %m\n");
        if (ioctl(fd, SNAPSHOT_UNFREEZE) < 0)
                fprintf(stderr, "fridge-image-writer: SNAPSHOT_UNFREEZE failed: %m\n");
        if (r < 0 || in_suspend != 1)
                return 1;
        double mib = (double) f.raw_bytes / (1 << 20), s = (double) f.usec / 1e6;
        printf("raw_bytes=%" PRIu64 "\ncompressed_bytes=%" PRIu64 "\nblocks=%" PRIu64 "\nms=%" PRIu64
               "\nmib_per_s=%.1f\nratio=%.2f\n",
               f.raw_bytes, f.compressed_bytes, f.blocks, f.usec / 1000, s > 0 ? mib / s : 0.0,
               f.compressed_bytes ? (double) f.raw_bytes / (double) f.compressed_bytes : 0.0);
        return 0;
}

static void usage(FILE *f) {
        fprintf(f, "Usage: fridge-image-writer --snapshot=DEVICE --probe-threads|--discard\n"
                   "  --snapshot=DEVICE  the snapshot device (/dev/snapshot); never assumed\n"
                   "  --probe-threads    freeze user space, show that a thread started now runs\n"
                   "                     and one started before does not, unfreeze\n"
                   "  --discard          make the image, compress and checksum it, throw it away,\n"
                   "                     unfreeze; print the figures (nothing is written)\n");
}

/* 0 to go on, else the exit status (2: bad usage, with the reason said) */
static int parse_args(int argc, char **argv, Args *a) {
        static const struct option opts[] = {
                { "snapshot", required_argument, NULL, 's' },
                { "probe-threads", no_argument, NULL, 'p' },
                { "discard", no_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) >= 0;)
                switch (c) {
                case 's': a->snapshot = optarg; break;
                case 'p': a->probe_threads = true; break;
                case 'd': a->discard = true; break;
                case 'h': usage(stdout); return -1;
                default: return 2;
                }
        if (optind < argc)
                return fprintf(stderr, "fridge-image-writer: unexpected argument \"%s\"\n", argv[optind]), 2;
        if (!a->snapshot || !*a->snapshot)
                return fprintf(stderr, "fridge-image-writer: --snapshot=DEVICE is required: the snapshot device "
                                       "is never assumed\n"),
                       2;
        if (a->probe_threads == a->discard)
                return fprintf(stderr, "fridge-image-writer: say one of --probe-threads and --discard (writing "
                                       "an image is not implemented yet)\n"),
                       2;
        return 0;
}

int main(int argc, char **argv) {
        Args a = {};
        int r = parse_args(argc, argv, &a);
        if (r != 0)
                return r < 0 ? 0 : r;
        /* O_RDONLY: the side of the device that makes an image */
        _cleanup_close_ int fd = open(a.snapshot, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return fprintf(stderr, "fridge-image-writer: cannot open %s: %m\n", a.snapshot), 1;
        return a.probe_threads ? probe_threads(fd) : discard_image(fd);
}
