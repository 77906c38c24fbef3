/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridged's side of the writer's "check" (daemon/kernel/writer-verdict.c)
 * against a writer played here on a real socket: the question goes out
 * without waiting, the answer is taken, it stands while the initramfs it
 * names is the same file, a changed file or a new one beside it drops it
 * at once, reads and an unmounted /boot (an automount expiring) do not,
 * an old answer stands while it is asked again, and a writer that hangs
 * up or is not there leaves no answer behind.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "time-util.h"
#include "writer-protocol.h"
#include "writer-verdict.h"

#define TTL_USEC (200 * USEC_PER_MSEC)

typedef struct Fixture {
        sd_event *event;
        char *dir, *socket_path, *initrd;
        int listen_fd;
        WriterVerdict *v;
} Fixture;

static void setup(Fixture *f, gconstpointer data) {
        g_assert_cmpint(sd_event_new(&f->event), >=, 0);
        f->dir = g_dir_make_tmp("fridge-verdict-XXXXXX", NULL);
        f->socket_path = g_build_filename(f->dir, WRITER_SOCKET_NAME, NULL);
        f->initrd = g_build_filename(f->dir, "initrd.img", NULL);
        g_assert_true(g_file_set_contents(f->initrd, "archive", -1, NULL));
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        g_assert_cmpuint(strlen(f->socket_path), <, sizeof(sa.sun_path));
        strcpy(sa.sun_path, f->socket_path);
        f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        g_assert_cmpint(bind(f->listen_fd, (struct sockaddr *) &sa, sizeof(sa)), ==, 0);
        g_assert_cmpint(listen(f->listen_fd, 4), ==, 0);
        f->v = writer_verdict_new(f->event, f->socket_path, TTL_USEC);
}

static void teardown(Fixture *f, gconstpointer data) {
        writer_verdict_free(f->v);
        close(f->listen_fd);
        sd_event_unref(f->event);
        (void) g_unlink(f->socket_path);
        (void) g_unlink(f->initrd);
        g_assert_cmpint(g_rmdir(f->dir), ==, 0);
        g_free(f->socket_path);
        g_free(f->initrd);
        g_free(f->dir);
}

/* The question fridged sent, taken here as the writer; its connection */
static int question_take(Fixture *f) {
        int c = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        g_assert_cmpint(c, >=, 0);
        char line[64] = "";
        g_assert_cmpint(read(c, line, sizeof(line) - 1), ==, 6);
        g_assert_cmpstr(line, ==, "check\n");
        return c;
}

static bool question_out(Fixture *f) {
        struct pollfd p = { .fd = f->listen_fd, .events = POLLIN };
        return poll(&p, 1, 0) == 1;
}

static void loop_run(Fixture *f) {
        for (int i = 0; i < 10; i++)
                g_assert_cmpint(sd_event_run(f->event, 10 * USEC_PER_MSEC), >=, 0);
}

/* The writer's answer on c, not yet taken by fridged's loop */
static void answer_send(int c, WriterMessageType type, const char *path, const char *message) {
        WriterMessage m = { .type = type };
        g_strlcpy(m.path, path, sizeof(m.path));
        if (strcmp(path, "-") == 0)
                g_strlcpy(m.key, "unchecked", sizeof(m.key));
        else
                writer_file_key(path, m.key, sizeof(m.key));
        if (message)
                g_strlcpy(m.message, message, sizeof(m.message));
        char line[WRITER_LINE_MAX];
        int n = writer_message_format(&m, line, sizeof(line));
        g_assert_cmpint(n, >, 0);
        g_assert_cmpint(write(c, line, (size_t) n), ==, n);
        close(c);
}

/* The writer's answer on c, and fridged's loop until it took it */
static void answer(Fixture *f, int c, WriterMessageType type, const char *path, const char *message) {
        answer_send(c, type, path, message);
        loop_run(f);
}

