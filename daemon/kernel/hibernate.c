/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "hibernate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "power.h"
#include "util.h"

HibernateTarget *hibernate_target_free(HibernateTarget *t) {
        if (!t)
                return NULL;
        g_free(t->reason);
        g_free(t->device);
        g_free(t->set_resume);
        g_free(t->warning);
        g_free(t);
        return NULL;
}

const char *hibernate_encryption_to_string(HibernateEncryption e) {
        static const char *const names[] = {
                [HIBERNATE_ENCRYPTION_UNKNOWN] = "unknown",
                [HIBERNATE_ENCRYPTION_NO] = "no",
                [HIBERNATE_ENCRYPTION_YES] = "yes",
        };
        return names[e];
}

/* Deeper than any real stack (LVM on LUKS on a partition on RAID is 4) */
#define CRYPT_DEPTH_MAX 16

static HibernateEncryption encryption_of(int dev_fd, unsigned depth);

/* What the devices in slaves/ rest on: the weakest of them (an LVM volume
 * spanning a plain disk and a LUKS one has pages on the plain one); no
 * slaves: NO */
static HibernateEncryption encryption_of_slaves(int dev_fd, unsigned depth) {
        DIR *d = opendir_at(dev_fd, "slaves");
        if (!d)
                return errno == ENOENT ? HIBERNATE_ENCRYPTION_NO : HIBERNATE_ENCRYPTION_UNKNOWN;
        HibernateEncryption all = HIBERNATE_ENCRYPTION_YES;
        unsigned n = 0;
        struct dirent *de;
        while (all != HIBERNATE_ENCRYPTION_NO && (de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                _cleanup_close_ int fd = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
                HibernateEncryption e = fd < 0 ? HIBERNATE_ENCRYPTION_UNKNOWN : encryption_of(fd, depth + 1);
                if (e < all)
                        all = e;
                n++;
        }
        closedir(d);
        return n == 0 ? HIBERNATE_ENCRYPTION_NO : all;
}

/* A block device's sysfs directory: dm-crypt itself (dm/uuid "CRYPT-…", as
 * cryptsetup names its mappings), or what it rests on: its slaves, and for
 * a partition its disk (the parent directory) */
static HibernateEncryption encryption_of(int dev_fd, unsigned depth) {
        if (depth > CRYPT_DEPTH_MAX)
                return HIBERNATE_ENCRYPTION_UNKNOWN;
        g_autofree char *uuid = NULL;
        int r = read_file_at(dev_fd, "dm/uuid", &uuid);
        if (r >= 0 && g_str_has_prefix(uuid, "CRYPT-"))
                return HIBERNATE_ENCRYPTION_YES;
        if (r < 0 && r != -ENOENT)
                return HIBERNATE_ENCRYPTION_UNKNOWN;
        if (faccessat(dev_fd, "partition", F_OK, 0) == 0) {
                _cleanup_close_ int disk = openat(dev_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                return disk < 0 ? HIBERNATE_ENCRYPTION_UNKNOWN : encryption_of(disk, depth + 1);
        }
        return encryption_of_slaves(dev_fd, depth);
}

HibernateEncryption hibernate_device_encryption(int sysfs_fd, unsigned major, unsigned minor) {
        g_autofree char *path = g_strdup_printf("sys/dev/block/%u:%u", major, minor);
        _cleanup_close_ int fd = openat(sysfs_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                log_debug("Cannot open /%s: %s", path, errno_text(-errno));
                return HIBERNATE_ENCRYPTION_UNKNOWN;
        }
        return encryption_of(fd, 0);
}

static HibernateTarget *not_ready(HibernateTarget *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static HibernateTarget *not_ready(HibernateTarget *t, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        g_free(t->reason);
        t->reason = g_strdup_vprintf(fmt, ap);
        va_end(ap);
        return t;
}

/* The device a swap entry hibernates to: a partition is itself; a file lives
 * on the device holding its file system (and needs resume_offset too). */
static int swap_devnum(const SwapEntry *s, dev_t *ret) {
        struct stat st;
        if (stat(s->path, &st) < 0)
                return -errno;
        if (s->is_partition && !S_ISBLK(st.st_mode))
                return -ENOTBLK;
        *ret = s->is_partition ? st.st_rdev : st.st_dev;
        return 0;
}

static const SwapEntry *swap_on(GPtrArray *swaps, dev_t dev, bool partitions_only) {
        for (guint i = 0; i < swaps->len; i++) {
                const SwapEntry *s = swaps->pdata[i];
                dev_t d = 0;
                if ((s->is_partition || !partitions_only) && swap_devnum(s, &d) >= 0 && d == dev)
                        return s;
        }
        return NULL;
}

/* ResumeDevice= as "MAJ:MIN" or the path of a block device */
static int resolve_device(const char *spec, dev_t *ret) {
        unsigned ma, mi;
        if (parse_devnum(spec, &ma, &mi) >= 0) {
                *ret = makedev(ma, mi);
                return 0;
        }
        struct stat st;
        if (stat(spec, &st) < 0)
                return -errno;
        if (!S_ISBLK(st.st_mode))
                return -ENOTBLK;
        *ret = st.st_rdev;
        return 0;
}

static int read_swaps(int proc_fd, GPtrArray **ret) {
        g_autofree char *text = NULL;
        int r = read_file_at(proc_fd, "swaps", &text);
        return r < 0 ? r : parse_swaps(text, ret);
}

static int read_resume(int sysfs_fd, dev_t *ret) {
        unsigned ma, mi;
        int r = read_parsed_at(sysfs_fd, POWER_RESUME, parse_devnum, &ma, &mi);
        if (r >= 0)
                *ret = makedev(ma, mi);
        return r;
}

/* The swap the image goes to: the configured one, else the one resume
 * names, else the only partition there is. */
static const SwapEntry *choose_swap(HibernateTarget *t, GPtrArray *swaps, dev_t resume, const char *configured) {
        if (configured) {
                dev_t want = 0;
                int r = resolve_device(configured, &want);
                if (r < 0) {
                        not_ready(t, "ResumeDevice=%s is not a block device: %s", configured, errno_text(r));
                        return NULL;
                }
                const SwapEntry *s = swap_on(swaps, want, true);
                if (!s)
                        not_ready(t, "ResumeDevice=%s is not an active swap partition (see /proc/swaps)", configured);
                return s;
        }
        if (resume != makedev(0, 0)) {
                const SwapEntry *s = swap_on(swaps, resume, false);
                if (!s)
                        not_ready(t, "/" POWER_RESUME " names %u:%u, which is not an active swap device",
                                  major(resume), minor(resume));
                return s;
        }

        const SwapEntry *only = NULL;
        unsigned partitions = 0;
        for (guint i = 0; i < swaps->len; i++)
                if (((SwapEntry *) swaps->pdata[i])->is_partition && partitions++ == 0)
                        only = swaps->pdata[i];
        if (partitions == 1)
                return only;
        if (partitions == 0)
                not_ready(t, "/" POWER_RESUME " is not set and the only swap is a file (%s), which needs resume "
                          "and resume_offset set at boot", ((SwapEntry *) swaps->pdata[0])->path);
        else
                not_ready(t, "/" POWER_RESUME " is not set and there are %u swap partitions to choose from; "
                          "name one with ResumeDevice= in fridge.conf", partitions);
        return NULL;
}

/* systemd's rule too: the image is about the anonymous memory (page cache
 * is dropped or written back rather than saved) */
static int expected_image_kib(int proc_fd, uint64_t *ret) {
        g_autofree char *text = NULL;
        uint64_t active, inactive;
        int r = read_file_at(proc_fd, "meminfo", &text);
        if (r < 0)
                return r;
        if ((r = parse_meminfo_kib(text, "Active(anon)", &active)) < 0 ||
            (r = parse_meminfo_kib(text, "Inactive(anon)", &inactive)) < 0)
                return r;
        *ret = active + inactive;
        return 0;
}

static void check_size(HibernateTarget *t, int proc_fd, const SwapEntry *s) {
        t->free_kib = s->size_kib - s->used_kib;
        int r = expected_image_kib(proc_fd, &t->need_kib);
        if (r < 0)
                not_ready(t, "cannot estimate the image size from /proc/meminfo (Active(anon), Inactive(anon)): %s",
                          errno_text(r));
        else if (t->need_kib > t->free_kib)
                not_ready(t, "swap %s has %" G_GUINT64_FORMAT " MiB free, but the image needs about %" G_GUINT64_FORMAT
                          " MiB (the anonymous memory)", s->path, t->free_kib / 1024, (t->need_kib + 1023) / 1024);
}

struct HibernateChoice {
        char *key;              /* what the choice was made from: choice_key() */
        char *device;           /* the chosen swap's path; NULL: none */
        char *reason;           /* why none */
        HibernateEncryption encrypted; /* the chosen swap's device's */
};

HibernateChoice *hibernate_choice_free(HibernateChoice *c) {
        if (!c)
                return NULL;
        g_free(c->key);
        g_free(c->device);
        g_free(c->reason);
        g_free(c);
        return NULL;
}

/* Everything choose_swap() reads but the swaps' sizes, which move */
static char *choice_key(GPtrArray *swaps, dev_t resume, const char *configured) {
        GString *k = g_string_new(NULL);
        g_string_append_printf(k, "%u:%u\n%s\n", major(resume), minor(resume), configured ? configured : "");
        for (guint i = 0; i < swaps->len; i++) {
                const SwapEntry *s = swaps->pdata[i];
                g_string_append_printf(k, "%s\t%d\n", s->path, s->is_partition);
        }
        return g_string_free(k, FALSE);
}

static const SwapEntry *swap_named(GPtrArray *swaps, const char *path) {
        for (guint i = 0; i < swaps->len; i++)
                if (g_str_equal(((SwapEntry *) swaps->pdata[i])->path, path))
                        return swaps->pdata[i];
        return NULL;
}

/* The device the image of swap `s` lands on, for the notice */
static HibernateEncryption swap_encryption(int sysfs_fd, const SwapEntry *s) {
        dev_t d = 0;
        if (swap_devnum(s, &d) < 0)
                return HIBERNATE_ENCRYPTION_UNKNOWN;
        HibernateEncryption e = hibernate_device_encryption(sysfs_fd, major(d), minor(d));
        log_debug("Hibernation pre-flight: %s on %u:%u, encrypted: %s", s->path, major(d), minor(d),
                  hibernate_encryption_to_string(e));
        return e;
}

/* choose_swap() and swap_encryption(), or the choice kept in *cache when
 * nothing it depends on has moved since */
static const SwapEntry *choose_swap_cached(HibernateTarget *t, int sysfs_fd, GPtrArray *swaps, dev_t resume,
                                           const char *configured, HibernateChoice **cache) {
        g_autofree char *key = choice_key(swaps, resume, configured);
        HibernateChoice *c = cache ? *cache : NULL;
        if (c && g_str_equal(c->key, key)) {
                if (c->reason)
                        not_ready(t, "%s", c->reason);
                t->encrypted = c->encrypted;
                return c->device ? swap_named(swaps, c->device) : NULL;
        }
        log_debug("Hibernation pre-flight: choosing the swap afresh");
        const SwapEntry *s = choose_swap(t, swaps, resume, configured);
        t->encrypted = s ? swap_encryption(sysfs_fd, s) : HIBERNATE_ENCRYPTION_UNKNOWN;
        if (cache) {
                hibernate_choice_free(*cache);
                *cache = g_new0(HibernateChoice, 1);
                **cache = (HibernateChoice) { .key = g_steal_pointer(&key), .device = s ? g_strdup(s->path) : NULL,
                                              .reason = g_strdup(t->reason), .encrypted = t->encrypted };
        }
        return s;
}

/* The notice for a plain resume device: hibernation goes ahead */
static char *plain_warning(const SwapEntry *s) {
        return g_strdup_printf("the resume device %s%s is not encrypted: a plain copy of memory (keys, passwords, "
                               "open documents) will be written to it", s->is_partition ? "" : "holding ", s->path);
}

static HibernateTarget *target_copy(const HibernateTarget *t) {
        HibernateTarget *n = g_memdup2(t, sizeof(*t));
        n->reason = g_strdup(t->reason);
        n->device = g_strdup(t->device);
        n->set_resume = g_strdup(t->set_resume);
        n->warning = g_strdup(t->warning);
        return n;
}

void hibernate_cache_clear(HibernateCache *c) {
        c->choice = hibernate_choice_free(c->choice);
        c->last = hibernate_target_free(c->last);
        c->call = 0;
}

static HibernateTarget *check(int sysfs_fd, int proc_fd, const char *resume_device, HibernateChoice **cache) {
        g_autoptr(HibernateTarget) t = g_new0(HibernateTarget, 1);
        g_autoptr(GPtrArray) swaps = NULL;
        dev_t resume = 0;

        log_debug("Hibernation pre-flight");
        int r = read_resume(sysfs_fd, &resume);
        if (r < 0)
                return not_ready(g_steal_pointer(&t), "/" POWER_RESUME " is missing or malformed (%s)", errno_text(r));
        if ((r = read_swaps(proc_fd, &swaps)) < 0)
                return not_ready(g_steal_pointer(&t), "cannot read /proc/swaps: %s", errno_text(r));
        if (swaps->len == 0)
                return not_ready(g_steal_pointer(&t), "no swap space is active (/proc/swaps lists none) to write "
                                 "the image to");

        const SwapEntry *s = choose_swap_cached(t, sysfs_fd, swaps, resume, resume_device, cache);
        if (!s)
                return g_steal_pointer(&t);
        t->device = g_strdup(s->path);
        if (t->encrypted == HIBERNATE_ENCRYPTION_NO)
                t->warning = plain_warning(s);
        check_size(t, proc_fd, s);
        dev_t d = 0;
        if (!t->reason && s->is_partition && swap_devnum(s, &d) >= 0 && d != resume)
                t->set_resume = g_strdup_printf("%u:%u", major(d), minor(d));
        return g_steal_pointer(&t);
}

HibernateTarget *hibernate_check(int sysfs_fd, int proc_fd, const char *resume_device, HibernateCache *cache,
                                 uint64_t call) {
        if (!cache)
                return check(sysfs_fd, proc_fd, resume_device, NULL);
        if (call == 0 || call != cache->call || !cache->last) {
                hibernate_target_free(cache->last);
                cache->last = check(sysfs_fd, proc_fd, resume_device, &cache->choice);
                cache->call = call;
        }
        return target_copy(cache->last);
}
