/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * [Sleep] HibernateWriter=fridge against the real fridged on fakesys: the
 * image writer is a stand-in listening on fridged's socket
 * (DIR/state/image-writer.sock) in a thread of this test, speaking the
 * protocol of hibernate/writer-protocol.h as fridge-image-writer does.
 * What is checked is fridged's side: the writer is asked instead of the
 * state write, its progress is the cycle's, Cancel reaches it, its figures
 * end up in the result, and where it cannot run the kernel writes the image.
 * The real fridge-image-writer --serve (FRIDGE_IMAGE_WRITER) answers
 * fridged too, where it can only say it cannot run (a missing snapshot
 * device: nothing here may open /dev/snapshot), and refuses a non-root peer.
 */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpio-newc.h"
#include "fridge-config.h"
#include "harness.h"
#include "scratch.h"
#include "standin-writer.h"
#include "writer-protocol.h"

#define SWAPS "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/loop0 partition 1048572 0 -2\n"
#define MEMINFO "MemTotal: 2000000 kB\nDirty: 0 kB\nWriteback: 0 kB\nActive(anon): 20000 kB\nInactive(anon): 1000 kB\n"
#define CONFIG "[Sleep]\nHibernateWriter=fridge\n"

typedef HarnessFixture Fixture;

static bool have_loop0(void) {
        struct stat st;
        if (stat("/dev/loop0", &st) == 0 && S_ISBLK(st.st_mode))
                return true;
        g_test_skip("needs /dev/loop0 to stand for a swap partition");
        return false;
}

static Harness *start(Fixture *f) {
        const char *const files[] = { "swaps", SWAPS, "meminfo", MEMINFO, NULL };
        HarnessOptions o = { .proc_files = files, .config = CONFIG };
        return f->h = harness_new(&o);
}

static uint64_t hibernate(Harness *h) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(h, "hibernate", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep(hibernate): %s: %s", err, msg);
        return cycle;
}

/* `fridgectl [--json] history` says `has` */
static void history_says(Harness *h, bool json, const char *has) {
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 10000, &out, json ? "--json" : "history", json ? "history" : NULL, NULL),
                        ==, 0);
        if (!strstr(out, has))
                g_error("fridgectl%s history does not say '%s':\n%s", json ? " --json" : "", has, out);
}

static bool log_has(Harness *h, const char *line) {
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        for (char **l = lines; *l; l++)
                if (g_str_has_prefix(*l, line))
                        return true;
        return false;
}

static void expect_writer(Harness *h, const char *writer, const char *reason_has) {
        g_autofree char *w = harness_get_string(h, "HibernateWriter");
        g_autofree char *why = harness_get_string(h, "HibernateWriterReason");
        g_test_message("HibernateWriter=%s (%s)", w, why);
        g_assert_cmpstr(w, ==, writer);
        if (!strstr(why, reason_has))
                g_error("HibernateWriterReason '%s' does not say '%s'", why, reason_has);
}

/* The writer writes: its progress is the cycle's (State running, Phase
 * kernel), its figures are in the result, and the kernel's state write
 * never came; resume was set for it as for the kernel's writer */
static void test_writes_with_progress(Fixture *f, gconstpointer data) {
        if (!have_loop0())
                return;
        Harness *h = start(f);
        StandinWriter *w = standin_writer_start(h, SCRIPT_WRITE);
        expect_writer(h, "fridge", "");
        uint64_t cycle = hibernate(h);
        g_assert_true(harness_wait_property_signal(h, "ProgressText", "writing the image: 2 of 4 MiB", 10000));
        g_autofree char *state = harness_get_string(h, "State"), *phase = harness_get_string(h, "Phase");
        g_assert_cmpstr(state, ==, "running");
        g_assert_cmpstr(phase, ==, "kernel");
        standin_writer_let_go(w);
        g_autofree char *result = NULL, *message = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 10000, &result, NULL, &message));
        g_test_message("result %s: %s", result, message);
        g_assert_cmpstr(result, ==, "done");
        g_assert_nonnull(strstr(message, "image written by fridge: 8.0 MiB, 2.0 MiB on disk (4.00x), in 0.5 s"));
        g_assert_cmpint(harness_find_signal(h, "Resumed", true, cycle), >=, 0);
        g_autofree char *heard = standin_writer_heard(w);
        g_assert_cmpstr(heard, ==, "hibernate mode=platform\n");
        g_assert_true(log_has(h, "power/resume 7:0 ok"));
        g_assert_false(log_has(h, "power/state"));
        /* the figures are the cycle's record, not only its message */
        history_says(h, false, "image: 8.0 MiB written as 2.0 MiB (4.0x) in 0.5 s, 16 MiB/s");
        history_says(h, true, "\"image-writer\":\"fridge\"");
        history_says(h, true, "\"image-raw-bytes\":8388608");
        history_says(h, true, "\"image-written-bytes\":2097152");
        history_says(h, true, "\"image-usec\":500000");
        standin_writer_free(w);
}

