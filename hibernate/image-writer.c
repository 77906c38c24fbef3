/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge-image-writer: fridge's hibernation image through /dev/snapshot.
 * --probe-threads holds the proof the design rests on (issue 17):
 * after SNAPSHOT_FREEZE only the caller runs, its threads from before are
 * frozen with the rest of user space, and a thread created after the
 * freeze runs (so the compression and the writes may go to worker threads
 * started inside the write). --probe-threads prints what it saw as
 * key=value lines and exits 0 only when both hold. --discard makes the
 * kernel's image (SNAPSHOT_CREATE_IMAGE), reads it, compresses and
 * checksums it block by block in fridge's format, then throws it away
 * (SNAPSHOT_FREE, SNAPSHOT_UNFREEZE: the path an abort takes) and prints
 * the figures; nothing is written to any disk. --write makes the image
 * and writes it (image-pipeline.c, image-output.c) to the resume device's
 * swap area, signature last, then powers off; when the image is resumed
 * (by fridge-resume) SNAPSHOT_CREATE_IMAGE returns a second time, in the
 * restored system, which unfreezes and says resumed=1. Any failure: no
 * signature, the swap pages and the image freed, user space thawed.
 *
 * --serve does the write of --write for fridged (image-serve.c; the
 * path itself is image-write.c): asked over a socket, told the mode and
 * the resume device through /sys/power, answering as writer-protocol.h
 * says.
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
#include <time.h>
#include <unistd.h>

#include "image-console.h"
#include "image-format.h"
#include "image-pipeline.h"
#include "image-serve.h"
#include "image-write.h"
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
        bool write;
        bool serve;
        const char *listen;        /* --serve: a path instead of systemd's socket */
        const char *sysfs;         /* --serve: where /sys/power is read */
        const char *resume_device;
        const char *header_kernel; /* tests: a header from another kernel */
        const char *console;       /* the bar and the keys while frozen: a tty, or "vt" */
        const char *initramfs;     /* --serve: the next boot's, or "unchecked" */
        unsigned idle_exit_sec;    /* --serve on systemd's socket: exit once idle this long; 0: never */
        uint64_t resume_offset;
        ImageAfter after;
} Args;

#define say(...) fprintf(stderr, "fridge-image-writer: " __VA_ARGS__)

/* The write stopped by Esc on --console: no image, the system runs on */
#define EXIT_ABORTED 3

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

static void figures_print(FILE *out, const ImageFigures *f) {
        double mib = (double) f->raw_bytes / (1 << 20), s = (double) f->usec / 1e6;
        fprintf(out,
                "raw_bytes=%" PRIu64 "\ncompressed_bytes=%" PRIu64 "\nblocks=%" PRIu64 "\nthreads=%u\nwrite_ms=%" PRIu64
                "\nread_ms=%" PRIu64 "\ncompress_ms=%" PRIu64 "\noutput_ms=%" PRIu64 "\nmib_per_s=%.1f\nratio=%.2f\n",
                f->raw_bytes, f->compressed_bytes, f->blocks, f->threads, f->usec / 1000, f->read_usec / 1000,
                f->compress_usec / 1000, f->output_usec / 1000, s > 0 ? mib / s : 0.0,
                f->compressed_bytes ? (double) f->raw_bytes / (double) f->compressed_bytes : 0.0);
        fflush(out);
}

/* Freeze, make the image, read it into blocks, throw it away, unfreeze:
 * every exit path frees the image and thaws user space. */
static int discard_image(int fd) {
        FridgeImageHeader h;
        if (image_write_header_init(&h) < 0)
                return 1;
        int in_suspend = -1, r = 0;
        if (image_write_freeze_and_create(fd, &in_suspend) < 0)
                return 1;
        ImageFigures f = {};
        if (in_suspend == 1) {
                say("reading the image\n");
                r = image_pipeline_run(fd, &h, NULL, NULL, &f);
        }
        uint8_t buf[FRIDGE_IMAGE_HEADER_SIZE];
        char err[FRIDGE_IMAGE_ERR_MAX];
        /* the counts a header would carry, checked as a reader would */
        if (r == 0 && in_suspend == 1 && fridge_image_header_encode(&h, buf, sizeof(buf), err, sizeof(err)) < 0)
                r = (say("%s\n", err), -1);
        /* in_suspend 0 would be the restored image, which --discard never writes */
        image_write_release(fd, false);
        if (r < 0 || in_suspend != 1)
                return 1;
        figures_print(stdout, &f);
        return 0;
}

