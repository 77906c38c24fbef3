/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge-resume: the next boot's half of fridge's hibernation (issue 17),
 * run early (the initramfs), once the resume device is there. It looks
 * for fridge's signature in the swap area's header page; finding one, it
 * checks what can be checked before /dev/snapshot is touched: the image
 * header, the kernel's identity (uname -r and -v) and the map. Then it
 * gives the swap area back mkswap's signature and syncs it, so that a
 * restore that fails can never be tried again at the next boot; then it
 * loads the image through /dev/snapshot (opened for writing: the restore
 * side) in one pass over the device, as the kernel's own resume does:
 * each block's checksum (of its compressed bytes) is checked before the
 * block is decompressed and its pages handed to the kernel, and the
 * restore is asked for only once every block has passed. A block that
 * fails stops the load; SNAPSHOT_FREE gives back what the kernel took of
 * the image, and the system boots on. On success this process ends inside
 * the kernel and the hibernated system runs on.
 *
 * A damaged, partial or foreign image is refused with a console line
 * naming the problem (after the one that starts the load, once it began),
 * the swap signature is restored, and the exit status says the boot
 * continues:
 *   0  no fridge image on the device: nothing written (--verify-only: it
 *      verified); silent on mkswap's page, one line on another signature
 *      (the kernel's own image: its resume takes it, whichever runs first)
 *   1  an image refused or not restored; the swap area is plain again
 *   2  bad usage
 *   3  --device=UUID=... or LABEL=...: no block device has a swap area
 *      with that UUID or label (not there yet, or not a swap area's)
 * --discard (the boot script under noresume) loads nothing: a fridge image
 * is dropped unread, mkswap's signature written back in its place, one
 * line says so, and the status is 0; 1 only if the signature could not be
 * restored. An image the user chose not to resume must never be resumed
 * at a later boot, when memory and disks have moved on without it.
 * Plain C, no GLib: it runs in the initramfs. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <linux/suspend_ioctls.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "image-format.h"
#include "image-map.h"
#include "macro.h"
#include "swap-signature.h"

enum { EXIT_NOTHING = 0, EXIT_REFUSED = 1, EXIT_USAGE = 2, EXIT_NO_DEVICE = 3 };

/* Pages read from the device in one go at most, when the map has them in a row */
#define CHUNK_PAGES 64u

#define say(...) fprintf(stderr, "fridge-resume: " __VA_ARGS__)

typedef struct Args {
        const char *device, *snapshot;
        uint64_t offset;
        bool verify_only, discard;
} Args;

typedef struct Device {
        int fd;
        const char *name;
        uint32_t page_size;
        uint64_t pages;        /* the device's size */
        uint64_t swap_offset;  /* page of the swap header */
} Device;

static int read_page(uint64_t page, uint8_t *buf, void *userdata) {
        Device *d = userdata;
        ssize_t n = pread(d->fd, buf, d->page_size, (off_t) (page * d->page_size));
        return n == (ssize_t) d->page_size ? 0 : n < 0 ? -errno : -EIO;
}

static int device_open(Device *d, const Args *a) {
        *d = (Device) { .name = a->device, .page_size = (uint32_t) sysconf(_SC_PAGESIZE), .swap_offset = a->offset };
        d->fd = open(a->device, (a->verify_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
        struct stat st;
        uint64_t size = 0;
        if (d->fd < 0 || fstat(d->fd, &st) < 0)
                return say("cannot open %s: %m; boot continues\n", a->device), -1;
        if (S_ISBLK(st.st_mode) ? ioctl(d->fd, BLKGETSIZE64, &size) < 0 : (size = (uint64_t) st.st_size, false))
                return say("cannot size %s: %m; boot continues\n", a->device), -1;
        d->pages = size / d->page_size;
        if (d->swap_offset >= d->pages)
                return say("--offset=%" PRIu64 " is past the end of %s; boot continues\n", a->offset, a->device), -1;
        return 0;
}

/* mkswap's signature back, synced before anything is loaded */
static int signature_restore(Device *d, uint8_t *page) {
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        int r = fridge_swap_sig_restore(page, d->page_size, err, sizeof(err));
        if (r < 0)
                return say("%s\n", err), r;
        if (pwrite(d->fd, page, d->page_size, (off_t) (d->swap_offset * d->page_size)) != (ssize_t) d->page_size ||
            fsync(d->fd) < 0)
                return say("cannot restore the swap signature on %s: %m\n", d->name), -EIO;
        return 0;
}

/* The image's stream, page by page through the map */
typedef struct Source {
        Device *d;
        const uint64_t *map;
        uint64_t count, next;  /* pages of the stream, the next to read */
        uint64_t left;         /* bytes of the stream not yet read */
        uint8_t *chunk;
        size_t len, pos;
        bool uncached;         /* each chunk dropped from the page cache once read */
} Source;

static ssize_t source_read(uint8_t *buf, size_t len, void *userdata) {
        Source *s = userdata;
        if (s->pos == s->len) {
                if (s->next == s->count)
                        return 0;
                uint64_t run = 1;
                while (run < CHUNK_PAGES && s->next + run < s->count && s->map[s->next + run] == s->map[s->next] + run)
                        run++;
                ssize_t n = pread(s->d->fd, s->chunk, run * s->d->page_size,
                                  (off_t) (s->map[s->next] * s->d->page_size));
                if (n != (ssize_t) (run * s->d->page_size))
                        return n < 0 ? -errno : -EIO;
                if (s->uncached)
                        (void) posix_fadvise(s->d->fd, (off_t) (s->map[s->next] * s->d->page_size), n,
                                             POSIX_FADV_DONTNEED);
                s->len = run * s->d->page_size < s->left ? run * s->d->page_size : s->left;
                s->left -= s->len;
                s->pos = 0;
                s->next += run;
        }
        size_t n = s->len - s->pos < len ? s->len - s->pos : len;
        memcpy(buf, s->chunk + s->pos, n);
        s->pos += n;
        return (ssize_t) n;
}

/* Every block of the image, checked; with page_cb, decompressed and handed
 * to it, and what was read dropped from the page cache (readahead past a
 * run of the map may stay): the kernel fills memory for the image with
 * GFP_ATOMIC allocations, which reclaim nothing */
static int stream_pass(Device *d, const FridgeImageHeader *h, const uint64_t *map, FridgeImagePagesCb page_cb,
                       void *userdata, char *err) {
        Source s = { .d = d, .map = map, .count = fridge_image_map_entries(h), .left = h->compressed_bytes,
                     .uncached = page_cb != NULL };
        s.chunk = malloc((size_t) CHUNK_PAGES * d->page_size);
        if (!s.chunk)
                return snprintf(err, FRIDGE_IMAGE_ERR_MAX, "out of memory"), -ENOMEM;
        int r = page_cb ? fridge_image_stream_read(h, source_read, &s, page_cb, userdata, err, FRIDGE_IMAGE_ERR_MAX)
                        : fridge_image_stream_check(h, source_read, &s, err, FRIDGE_IMAGE_ERR_MAX);
        free(s.chunk);
        return r;
}

/* The header the signature points at, from the running kernel, with its map */
static int image_open(Device *d, uint64_t header_offset, FridgeImageHeader *h, uint64_t **map, char *err) {
        _cleanup_free_ uint8_t *page = malloc(d->page_size);
        struct utsname u;
        if (!page || uname(&u) < 0)
                return snprintf(err, FRIDGE_IMAGE_ERR_MAX, "out of memory or no uname"), -ENOMEM;
        if (header_offset % d->page_size != 0 || header_offset / d->page_size >= d->pages)
                return snprintf(err, FRIDGE_IMAGE_ERR_MAX, "the image header's offset %" PRIu64
                                " is not a page of the device", header_offset), -EBADMSG;
        int r = read_page(header_offset / d->page_size, page, d);
        if (r < 0)
                return snprintf(err, FRIDGE_IMAGE_ERR_MAX, "reading the image header: %s", strerror(-r)), r;
        if ((r = fridge_image_header_decode(page, d->page_size, h, err, FRIDGE_IMAGE_ERR_MAX)) < 0 ||
            (r = fridge_image_header_check_kernel(h, u.release, u.version, err, FRIDGE_IMAGE_ERR_MAX)) < 0)
                return r;
        if (h->page_size != d->page_size)
                return snprintf(err, FRIDGE_IMAGE_ERR_MAX, "the image has pages of %u bytes, this system %u",
                                h->page_size, d->page_size), -EPROTO;
        return fridge_image_map_load(h, d->pages, read_page, d, map, err, FRIDGE_IMAGE_ERR_MAX);
}

static int snapshot_write_pages(const uint8_t *pages, size_t len, void *userdata) {
        int fd = *(int *) userdata;
        while (len > 0) {
                ssize_t n = write(fd, pages, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                pages += n, len -= (size_t) n;
        }
        return 0;
}

/* Loads the image, each block checked before the kernel takes its pages,
 * and jumps into it; returns only on failure */
static int image_load(Device *d, const Args *a, const FridgeImageHeader *h, const uint64_t *map, char *err) {
        _cleanup_close_ int fd = open(a->snapshot, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return snprintf(err, FRIDGE_IMAGE_ERR_MAX, "cannot open %s: %s", a->snapshot, strerror(errno)), -errno;
        /* frozen first, as the kernel's own resume: nothing else allocates while the image fills memory */
        if (ioctl(fd, SNAPSHOT_FREEZE) < 0)
                return snprintf(err, FRIDGE_IMAGE_ERR_MAX, "SNAPSHOT_FREEZE: %s", strerror(errno)), -errno;
        /* an image made for the platform's hibernation state is restored with the platform told, as
         * the kernel restores its own (hibernation_restore(platform_mode)) */
        if ((h->flags & FRIDGE_IMAGE_FLAG_PLATFORM) && ioctl(fd, SNAPSHOT_PLATFORM_SUPPORT, 1) < 0)
                say("SNAPSHOT_PLATFORM_SUPPORT: %m; restoring without the platform\n");
        say("loading the image (%" PRIu64 " MiB%s), each block checked as it is read\n",
            (h->image_pages * h->page_size) >> 20, h->flags & FRIDGE_IMAGE_FLAG_PLATFORM ? ", platform mode" : "");
        *err = 0;
        int r = stream_pass(d, h, map, snapshot_write_pages, &fd, err);
        if (r < 0 && !*err) /* the kernel's refusal: page_cb says nothing */
                snprintf(err, FRIDGE_IMAGE_ERR_MAX, "%s did not take the image: %s", a->snapshot, strerror(-r));
        if (r == 0 && ioctl(fd, SNAPSHOT_ATOMIC_RESTORE) < 0) {
                r = -errno;
                snprintf(err, FRIDGE_IMAGE_ERR_MAX, "SNAPSHOT_ATOMIC_RESTORE: %s", strerror(errno));
        }
        /* What the kernel took of the image freed before the unfreeze: SNAPSHOT_UNFREEZE drops the
         * bitmaps that say which pages are the image's, and the close would free none of them */
        if (ioctl(fd, SNAPSHOT_FREE) < 0)
                say("SNAPSHOT_FREE: %m\n");
        if (ioctl(fd, SNAPSHOT_UNFREEZE) < 0)
                say("SNAPSHOT_UNFREEZE: %m\n");
        return r < 0 ? r : -EIO;
}

/* A fridge image on the device: its header and map checked, the signature
 * restored, then loaded block by block (--verify-only: every block checked) */
static int resume_image(Device *d, const Args *a, uint8_t *swap_page, uint64_t header_offset) {
        FridgeImageHeader h;
        _cleanup_free_ uint64_t *map = NULL;
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        int r = image_open(d, header_offset, &h, &map, err);
        if (r == 0 && a->verify_only)
                r = stream_pass(d, &h, map, NULL, NULL, err);
        if (r == 0 && a->verify_only) {
                printf("verified=1\npages=%" PRIu64 "\nblocks=%" PRIu64 "\ncompressed_bytes=%" PRIu64
                       "\nmap_offset=%" PRIu64 "\nfirst_page=%" PRIu64 "\nlast_page=%" PRIu64 "\n",
                       h.image_pages, h.block_count, h.compressed_bytes, h.map_offset, map[0],
                       map[fridge_image_map_entries(&h) - 1]);
                return EXIT_NOTHING;
        }
        if (r < 0 && a->verify_only)
                return say("image on %s refused: %s\n", d->name, err), EXIT_REFUSED;
        if (signature_restore(d, swap_page) < 0)
                return say("image on %s not resumed: %s; boot continues\n", d->name, r < 0 ? err : "see above"),
                       EXIT_REFUSED;
        if (r == 0)
                r = image_load(d, a, &h, map, err);
        say("image on %s refused: %s; swap signature restored, boot continues\n", d->name, err);
        return EXIT_REFUSED;
}

/* --discard: mkswap's signature back over fridge's, the image unread (noresume) */
static int discard(Device *d, uint8_t *page, const FridgeSwapSig *sig) {
        switch (sig->kind) {
        case FRIDGE_SWAP_IMAGE:
        case FRIDGE_SWAP_DAMAGED:
                if (signature_restore(d, page) < 0)
                        return say("noresume: the image on %s could not be discarded; swapon will refuse it\n",
                                   d->name), EXIT_REFUSED;
                say("noresume: the hibernation image on %s discarded unread, swap signature restored\n", d->name);
                return EXIT_NOTHING;
        case FRIDGE_SWAP_PLAIN:
                return EXIT_NOTHING;
        default: /* the kernel's image: its own noresume handles it */
                say("no fridge image on %s (signature \"%s\"): left as it is\n", d->name, sig->found);
                return EXIT_NOTHING;
        }
}

static int examine(Device *d, const Args *a) {
        int r;
        _cleanup_free_ uint8_t *page = malloc(d->page_size);
        FridgeSwapSig sig;
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        if (!page || read_page(d->swap_offset, page, d) < 0 ||
            fridge_swap_sig_inspect(page, d->page_size, &sig, err, sizeof(err)) < 0)
                return say("cannot read the swap header of %s: %s; boot continues\n", d->name,
                           *err ? err : strerror(errno)), EXIT_REFUSED;
        if (a->discard)
                return discard(d, page, &sig);
        switch (sig.kind) {
        case FRIDGE_SWAP_IMAGE:
                return resume_image(d, a, page, sig.header_offset);
        case FRIDGE_SWAP_DAMAGED:
                if (a->verify_only)
                        return say("fridge's signature on %s is damaged\n", d->name), EXIT_REFUSED;
                r = signature_restore(d, page);
                say("fridge's signature on %s is damaged: image refused; %s, boot continues\n", d->name,
                    r < 0 ? "the swap signature could not be restored" : "swap signature restored");
                return EXIT_REFUSED;
        case FRIDGE_SWAP_PLAIN: /* every boot but a resume's: nothing to say */
                if (a->verify_only)
                        say("no fridge image on %s\n", d->name);
                return a->verify_only ? EXIT_REFUSED : EXIT_NOTHING;
        default: /* the kernel's or uswsusp's image, or no swap area: not ours to touch */
                say("no fridge image on %s (signature \"%s\"): left as it is\n", d->name, sig.found);
                return a->verify_only ? EXIT_REFUSED : EXIT_NOTHING;
        }
}

/* mkswap's header page: the UUID at byte 1036, the label at 1052, 16 bytes each */
#define SWAP_UUID_AT 1036u
#define SWAP_LABEL_AT 1052u
#define SWAP_TAG_LEN 16u

/* UUID=... or LABEL=...: the 16 bytes mkswap wrote and where; -EINVAL otherwise */
static int tag_parse(const char *tag, uint8_t want[SWAP_TAG_LEN], size_t *at) {
        memset(want, 0, SWAP_TAG_LEN);
        if (strncmp(tag, "LABEL=", 6) == 0) {
                size_t n = strlen(tag + 6);
                if (n == 0 || n > SWAP_TAG_LEN)
                        return -EINVAL;
                memcpy(want, tag + 6, n);
                *at = SWAP_LABEL_AT;
                return 0;
        }
        if (strncmp(tag, "UUID=", 5) != 0)
                return -EINVAL;
        size_t n = 0;
        for (const char *c = tag + 5; *c; c++) {
                if (*c == '-')
                        continue;
                char hex[2] = { *c, 0 };
                char *end;
                unsigned long v = strtoul(hex, &end, 16);
                if (*end || n == 2 * SWAP_TAG_LEN)
                        return -EINVAL;
                want[n / 2] = (uint8_t) (want[n / 2] | (v << (n % 2 ? 0 : 4)));
                n++;
        }
        *at = SWAP_UUID_AT;
        return n == 2 * SWAP_TAG_LEN ? 0 : -EINVAL;
}

/* The block device (/dev/NAME of /sys/class/block/NAME) whose swap area
 * has that tag (RESUME=UUID=, Debian's installer's way), from mkswap's
 * header itself: the first look, needing neither udev's links nor blkid.
 * A device not there yet is initramfs-tools' to wait for (exit 3): its
 * blkid names fridge's image too, TYPE=swsuspend with the area's UUID.
 * Only swap areas count: mkswap's page or fridge's. */
static int tag_find(const char *tag, char *path, size_t len) {
        uint8_t want[SWAP_TAG_LEN];
        size_t at;
        if (tag_parse(tag, want, &at) < 0)
                return -EINVAL;
        long page_size = sysconf(_SC_PAGESIZE);
        _cleanup_free_ uint8_t *page = malloc((size_t) page_size);
        DIR *dir = opendir("/sys/class/block");
        if (!page || !dir)
                return dir ? (closedir(dir), -ENOMEM) : -errno;
        int r = -ENODEV;
        for (struct dirent *e; r < 0 && (e = readdir(dir));) {
                FridgeSwapSig sig;
                char err[FRIDGE_IMAGE_ERR_MAX];
                if (e->d_name[0] == '.' || (size_t) snprintf(path, len, "/dev/%s", e->d_name) >= len)
                        continue;
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                bool read_ok = pread(fd, page, (size_t) page_size, 0) == page_size;
                close(fd);
                if (read_ok && fridge_swap_sig_inspect(page, (size_t) page_size, &sig, err, sizeof(err)) == 0 &&
                    sig.kind != FRIDGE_SWAP_OTHER && memcmp(page + at, want, SWAP_TAG_LEN) == 0)
                        r = 0;
        }
        closedir(dir);
        return r;
}

static int run(const Args *a) {
        Device d;
        char path[PATH_MAX];
        Args found = *a;
        if (strchr(a->device, '=')) {
                int r = tag_find(a->device, path, sizeof(path));
                if (r == -EINVAL)
                        return say("--device=%s: a path, UUID=UUID or LABEL=LABEL\n", a->device), EXIT_USAGE;
                if (r < 0)
                        return say("no swap area %s on any block device: %s\n", a->device, strerror(-r)),
                               EXIT_NO_DEVICE;
                found.device = path;
                a = &found;
        }
        int r = device_open(&d, a) < 0 ? EXIT_REFUSED : examine(&d, a);
        if (d.fd >= 0)
                close(d.fd);
        return r;
}

static void usage(FILE *f) {
        fprintf(f, "Usage: fridge-resume --device=DEVICE [--offset=PAGES] --snapshot=DEVICE | --verify-only | --discard\n"
                   "  --device=DEVICE    the resume device (the swap partition, or the one holding the swap file);\n"
                   "                     UUID=UUID or LABEL=LABEL: the swap area's, found by its header\n"
                   "  --offset=PAGES     where the swap area starts on it (a swap file's resume_offset)\n"
                   "  --snapshot=DEVICE  the snapshot device (/dev/snapshot); never assumed\n"
                   "  --verify-only      verify the image and exit 0 if it would be resumed; changes nothing;\n"
                   "                     prints its figures (first_page, last_page: the device pages of the\n"
                   "                     stream's first and last page)\n"
                   "  --discard          drop the image unread and restore the swap signature (noresume)\n"
                   "Exit status: 0 nothing to resume (the boot continues), 1 an image refused or not\n"
                   "restored (swap signature restored; the boot continues), 2 bad usage, 3 no swap area\n"
                   "with that UUID or LABEL on any block device.\n"
                   "--discard: 0 discarded or nothing to discard, 1 the signature not restored.\n");
}

static int parse_args(int argc, char **argv, Args *a) {
        static const struct option opts[] = {
                { "device", required_argument, NULL, 'd' },      { "offset", required_argument, NULL, 'o' },
                { "snapshot", required_argument, NULL, 's' },    { "verify-only", no_argument, NULL, 'v' },
                { "discard", no_argument, NULL, 'D' },           { "help", no_argument, NULL, 'h' },
                {},
        };
        char *end = NULL;
        for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) >= 0;)
                switch (c) {
                case 'd': a->device = optarg; break;
                case 's': a->snapshot = optarg; break;
                case 'v': a->verify_only = true; break;
                case 'D': a->discard = true; break;
                case 'o':
                        errno = 0;
                        a->offset = strtoull(optarg, &end, 10);
                        if (errno != 0 || !*optarg || *end)
                                return say("--offset=%s is not a page count\n", optarg), EXIT_USAGE;
                        break;
                case 'h': usage(stdout); return -1;
                default: return EXIT_USAGE;
                }
        if (optind < argc)
                return say("unexpected argument \"%s\"\n", argv[optind]), EXIT_USAGE;
        if (!a->device || !*a->device)
                return say("--device=DEVICE is required\n"), EXIT_USAGE;
        if (strchr(a->device, '=') && a->offset)
                return say("--device=%s with --offset: a swap file's device is a path\n", a->device), EXIT_USAGE;
        if (a->verify_only && a->discard)
                return say("--verify-only changes nothing, --discard changes the device: not both\n"), EXIT_USAGE;
        if (!a->verify_only && !a->discard && (!a->snapshot || !*a->snapshot))
                return say("--snapshot=DEVICE is required (or --verify-only, --discard): the snapshot device is never "
                           "assumed\n"), EXIT_USAGE;
        return 0;
}

int main(int argc, char **argv) {
        Args a = {};
        int r = parse_args(argc, argv, &a);
        if (r != 0)
                return r < 0 ? 0 : r;
        return run(&a);
}