/* `fridgectl [--json] hibernate`'s finished line is followed by the write's
 * figures, which it asks of the history */
static void fridgectl_hibernate_says(Fixture *f, bool json, const char *const *has) {
        if (!have_loop0())
                return;
        Harness *h = start(f);
        StandinWriter *w = standin_writer_start(h, SCRIPT_WRITE);
        standin_writer_let_go(w);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 20000, &out, json ? "--json" : "hibernate", json ? "hibernate" : NULL,
                                          NULL), ==, 0);
        for (; *has; has++)
                if (!strstr(out, *has))
                        g_error("fridgectl%s hibernate does not say '%s':\n%s", json ? " --json" : "", *has, out);
        standin_writer_free(w);
}

static void test_fridgectl_says_image(Fixture *f, gconstpointer data) {
        const char *const lines[] = { "done: resumed after ",
                                      "\nimage: 8.0 MiB written as 2.0 MiB (4.0x) in 0.5 s, 16 MiB/s\n", NULL };
        fridgectl_hibernate_says(f, false, lines);
}

static void test_fridgectl_json_image(Fixture *f, gconstpointer data) {
        const char *const has[] = { "\"event\":\"finished\"", "\"image-writer\":\"fridge\"",
                                    "\"image-raw-bytes\":8388608", "\"image-written-bytes\":2097152",
                                    "\"image-usec\":500000", NULL };
        fridgectl_hibernate_says(f, true, has);
}

/* Hibernate, and Cancel once the writer's progress shows (the scratch
 * pair `frozen`, if any, frozen by then); the cycle's result and message
 * once it finished */
static uint64_t cancel_while_writing(Harness *h, const ScratchPair *frozen, char **ret_result, char **ret_message) {
        uint64_t cycle = hibernate(h);
        g_assert_true(harness_wait_property_signal(h, "ProgressText", "writing the image: 2 of 4 MiB", 10000));
        if (frozen)
                g_assert_true(scratch_is_frozen(frozen->s, frozen->a) && scratch_is_frozen(frozen->s, frozen->b));
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_cancel(h, cycle, &err, &msg) < 0)
                g_error("Cancel while the image is written: %s: %s", err, msg);
        g_assert_true(harness_wait_finished(h, cycle, 10000, ret_result, NULL, ret_message));
        g_test_message("result %s: %s", *ret_result, *ret_message);
        return cycle;
}

/* Cancel while it writes reaches the writer; the cycle ends cancelled,
 * when the writer says it stopped, in its words */
static void test_cancel_reaches_writer(Fixture *f, gconstpointer data) {
        if (!have_loop0())
                return;
        Harness *h = start(f);
        StandinWriter *w = standin_writer_start(h, SCRIPT_WAIT_CANCEL);
        g_autofree char *result = NULL, *message = NULL;
        cancel_while_writing(h, NULL, &result, &message);
        g_assert_cmpstr(result, ==, "aborted");
        g_assert_cmpstr(message, ==, "the image write was cancelled: asked by fridged before the freeze");
        standin_writer_join(w); /* the writer has heard all it will */
        g_autofree char *heard = standin_writer_heard(w);
        g_assert_cmpstr(heard, ==, "hibernate mode=platform\ncancel\n");
        g_assert_false(log_has(h, "power/state"));
        /* how far it got */
        history_says(h, false, "image: the write stopped at 2 of 4 MiB");
        history_says(h, true, "\"image-done-bytes\":2097152");
        history_says(h, true, "\"image-total-bytes\":4194304");
        standin_writer_free(w);
}

/* A writer that hears the Cancel and stays silent (hung before its
 * freeze: had it frozen user space, fridged would not be counting) is
 * hung up on after WriterCancelTimeoutMs of awake time: the cycle ends
 * cancelled, says why, and nothing stays frozen */
static void test_cancel_unanswered(Fixture *f, gconstpointer data) {
        const char *why = harness_scratch_skip_reason();
        if (why) {
                g_test_skip(why);
                return;
        }
        if (!have_loop0())
                return;
        ScratchPair p;
        scratch_pair_new(&p);
        g_autoptr(Scratch) sc = p.s; /* thawed and removed whatever happens */
        const char *const files[] = { "swaps", SWAPS, "meminfo", MEMINFO, NULL };
        g_autofree char *config = g_strdup_printf(CONFIG "WriterCancelTimeoutMs=1000\n[Freeze]\nRoots=%s\n", sc->root);
        HarnessOptions o = { .proc_files = files, .config = config, .real_cgroups = true };
        Harness *h = f->h = harness_new(&o);
        StandinWriter *w = standin_writer_start(h, SCRIPT_DEAF);
        g_autofree char *result = NULL, *message = NULL;
        cancel_while_writing(h, &p, &result, &message);
        g_assert_cmpstr(result, ==, "aborted");
        g_assert_cmpstr(message, ==, "the image write was cancelled: fridge-image-writer did not answer the Cancel; "
                                     "fridged hung up on it");
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        g_assert_nonnull(strstr(log, "fridge-image-writer has not answered the Cancel in 1000 ms of awake time"));
        g_assert_false(scratch_is_frozen(sc, p.a) || scratch_is_frozen(sc, p.b));
        standin_writer_join(w);
        g_autofree char *heard = standin_writer_heard(w);
        g_assert_cmpstr(heard, ==, "hibernate mode=platform\ncancel\n");
        g_assert_true(w->hung_up);
        g_assert_false(log_has(h, "power/state disk"));
        standin_writer_free(w);
}

