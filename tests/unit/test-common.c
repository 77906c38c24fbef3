/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What fridged and fridgectl share in common/: the clock, the a{sv} walk,
 * time spans and the configuration's search path. */
#include <errno.h>
#include <glib.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-dict.h"
#include "conf-files.h"
#include "macro.h"
#include "time-span.h"
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

static uint64_t span(const char *s, uint64_t unit) {
        uint64_t usec = 0;
        g_assert_cmpint(time_span_parse(s, unit, &usec), ==, 0);
        return usec;
}

/* systemd's parse_sec() forms; a bare number in the caller's unit */
static void test_time_span_good(void) {
        g_assert_cmpuint(span("500ms", USEC_PER_SEC), ==, 500000);
        g_assert_cmpuint(span("30s", 1), ==, 30 * USEC_PER_SEC);
        g_assert_cmpuint(span("2min", 1), ==, 120 * USEC_PER_SEC);
        g_assert_cmpuint(span("1h", 1), ==, 3600 * USEC_PER_SEC);
        g_assert_cmpuint(span("1min 30s", 1), ==, 90 * USEC_PER_SEC);
        g_assert_cmpuint(span("1min30s", 1), ==, 90 * USEC_PER_SEC);
        g_assert_cmpuint(span(" 1.5s ", 1), ==, 1500000);
        g_assert_cmpuint(span("2 m", 1), ==, 120 * USEC_PER_SEC);
        g_assert_cmpuint(span("1d 2h 3min 4s 5ms 6us", 1), ==,
                         ((((1ULL * 24 + 2) * 60 + 3) * 60 + 4) * 1000 + 5) * 1000 + 6);
        g_assert_cmpuint(span("1500", USEC_PER_MSEC), ==, 1500000); /* fridge.conf's ...Ms keys */
        g_assert_cmpuint(span("7", USEC_PER_SEC), ==, 7 * USEC_PER_SEC);
        uint32_t ms = 0;
        g_assert_cmpint(time_span_parse_u32("1min 30s", USEC_PER_MSEC, &ms), ==, 0);
        g_assert_cmpuint(ms, ==, 90000);
        g_assert_cmpint(time_span_parse_u32("30000", USEC_PER_MSEC, &ms), ==, 0);
        g_assert_cmpuint(ms, ==, 30000);
        char buf[64];
        g_assert_cmpstr(time_span_format_ms(90500, buf, sizeof(buf)), ==, "1min 30s 500ms");
        g_assert_cmpstr(time_span_format_ms(3600000, buf, sizeof(buf)), ==, "1h");
        g_assert_cmpstr(time_span_format_ms(0, buf, sizeof(buf)), ==, "0");
}

static void test_time_span_bad(void) {
        static const char *const bad[] = { "", " ", "-5", "+5", "5x", "s", "1 fortnight", "0x10", "1min -30s",
                                           "30s,", "1..5s", "infinity" };
        uint64_t usec;
        uint32_t ms;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                if (time_span_parse(bad[i], 1, &usec) != -EINVAL)
                        g_error("\"%s\" was taken as a time span", bad[i]);
        g_assert_cmpint(time_span_parse("99999999999999999999", 1, &usec), ==, -ERANGE);
        g_assert_cmpint(time_span_parse("3000000y", 1, &usec), ==, -ERANGE);
        g_assert_cmpint(time_span_parse_u32("1500us", USEC_PER_MSEC, &ms), ==, -EINVAL); /* finer than 1 ms */
        g_assert_cmpint(time_span_parse_u32("50d", USEC_PER_MSEC, &ms), ==, -ERANGE);
}

static void write_at(const char *dir, const char *name, const char *text) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *parent = g_path_get_dirname(path);
        g_assert_cmpint(g_mkdir_with_parents(parent, 0755), ==, 0);
        g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

/* systemd's precedence: the main file is the first found; drop-ins merge
 * by name, the higher directory's hiding the lower's, empty or /dev/null
 * masking; applied in name order after the main file */
static void test_conf_files(void) {
        g_autofree char *root = g_dir_make_tmp("conf-files-XXXXXX", NULL);
        _cleanup_strv_free_ char **dirs = NULL;
        g_assert_cmpint(conf_search_dirs(root, "fridge", &dirs), ==, 0);
        g_autofree char *etc = g_build_filename(root, "etc/fridge", NULL);
        g_autofree char *usr = g_build_filename(root, "usr/lib/fridge", NULL);
        g_assert_cmpstr(dirs[0], ==, etc);
        g_assert_cmpstr(dirs[3], ==, usr);
        g_assert_null(dirs[4]);

        write_at(root, "usr/lib/fridge/fridge.conf", "vendor\n");
        write_at(root, "run/fridge/fridge.conf", "runtime\n");
        write_at(root, "usr/lib/fridge/fridge.conf.d/10-a.conf", "a\n");
        write_at(root, "run/fridge/fridge.conf.d/10-a.conf", "a from run\n");
        write_at(root, "etc/fridge/fridge.conf.d/20-b.conf", "");          /* masks usr's */
        write_at(root, "usr/lib/fridge/fridge.conf.d/20-b.conf", "b\n");
        write_at(root, "usr/local/lib/fridge/fridge.conf.d/05-c.conf", "c\n");
        write_at(root, "usr/lib/fridge/fridge.conf.d/README", "not a drop-in\n");
        g_autofree char *devnull = g_build_filename(root, "etc/fridge/fridge.conf.d/30-d.conf", NULL);
        g_assert_cmpint(symlink("/dev/null", devnull), ==, 0);
        write_at(root, "usr/lib/fridge/fridge.conf.d/30-d.conf", "d\n");

        _cleanup_(conf_files_freep) ConfFiles *f = NULL;
        g_assert_cmpint(conf_files_list(dirs, "fridge.conf", "fridge.conf.d", &f), ==, 0);
        g_assert_cmpuint(f->n, ==, 5);
        const char *want[] = { "run/fridge/fridge.conf", "usr/local/lib/fridge/fridge.conf.d/05-c.conf",
                               "run/fridge/fridge.conf.d/10-a.conf", "etc/fridge/fridge.conf.d/20-b.conf",
                               "etc/fridge/fridge.conf.d/30-d.conf" };
        for (size_t i = 0; i < f->n; i++) {
                g_autofree char *p = g_build_filename(root, want[i], NULL);
                g_assert_cmpstr(f->files[i].path, ==, p);
                g_assert_true(f->files[i].main == (i == 0));
                g_assert_true(f->files[i].masked == (i >= 3));
        }

        /* fridge's own path: the built-in directories stand for etc and usr/lib; overrides replace them */
        _cleanup_strv_free_ char **own = NULL;
        g_assert_cmpint(conf_fridge_dirs(root, "/x/etc", "/x/vendor", &own), ==, 0);
        g_assert_cmpstr(own[0], ==, "/x/etc");
        g_assert_cmpstr(own[3], ==, "/x/vendor");
        g_assert_true(g_str_has_prefix(own[1], root));
        g_autofree char *rm = g_strdup_printf("rm -rf '%s'", root);
        g_assert_cmpint(system(rm), ==, 0);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/common/time/timespec", test_timespec);
        g_test_add_func("/common/time/now", test_now);
        g_test_add_func("/common/bus-dict/walk", test_dict_walk);
        g_test_add_func("/common/bus-dict/stops", test_dict_stops);
        g_test_add_func("/common/time-span/good", test_time_span_good);
        g_test_add_func("/common/time-span/bad", test_time_span_bad);
        g_test_add_func("/common/conf-files", test_conf_files);
        return g_test_run();
}
