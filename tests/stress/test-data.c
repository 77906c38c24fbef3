/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Data survives: on a scratch ext4 image mounted through a loop device, a
 * writer writes and closes 50 files of random content (no fsync) just
 * before Sleep. While fakesys holds the kernel phase (a long simulated
 * sleep), the test reads every file out of the *backing image file* with
 * `debugfs -R 'cat …'` and compares checksums: all there means the flush
 * put them on the device before the kernel phase. Before Sleep the same
 * read of one file shows it absent, which is what gives the check its
 * power. The loop device and the mount are the test's own and are undone
 * on every exit path (also from a failed assertion: the handlers below run
 * before the harness's).
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include "harness.h"

#define N_FILES 50
#define FILE_BYTES (64 * 1024)

static struct {
        char *dir, *image, *mnt, *loop;
        int loop_fd;            /* kept for LOOP_CLR_FD, async-signal-safe */
        bool mounted;
} D = { .loop_fd = -1 };

/* Only syscalls: also runs from a fatal signal */
static void undo(void) {
        if (D.mounted && umount2(D.mnt, 0) < 0)
                (void) umount2(D.mnt, MNT_DETACH);
        D.mounted = false;
        if (D.loop_fd >= 0) {
                (void) ioctl(D.loop_fd, LOOP_CLR_FD, 0); /* busy: detached when the last user goes */
                close(D.loop_fd);
                D.loop_fd = -1;
        }
        if (D.image)
                (void) unlink(D.image);
        if (D.mnt)
                (void) rmdir(D.mnt);
        if (D.dir)
                (void) rmdir(D.dir);
}

static void on_fatal(int sig) {
        undo();
        signal(sig, SIG_DFL);
        raise(sig);
}

static const char *skip_reason(void) {
        const char *why = harness_skip_reason();
        if (why)
                return why;
        static const char *const tools[] = { "debugfs", "mkfs.ext4", "losetup", NULL };
        for (const char *const *t = tools; *t; t++) {
                g_autofree char *p = g_find_program_in_path(*t);
                if (!p)
                        return "debugfs, mkfs.ext4 or losetup (e2fsprogs, util-linux) is missing";
        }
        return access("/dev/loop-control", R_OK | W_OK) < 0 ? "no /dev/loop-control" : NULL;
}

static void run_ok(char **argv, char **ret_out) {
        int status = harness_run(argv, 30000, ret_out);
        if (status != 0)
                g_error("%s failed (wait status 0x%x)", argv[0], (unsigned) status);
}

static void make_image(void) {
        D.dir = g_dir_make_tmp("fridge-data-XXXXXX", NULL);
        g_assert_nonnull(D.dir);
        D.image = g_build_filename(D.dir, "ext4.img", NULL);
        D.mnt = g_build_filename(D.dir, "mnt", NULL);
        g_assert_cmpint(g_mkdir(D.mnt, 0755), ==, 0);
        int fd = open(D.image, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(ftruncate(fd, 64 * 1024 * 1024), ==, 0);
        close(fd);
        g_autofree char *mkfs = g_find_program_in_path("mkfs.ext4");
        char *mk[] = { mkfs, (char *) "-q", (char *) "-F", D.image, NULL };
        run_ok(mk, NULL);

        g_autofree char *losetup = g_find_program_in_path("losetup");
        char *lo[] = { losetup, (char *) "--find", (char *) "--show", D.image, NULL };
        run_ok(lo, &D.loop);
        g_strstrip(D.loop);
        D.loop_fd = open(D.loop, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(D.loop_fd, >=, 0);
        /* a long commit interval: nothing but the flush writes the data out */
        if (mount(D.loop, D.mnt, "ext4", 0, "commit=300") < 0)
                g_error("mount %s on %s: %s", D.loop, D.mnt, g_strerror(errno));
        D.mounted = true;
}

/* The file's bytes as debugfs reads them from the image, or "" */
static GBytes *image_read(const char *name) {
        g_autofree char *debugfs = g_find_program_in_path("debugfs");
        g_autofree char *cmd = g_strdup_printf("cat /%s", name);
        char *argv[] = { debugfs, (char *) "-R", cmd, D.image, NULL };
        g_autofree char *out = NULL;
        (void) harness_run(argv, 30000, &out); /* a missing file is not an error here */
        gsize len = strlen(out);
        return g_bytes_new_take(g_steal_pointer(&out), len);
}

static uint64_t meminfo_dirty_kib(void) {
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents("/proc/meminfo", &text, NULL, NULL));
        const char *p = strstr(text, "\nDirty:");
        return p ? g_ascii_strtoull(p + 7, NULL, 10) : 0;
}

static void write_files(char **sums) {
        g_autofree guchar *buf = g_malloc(FILE_BYTES);
        for (int i = 0; i < N_FILES; i++) {
                /* printable random bytes: debugfs's output is read as text */
                for (size_t k = 0; k < FILE_BYTES; k++)
                        buf[k] = (guchar) g_random_int_range('a', 'z' + 1);
                g_autofree char *path = g_strdup_printf("%s/f%02d", D.mnt, i);
                g_autoptr(GError) e = NULL;
                if (!g_file_set_contents_full(path, (const char *) buf, FILE_BYTES, G_FILE_SET_CONTENTS_NONE, 0644,
                                              &e))
                        g_error("write %s: %s", path, e->message);
                sums[i] = g_compute_checksum_for_data(G_CHECKSUM_SHA256, buf, FILE_BYTES);
        }
}

static unsigned count_intact(char **sums, size_t *ret_bytes) {
        unsigned intact = 0;
        *ret_bytes = 0;
        for (int i = 0; i < N_FILES; i++) {
                g_autofree char *name = g_strdup_printf("f%02d", i);
                g_autoptr(GBytes) got = image_read(name);
                g_autofree char *sum = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, got);
                if (g_str_equal(sum, sums[i])) {
                        intact++;
                        *ret_bytes += g_bytes_get_size(got);
                } else
                        g_test_message("f%02d: %zu bytes in the image, checksum differs", i, g_bytes_get_size(got));
        }
        return intact;
}

static void test_data_survives(void) {
        const char *why = skip_reason();
        if (why) {
                g_test_skip(why);
                return;
        }
        make_image();
        g_autoptr(Harness) h = harness_new(NULL);
        char *sums[N_FILES] = {};

        write_files(sums);
        uint64_t dirty = meminfo_dirty_kib();
        g_autoptr(GBytes) before = image_read("f00");
        g_autofree char *before_sum = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, before);
        bool visible_before = g_str_equal(before_sum, sums[0]);

        harness_control(h, "sleep-ms 600000");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep: %s: %s", err, msg);
        g_assert_true(harness_wait_log_line(h, "power/state mem sleeping", 60000));
        size_t bytes = 0;
        unsigned intact = count_intact(sums, &bytes);
        harness_control(h, "sleep-ms 10");
        harness_control(h, "wakeup");
        g_autofree char *result = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 20000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "done");

        g_print("FIGURE: data-survives files=%d intact=%u bytes=%zu (Dirty before Sleep %" G_GUINT64_FORMAT
                " KiB; f00 in the image before Sleep: %s)\n", N_FILES, intact, bytes, dirty,
                visible_before ? "yes (the check proved less)" : "no");
        g_assert_cmpuint(intact, ==, N_FILES);
        for (int i = 0; i < N_FILES; i++)
                g_free(sums[i]);
        harness_free(g_steal_pointer(&h));
        undo();
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        /* before the harness's own handlers, which hand the signal on to these */
        static const int fatal[] = { SIGABRT, SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGTRAP };
        for (size_t i = 0; i < G_N_ELEMENTS(fatal); i++)
                signal(fatal[i], on_fatal);
        atexit(undo);
        g_test_add_func("/data/survives", test_data_survives);
        return g_test_run();
}