/* A Cancel the writer could not take any more (it had frozen user space,
 * fridged included, before fridged read the Cancel: the machine slept and
 * resumed) does not end the cycle: the writer says how the write ended,
 * and the cycle is the hibernation that happened, done and resumed, not a
 * cancelled one that skipped its Resumed */
static void test_cancel_after_freeze(Fixture *f, gconstpointer data) {
        if (!have_loop0())
                return;
        Harness *h = start(f);
        StandinWriter *w = standin_writer_start(h, SCRIPT_LATE_CANCEL);
        g_autofree char *result = NULL, *message = NULL;
        uint64_t cycle = cancel_while_writing(h, NULL, &result, &message);
        g_assert_cmpstr(result, ==, "done");
        g_assert_nonnull(strstr(message, "image written by fridge: 8.0 MiB"));
        g_assert_cmpint(harness_find_signal(h, "Resumed", true, cycle), >=, 0);
        standin_writer_join(w);
        g_autofree char *heard = standin_writer_heard(w);
        g_assert_cmpstr(heard, ==, "hibernate mode=platform\ncancel\n");
        standin_writer_free(w);
}

/* A writer that cannot run says so before it freezes anything: the
 * kernel writes the image, and the log says why */
static void test_unavailable_falls_back(Fixture *f, gconstpointer data) {
        if (!have_loop0())
                return;
        Harness *h = start(f);
        StandinWriter *w = standin_writer_start(h, SCRIPT_UNAVAILABLE);
        uint64_t cycle = hibernate(h);
        g_autofree char *result = NULL, *message = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 10000, &result, NULL, &message));
        g_assert_cmpstr(result, ==, "done");
        g_assert_true(log_has(h, "power/state disk"));
        g_assert_nonnull(strstr(message, "the kernel wrote the image: /dev/snapshot: No such file or directory"));
        history_says(h, false, "image: written by the kernel");
        history_says(h, true, "\"image-writer\":\"kernel\"");
        standin_writer_free(w);
}

/* Nobody listens: HibernateWriter says the kernel, and why */
static void test_not_listening(Fixture *f, gconstpointer data) {
        if (!have_loop0())
                return;
        Harness *h = start(f);
        expect_writer(h, "kernel", "fridge-image-writer does not listen on");
        g_autofree char *can = harness_get_string(h, "CanHibernate");
        g_assert_cmpstr(can, ==, "yes");
        uint64_t cycle = hibernate(h);
        g_autofree char *result = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 10000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "done");
        g_assert_true(log_has(h, "power/state disk"));
}

/* A writer gone in the middle: the cycle fails and says so */
static void test_writer_hangs_up(Fixture *f, gconstpointer data) {
        if (!have_loop0())
                return;
        Harness *h = start(f);
        StandinWriter *w = standin_writer_start(h, SCRIPT_HANG_UP);
        uint64_t cycle = hibernate(h);
        g_autofree char *result = NULL, *error = NULL, *message = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 10000, &result, &error, &message));
        g_test_message("result %s (%s): %s", result, error, message);
        g_assert_cmpstr(result, ==, "failed");
        g_assert_nonnull(strstr(message, "hung up without a result"));
        g_assert_false(log_has(h, "power/state"));
        standin_writer_free(w);
}

/* A test that fails (g_error) leaves no writer behind holding its output */
static void die_with_test(gpointer unused) {
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
}

/* The real writer serving path: its pid, once the socket is there (it
 * renames it into place only once it accepts). initramfs: its
 * --initramfs=, or NULL for none (the running kernel's in /boot); extra:
 * one more option, or NULL */
static GPid real_writer_start_with(const char *path, const char *snapshot, const char *sysfs, const char *initramfs,
                                   const char *extra) {
        const char *exe = g_getenv("FRIDGE_IMAGE_WRITER");
        g_assert_nonnull(exe);
        g_autofree char *listen = g_strdup_printf("--listen=%s", path);
        g_autofree char *snap = g_strdup_printf("--snapshot=%s", snapshot);
        g_autofree char *sys = g_strdup_printf("--sysfs=%s", sysfs);
        g_autofree char *initrd = initramfs ? g_strdup_printf("--initramfs=%s", initramfs) : NULL;
        const char *argv[] = { exe, "--serve", listen, snap, sys, initrd ? initrd : extra, initrd ? extra : NULL, NULL };
        GPid pid;
        g_autoptr(GError) err = NULL;
        if (!g_spawn_async(NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, die_with_test, NULL, &pid, &err))
                g_error("cannot start %s: %s", exe, err->message);
        for (int i = 0; i < 3000 && !g_file_test(path, G_FILE_TEST_EXISTS); i++) {
                int status;
                if (waitpid(pid, &status, WNOHANG) == pid)
                        g_error("fridge-image-writer --serve exited (status %d) without listening on %s", status,
                                path);
                g_usleep(10000);
        }
        g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
        return pid;
}

