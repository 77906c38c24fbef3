/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The writer's console while user space is frozen: the bar says MiB of
 * the total, MiB/s and time left; Esc, Backspace or Ctrl-H typed there
 * asks for the abort, other keys do not. In --serve fridged's connection
 * is a console too: its cancel line aborts (whether it came with the
 * request, whole, or in pieces), other lines do not, and the progress goes
 * there as lines that never wait. */
#include <glib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "image-console.h"

static void test_format(void) {
        char line[160];
        image_console_format(line, sizeof(line), 38u << 20, 76u << 20, 2000000);
        g_assert_cmpstr(line, ==, "[##########..........] 38 of 76 MiB, 19.0 MiB/s, 2 s left (Esc aborts)");
        image_console_format(line, sizeof(line), 76u << 20, 76u << 20, 4000000);
        g_assert_cmpstr(line, ==, "[####################] 76 of 76 MiB, 19.0 MiB/s, 0 s left (Esc aborts)");
        image_console_format(line, sizeof(line), 0, 76u << 20, 0);
        g_assert_cmpstr(line, ==, "[....................] 0 of 76 MiB, 0.0 MiB/s, 0 s left (Esc aborts)");
}

static bool typed(const char *keys, size_t len) {
        int p[2];
        g_assert_cmpint(pipe(p), ==, 0);
        g_assert_cmpint(write(p[1], keys, len), ==, (ssize_t) len);
        close(p[1]); /* the reader sees the keys, then the end */
        ImageConsole c = { .fd = p[0] };
        bool r = image_console_abort_typed(&c);
        close(p[0]);
        return r;
}

static void test_keys(void) {
        g_assert_true(typed("\033", 1));
        g_assert_true(typed("ab\177", 3));
        g_assert_true(typed("\b", 1));
        g_assert_false(typed("q\r\n ", 4));
        ImageConsole none = { .fd = -1 };
        g_assert_false(image_console_abort_typed(&none));
}

/* fridged's end of a socketpair; the writer's attached to c */
static int peer_pair(ImageConsole *c) {
        int sv[2];
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        *c = (ImageConsole) { .fd = -1 };
        image_console_attach_peer(c, sv[0]);
        return sv[1];
}

static void say(int fd, const char *s) {
        g_assert_cmpint(send(fd, s, strlen(s), 0), ==, (ssize_t) strlen(s));
}

static void test_peer_cancel(void) {
        ImageConsole c;
        int fridged = peer_pair(&c);
        g_assert_false(image_console_abort_typed(&c));
        say(fridged, "progress done=1 total=2\nbogus\ncanc");
        g_assert_false(image_console_abort_typed(&c));
        g_assert_false(c.peer_cancelled);
        say(fridged, "el\n");
        g_assert_true(image_console_abort_typed(&c));
        g_assert_true(c.peer_cancelled);
        g_assert_true(image_console_peer_cancelled(&c)); /* it stays said */
        close(fridged);
        close(c.peer);

        /* the cancel that came in one read with the request, left in the buffer */
        fridged = peer_pair(&c);
        const char *buffered = "cancel\n";
        c.in.len = strlen(buffered);
        memcpy(c.in.buf, buffered, c.in.len);
        g_assert_true(image_console_peer_cancelled(&c));
        close(fridged);
        close(c.peer);
}

/* fridged gone (crashed, or it gave up on a writer that did not answer
 * its Cancel): the write stops as for a cancel, and says why */
static void test_peer_hang_up(void) {
        ImageConsole c;
        int fridged = peer_pair(&c);
        say(fridged, "progress done=1 total=2\n");
        g_assert_false(image_console_abort_typed(&c));
        g_assert_cmpstr(image_console_abort_reason(&c), ==, "Esc typed on the console");
        close(fridged);
        g_assert_true(image_console_abort_typed(&c));
        g_assert_true(c.peer_hung_up);
        g_assert_cmpstr(image_console_abort_reason(&c), ==, "fridged hung up");
        close(c.peer);

        fridged = peer_pair(&c);
        say(fridged, "cancel\n");
        g_assert_true(image_console_peer_cancelled(&c));
        g_assert_false(c.peer_hung_up);
        g_assert_cmpstr(image_console_abort_reason(&c), ==, "fridged cancelled the write");
        close(fridged);
        close(c.peer);
}

static void test_peer_progress(void) {
        ImageConsole c;
        int fridged = peer_pair(&c);
        image_console_start(&c);
        image_console_progress(&c, 4u << 20, 4u << 20); /* done: always sent */
        char got[WRITER_LINE_MAX] = "";
        g_assert_cmpint(recv(fridged, got, sizeof(got) - 1, MSG_DONTWAIT), >, 0);
        g_assert_cmpstr(got, ==, "progress done=4194304 total=4194304\n");
        /* a peer that reads nothing: lines dropped, never a wait */
        for (int i = 0; i < 100000; i++)
                image_console_progress(&c, 1, 1);
        close(fridged);
        image_console_progress(&c, 1, 1); /* nor a SIGPIPE once it is gone */
        close(c.peer);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/image-console/format", test_format);
        g_test_add_func("/image-console/keys", test_keys);
        g_test_add_func("/image-console/peer-cancel", test_peer_cancel);
        g_test_add_func("/image-console/peer-hang-up", test_peer_hang_up);
        g_test_add_func("/image-console/peer-progress", test_peer_progress);
        return g_test_run();
}
