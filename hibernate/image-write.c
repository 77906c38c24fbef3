/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-write.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/suspend_ioctls.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image-output.h"
#include "swap-signature.h"
#include "macro.h"

#define say(...) fprintf(stderr, "fridge-image-writer: " __VA_ARGS__)

/* Pages of the snapshot a block holds: 128 KiB, zstd's sweet spot (see
 * the measurement in docs/ARCHITECTURE.md) */
#define WRITER_BLOCK_PAGES 32u

/* The outcome, and why in a sentence (on stderr too) */
__attribute__((format(printf, 3, 4))) static void set_outcome(ImageWriteResult *res, ImageWriteOutcome o,
                                                              const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(res->why, sizeof(res->why), fmt, ap);
        va_end(ap);
        res->outcome = o;
        say("%s\n", res->why);
}

int image_write_header_init(FridgeImageHeader *h) {
        *h = (FridgeImageHeader) { .page_size = (uint32_t) sysconf(_SC_PAGESIZE), .block_pages = WRITER_BLOCK_PAGES,
                                   .compressor = FRIDGE_IMAGE_COMPRESSOR, .level = FRIDGE_IMAGE_LEVEL };
        if (fridge_image_header_set_kernel(h) < 0 || getrandom(&h->image_id, sizeof(h->image_id), 0) < 0)
                return say("uname or getrandom failed: %m\n"), -1;
        return 0;
}

void image_write_release(int fd, bool swap_pages) {
        if (swap_pages && ioctl(fd, SNAPSHOT_FREE_SWAP_PAGES) < 0)
                say("SNAPSHOT_FREE_SWAP_PAGES failed: %m\n");
        if (ioctl(fd, SNAPSHOT_FREE) < 0)
                say("SNAPSHOT_FREE failed: %m\n");
        if (ioctl(fd, SNAPSHOT_UNFREEZE) < 0)
                say("SNAPSHOT_UNFREEZE failed: %m\n");
}

int image_write_freeze_and_create(int fd, int *in_suspend) {
        say("freezing user space\n");
        if (ioctl(fd, SNAPSHOT_FREEZE) < 0) {
                int e = errno;
                return say("SNAPSHOT_FREEZE failed: %s\n", strerror(e)), -e;
        }
        say("making the image\n");
        if (ioctl(fd, SNAPSHOT_CREATE_IMAGE, in_suspend) < 0) {
                int e = errno;
                say("SNAPSHOT_CREATE_IMAGE failed: %s\n", strerror(e));
                if (ioctl(fd, SNAPSHOT_UNFREEZE) < 0)
                        say("SNAPSHOT_UNFREEZE failed: %m\n");
                return -e;
        }
        return 0;
}

/* The resume device, and its swap area's header as mkswap left it: no
 * image is written over anything else */
static int resume_device_open(const ImageWriteJob *j, uint32_t page_size, struct stat *st, ImageWriteResult *res) {
        int dev = open(j->resume_device, O_RDWR | O_DIRECT | O_CLOEXEC);
        if (dev < 0)
                return set_outcome(res, IMAGE_WRITE_UNAVAILABLE, "cannot open the resume device %s: %s",
                                   j->resume_device, strerror(errno)),
                       -1;
        uint8_t *page = NULL;
        FridgeSwapSig sig = { .kind = FRIDGE_SWAP_OTHER };
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        if (fstat(dev, st) < 0 || !S_ISBLK(st->st_mode))
                set_outcome(res, IMAGE_WRITE_UNAVAILABLE, "%s is not a block device", j->resume_device);
        else if (posix_memalign((void **) &page, page_size, page_size) == 0 &&
                 image_output_read_swap_header(dev, page_size, j->resume_offset, page) == 0 &&
                 fridge_swap_sig_inspect(page, page_size, &sig, err, sizeof(err)) == 0 && sig.kind != FRIDGE_SWAP_PLAIN)
                set_outcome(res, IMAGE_WRITE_UNAVAILABLE,
                            "%s at page %" PRIu64 " is not a plain swap area (signature \"%s\"): not writing an image",
                            j->resume_device, j->resume_offset, sig.found);
        else if (sig.kind != FRIDGE_SWAP_PLAIN)
                set_outcome(res, IMAGE_WRITE_UNAVAILABLE, "cannot read the swap header of %s%s%s", j->resume_device,
                            *err ? ": " : "", err);
        free(page);
        if (sig.kind != FRIDGE_SWAP_PLAIN) {
                close(dev);
                return -1;
        }
        return dev;
}