static GPid real_writer_start(const char *path, const char *snapshot, const char *sysfs, const char *initramfs) {
        return real_writer_start_with(path, snapshot, sysfs, initramfs, NULL);
}

/* An initramfs as initramfs-tools makes one, with fridge-resume where the
 * package's hook puts it or without it; "bzip2": one the writer cannot read */
static void initramfs_write(const char *path, const char *what) {
        g_autoptr(GByteArray) a = g_byte_array_new();
        if (g_str_equal(what, "bzip2")) {
                g_byte_array_append(a, (const uint8_t *) "BZh91AY&SY", 10);
        } else {
                cpio_newc_add(a, "scripts/local-premount/fridge", S_IFREG | 0755, "#!/bin/sh\n", 10);
                if (g_str_equal(what, "with"))
                        cpio_newc_add(a, &FRIDGE_RESUME_PATH[1], S_IFREG | 0755, "\177ELF", 4);
                cpio_newc_trailer(a);
        }
        g_assert_true(g_file_set_contents(path, (const char *) a->data, a->len, NULL));
}

static void real_writer_stop(GPid pid) {
        g_assert_cmpint(kill(pid, SIGTERM), ==, 0);
        g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
}

/* The real writer on fridged's socket says before freezing anything that
 * it cannot write this image; fridged's cycle goes on with the kernel's
 * writer (fakesys's state write) and says why */
static void real_writer_falls_back(Harness *h, const char *snapshot, const char *initramfs, const char *want_why) {
        g_autofree char *path = g_build_filename(h->dir, "state", WRITER_SOCKET_NAME, NULL);
        GPid pid = real_writer_start(path, snapshot, h->root, initramfs);
        expect_writer(h, "fridge", "");
        uint64_t cycle = hibernate(h);
        g_autofree char *result = NULL, *message = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 10000, &result, NULL, &message));
        g_test_message("result %s: %s", result, message);
        g_assert_cmpstr(result, ==, "done");
        g_assert_true(log_has(h, "power/resume 7:0 ok"));
        g_assert_true(log_has(h, "power/state disk"));
        g_autofree char *want = g_strdup_printf("the kernel wrote the image: %s", want_why);
        if (!strstr(message, want))
                g_error("the cycle's message '%s' does not say '%s'", message, want);
        real_writer_stop(pid);
}

/* Told a snapshot device that is not there */
static void test_real_writer_unavailable(Fixture *f, gconstpointer data) {
        if (!have_loop0())
                return;
        Harness *h = start(f);
        g_autofree char *missing = g_build_filename(h->dir, "missing", NULL);
        g_autofree char *why = g_strdup_printf("no snapshot device: %s does not exist", missing);
        real_writer_falls_back(h, missing, NULL, why);
}

/* The snapshot device opens (/dev/null: no ioctl is tried before the
 * check), but the next boot's initramfs has no fridge-resume (dracut's,
 * or one made before the package came): an image written now would
 * never be resumed, so the kernel's writer writes it */
static void test_real_writer_initramfs_without_resume(Fixture *f, gconstpointer data) {
        if (!have_loop0())
                return;
        Harness *h = start(f);
        g_autofree char *initrd = g_build_filename(h->dir, "initrd.img", NULL);
        initramfs_write(initrd, "without");
        g_autofree char *why = g_strdup_printf("the initramfs %s holds no %s: the next boot could not resume "
                                               "fridge's image (update-initramfs -u puts it there)",
                                               initrd, FRIDGE_RESUME_PATH);
        real_writer_falls_back(h, "/dev/null", initrd, why);
}

/* HibernateWriter until it reads `writer` (fridged asks the writer on
 * the loop, and answers before the answer is in): its reason then */
static char *writer_becomes(Harness *h, const char *writer) {
        gint64 deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
        while (g_get_monotonic_time() < deadline) {
                g_autofree char *w = harness_get_string(h, "HibernateWriter");
                if (g_str_equal(w, writer))
                        return harness_get_string(h, "HibernateWriterReason");
                g_usleep(20000);
        }
        g_error("HibernateWriter did not read %s within 10 s", writer);
}

/* What the writer checks, fridged's status says, and says afresh when
 * the world changes: update-initramfs puts fridge-resume in (a new file:
 * the answer no longer holds, the writer is taken at its word at once)
 * or takes it out (asked again, the writer says so). No cycle runs. */