static int write_image(int fd, const Args *a) {
        ImageConsole con = { .fd = -1 };
        /* opened before the freeze: after it, nothing could say why it failed */
        if (a->console && image_console_open(&con, a->console) < 0)
                return say("cannot open the console %s: %m\n", a->console), 1;
        ImageWriteJob j = { .resume_device = a->resume_device, .resume_offset = a->resume_offset,
                            .header_kernel = a->header_kernel, .console = a->console ? &con : NULL,
                            .after = a->after };
        ImageWriteResult res;
        image_write_run(fd, &j, &res);
        image_console_close(&con);
        switch (res.outcome) {
        case IMAGE_WRITE_RESUMED:
                printf("resumed=1\n");
                if (res.figures.raw_bytes) /* from the page the write left for the restored system */
                        figures_print(stdout, &res.figures);
                return 0;
        case IMAGE_WRITE_UNFROZEN:
                figures_print(stdout, &res.figures);
                figures_print(stderr, &res.figures);
                return 0;
        case IMAGE_WRITE_CANCELLED:
                return EXIT_ABORTED;
        default:
                return 1;
        }
}

/* --after=: what follows the write (fridged's modes are serve_mode_after's) */
#define AFTER_NAMES "poweroff, platform, reboot, suspend or unfreeze"
static const struct {
        const char *name;
        ImageAfter after;
} afters[] = {
        { "poweroff", IMAGE_AFTER_POWEROFF }, { "platform", IMAGE_AFTER_PLATFORM }, { "reboot", IMAGE_AFTER_REBOOT },
        { "suspend", IMAGE_AFTER_SUSPEND },   { "unfreeze", IMAGE_AFTER_UNFREEZE },
};

static void usage(FILE *f) {
        fprintf(f, "Usage: fridge-image-writer --snapshot=DEVICE --probe-threads|--discard|--write|--serve ...\n"
                   "  --snapshot=DEVICE       the snapshot device (/dev/snapshot); never assumed\n"
                   "  --probe-threads         freeze user space, show that a thread started now runs\n"
                   "                          and one started before does not, unfreeze\n"
                   "  --discard               make the image, compress and checksum it, throw it away,\n"
                   "                          unfreeze; print the figures (nothing is written)\n"
                   "  --write                 make the image and write it to the resume device's\n"
                   "                          swap area, then power off; prints resumed=1 once the\n"
                   "                          image is resumed (by fridge-resume)\n"
                   "  --serve                 write the image when fridged asks (HibernateWriter=fridge),\n"
                   "                          on systemd's socket or --listen's; the resume device\n"
                   "                          and offset as fridged set them in /sys/power\n"
                   "  --listen=PATH           (--serve) listen there (0600) instead\n"
                   "  --sysfs=DIR             (--serve) read DIR/power/resume, not /sys's\n"
                   "  --initramfs=FILE|unchecked  (--serve) the initramfs the next boot starts,\n"
                   "                          an absolute path; it must hold fridge-resume, else\n"
                   "                          the kernel's writer is used (/boot/initrd.img-RELEASE,\n"
                   "                          or /boot/initramfs-RELEASE.img, of the running kernel)\n"
                   "  --idle-exit=SEC         (--serve, on systemd's socket) exit after SEC seconds\n"
                   "                          without a request; the socket starts it again\n"
                   "  --resume-device=DEVICE  the block device of the swap area (--write)\n"
                   "  --resume-offset=PAGES   where the swap area starts on it (a swap file's)\n"
                   "  --after=poweroff|platform|reboot|suspend|unfreeze  after the write (platform:\n"
                   "                          ACPI S4, else off; suspend: to RAM, the image\n"
                   "                          withdrawn once woken; unfreeze: for tests, the image\n"
                   "                          left valid on the device and the system running)\n"
                   "  --console=TTY|vt        draw the progress bar there while user space is\n"
                   "                          frozen; Esc or Backspace there aborts the write\n"
                   "                          (exit status 3, no image, the system runs on);\n"
                   "                          vt: a free virtual terminal, brought to the front\n"
                   "                          before the freeze, the one in front before after\n"
                   "  --header-kernel=RELEASE (tests) the kernel release the header names, for\n"
                   "                          an image fridge-resume must refuse\n");
}