static int set_swap_area(int fd, const ImageWriteJob *j, const struct stat *st, ImageWriteResult *res) {
        struct resume_swap_area area = { .offset = (__kernel_loff_t) j->resume_offset, .dev = (__u32) st->st_rdev };
        if (ioctl(fd, SNAPSHOT_SET_SWAP_AREA, &area) < 0)
                return set_outcome(res, IMAGE_WRITE_UNAVAILABLE,
                                   "SNAPSHOT_SET_SWAP_AREA %s at page %" PRIu64 " failed: %s (%s)", j->resume_device,
                                   j->resume_offset, strerror(errno),
                                   errno == EPERM ? "no CAP_SYS_ADMIN?" : "is it an active swap area?"),
                       -1;
        return 0;
}

/* The signature written but the machine still up: take it back, so the
 * next boot does not resume an image older than the world it finds */
static void signature_withdraw(int dev, const ImageWriteJob *j, uint32_t page_size) {
        uint8_t *page = NULL;
        char err[FRIDGE_IMAGE_ERR_MAX] = "";
        if (posix_memalign((void **) &page, page_size, page_size) != 0 ||
            image_output_read_swap_header(dev, page_size, j->resume_offset, page) < 0 ||
            fridge_swap_sig_restore(page, page_size, err, sizeof(err)) < 0 ||
            pwrite(dev, page, page_size, (off_t) (j->resume_offset * page_size)) != (ssize_t) page_size ||
            fdatasync(dev) < 0)
                say("could not withdraw the signature from %s: %s\n", j->resume_device, *err ? err : strerror(errno));
        free(page);
}

/* The write's figures for the restored system, which wakes with the
 * memory of before the write: a swap page taken before the snapshot (so
 * the restored kernel still holds it and the restored writer knows which),
 * written after the image, read back there and freed with the rest. A
 * line naming the image, so a stale page is never taken for this one. */
#define FIGURES_MAGIC "FRIDGEFIG1"

static uint64_t figures_page_alloc(int fd, uint32_t page_size) {
        loff_t off = 0;
        if (ioctl(fd, SNAPSHOT_ALLOC_SWAP_PAGE, &off) < 0 || off <= 0 || off % page_size != 0)
                return say("no swap page for the write's figures: %m; the restored system will not know them\n"), 0;
        return (uint64_t) off / page_size;
}

static void figures_page_write(int dev, uint64_t page, const FridgeImageHeader *h, const ImageFigures *f) {
        uint8_t *buf = NULL;
        if (page == 0 || posix_memalign((void **) &buf, h->page_size, h->page_size) != 0)
                return;
        memset(buf, 0, h->page_size);
        snprintf((char *) buf, h->page_size,
                 FIGURES_MAGIC " id=%" PRIu64 " raw=%" PRIu64 " written=%" PRIu64 " blocks=%" PRIu64 " threads=%u"
                               " usec=%" PRIu64 "\n",
                 h->image_id, f->raw_bytes, f->compressed_bytes, f->blocks, f->threads, f->usec);
        if (pwrite(dev, buf, h->page_size, (off_t) (page * h->page_size)) != (ssize_t) h->page_size || fdatasync(dev) < 0)
                say("could not write the figures' page: %m\n");
        free(buf);
}