static void test_status_follows_initramfs(Fixture *f, gconstpointer data) {
        Harness *h = start(f);
        g_autofree char *initrd = g_build_filename(h->dir, "initrd.img", NULL);
        initramfs_write(initrd, "without");
        g_autofree char *path = g_build_filename(h->dir, "state", WRITER_SOCKET_NAME, NULL);
        GPid pid = real_writer_start(path, "/dev/null", h->root, initrd);
        g_autofree char *why = writer_becomes(h, "kernel");
        g_autofree char *want = g_strdup_printf("the initramfs %s holds no %s", initrd, FRIDGE_RESUME_PATH);
        if (!strstr(why, want))
                g_error("HibernateWriterReason '%s' does not say '%s'", why, want);
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 10000, &out, "status", NULL, NULL), ==, 0);
        g_autofree char *line = g_strdup_printf("HibernateWriter: kernel (%s", why);
        if (!strstr(out, line))
                g_error("fridgectl status does not say '%s':\n%s", line, out);

        initramfs_write(initrd, "with");
        expect_writer(h, "fridge", ""); /* the first read after it: no stale refusal */
        for (int i = 0; i < 25; i++) { /* and once the writer has looked again, still */
                g_usleep(20000);
                expect_writer(h, "fridge", "");
        }
        initramfs_write(initrd, "without");
        g_autofree char *again = writer_becomes(h, "kernel");
        g_assert_nonnull(strstr(again, want));
        g_assert_false(log_has(h, "power/state")); /* nothing slept */
        real_writer_stop(pid);
}

/* A writer without its device says so to the check as to a cycle */
static void test_status_no_snapshot(Fixture *f, gconstpointer data) {
        Harness *h = start(f);
        g_autofree char *path = g_build_filename(h->dir, "state", WRITER_SOCKET_NAME, NULL);
        g_autofree char *missing = g_build_filename(h->dir, "missing", NULL);
        GPid pid = real_writer_start(path, missing, h->root, "unchecked");
        g_autofree char *why = writer_becomes(h, "kernel");
        g_autofree char *want = g_strdup_printf("no snapshot device: %s does not exist", missing);
        g_assert_cmpstr(why, ==, want);
        real_writer_stop(pid);
}

/* As uid 65534, in a child (only calls safe after fork): the first line
 * the writer sends, into out */
static void connect_as_nobody(const char *path, int out) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char line[WRITER_LINE_MAX];
        strcpy(sa.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0 || fd < 0 ||
            connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                _exit(2);
        ssize_t n = read(fd, line, sizeof(line));
        if (n > 0)
                (void) !write(out, line, (size_t) n);
        _exit(n > 0 ? 0 : 3);
}

/* A peer that is not root is told so and hung up on, asking nothing */
static void test_real_writer_refuses_non_root(void) {
        if (geteuid() != 0)
                return g_test_skip("needs root, to connect as another user");
        g_autofree char *dir = g_dir_make_tmp("fridge-writer-XXXXXX", NULL);
        g_assert_nonnull(dir);
        g_assert_cmpint(g_chmod(dir, 0755), ==, 0);
        g_autofree char *path = g_build_filename(dir, WRITER_SOCKET_NAME, NULL);
        g_autofree char *missing = g_build_filename(dir, "missing", NULL);
        GPid pid = real_writer_start(path, missing, dir, NULL);
        struct stat st;
        g_assert_cmpint(stat(path, &st), ==, 0);
        g_assert_cmpint(st.st_mode & 0777, ==, 0600);
        g_assert_cmpint(g_chmod(path, 0666), ==, 0); /* for the test: the service's is root's only */
        int p[2];
        g_assert_cmpint(pipe(p), ==, 0);
        pid_t child = fork();
        g_assert_cmpint(child, >=, 0);
        if (child == 0)
                connect_as_nobody(path, p[1]);
        close(p[1]);
        char got[WRITER_LINE_MAX + 1] = "";
        ssize_t n = read(p[0], got, WRITER_LINE_MAX);
        close(p[0]);
        int status;
        g_assert_cmpint(waitpid(child, &status, 0), ==, child);
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_assert_cmpint(n, >, 0);
        g_assert_cmpstr(got, ==, "failed message=fridge-image-writer serves uid 0 (fridged) only, not uid 65534\n");
        real_writer_stop(pid);
        g_assert_cmpint(unlink(path), ==, 0);
        g_assert_cmpint(rmdir(dir), ==, 0);
}

/* Root's request on path; the writer's first answer */
static char *ask_as_root(const char *path, const char *request) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        g_assert_cmpuint(strlen(path), <, sizeof(sa.sun_path));
        strcpy(sa.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r;
        g_assert_cmpint(fd, >=, 0);
        /* systemd-socket-activate binds (the path appears) before it
         * listens: refused until then */
        for (int i = 0; (r = connect(fd, (struct sockaddr *) &sa, sizeof(sa))) < 0 && errno == ECONNREFUSED && i < 3000;
             i++)
                g_usleep(10000);
        g_assert_cmpint(r, ==, 0);
        g_assert_cmpint(send(fd, request, strlen(request), MSG_NOSIGNAL), ==, (ssize_t) strlen(request));
        WriterLineBuffer b = {};
        char line[WRITER_LINE_MAX], chunk[WRITER_LINE_MAX];
        while (writer_line_buffer_take(&b, line) == 0) {
                ssize_t n = read(fd, chunk, sizeof(chunk) - b.len);
                g_assert_cmpint(n, >, 0);
                writer_line_buffer_feed(&b, chunk, (size_t) n);
        }
        close(fd);
        return g_strdup(line);
}

