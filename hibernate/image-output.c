/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-output.h"
#include "image-map.h"
#include "swap-signature.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/suspend_ioctls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Pages written in one go at most: 1 MiB, past which a disk gains nothing */
#define RUN_MAX 256u

#define say(...) fprintf(stderr, "fridge-image-writer: " __VA_ARGS__)

static int say_errno(int e, const char *what) {
        say("%s: %s\n", what, strerror(e));
        return -e;
}

int image_output_init(ImageOutput *o, int dev, int snap, uint32_t page_size, uint64_t swap_offset) {
        *o = (ImageOutput) { .dev = dev, .snap = snap, .page_size = page_size, .swap_offset = swap_offset };
        /* O_DIRECT wants buffers aligned to the page */
        if (posix_memalign((void **) &o->cur, page_size, page_size) != 0 ||
            posix_memalign((void **) &o->run, page_size, (size_t) (RUN_MAX + 1) * page_size) != 0)
                return say_errno(ENOMEM, "buffers for the device");
        return 0;
}

void image_output_done(ImageOutput *o) {
        free(o->cur);
        free(o->run);
        free(o->map);
        free(o->ready);
        *o = (ImageOutput) {};
}

static int pwrite_all(int fd, const uint8_t *buf, size_t len, uint64_t off) {
        while (len > 0) {
                ssize_t n = pwrite(fd, buf, len, (off_t) off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                buf += n, len -= (size_t) n, off += (uint64_t) n;
        }
        return 0;
}

/* A page the kernel hands out for the image, as a device page number */
static int alloc_page(ImageOutput *o, uint64_t *ret) {
        loff_t off = 0;
        if (ioctl(o->snap, SNAPSHOT_ALLOC_SWAP_PAGE, &off) < 0)
                return say_errno(errno, "SNAPSHOT_ALLOC_SWAP_PAGE (is the swap area big enough?)");
        if (off <= 0 || off % o->page_size != 0)
                return say_errno(EIO, "SNAPSHOT_ALLOC_SWAP_PAGE gave a page that is not one");
        *ret = (uint64_t) off / o->page_size;
        return 0;
}

int image_output_reserve(ImageOutput *o, uint64_t len) {
        uint64_t want = (o->reserved_bytes + len) / o->page_size - o->reserved_bytes / o->page_size;
        if (o->ready_pos == o->ready_len)
                o->ready_pos = o->ready_len = 0;
        if (o->ready_len + want > o->ready_cap) {
                size_t cap = o->ready_len + want;
                uint64_t *m = realloc(o->ready, cap * sizeof(*m));
                if (!m)
                        return say_errno(ENOMEM, "the pages handed out ahead");
                o->ready = m, o->ready_cap = cap;
        }
        for (uint64_t k = 0; k < want; k++) {
                int r = alloc_page(o, &o->ready[o->ready_len]);
                if (r < 0)
                        return r;
                o->ready_len++;
        }
        o->reserved_bytes += len;
        return 0;
}

/* The next page of the stream: handed out ahead, or now */
static int next_page(ImageOutput *o, uint64_t *ret) {
        if (o->ready_pos < o->ready_len) {
                *ret = o->ready[o->ready_pos++];
                return 0;
        }
        return alloc_page(o, ret);
}

static int run_flush(ImageOutput *o) {
        if (o->run_pages == 0)
                return 0;
        int r = pwrite_all(o->dev, o->run, o->run_pages * o->page_size, o->run_start * o->page_size);
        if (r < 0)
                return say_errno(-r, "writing the image to the resume device");
        o->run_pages = 0;
        return 0;
}

static int map_append(ImageOutput *o, uint64_t page) {
        if (o->map_len == o->map_cap) {
                uint64_t cap = o->map_cap ? 2 * o->map_cap : 1024;
                uint64_t *m = realloc(o->map, cap * sizeof(*m));
                if (!m)
                        return say_errno(ENOMEM, "the map");
                o->map = m, o->map_cap = cap;
        }
        o->map[o->map_len++] = page;
        return 0;
}

/* The page being filled: the slot after the run's pages, so a full page
 * joins the run where it is, copied only when the run is flushed first */
static uint8_t *filling(ImageOutput *o) {
        return o->run + o->run_pages * o->page_size;
}

/* The filling page is full: onto an allocated page, with the run when it
 * follows on */
static int page_done(ImageOutput *o) {
        uint64_t page = 0;
        uint8_t *full = filling(o);
        int r = next_page(o, &page);
        if (r == 0 && (o->run_pages == RUN_MAX || (o->run_pages > 0 && page != o->run_start + o->run_pages))) {
                r = run_flush(o);
                if (r == 0)
                        memcpy(o->run, full, o->page_size);
        }
        if (r == 0)
                r = map_append(o, page);
        if (r < 0)
                return r;
        if (o->run_pages == 0)
                o->run_start = page;
        o->run_pages++;
        o->fill = 0;
        return 0;
}

int image_output_put(ImageOutput *o, const uint8_t *data, size_t len) {
        o->bytes += len;
        while (len > 0) {
                size_t n = o->page_size - o->fill < len ? o->page_size - o->fill : len;
                memcpy(filling(o) + o->fill, data, n);
                o->fill += n, data += n, len -= n;
                if (o->fill == o->page_size) {
                        int r = page_done(o);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* The map pages, on pages of their own, h->map_offset pointing at the first */
static int write_map(ImageOutput *o, FridgeImageHeader *h) {
        uint64_t count = fridge_image_map_pages(h);
        /* the kernel's image always starts with its header page: none is a bug above */
        if (count == 0)
                return say("an image of no pages has no map\n"), -EINVAL;
        uint64_t *at = calloc(count, sizeof(uint64_t));
        uint8_t *buf = NULL;
        char err[FRIDGE_IMAGE_ERR_MAX];
        int r = at && posix_memalign((void **) &buf, o->page_size, count * o->page_size) == 0
                        ? 0 : say_errno(ENOMEM, "the map pages");
        for (uint64_t k = 0; r == 0 && k < count; k++)
                r = alloc_page(o, &at[k]);
        if (r == 0 && fridge_image_map_encode(h, o->map, at, count, buf, err, sizeof(err)) < 0)
                r = (say("%s\n", err), -EINVAL);
        for (uint64_t k = 0; r == 0 && k < count; k++)
                if ((r = pwrite_all(o->dev, buf + k * o->page_size, o->page_size, at[k] * o->page_size)) < 0)
                        say_errno(-r, "writing the map");
        if (r == 0)
                h->map_offset = at[0] * o->page_size;
        free(at);
        free(buf);
        return r;
}

int image_output_read_swap_header(int dev, uint32_t page_size, uint64_t swap_offset, uint8_t *page) {
        ssize_t n = pread(dev, page, page_size, (off_t) (swap_offset * page_size));
        if (n != (ssize_t) page_size)
                return say_errno(n < 0 ? errno : EIO, "reading the swap header");
        return 0;
}

/* The header on a page of its own, then the signature pointing at it */
static int write_header_and_signature(ImageOutput *o, const FridgeImageHeader *h) {
        uint64_t at = 0;
        char err[FRIDGE_IMAGE_ERR_MAX];
        int r = alloc_page(o, &at);
        if (r < 0)
                return r;
        memset(o->cur, 0, o->page_size);
        if (fridge_image_header_encode(h, o->cur, o->page_size, err, sizeof(err)) < 0)
                return say("%s\n", err), -EINVAL;
        if ((r = pwrite_all(o->dev, o->cur, o->page_size, at * o->page_size)) < 0)
                return say_errno(-r, "writing the image header");
        if ((r = image_output_read_swap_header(o->dev, o->page_size, o->swap_offset, o->cur)) < 0)
                return r;
        if (fridge_swap_sig_mark(o->cur, o->page_size, at * o->page_size, err, sizeof(err)) < 0)
                return say("%s\n", err), -EINVAL;
        if ((r = pwrite_all(o->dev, o->cur, o->page_size, o->swap_offset * o->page_size)) < 0)
                return say_errno(-r, "writing fridge's signature");
        return fdatasync(o->dev) < 0 ? say_errno(errno, "syncing the signature") : 0;
}

int image_output_finish(ImageOutput *o, FridgeImageHeader *h) {
        int r = 0;
        if (o->fill > 0) {
                memset(filling(o) + o->fill, 0, o->page_size - o->fill);
                o->fill = o->page_size;
                r = page_done(o);
        }
        if (r == 0)
                r = run_flush(o);
        if (r == 0 && o->map_len != fridge_image_map_entries(h))
                r = say_errno(EIO, "the stream's pages do not match the header's size");
        if (r == 0)
                r = write_map(o, h);
        /* everything the header points at is on the device before the header */
        if (r == 0 && fdatasync(o->dev) < 0)
                r = say_errno(errno, "syncing the image");
        return r;
}

int image_output_sign(ImageOutput *o, const FridgeImageHeader *h) {
        return write_header_and_signature(o, h);
}