static void figures_page_read(int dev, uint64_t page, const FridgeImageHeader *h, ImageFigures *f) {
        uint8_t *buf = NULL;
        uint64_t id = 0;
        ImageFigures got = {};
        if (page == 0 || posix_memalign((void **) &buf, h->page_size, h->page_size) != 0)
                return;
        buf[0] = 0;
        if (pread(dev, buf, h->page_size, (off_t) (page * h->page_size)) == (ssize_t) h->page_size) {
                buf[h->page_size - 1] = 0;
                if (sscanf((char *) buf,
                           FIGURES_MAGIC " id=%" SCNu64 " raw=%" SCNu64 " written=%" SCNu64 " blocks=%" SCNu64
                                         " threads=%u usec=%" SCNu64,
                           &id, &got.raw_bytes, &got.compressed_bytes, &got.blocks, &got.threads, &got.usec) == 6 &&
                    id == h->image_id)
                        *f = got;
                else
                        say("the figures' page does not hold this image's figures\n");
        }
        free(buf);
}

/* Off or reboot: returns only when that failed. No sync(): the image, its
 * signature and the figures' page are fdatasync'd on the device already,
 * and with user space frozen the writeback workqueue is frozen too, so a
 * sync() that reaches a disk file system (ext4's sync_inodes_sb) waits on
 * it for ever and the machine never powers off (the system tier's
 * hibernate-initramfs, ext4 root); nor may anything reach the file systems
 * after the snapshot: the restored system's view of them is the image's. */
static void power_down(ImageAfter after) {
        say("image written; %s\n", after == IMAGE_AFTER_REBOOT ? "rebooting" : "powering off");
        reboot(after == IMAGE_AFTER_REBOOT ? RB_AUTOBOOT : RB_POWER_OFF);
}

/* platform: before the snapshot, as the kernel's own writer decides it
 * then (hibernation_snapshot() prepares the platform with it). Refused, the
 * image is a shutdown mode's, and its header says so. */
static void platform_prepare(int fd, const ImageWriteJob *j, FridgeImageHeader *h) {
        if (j->after != IMAGE_AFTER_PLATFORM)
                return;
        if (ioctl(fd, SNAPSHOT_PLATFORM_SUPPORT, 1) < 0)
                return (void) say("SNAPSHOT_PLATFORM_SUPPORT failed: %m; the image will end in a plain power-off\n");
        h->flags |= FRIDGE_IMAGE_FLAG_PLATFORM;
}

/* The platform's hibernation state (ACPI S4: the firmware knows the machine
 * hibernated, wake devices stay armed). Returns -EAGAIN when a wakeup event
 * stopped it (the kernel's own writer then rolls back and runs on); 0 when
 * the platform could not take it: the caller powers off, as the kernel does. */
static int platform_enter(int fd, const FridgeImageHeader *h) {
        if (!(h->flags & FRIDGE_IMAGE_FLAG_PLATFORM))
                return 0;
        say("image written; entering the platform's hibernation state\n");
        /* no sync(): see power_down() */
        int r = ioctl(fd, SNAPSHOT_POWER_OFF) < 0 ? -errno : 0;
        if (r == -EAGAIN || r == -EBUSY)
                return -EAGAIN;
        say("the platform's hibernation state was not entered (SNAPSHOT_POWER_OFF: %s): a plain power-off instead\n",
            r < 0 ? strerror(-r) : "returned");
        return 0;
}

/* The image written; then what the mode says */
static void write_then(int fd, int dev, const ImageWriteJob *j, const FridgeImageHeader *h, ImageWriteResult *res) {
        switch (j->after) {
        case IMAGE_AFTER_UNFREEZE:
                say("image written; unfreezing (--after=unfreeze)\n");
                image_write_release(fd, true);
                res->outcome = IMAGE_WRITE_UNFROZEN;
                return;
        case IMAGE_AFTER_SUSPEND:
                say("image written; suspending to RAM\n");
                if (ioctl(fd, SNAPSHOT_S2RAM) < 0)
                        set_outcome(res, IMAGE_WRITE_FAILED, "SNAPSHOT_S2RAM failed: %s; image withdrawn",
                                    strerror(errno));
                else
                        res->outcome = IMAGE_WRITE_RESUMED; /* woken: the memory was never lost */
                break;
        default:
                if (j->after == IMAGE_AFTER_PLATFORM && platform_enter(fd, h) < 0) {
                        set_outcome(res, IMAGE_WRITE_FAILED, "a wakeup event stopped the entry to the platform's "
                                    "hibernation state; image withdrawn, the system runs on");
                        break;
                }
                power_down(j->after);
                set_outcome(res, IMAGE_WRITE_FAILED, "%s failed: %s; image withdrawn",
                            j->after == IMAGE_AFTER_REBOOT ? "reboot" : "power-off", strerror(errno));
        }
        signature_withdraw(dev, j, h->page_size);
        image_write_release(fd, true);
}

