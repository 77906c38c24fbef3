/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The flush against the floor (issue 15 point 5): 1 GiB of dirty data on a
 * scratch ext4 on a loop device (direct I/O to its backing file, so that
 * what the loop device writes is on the disk, not in the host's cache),
 * written back by a plain sync(2) and by a dry-run cycle of fridged (its
 * flush and flush-again, the cycle's own cost included), side by side:
 * ROUNDS of each, alternating, medians and their ratio. Each round writes
 * a new file on a clean file system, and says how much was still dirty
 * when the flush began (the kernel's background writeback takes its share
 * past vm.dirty_background_*).
 *
 * Runs the real fridged on a private bus and fakesys (the real /proc, so
 * its flush sees the real mounts), through the integration harness.
 * Needs root, losetup and mkfs.ext4; exits 77 without them.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "dry-run.h"
#include "figure.h"
#include "harness.h"
#include "median.h"

#define ROUNDS 5 /* the host disk varies by tens of per cent from one round to the next */
#define DATA_MIB 1024
#define GOAL_RATIO 1.05

typedef struct Scratch {
        char *dir;              /* holds the image and the mount point */
        char *image, *mount, *loop;
        bool mounted;
} Scratch;

static int run_quiet(char **argv, char **ret_out) {
        g_autoptr(GError) e = NULL;
        int status;
        if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, ret_out,
                          NULL, &status, &e))
                return -1;
        return g_spawn_check_wait_status(status, NULL) ? 0 : -1;
}

static void scratch_free(Scratch *s) {
        if (s->mounted && umount(s->mount) < 0)
                fprintf(stderr, "umount %s: %s\n", s->mount, g_strerror(errno));
        if (s->loop) {
                char *argv[] = { (char *) "losetup", (char *) "-d", s->loop, NULL };
                (void) run_quiet(argv, NULL);
        }
        if (s->image)
                (void) g_unlink(s->image);
        if (s->mount)
                (void) g_rmdir(s->mount);
        if (s->dir)
                (void) g_rmdir(s->dir);
        g_free(s->dir);
        g_free(s->image);
        g_free(s->mount);
        g_free(s->loop);
}

/* NULL and the reason when the machine cannot have one */
static const char *scratch_make(Scratch *s) {
        if (geteuid() != 0)
                return "not root (a loop device and a mount are needed)";
        s->dir = g_dir_make_tmp("fridge-bench-flush-XXXXXX", NULL);
        if (!s->dir)
                return "no temporary directory";
        s->image = g_build_filename(s->dir, "disk.img", NULL);
        s->mount = g_build_filename(s->dir, "mnt", NULL);
        int fd = open(s->image, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0 || ftruncate(fd, (off_t) (DATA_MIB + 512) << 20) < 0 || close(fd) < 0 || g_mkdir(s->mount, 0700) < 0)
                return "cannot make the image file";
        char *losetup[] = { (char *) "losetup", (char *) "--find", (char *) "--show", (char *) "--direct-io=on",
                            s->image, NULL };
        if (run_quiet(losetup, &s->loop) < 0)
                return "losetup failed (no loop devices?)";
        g_strchomp(s->loop);
        char *mkfs[] = { (char *) "mkfs.ext4", (char *) "-q", (char *) "-F", s->loop, NULL };
        if (run_quiet(mkfs, NULL) < 0)
                return "mkfs.ext4 failed (e2fsprogs missing?)";
        if (mount(s->loop, s->mount, "ext4", 0, NULL) < 0)
                return "cannot mount the scratch ext4";
        s->mounted = true;
        return NULL;
}

/* Dirty+Writeback in /proc/meminfo, MiB: what a flush has to write */
static long dirty_mib(void) {
        g_autofree char *text = NULL;
        if (!g_file_get_contents("/proc/meminfo", &text, NULL, NULL))
                return -1;
        long kib = 0;
        const char *keys[] = { "\nDirty:", "\nWriteback:" };
        for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
                const char *l = strstr(text, keys[i]);
                if (l)
                        kib += strtol(l + strlen(keys[i]), NULL, 10);
        }
        return kib / 1024;
}

/* The last round's file gone and that written back, untimed: each round
 * starts from the same clean file system */
static void scratch_clean(const Scratch *s) {
        g_autofree char *path = g_build_filename(s->mount, "data", NULL);
        (void) g_unlink(path);
        sync();
}

/* DATA_MIB of new data in the page cache, not written back. A new file
 * each time: rewriting one through O_TRUNC makes ext4 start its writeback
 * at close (auto_da_alloc), and the timed flush would find little to do */
static void make_dirty(const Scratch *s) {
        g_autofree char *path = g_build_filename(s->mount, "data", NULL);
        int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
                g_error("open %s: %s", path, g_strerror(errno));
        g_autofree char *buf = g_malloc(1 << 20);
        for (int i = 0; i < DATA_MIB; i++) {
                memset(buf, 'a' + i % 26, 1 << 20);
                if (write(fd, buf, 1 << 20) != 1 << 20)
                        g_error("write %s: %s", path, g_strerror(errno));
        }
        close(fd);
}

static double ms_since(int64_t t0) {
        return (double) (g_get_monotonic_time() - t0) / 1000.0;
}

static double time_sync(const Scratch *s, long *ret_dirty) {
        scratch_clean(s);
        make_dirty(s);
        *ret_dirty = dirty_mib();
        int64_t t0 = g_get_monotonic_time();
        sync();
        return ms_since(t0);
}

static double time_fridged(const Scratch *s, Harness *h, long *ret_dirty) {
        scratch_clean(s);
        make_dirty(s);
        *ret_dirty = dirty_mib();
        return bench_dry_run(h, 120000);
}

int main(void) {
        Scratch s = { 0 };
        const char *why = harness_skip_reason();
        if (!why)
                why = scratch_make(&s);
        if (why) {
                printf("SKIP: bench-flush: %s\n", why);
                scratch_free(&s);
                return 77;
        }
        HarnessOptions opts = { .config = "[Flush]\nTimeoutMs=120000\n" };
        Harness *h = harness_new(&opts);
        double plain[ROUNDS], fridged[ROUNDS], dirty[2 * ROUNDS];
        for (int i = 0; i < ROUNDS; i++) {
                long dp, df;
                plain[i] = time_sync(&s, &dp);
                fridged[i] = time_fridged(&s, h, &df);
                printf("round %d: sync %.0f ms (Dirty+Writeback %ld MiB before), fridged's dry-run cycle %.0f ms "
                       "(%ld MiB)\n", i + 1, plain[i], dp, fridged[i], df);
                dirty[2 * i] = (double) dp;
                dirty[2 * i + 1] = (double) df;
        }
        harness_free(h);
        scratch_free(&s);
        double p = median(plain, ROUNDS), f = median(fridged, ROUNDS), ratio = f / p;
        /* the kernel writes back in the background past its dirty thresholds: what was left to flush, said */
        printf("FIGURE flush of %d MiB written to a scratch ext4 (loop, direct I/O; Dirty+Writeback at the flush: "
               "median %.0f MiB), median of %d: fridged %.0f ms, plain sync %.0f ms, ratio %.2f (goal <= %.2f: %s)\n",
               DATA_MIB, median(dirty, 2 * ROUNDS), ROUNDS, f, p, ratio, GOAL_RATIO,
               ratio <= GOAL_RATIO ? "met" : "NOT met");
        bench_figure("flush.sync_1gib_ms", p, "ms");
        bench_goal("flush.fridged_vs_sync_1gib", ratio, "x", "<=", GOAL_RATIO);
        return 0;
}