/* As fridge-image-writer.socket starts it: the listening socket passed
 * (LISTEN_FDS, LISTEN_PID) by systemd-socket-activate, which systemd's
 * socket units do the same way */
static void test_real_writer_socket_activated(void) {
        if (geteuid() != 0)
                return g_test_skip("needs root: the writer serves uid 0 only");
        g_autofree char *activate = g_find_program_in_path("systemd-socket-activate");
        if (!activate)
                return g_test_skip("needs systemd-socket-activate (package systemd)");
        g_autofree char *dir = g_dir_make_tmp("fridge-writer-XXXXXX", NULL);
        g_assert_nonnull(dir);
        g_autofree char *path = g_build_filename(dir, WRITER_SOCKET_NAME, NULL);
        g_autofree char *missing = g_build_filename(dir, "missing", NULL);
        g_autofree char *snap = g_strdup_printf("--snapshot=%s", missing);
        g_autofree char *sys = g_strdup_printf("--sysfs=%s", dir);
        const char *argv[] = { activate, "-l", path, "--", g_getenv("FRIDGE_IMAGE_WRITER"), "--serve", snap, sys,
                               "--idle-exit=1", NULL };
        GPid pid;
        g_autoptr(GError) err = NULL;
        if (!g_spawn_async(NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &err))
                g_error("cannot start %s: %s", activate, err->message);
        for (int i = 0; i < 3000 && !g_file_test(path, G_FILE_TEST_EXISTS); i++)
                g_usleep(10000);
        g_autofree char *got = ask_as_root(path, "hibernate mode=platform\n");
        g_autofree char *want = g_strdup_printf("unavailable message=no snapshot device: %s does not exist", missing);
        g_assert_cmpstr(got, ==, want);
        /* one connection at a time, and then the next */
        g_autofree char *again = ask_as_root(path, "hibernate mode=test_resume\n");
        g_assert_nonnull(strstr(again, "unavailable message=mode test_resume"));
        /* a second without a request: it exits, its memory given back (systemd's socket starts it again) */
        int status = 0;
        pid_t gone = 0;
        for (int i = 0; i < 500 && (gone = waitpid(pid, &status, WNOHANG)) == 0; i++)
                g_usleep(10000);
        if (gone != pid)
                real_writer_stop(pid);
        g_assert_cmpint(gone, ==, pid);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_assert_cmpint(unlink(path), ==, 0);
        g_assert_cmpint(rmdir(dir), ==, 0);
}