/* After SNAPSHOT_CREATE_IMAGE: in the restored system, say so; in the
 * one that made the image, write it */
static void write_created(int fd, int dev, const ImageWriteJob *j, FridgeImageHeader *h, int in_suspend,
                          uint64_t figures_page, ImageWriteResult *res) {
        if (in_suspend == 0) {
                figures_page_read(dev, figures_page, h, &res->figures);
                image_write_release(fd, true);
                res->outcome = IMAGE_WRITE_RESUMED;
                return;
        }
        if (j->console && image_console_peer_cancelled(j->console)) {
                image_write_release(fd, true);
                return set_outcome(res, IMAGE_WRITE_CANCELLED, "%s before the write began",
                                   image_console_abort_reason(j->console));
        }
        ImageOutput out;
        int r = image_output_init(&out, dev, fd, h->page_size, j->resume_offset);
        if (r == 0) {
                say("writing the image to %s\n", j->resume_device);
                r = image_pipeline_run(fd, h, &out, j->console, &res->figures);
                image_output_done(&out);
        }
        if (r < 0) {
                image_write_release(fd, true);
                if (r == -ECANCELED)
                        return set_outcome(res, IMAGE_WRITE_CANCELLED, "%s; no image, unfrozen",
                                           image_console_abort_reason(j->console));
                return set_outcome(res, IMAGE_WRITE_FAILED, "the image was not written (%s); no signature on %s",
                                   strerror(-r), j->resume_device);
        }
        const ImageFigures *f = &res->figures;
        say("wrote %" PRIu64 " MiB of image as %" PRIu64 " MiB in %" PRIu64 " ms (%u threads)\n", f->raw_bytes >> 20,
            f->compressed_bytes >> 20, f->usec / 1000, f->threads);
        figures_page_write(dev, figures_page, h, f);
        write_then(fd, dev, j, h, res);
}

void image_write_run(int fd, const ImageWriteJob *j, ImageWriteResult *res) {
        FridgeImageHeader h;
        struct stat st;
        *res = (ImageWriteResult) { .outcome = IMAGE_WRITE_UNAVAILABLE };
        if (image_write_header_init(&h) < 0)
                return set_outcome(res, IMAGE_WRITE_UNAVAILABLE, "uname or getrandom failed");
        if (j->header_kernel)
                snprintf(h.kernel_release, sizeof(h.kernel_release), "%s", j->header_kernel);
        _cleanup_close_ int dev = resume_device_open(j, h.page_size, &st, res);
        if (dev < 0)
                return;
        /* the pages' device, checked before anything is frozen */
        if (set_swap_area(fd, j, &st, res) < 0)
                return;
        if (j->console && image_console_peer_cancelled(j->console))
                return set_outcome(res, IMAGE_WRITE_CANCELLED, "%s before the freeze",
                                   image_console_abort_reason(j->console));
        /* a compositor gives its VT up only while it runs */
        if (j->console)
                image_console_show(j->console);
        uint64_t figures_page = figures_page_alloc(fd, h.page_size);
        platform_prepare(fd, j, &h);
        int in_suspend = -1, r = image_write_freeze_and_create(fd, &in_suspend);
        if (r < 0) {
                if (ioctl(fd, SNAPSHOT_FREE_SWAP_PAGES) < 0)
                        say("SNAPSHOT_FREE_SWAP_PAGES failed: %m\n");
                return set_outcome(res, IMAGE_WRITE_FAILED, "the snapshot could not be made (%s); unfrozen",
                                   strerror(-r));
        }
        write_created(fd, dev, j, &h, in_suspend, figures_page, res);
}