/* Unasked, the writer is taken at its word while the question is out */
static void test_asked_without_waiting(Fixture *f, gconstpointer data) {
        g_assert_null(writer_verdict_refusal(f->v));
        g_assert_true(question_out(f));
        int c = question_take(f);
        g_assert_null(writer_verdict_refusal(f->v)); /* still out: not asked twice */
        g_assert_false(question_out(f));
        answer(f, c, WRITER_MSG_UNUSABLE, f->initrd, "the initramfs holds no fridge-resume");
        g_assert_cmpstr(writer_verdict_refusal(f->v), ==, "the initramfs holds no fridge-resume");
        g_assert_false(question_out(f)); /* an answer that holds is not asked for again */
}

/* update-initramfs: a new file in its place drops the refusal at once */
static void test_changed_file(Fixture *f, gconstpointer data) {
        (void) writer_verdict_refusal(f->v);
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, f->initrd, "holds no fridge-resume");
        g_assert_nonnull(writer_verdict_refusal(f->v));
        g_autofree char *next = g_strdup_printf("%s.new", f->initrd);
        g_assert_true(g_file_set_contents(next, "archive", -1, NULL));
        g_assert_cmpint(g_rename(next, f->initrd), ==, 0);
        g_assert_null(writer_verdict_refusal(f->v));
        answer(f, question_take(f), WRITER_MSG_USABLE, f->initrd, NULL);
        g_assert_null(writer_verdict_refusal(f->v));
}

/* The initramfs update-initramfs has not made yet appearing: the writer
 * found none, so any new file beside the first place it looked may be the
 * one. Beside one it found, other files and reads of it change nothing. */
static void test_new_file_beside(Fixture *f, gconstpointer data) {
        g_autofree char *absent = g_build_filename(f->dir, "initrd.img-new", NULL);
        g_autofree char *other = g_build_filename(f->dir, "System.map", NULL);
        (void) writer_verdict_refusal(f->v);
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, f->initrd, "holds no fridge-resume");
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(f->initrd, &text, NULL, NULL)); /* as the writer reads it */
        g_assert_true(g_file_set_contents(other, "map", -1, NULL));
        g_assert_nonnull(writer_verdict_refusal(f->v));
        g_assert_false(question_out(f));
        g_assert_cmpint(g_unlink(other), ==, 0);

        g_assert_cmpint(g_unlink(f->initrd), ==, 0); /* dropped: asked again */
        g_usleep(30 * USEC_PER_MSEC); /* a clock tick: the directory's change is older than the question */
        g_assert_null(writer_verdict_refusal(f->v));
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, absent, "no initramfs for kernel new");
        g_assert_nonnull(writer_verdict_refusal(f->v));
        g_assert_true(g_file_set_contents(other, "map", -1, NULL));
        g_assert_null(writer_verdict_refusal(f->v));
        g_assert_true(question_out(f));
        close(question_take(f));
        g_assert_cmpint(g_unlink(other), ==, 0);
}

/* A change between the writer's look and fridged taking its answer (and
 * its watch) is seen: by the key where the writer found the file, by the
 * directory's times where it did not */
static void test_changed_before_watch(Fixture *f, gconstpointer data) {
        (void) writer_verdict_refusal(f->v);
        answer_send(question_take(f), WRITER_MSG_UNUSABLE, f->initrd, "holds no fridge-resume");
        g_assert_true(g_file_set_contents(f->initrd, "new archive", -1, NULL));
        loop_run(f);
        g_assert_null(writer_verdict_refusal(f->v));
        g_assert_true(question_out(f));

        g_autofree char *absent = g_build_filename(f->dir, "initrd.img-new", NULL);
        g_usleep(30 * USEC_PER_MSEC); /* a clock tick: the change above is older than the next question */
        answer_send(question_take(f), WRITER_MSG_UNUSABLE, absent, "no initramfs for kernel new");
        g_assert_true(g_file_set_contents(absent, "archive", -1, NULL));
        loop_run(f);
        g_assert_null(writer_verdict_refusal(f->v));
        close(question_take(f));
        g_assert_cmpint(g_unlink(absent), ==, 0);
}