/* --listen's socket would go with the writer: --idle-exit does not apply */
static void test_real_writer_listen_stays(void) {
        if (geteuid() != 0)
                return g_test_skip("needs root: the writer serves uid 0 only");
        g_autofree char *dir = g_dir_make_tmp("fridge-writer-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, WRITER_SOCKET_NAME, NULL);
        GPid pid = real_writer_start_with(path, "/dev/null", dir, "unchecked", "--idle-exit=1");
        g_autofree char *first = ask_as_root(path, "check\n");
        g_assert_true(g_str_has_prefix(first, "usable path=- key=unchecked"));
        g_usleep(2 * G_USEC_PER_SEC);
        g_assert_cmpint(waitpid(pid, NULL, WNOHANG), ==, 0);
        g_autofree char *got = ask_as_root(path, "check\n");
        g_assert_true(g_str_has_prefix(got, "usable path=- key=unchecked"));
        real_writer_stop(pid);
        g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
        g_assert_cmpint(system(rm), ==, 0);
}

/* What the writer finds before it would freeze, and what it answers: each
 * cause named, nothing frozen, and the snapshot device (a file here,
 * watched) never even opened: its open would run the kernel's hibernation
 * notifiers, and a device still held when fridged is told "unavailable"
 * would fail the kernel's own write (EBUSY). The initramfs holds
 * fridge-resume unless a case says otherwise. */
static void test_real_writer_preflight(void) {
        if (geteuid() != 0)
                return g_test_skip("needs root: the writer serves uid 0 only");
        static const struct {
                const char *lockdown, *resume, *offset, *request, *answer, *initramfs;
        } cases[] = {
                { "none [integrity] confidentiality\n", "254:0\n", NULL, "hibernate mode=platform",
                  "unavailable message=the kernel is locked down (integrity): SNAP cannot be used" },
                { "none [integrity] confidentiality\n", "254:0\n", NULL, "check",
                  "unusable path=INITRD key=" },
                { "[none] integrity confidentiality\n", "0:0\n", NULL, "hibernate mode=platform",
                  "unavailable message=no resume device set (SYS/power/resume is 0:0)" },
                { NULL, "sda1\n", NULL, "hibernate mode=shutdown",
                  "unavailable message=SYS/power/resume says \"sda1\", not MAJ:MIN" },
                { NULL, "254:0\n", "12x\n", "hibernate mode=reboot",
                  "unavailable message=SYS/power/resume_offset says \"12x\", not a page count" },
                { NULL, "4095:1048575\n", NULL, "hibernate mode=suspend",
                  "unavailable message=no node for the resume device 4095:1048575 in /dev: No such device" },
                { NULL, NULL, NULL, "hibernate mode=platform", "unavailable message=cannot read SYS/power/resume: " },
                { NULL, "254:0\n", NULL, "hibernate mode=test_resume",
                  "unavailable message=mode test_resume is the kernel's own test of the image: its writer runs it" },
                { NULL, "254:0\n", NULL, "hibernate mode=disk",
                  "failed message=unknown mode disk (platform, shutdown, reboot or suspend)" },
                { NULL, "254:0\n", NULL, "cancel", "failed message=the first request must be hibernate or check, not cancel" },
                { NULL, "0:0\n", NULL, "check", "usable path=INITRD key=" },
                { NULL, "0:0\n", NULL, "check", "unusable path=INITRD key=", "without" },
                /* the resume device 0:0 would be refused next: the initramfs is checked before it */
                { NULL, "0:0\n", NULL, "hibernate mode=platform",
                  "unavailable message=the initramfs INITRD holds no " FRIDGE_RESUME_PATH ": the next boot could not "
                  "resume fridge's image (update-initramfs -u puts it there)", "without" },
                { NULL, "0:0\n", NULL, "hibernate mode=platform",
                  "unavailable message=cannot read the initramfs INITRD (No such file or directory): whether the "
                  "next boot can resume fridge's image is unknown", "missing" },
                { NULL, "0:0\n", NULL, "hibernate mode=platform",
                  "unavailable message=cannot read the initramfs INITRD (an archive compressed with bzip2, which is "
                  "not read here): whether the next boot can resume fridge's image is unknown", "bzip2" },
        };
        g_autofree char *dir = g_dir_make_tmp("fridge-writer-XXXXXX", NULL);
        g_assert_nonnull(dir);
        g_autofree char *sys = g_build_filename(dir, "sys", NULL);
        g_autofree char *power = g_build_filename(sys, "power", NULL);
        g_autofree char *security = g_build_filename(sys, "kernel", "security", NULL);
        g_assert_cmpint(g_mkdir_with_parents(power, 0755), ==, 0);
        g_assert_cmpint(g_mkdir_with_parents(security, 0755), ==, 0);
        g_autofree char *path = g_build_filename(dir, WRITER_SOCKET_NAME, NULL);
        g_autofree char *initrd = g_build_filename(dir, "initrd.img", NULL);
        g_autofree char *snap = g_build_filename(dir, "snapshot", NULL);
        g_assert_true(g_file_set_contents(snap, "", 0, NULL));
        int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        g_assert_cmpint(watch, >=, 0);
        g_assert_cmpint(inotify_add_watch(watch, snap, IN_OPEN), >=, 0);
        GPid pid = real_writer_start(path, snap, sys, initrd);
        const char *const files[] = { "kernel/security/lockdown", "power/resume", "power/resume_offset" };
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                const char *what = cases[i].initramfs ?: "with";
                if (g_str_equal(what, "missing"))
                        (void) unlink(initrd);
                else
                        initramfs_write(initrd, what);
                const char *contents[] = { cases[i].lockdown, cases[i].resume, cases[i].offset };
                for (size_t k = 0; k < G_N_ELEMENTS(files); k++) {
                        g_autofree char *f = g_build_filename(sys, files[k], NULL);
                        if (contents[k])
                                g_assert_true(g_file_set_contents(f, contents[k], -1, NULL));
                        else
                                (void) unlink(f);
                }
                g_autofree char *request = g_strdup_printf("%s\n", cases[i].request);
                g_autofree char *got = ask_as_root(path, request);
                g_auto(GStrv) parts = g_strsplit(cases[i].answer, "SYS", -1);
                g_autofree char *with_sys = g_strjoinv(sys, parts);
                g_auto(GStrv) parts2 = g_strsplit(with_sys, "INITRD", -1);
                g_autofree char *with_initrd = g_strjoinv(initrd, parts2);
                g_auto(GStrv) parts3 = g_strsplit(with_initrd, "SNAP", -1);
                g_autofree char *want = g_strjoinv(snap, parts3);
                g_test_message("%s -> %s", cases[i].request, got);
                if (!g_str_has_prefix(got, want))
                        g_error("case %zu: the writer answered '%s', not '%s'", i, got, want);
                char events[256];
                if (read(watch, events, sizeof(events)) > 0)
                        g_error("case %zu (%s): the writer opened the snapshot device", i, cases[i].request);
        }
        real_writer_stop(pid);
        close(watch);
        g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
        g_assert_cmpint(system(rm), ==, 0);
}

/* An initramfs at a long path (the longest the answer can name): the
 * check's answer still fits its line, the reason cut short */
