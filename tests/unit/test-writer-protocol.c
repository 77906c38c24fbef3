/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What fridged and fridge-image-writer say to each other
 * (hibernate/writer-protocol.h): every message made and read back the
 * same, every malformed line refused with its reason, and
 * writer_file_key(), by which fridged knows a check's answer still holds.
 */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "writer-protocol.h"

static WriterMessage parsed(const char *line) {
        WriterMessage m;
        char err[256] = "";
        if (writer_message_parse(line, &m, err, sizeof(err)) < 0)
                g_error("'%s' refused: %s", line, err);
        return m;
}

/* Each message: its line, and the line read back is the message */
static void test_round_trip(void) {
        static const struct {
                WriterMessage m;
                const char *line;
        } cases[] = {
                { { .type = WRITER_MSG_HIBERNATE, .mode = "platform" }, "hibernate mode=platform\n" },
                { { .type = WRITER_MSG_CANCEL }, "cancel\n" },
                { { .type = WRITER_MSG_CHECK }, "check\n" },
                { { .type = WRITER_MSG_PROGRESS, .done = 1, .total = 18446744073709551615u },
                  "progress done=1 total=18446744073709551615\n" },
                { { .type = WRITER_MSG_RESUMED, .raw = 8, .written = 2, .usec = 5 }, "resumed raw=8 written=2 usec=5\n" },
                { { .type = WRITER_MSG_UNAVAILABLE, .message = "no snapshot device: a b = c" },
                  "unavailable message=no snapshot device: a b = c\n" },
                { { .type = WRITER_MSG_USABLE, .path = "/boot/initrd.img-6.1", .key = "803:1a:5:1.000000002:3.4" },
                  "usable path=/boot/initrd.img-6.1 key=803:1a:5:1.000000002:3.4\n" },
                { { .type = WRITER_MSG_UNUSABLE, .path = "-", .key = "absent", .message = "key=x path=y" },
                  "unusable path=- key=absent message=key=x path=y\n" },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                char line[WRITER_LINE_MAX];
                int n = writer_message_format(&cases[i].m, line, sizeof(line));
                g_assert_cmpint(n, ==, (int) strlen(cases[i].line));
                g_assert_cmpstr(line, ==, cases[i].line);
                line[n - 1] = '\0';
                WriterMessage back = parsed(line);
                g_assert_cmpint(back.type, ==, cases[i].m.type);
                g_assert_cmpstr(back.mode, ==, cases[i].m.mode);
                g_assert_cmpstr(back.path, ==, cases[i].m.path);
                g_assert_cmpstr(back.key, ==, cases[i].m.key);
                g_assert_cmpstr(back.message, ==, cases[i].m.message);
                g_assert_cmpuint(back.done, ==, cases[i].m.done);
                g_assert_cmpuint(back.total, ==, cases[i].m.total);
                g_assert_cmpuint(back.usec, ==, cases[i].m.usec);
        }
}

static void test_refused(void) {
        static const struct {
                const char *line, *why;
        } cases[] = {
                { "sleep", "unknown message 'sleep'" },
                { "usable path=/boot/x", "usable lacks field key" },
                { "usable path=/a key=1 key=2", "usable has field key twice" },
                { "usable path= key=1", "path '' is empty or too long" },
                { "check path=/a", "check has no field 'path'" },
                { "unusable path=/a key=1", "unusable lacks field message" },
                { "progress done=1 total=x", "total=x is not a number" },
                { "progress done=1 total=99999999999999999999", "total=99999999999999999999 is not a number" },
                { "hibernate mode", "'mode' is not key=value" },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                WriterMessage m;
                char err[256] = "";
                g_assert_cmpint(writer_message_parse(cases[i].line, &m, err, sizeof(err)), ==, -EBADMSG);
                g_test_message("%s: %s", cases[i].line, err);
                if (!strstr(err, cases[i].why))
                        g_error("'%s' refused with '%s', not '%s'", cases[i].line, err, cases[i].why);
        }
        char long_path[WRITER_PATH_MAX + 8];
        memset(long_path, 'p', sizeof(long_path) - 1);
        long_path[sizeof(long_path) - 1] = '\0';
        g_autofree char *line = g_strdup_printf("usable path=%s key=1", long_path);
        WriterMessage m;
        char err[256];
        g_assert_cmpint(writer_message_parse(line, &m, err, sizeof(err)), ==, -EBADMSG);
}

/* A word with a space or a newline would read back as something else */
static void test_format_refuses(void) {
        char line[WRITER_LINE_MAX];
        const WriterMessage bad[] = {
                { .type = WRITER_MSG_USABLE, .path = "/boot/my initrd", .key = "1" },
                { .type = WRITER_MSG_USABLE, .path = "", .key = "1" },
                { .type = WRITER_MSG_UNUSABLE, .path = "/a", .key = "1", .message = "two\nlines" },
                { .type = WRITER_MSG_HIBERNATE, .mode = "" },
                { .type = _WRITER_MSG_MAX },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
                g_assert_cmpint(writer_message_format(&bad[i], line, sizeof(line)), ==, -EINVAL);
        WriterMessage huge = { .type = WRITER_MSG_UNAVAILABLE };
        memset(huge.message, 'x', WRITER_LINE_MAX - 1);
        g_assert_cmpint(writer_message_format(&huge, line, sizeof(line)), ==, -ENOBUFS);
}

/* The key changes when update-initramfs puts a new file in place (a
 * rename), or the file is rewritten where it is; not when it is only read */
static void test_file_key(void) {
        g_autofree char *dir = g_dir_make_tmp("fridge-key-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, "initrd.img", NULL);
        g_autofree char *next = g_build_filename(dir, "initrd.img.new", NULL);
        char absent[WRITER_KEY_MAX], a[WRITER_KEY_MAX], again[WRITER_KEY_MAX], renamed[WRITER_KEY_MAX],
                rewritten[WRITER_KEY_MAX];
        writer_file_key(path, absent, sizeof(absent));
        g_assert_cmpstr(absent, ==, "absent");
        g_assert_true(g_file_set_contents(path, "one", -1, NULL));
        writer_file_key(path, a, sizeof(a));
        g_assert_cmpstr(a, !=, "absent");
        g_assert_null(strchr(a, ' '));
        g_autofree char *contents = NULL;
        g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
        writer_file_key(path, again, sizeof(again));
        g_assert_cmpstr(again, ==, a);
        g_assert_true(g_file_set_contents(next, "one", -1, NULL)); /* same size, same second maybe */
        g_assert_cmpint(g_rename(next, path), ==, 0);
        writer_file_key(path, renamed, sizeof(renamed));
        g_assert_cmpstr(renamed, !=, a);
        FILE *f = fopen(path, "r+");
        g_assert_nonnull(f);
        g_assert_cmpint(fputs("three", f), >=, 0); /* longer: a coarse clock may not tell */
        g_assert_cmpint(fclose(f), ==, 0);
        writer_file_key(path, rewritten, sizeof(rewritten));
        g_assert_cmpstr(rewritten, !=, renamed);
        g_assert_cmpint(g_unlink(path), ==, 0);
        g_assert_cmpint(g_rmdir(dir), ==, 0);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/writer-protocol/round-trip", test_round_trip);
        g_test_add_func("/writer-protocol/refused", test_refused);
        g_test_add_func("/writer-protocol/format-refuses", test_format_refuses);
        g_test_add_func("/writer-protocol/file-key", test_file_key);
        return g_test_run();
}
