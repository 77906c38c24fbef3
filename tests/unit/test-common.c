/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What fridged and fridgectl share in common/: the clock and the a{sv} walk. */
#include <errno.h>
#include <glib.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-dict.h"
#include "macro.h"
#include "time-util.h"

static void test_timespec(void) {
        struct timespec ts = { .tv_sec = 12, .tv_nsec = 345678999 };
        g_assert_cmpuint(timespec_load(&ts), ==, 12345678);
        g_assert_true(timespec_store(&ts, 7000001) == &ts);
        g_assert_cmpint(ts.tv_sec, ==, 7);
        g_assert_cmpint(ts.tv_nsec, ==, 1000);
        g_assert_cmpuint(timespec_load(timespec_store(&ts, UINT64_C(1) << 50)), ==, UINT64_C(1) << 50);
}

static void test_now(void) {
        struct timespec ts;
        g_assert_no_errno(clock_gettime(CLOCK_MONOTONIC, &ts));
        uint64_t before = timespec_load(&ts);
        uint64_t mono = now(CLOCK_MONOTONIC);
        g_usleep(20 * 1000);
        uint64_t later = now(CLOCK_MONOTONIC);
        g_assert_cmpuint(mono, >=, before);
        g_assert_cmpuint(later - mono, >=, 20 * 1000);
        g_assert_cmpuint(later - mono, <, 10 * USEC_PER_SEC);
        /* each clock is its own: boot time counts suspend as well, real time is since 1970 */
        g_assert_cmpuint(now(CLOCK_BOOTTIME), >=, later);
        g_assert_cmpuint(now(CLOCK_REALTIME), >, UINT64_C(1500000000) * USEC_PER_SEC);
}

/* A sealed message to read, on a bus whose peer never answers (closed by
 * the caller) */
static sd_bus_message *dict_message(sd_bus **ret_bus, int *ret_peer) {
        int sv[2];
        g_assert_no_errno(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
        *ret_peer = sv[1];
        g_assert_cmpint(sd_bus_new(ret_bus), >=, 0);
        g_assert_cmpint(sd_bus_set_fd(*ret_bus, sv[0], sv[0]), >=, 0);
        g_assert_cmpint(sd_bus_start(*ret_bus), >=, 0);
        sd_bus_message *m = NULL;
        g_assert_cmpint(sd_bus_message_new_signal(*ret_bus, &m, "/t", "t.T", "S"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(m, "a{sv}s", 3, "one", "s", "1", "two", "u", 2, "three", "as", 2,
                                              "a", "b", "after"),
                        >=, 0);
        g_assert_cmpint(sd_bus_message_seal(m, 1, 0), >=, 0);
        g_assert_cmpint(sd_bus_message_rewind(m, true), >=, 0);
        return m;
}

typedef struct Seen {
        GString *names;
        int fail_at; /* answer -EBADMSG at this entry (0: never) */
} Seen;

static int on_entry(sd_bus_message *m, const char *name, void *userdata) {
        Seen *s = userdata;
        g_string_append_printf(s->names, "%s,", name);
        if (s->fail_at && --s->fail_at == 0)
                return -EBADMSG;
        if (g_str_equal(name, "two")) {
                uint32_t u = 0;
                g_assert_cmpint(sd_bus_message_read(m, "v", "u", &u), >=, 0);
                g_assert_cmpuint(u, ==, 2);
                return 0;
        }
        return sd_bus_message_skip(m, "v");
}

static void test_dict_walk(void) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int peer = -1;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = dict_message(&bus, &peer);
        Seen s = { g_string_new(NULL) };
        g_assert_cmpint(bus_dict_read(m, on_entry, &s), >=, 0);
        g_assert_cmpstr(s.names->str, ==, "one,two,three,");
        /* the message is left after the dictionary */
        const char *after = NULL;
        g_assert_cmpint(sd_bus_message_read(m, "s", &after), >, 0);
        g_assert_cmpstr(after, ==, "after");
        g_string_free(s.names, TRUE);
}

static void test_dict_stops(void) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int peer = -1;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = dict_message(&bus, &peer);
        Seen s = { g_string_new(NULL), .fail_at = 2 };
        g_assert_cmpint(bus_dict_read(m, on_entry, &s), ==, -EBADMSG);
        g_assert_cmpstr(s.names->str, ==, "one,two,");
        g_string_free(s.names, TRUE);

        /* not a dictionary where one is wanted */
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *n = NULL;
        g_assert_cmpint(sd_bus_message_new_signal(bus, &n, "/t", "t.T", "S"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(n, "s", "x"), >=, 0);
        g_assert_cmpint(sd_bus_message_seal(n, 2, 0), >=, 0);
        g_assert_cmpint(sd_bus_message_rewind(n, true), >=, 0);
        Seen t = { g_string_new(NULL) };
        g_assert_cmpint(bus_dict_read(n, on_entry, &t), <, 0);
        g_assert_cmpstr(t.names->str, ==, "");
        g_string_free(t.names, TRUE);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/common/time/timespec", test_timespec);
        g_test_add_func("/common/time/now", test_now);
        g_test_add_func("/common/bus-dict/walk", test_dict_walk);
        g_test_add_func("/common/bus-dict/stops", test_dict_stops);
        return g_test_run();
}