/* update-initramfs ran: the writer is asked again on the loop, unread */
static void test_changed_asks_again(Fixture *f, gconstpointer data) {
        (void) writer_verdict_refusal(f->v);
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, f->initrd, "holds no fridge-resume");
        g_assert_true(g_file_set_contents(f->initrd, "new archive", -1, NULL));
        for (int i = 0; i < 100 && !question_out(f); i++)
                g_assert_cmpint(sd_event_run(f->event, 10 * USEC_PER_MSEC), >=, 0);
        g_assert_true(question_out(f));
        answer(f, question_take(f), WRITER_MSG_USABLE, f->initrd, NULL);
        g_assert_null(writer_verdict_refusal(f->v));
        g_assert_false(question_out(f));
        for (int i = 0; i < 3; i++) /* and the loop is idle again: nothing left to wake it */
                g_assert_cmpint(sd_event_run(f->event, 0), ==, 0);
}

/* --initramfs= naming a symlink (Debian's /initrd.img): its target
 * replaced in its own directory is a change. sub: the target's directory
 * under the link's ("boot"), or NULL for the link's own, whose one watch
 * then serves both names. */
static void symlink_target_replaced(Fixture *f, const char *sub) {
        g_autofree char *dir = sub ? g_build_filename(f->dir, sub, NULL) : g_strdup(f->dir);
        g_autofree char *target = g_build_filename(dir, "initrd.img-k", NULL);
        g_autofree char *next = g_build_filename(dir, "initrd.img-k.new", NULL);
        g_autofree char *link = g_build_filename(f->dir, "initrd.link", NULL);
        g_autofree char *to = sub ? g_build_filename(sub, "initrd.img-k", NULL) : g_strdup("initrd.img-k");
        if (sub)
                g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
        g_assert_true(g_file_set_contents(target, "archive", -1, NULL));
        g_assert_cmpint(symlink(to, link), ==, 0);
        (void) writer_verdict_refusal(f->v);
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, link, "holds no fridge-resume");
        g_assert_nonnull(writer_verdict_refusal(f->v));
        g_assert_true(g_file_set_contents(next, "new archive", -1, NULL));
        g_assert_cmpint(g_rename(next, target), ==, 0);
        g_assert_null(writer_verdict_refusal(f->v));
        close(question_take(f));
        g_assert_cmpint(g_unlink(link), ==, 0);
        g_assert_cmpint(g_unlink(target), ==, 0);
        if (sub)
                g_assert_cmpint(g_rmdir(dir), ==, 0);
}

static void test_symlink_target(Fixture *f, gconstpointer data) {
        symlink_target_replaced(f, "boot");
}

static void test_symlink_beside_target(Fixture *f, gconstpointer data) {
        symlink_target_replaced(f, NULL);
}

/* A directory that cannot be watched (not there yet): each read looks */
static void test_unwatchable_looks(Fixture *f, gconstpointer data) {
        g_autofree char *boot = g_build_filename(f->dir, "boot", NULL);
        g_autofree char *initrd = g_build_filename(boot, "initrd.img-k", NULL);
        (void) writer_verdict_refusal(f->v);
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, initrd, "no initramfs for kernel k");
        g_assert_nonnull(writer_verdict_refusal(f->v));
        g_assert_false(question_out(f));
        g_assert_cmpint(g_mkdir(boot, 0755), ==, 0);
        g_assert_true(g_file_set_contents(initrd, "archive", -1, NULL));
        g_assert_null(writer_verdict_refusal(f->v));
        close(question_take(f));
        g_assert_cmpint(g_unlink(initrd), ==, 0);
        g_assert_cmpint(g_rmdir(boot), ==, 0);
}

/* An automounted /boot expiring: its initramfs is not gone, and no read
 * of the property mounts it again to look (a private mount namespace, so
 * nothing outlives the test) */
