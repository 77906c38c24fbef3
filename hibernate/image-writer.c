/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge-image-writer: fridge's hibernation image through /dev/snapshot.
 * This first increment holds the proof the design rests on (issue 17):
 * after SNAPSHOT_FREEZE only the caller runs, its threads from before are
 * frozen with the rest of user space, and a thread created after the
 * freeze runs (so the compression and the writes may go to worker threads
 * started inside the write). --probe-threads prints what it saw as
 * key=value lines and exits 0 only when both hold.
 *
 * It never picks a device itself: --snapshot names the snapshot device,
 * so nothing on a host or in a test reaches /dev/snapshot by default. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/suspend_ioctls.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"

/* How long a thread may take to show it runs, or a spinning one to stop:
 * generous for qemu's TCG, and the probe only waits it out on failure */
#define PROBE_WAIT_MS 2000
#define PROBE_STEP_MS 10

typedef struct Args {
        const char *snapshot;
        bool probe_threads;
} Args;

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

static void usage(FILE *f) {
        fprintf(f, "Usage: fridge-image-writer --snapshot=DEVICE --probe-threads\n"
                   "  --snapshot=DEVICE  the snapshot device (/dev/snapshot); never assumed\n"
                   "  --probe-threads    freeze user space, show that a thread started now runs\n"
                   "                     and one started before does not, unfreeze\n");
}

/* 0 to go on, else the exit status (2: bad usage, with the reason said) */
static int parse_args(int argc, char **argv, Args *a) {
        static const struct option opts[] = {
                { "snapshot", required_argument, NULL, 's' },
                { "probe-threads", no_argument, NULL, 'p' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) >= 0;)
                switch (c) {
                case 's': a->snapshot = optarg; break;
                case 'p': a->probe_threads = true; break;
                case 'h': usage(stdout); return -1;
                default: return 2;
                }
        if (optind < argc)
                return fprintf(stderr, "fridge-image-writer: unexpected argument \"%s\"\n", argv[optind]), 2;
        if (!a->snapshot || !*a->snapshot)
                return fprintf(stderr, "fridge-image-writer: --snapshot=DEVICE is required: the snapshot device "
                                       "is never assumed\n"),
                       2;
        if (!a->probe_threads)
                return fprintf(stderr, "fridge-image-writer: nothing to do: only --probe-threads is implemented\n"),
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
        return probe_threads(fd);
}