static void test_real_writer_check_long_path(void) {
        if (geteuid() != 0)
                return g_test_skip("needs root: the writer serves uid 0 only");
        g_autofree char *dir = g_dir_make_tmp("fridge-writer-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, WRITER_SOCKET_NAME, NULL);
        g_autofree char *name = g_strnfill(WRITER_PATH_MAX - 2 - strlen(dir) - strlen("/x/"), 'i');
        g_autofree char *sub = g_build_filename(dir, "x", NULL);
        g_assert_cmpint(g_mkdir(sub, 0755), ==, 0);
        g_autofree char *initrd = g_build_filename(sub, name, NULL);
        g_assert_cmpuint(strlen(initrd), ==, WRITER_PATH_MAX - 2);
        initramfs_write(initrd, "without");
        GPid pid = real_writer_start(path, "/dev/null", dir, initrd);
        g_autofree char *got = ask_as_root(path, "check\n");
        g_test_message("%s", got);
        WriterMessage m;
        char err[256];
        g_assert_cmpint(writer_message_parse(got, &m, err, sizeof(err)), ==, 0);
        g_assert_cmpint(m.type, ==, WRITER_MSG_UNUSABLE);
        g_assert_cmpstr(m.path, ==, initrd);
        g_assert_true(g_str_has_prefix(m.message, "the initramfs "));
        real_writer_stop(pid);
        g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
        g_assert_cmpint(system(rm), ==, 0);
}

/* Told no initramfs, it looks for the running kernel's where Debian and
 * Fedora keep it; none there (this host's /boot has none for a kernel
 * the test runs under, else the case is not made here) is said */
static void test_real_writer_initramfs_default(void) {
        if (geteuid() != 0)
                return g_test_skip("needs root: the writer serves uid 0 only");
        struct utsname u;
        g_assert_cmpint(uname(&u), ==, 0);
        g_autofree char *debian = g_strdup_printf("/boot/initrd.img-%s", u.release);
        g_autofree char *fedora = g_strdup_printf("/boot/initramfs-%s.img", u.release);
        if (g_file_test(debian, G_FILE_TEST_EXISTS) || g_file_test(fedora, G_FILE_TEST_EXISTS))
                return g_test_skip("this host has an initramfs for its kernel in /boot: its contents decide");
        g_autofree char *dir = g_dir_make_tmp("fridge-writer-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, WRITER_SOCKET_NAME, NULL);
        GPid pid = real_writer_start(path, "/dev/null", dir, NULL);
        g_autofree char *got = ask_as_root(path, "hibernate mode=platform\n");
        g_autofree char *want = g_strdup_printf("unavailable message=no initramfs for kernel %s (neither %s nor %s): "
                                                "the next boot could not resume fridge's image; --initramfs= names it",
                                                u.release, debian, fedora);
        g_assert_cmpstr(got, ==, want);
        /* check names the first place looked, beside which fridged watches */
        g_autofree char *checked = ask_as_root(path, "check\n");
        g_autofree char *named = g_strdup_printf("unusable path=%s key=absent message=no initramfs for kernel %s",
                                                 debian, u.release);
        if (!g_str_has_prefix(checked, named))
                g_error("check answered '%s', not '%s…'", checked, named);
        real_writer_stop(pid);
        g_assert_cmpint(unlink(path), ==, 0);
        g_assert_cmpint(rmdir(dir), ==, 0);
}

#define ADD(path, fn) g_test_add("/image-writer/" path, Fixture, NULL, harness_fixture_setup, fn, harness_fixture_teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        ADD("writes-with-progress", test_writes_with_progress);
        ADD("cancel-reaches-writer", test_cancel_reaches_writer);
        ADD("cancel-after-freeze", test_cancel_after_freeze);
        ADD("cancel-unanswered", test_cancel_unanswered);
        ADD("fridgectl-says-image", test_fridgectl_says_image);
        ADD("fridgectl-json-image", test_fridgectl_json_image);
        ADD("unavailable-falls-back", test_unavailable_falls_back);
        ADD("not-listening", test_not_listening);
        ADD("writer-hangs-up", test_writer_hangs_up);
        ADD("real-writer-unavailable", test_real_writer_unavailable);
        ADD("real-writer-initramfs-without-resume", test_real_writer_initramfs_without_resume);
        ADD("status-follows-initramfs", test_status_follows_initramfs);
        ADD("status-no-snapshot", test_status_no_snapshot);
        g_test_add_func("/image-writer/real-writer-refuses-non-root", test_real_writer_refuses_non_root);
        g_test_add_func("/image-writer/real-writer-socket-activated", test_real_writer_socket_activated);
        g_test_add_func("/image-writer/real-writer-preflight", test_real_writer_preflight);
        g_test_add_func("/image-writer/real-writer-initramfs-default", test_real_writer_initramfs_default);
        g_test_add_func("/image-writer/real-writer-check-long-path", test_real_writer_check_long_path);
        g_test_add_func("/image-writer/real-writer-listen-stays", test_real_writer_listen_stays);
        return g_test_run();
}