static int parse_option(int c, Args *a) {
        char *end = NULL;
        switch (c) {
        case 's': a->snapshot = optarg; return 0;
        case 'p': a->probe_threads = true; return 0;
        case 'd': a->discard = true; return 0;
        case 'w': a->write = true; return 0;
        case 'S': a->serve = true; return 0;
        case 'l': a->listen = optarg; return 0;
        case 'y': a->sysfs = optarg; return 0;
        case 'r': a->resume_device = optarg; return 0;
        case 'k': a->header_kernel = optarg; return 0;
        case 'c': a->console = optarg; return 0;
        case 'i':
                /* fridged watches the file it is told of: a relative name means nothing to it */
                if (optarg[0] != '/' && strcmp(optarg, "unchecked") != 0)
                        return fprintf(stderr, "fridge-image-writer: --initramfs=%s is neither an absolute path "
                                               "nor unchecked\n", optarg), 2;
                a->initramfs = optarg;
                return 0;
        case 'e': {
                errno = 0;
                unsigned long sec = strtoul(optarg, &end, 10);
                if (errno != 0 || !end || *end || !*optarg || *optarg == '-' || sec > 86400)
                        return fprintf(stderr, "fridge-image-writer: --idle-exit=%s is not a number of seconds "
                                               "(0 to 86400)\n", optarg), 2;
                a->idle_exit_sec = (unsigned) sec;
                return 0;
        }
        case 'o':
                errno = 0;
                a->resume_offset = strtoull(optarg, &end, 10);
                if (errno != 0 || !end || *end || !*optarg)
                        return fprintf(stderr, "fridge-image-writer: --resume-offset=%s is not a page count\n",
                                       optarg), 2;
                return 0;
        case 'a':
                for (size_t i = 0; i < sizeof(afters) / sizeof(afters[0]); i++)
                        if (strcmp(optarg, afters[i].name) == 0) {
                                a->after = afters[i].after;
                                return 0;
                        }
                return fprintf(stderr, "fridge-image-writer: --after=%s is not " AFTER_NAMES "\n", optarg), 2;
        case 'h': usage(stdout); return -1;
        default: return 2;
        }
}

static int check_args(const Args *a) {
        if (!a->snapshot || !*a->snapshot)
                return fprintf(stderr, "fridge-image-writer: --snapshot=DEVICE is required: the snapshot device "
                                       "is never assumed\n"),
                       2;
        if (a->probe_threads + a->discard + a->write + a->serve != 1)
                return fprintf(stderr, "fridge-image-writer: say one of --probe-threads, --discard, --write and "
                                       "--serve\n"),
                       2;
        if (a->write && (!a->resume_device || !*a->resume_device))
                return fprintf(stderr, "fridge-image-writer: --write needs --resume-device=DEVICE\n"), 2;
        return 0;
}

/* 0 to go on, else the exit status (2: bad usage, with the reason said) */
static int parse_args(int argc, char **argv, Args *a) {
        static const struct option opts[] = {
                { "snapshot", required_argument, NULL, 's' },
                { "probe-threads", no_argument, NULL, 'p' },
                { "discard", no_argument, NULL, 'd' },
                { "write", no_argument, NULL, 'w' },
                { "serve", no_argument, NULL, 'S' },
                { "listen", required_argument, NULL, 'l' },
                { "sysfs", required_argument, NULL, 'y' },
                { "resume-device", required_argument, NULL, 'r' },
                { "resume-offset", required_argument, NULL, 'o' },
                { "after", required_argument, NULL, 'a' },
                { "header-kernel", required_argument, NULL, 'k' },
                { "console", required_argument, NULL, 'c' },
                { "initramfs", required_argument, NULL, 'i' },
                { "idle-exit", required_argument, NULL, 'e' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) >= 0;) {
                int r = parse_option(c, a);
                if (r != 0)
                        return r;
        }
        if (optind < argc)
                return fprintf(stderr, "fridge-image-writer: unexpected argument \"%s\"\n", argv[optind]), 2;
        return check_args(a);
}

int main(int argc, char **argv) {
        Args a = {};
        int r = parse_args(argc, argv, &a);
        if (r != 0)
                return r < 0 ? 0 : r;
        if (a.serve)
                return image_serve(&(ServeArgs) { .snapshot = a.snapshot, .listen = a.listen,
                                                  .sysfs = a.sysfs ? a.sysfs : "/sys", .console = a.console,
                                                  .initramfs = a.initramfs, .idle_exit_sec = a.idle_exit_sec });
        /* O_RDONLY: the side of the device that makes an image */
        _cleanup_close_ int fd = open(a.snapshot, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return fprintf(stderr, "fridge-image-writer: cannot open %s: %m\n", a.snapshot), 1;
        return a.probe_threads ? probe_threads(fd) : a.discard ? discard_image(fd) : write_image(fd, &a);
}
