/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fd-scoped leases: one ends when its holder closes the fd, and ending it
 * from fridged's side (explicitly or with its owner) leaves the holder's fd
 * without a reader and calls nobody. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "inhibit.h"
#include "lease.h"
#include "macro.h"
#include "overrides.h"

typedef struct Seen {
        unsigned ended;
        Lease *free_me; /* freed from the callback, as the inhibitors do */
} Seen;

static void on_ended(void *userdata) {
        Seen *s = userdata;
        s->ended++;
        s->free_me = lease_free(s->free_me);
}

static void run(sd_event *e) {
        for (int i = 0; i < 5; i++)
                g_assert_cmpint(sd_event_run(e, 10 * 1000), >=, 0);
}

/* Whether the pipe's read end is gone: a write fails with EPIPE (SIGPIPE
 * is ignored by the test) */
static bool reader_gone(int fd) {
        return write(fd, "x", 1) < 0 && errno == EPIPE;
}

static sd_event *loop(void) {
        sd_event *e = NULL;
        g_assert_cmpint(sd_event_new(&e), >=, 0);
        return e;
}

static Lease *take(sd_event *e, LeaseEnded ended, Seen *s, int *ret_fd) {
        Lease *l = NULL;
        *ret_fd = -1;
        g_assert_cmpint(lease_new(e, "test", ended, s, &l, ret_fd), ==, 0);
        g_assert_nonnull(l);
        g_assert_cmpint(*ret_fd, >=, 0);
        return l;
}

static void test_close_ends(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = loop();
        Seen s = {};
        int fd;
        Lease *l = take(e, on_ended, &s, &fd);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(fcntl(fd, F_GETFD) & FD_CLOEXEC, !=, 0);
        s.free_me = l;

        run(e);
        g_assert_cmpuint(s.ended, ==, 0); /* held while the holder keeps its end */
        g_assert_false(reader_gone(fd));
        close(fd);
        run(e);
        g_assert_cmpuint(s.ended, ==, 1);
        g_assert_null(s.free_me);
        run(e);
        g_assert_cmpuint(s.ended, ==, 1);
}

static void test_release_ends_quietly(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = loop();
        Seen s = {};
        int fd;
        Lease *l = take(e, on_ended, &s, &fd);

        g_assert_null(lease_free(l));
        g_assert_true(reader_gone(fd));
        close(fd);
        run(e);
        g_assert_cmpuint(s.ended, ==, 0);
        g_assert_null(lease_free(NULL));
}

static void test_free_with_owner(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = loop();
        Seen s = {};
        int fd;
        {
                g_autoptr(Lease) l = take(e, on_ended, &s, &fd);
                g_assert_nonnull(l);
                g_assert_false(reader_gone(fd));
        }
        g_assert_true(reader_gone(fd));
        close(fd);
        run(e);
        g_assert_cmpuint(s.ended, ==, 0);
}

static void on_hold_released(uint64_t hold, void *userdata) {
        *(uint64_t *) userdata = hold;
}

/* Both users: a class hold ends when its holder closes the fd, and freeing
 * the registries ends every lease they hold */
static void test_owners(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = loop();
        uint64_t released = 0, hold, kept, id;
        int hold_fd, kept_fd, inhibit_fd;
        Overrides *o = overrides_new(e, on_hold_released, &released);
        g_assert_cmpint(overrides_add_hold(o, "user.slice/a.scope", CLASS_LATE, 1000, "me", "test", &hold_fd, &hold), ==, 0);
        g_assert_cmpint(overrides_add_hold(o, "user.slice/b.scope", CLASS_LATE, 1000, "me", "test", &kept_fd, &kept), ==, 0);
        Inhibitors *r = inhibit_new(e, NULL, NULL);
        Inhibitor t = { .who = (char *) "me", .why = (char *) "test", .mode = INHIBIT_BLOCK, .sender = (char *) ":1.1" };
        g_autofree char *message = NULL;
        g_assert_cmpint(inhibit_add(r, &t, &inhibit_fd, &id, &message), ==, 0);

        close(hold_fd);
        run(e);
        g_assert_cmpuint(released, ==, hold);
        g_assert_null(g_hash_table_lookup(overrides_holds(o), "user.slice/a.scope"));
        g_assert_nonnull(g_hash_table_lookup(overrides_holds(o), "user.slice/b.scope"));

        g_assert_false(reader_gone(kept_fd));
        g_assert_false(reader_gone(inhibit_fd));
        g_assert_null(overrides_free(o));
        g_assert_null(inhibit_free(r));
        g_assert_true(reader_gone(kept_fd));
        g_assert_true(reader_gone(inhibit_fd));
        close(kept_fd);
        close(inhibit_fd);
}

/* Nobody to tell: the hung-up pipe must not keep the loop busy */
static void test_no_callback(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = loop();
        int fd;
        g_autoptr(Lease) l = take(e, NULL, NULL, &fd);
        g_assert_nonnull(l);
        close(fd);
        g_assert_cmpint(sd_event_run(e, 10 * 1000), ==, 1);
        g_assert_cmpint(sd_event_run(e, 10 * 1000), ==, 0); /* timed out: nothing left to dispatch */
}

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/lease/close-ends", test_close_ends);
        g_test_add_func("/lease/release-ends-quietly", test_release_ends_quietly);
        g_test_add_func("/lease/free-with-owner", test_free_with_owner);
        g_test_add_func("/lease/no-callback", test_no_callback);
        g_test_add_func("/lease/owners", test_owners);
        return g_test_run();
}