static void test_unmounted_stands(Fixture *f, gconstpointer data) {
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                g_test_skip("needs a mount namespace of its own (root)");
                return;
        }
        g_autofree char *boot = g_build_filename(f->dir, "boot", NULL);
        g_autofree char *initrd = g_build_filename(boot, "initrd.img", NULL);
        g_assert_cmpint(g_mkdir(boot, 0755), ==, 0);
        g_assert_cmpint(mount("boot", boot, "tmpfs", 0, "size=1m"), ==, 0);
        g_assert_true(g_file_set_contents(initrd, "archive", -1, NULL));
        (void) writer_verdict_refusal(f->v);
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, initrd, "holds no fridge-resume");
        g_assert_cmpint(umount(boot), ==, 0);
        g_assert_cmpstr(writer_verdict_refusal(f->v), ==, "holds no fridge-resume");
        g_assert_false(question_out(f));
        g_assert_cmpint(g_rmdir(boot), ==, 0);
}

/* Past its TTL the answer is asked for again, and stands meanwhile */
static void test_old_answer_stands(Fixture *f, gconstpointer data) {
        (void) writer_verdict_refusal(f->v);
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, "-", "no snapshot device");
        g_usleep(TTL_USEC + 50 * USEC_PER_MSEC);
        g_assert_cmpstr(writer_verdict_refusal(f->v), ==, "no snapshot device");
        g_assert_true(question_out(f));
        int c = question_take(f);
        g_assert_cmpstr(writer_verdict_refusal(f->v), ==, "no snapshot device");
        answer(f, c, WRITER_MSG_USABLE, "-", NULL);
        g_assert_null(writer_verdict_refusal(f->v));
}

/* A writer that hangs up unanswering, or has gone, leaves no old answer */
static void test_no_answer_drops(Fixture *f, gconstpointer data) {
        (void) writer_verdict_refusal(f->v);
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, "-", "no snapshot device");
        g_usleep(TTL_USEC + 50 * USEC_PER_MSEC);
        g_assert_nonnull(writer_verdict_refusal(f->v));
        close(question_take(f));
        loop_run(f);
        g_assert_null(writer_verdict_refusal(f->v));
        answer(f, question_take(f), WRITER_MSG_UNUSABLE, "-", "no snapshot device");
        g_assert_nonnull(writer_verdict_refusal(f->v));
        g_usleep(TTL_USEC + 50 * USEC_PER_MSEC);
        g_assert_cmpint(g_unlink(f->socket_path), ==, 0); /* the writer is gone */
        g_assert_null(writer_verdict_refusal(f->v));
}

/* A line that is not an answer is no answer */
static void test_garbage(Fixture *f, gconstpointer data) {
        (void) writer_verdict_refusal(f->v);
        int c = question_take(f);
        g_assert_cmpint(write(c, "resumed raw=1\n", 14), ==, 14);
        close(c);
        loop_run(f);
        g_assert_null(writer_verdict_refusal(f->v));
        g_assert_true(question_out(f)); /* asked again */
        close(question_take(f));
}

#define ADD(name, fn) g_test_add("/writer-verdict/" name, Fixture, NULL, setup, fn, teardown)

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        ADD("asked-without-waiting", test_asked_without_waiting);
        ADD("changed-file", test_changed_file);
        ADD("new-file-beside", test_new_file_beside);
        ADD("unmounted-stands", test_unmounted_stands);
        ADD("changed-before-watch", test_changed_before_watch);
        ADD("changed-asks-again", test_changed_asks_again);
        ADD("symlink-target", test_symlink_target);
        ADD("symlink-beside-target", test_symlink_beside_target);
        ADD("unwatchable-looks", test_unwatchable_looks);
        ADD("old-answer-stands", test_old_answer_stands);
        ADD("no-answer-drops", test_no_answer_drops);
        ADD("garbage", test_garbage);
        return g_test_run();
}
