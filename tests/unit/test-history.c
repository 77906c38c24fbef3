/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The history store: a cycle's [Cycle] group round trip, other groups
 * kept, the bound (the oldest of the uid with the most first), and malformed or foreign files skipped
 * with a warning that names them. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "history.h"
#include "log.h"
#include "util.h"

static GString *warnings;

static void sink(int level, const char *message, const char *const *fields, void *userdata) {
        if (level <= LOG_WARNING)
                g_string_append_printf(warnings, "%s\n", message);
}

typedef struct Dir {
        char *path;
        int fd;
} Dir;

static void dir_open(Dir *d) {
        d->path = g_dir_make_tmp("fridge-history-XXXXXX", NULL);
        g_assert_nonnull(d->path);
        d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(d->fd, >=, 0);
        g_string_truncate(warnings, 0);
}

static void dir_close(Dir *d) {
        g_autofree char *hist = g_build_filename(d->path, "history", NULL);
        g_autoptr(GDir) gd = g_dir_open(hist, 0, NULL);
        for (const char *n; gd && (n = g_dir_read_name(gd));) {
                g_autofree char *p = g_build_filename(hist, n, NULL);
                g_assert_cmpint(g_unlink(p), ==, 0);
        }
        g_assert_cmpint(g_rmdir(hist), ==, 0);
        g_assert_cmpint(g_rmdir(d->path), ==, 0);
        close(d->fd);
        g_free(d->path);
}

static char *history_file(const Dir *d, const char *name) {
        return g_build_filename(d->path, "history", name, NULL);
}

static HistoryCycle sample(uint64_t id) {
        return (HistoryCycle) { .id = id, .kind = (char *) "suspend", .starter = (char *) HISTORY_STARTER_CALLER,
                                .uid = 1000, .pid = 4321, .start_usec = 1700000000000000 + id,
                                .end_usec = 1700000000500000 + id, .result = (char *) "failed",
                                .error = (char *) "io.fridge.Fridge1.Error.FreezeTimeout",
                                .phase = (char *) "freeze-early", .message = (char *) "a;b = c\nd",
                                .slept_usec = 0, .wake_source = (char *) "" };
}

static void add_as(History *h, uint64_t id, uid_t uid) {
        HistoryCycle c = sample(id);
        c.uid = uid;
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_assert_cmpint(history_add(h, &c, kf, NULL), ==, 0);
}

static void add(History *h, uint64_t id) {
        HistoryCycle c = sample(id);
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_assert_cmpint(history_add(h, &c, kf, NULL), ==, 0);
}

static void test_round_trip(void) {
        Dir d;
        dir_open(&d);
        g_autoptr(History) h = NULL;
        g_assert_cmpint(history_open(d.fd, d.path, 10, &h), ==, 0);
        g_assert_cmpuint(history_count(h), ==, 0);

        HistoryCycle c = sample(7);
        c.starter = (char *) HISTORY_STARTER_HOOK;
        c.uid = 0;
        c.slept_usec = 3000000;
        c.wake_source = (char *) "rtc0; irq 8";
        g_autoptr(GKeyFile) kf = g_key_file_new();
        /* another module's group, as the timeline will add */
        g_key_file_set_string(kf, "Timeline", "Phases", "flush=0..10");
        g_assert_cmpint(history_add(h, &c, kf, NULL), ==, 0);
        h = history_free(h);

        g_assert_cmpint(history_open(d.fd, d.path, 10, &h), ==, 0);
        g_assert_cmpuint(history_count(h), ==, 1);
        const HistoryCycle *back = history_get(h, 0);
        g_assert_cmpuint(back->id, ==, 7);
        g_assert_cmpstr(back->kind, ==, "suspend");
        g_assert_cmpstr(back->starter, ==, "hook");
        g_assert_cmpuint(back->uid, ==, 0);
        g_assert_cmpint(back->pid, ==, 4321);
        g_assert_cmpuint(back->start_usec, ==, c.start_usec);
        g_assert_cmpuint(back->end_usec, ==, c.end_usec);
        g_assert_cmpstr(back->result, ==, "failed");
        g_assert_cmpstr(back->error, ==, "io.fridge.Fridge1.Error.FreezeTimeout");
        g_assert_cmpstr(back->phase, ==, "freeze-early");
        g_assert_cmpstr(back->message, ==, "a;b = c\nd");
        g_assert_cmpuint(back->slept_usec, ==, 3000000);
        g_assert_cmpstr(back->wake_source, ==, "rtc0; irq 8");

        g_autoptr(GKeyFile) on_disk = NULL;
        g_assert_cmpint(history_load(h, 7, &on_disk), ==, 0);
        g_autofree char *phases = g_key_file_get_string(on_disk, "Timeline", "Phases", NULL);
        g_assert_cmpstr(phases, ==, "flush=0..10");
        g_autofree char *kind = g_key_file_get_string(on_disk, HISTORY_GROUP, "Kind", NULL);
        g_assert_cmpstr(kind, ==, "suspend");
        GKeyFile *none = NULL;
        g_assert_cmpint(history_load(h, 8, &none), ==, -ENOENT);
        g_assert_null(none);
        g_assert_cmpstr(warnings->str, ==, "");
        h = history_free(h);
        dir_close(&d);
}

/* An unknown uid (-1) stays unknown */
static void test_unknown_uid(void) {
        HistoryCycle c = sample(3);
        c.uid = (uid_t) -1;
        g_autoptr(GKeyFile) kf = g_key_file_new();
        history_cycle_to_keyfile(&c, kf);
        g_autoptr(HistoryCycle) back = NULL;
        g_assert_cmpint(history_cycle_from_keyfile(kf, &back), ==, 0);
        g_assert_cmpuint(back->uid, ==, (uid_t) -1);
}

/* A hibernation's image write comes back whole, through the store */
static void test_image_round_trip(void) {
        Dir d;
        dir_open(&d);
        g_autoptr(History) h = NULL;
        g_assert_cmpint(history_open(d.fd, d.path, 10, &h), ==, 0);
        HistoryCycle c = sample(4);
        c.kind = (char *) "hibernate";
        c.image_writer = (char *) "fridge";
        c.image_raw_bytes = 81788928;
        c.image_written_bytes = 14365491;
        c.image_usec = 1200000;
        c.image_done_bytes = 14000000;
        c.image_total_bytes = 14365491;
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_assert_cmpint(history_add(h, &c, kf, NULL), ==, 0);
        h = history_free(h);

        g_assert_cmpint(history_open(d.fd, d.path, 10, &h), ==, 0);
        g_assert_cmpuint(history_count(h), ==, 1);
        const HistoryCycle *back = history_get(h, 0);
        g_assert_cmpstr(back->image_writer, ==, "fridge");
        g_assert_cmpuint(back->image_raw_bytes, ==, 81788928);
        g_assert_cmpuint(back->image_written_bytes, ==, 14365491);
        g_assert_cmpuint(back->image_usec, ==, 1200000);
        g_assert_cmpuint(back->image_done_bytes, ==, 14000000);
        g_assert_cmpuint(back->image_total_bytes, ==, 14365491);
        g_autoptr(GKeyFile) on_disk = NULL;
        g_assert_cmpint(history_load(h, 4, &on_disk), ==, 0);
        g_assert_cmpuint(g_key_file_get_uint64(on_disk, HISTORY_GROUP, "ImageRawBytes", NULL), ==, 81788928);
        g_assert_cmpstr(warnings->str, ==, "");
        h = history_free(h);
        dir_close(&d);
}

/* Without an image write the keys stay out of the file, and a file of an
 * older fridged (none of them) loads with none told */
static void test_image_keys_optional(void) {
        HistoryCycle c = sample(5);
        g_autoptr(GKeyFile) kf = g_key_file_new();
        history_cycle_to_keyfile(&c, kf);
        for (size_t i = 0; i < history_image_keys_count; i++)
                g_assert_false(g_key_file_has_key(kf, HISTORY_GROUP, history_image_keys[i].file_key, NULL));
        g_autoptr(HistoryCycle) back = NULL;
        g_assert_cmpint(history_cycle_from_keyfile(kf, &back), ==, 0);
        g_assert_cmpstr(back->image_writer, ==, "");
        g_assert_cmpuint(back->image_raw_bytes, ==, 0);
        g_assert_cmpuint(back->image_total_bytes, ==, 0);

        /* the kernel's write: the writer alone, figures 0 */
        c.image_writer = (char *) "kernel";
        history_cycle_to_keyfile(&c, kf);
        g_autoptr(HistoryCycle) kernel = NULL;
        g_assert_cmpint(history_cycle_from_keyfile(kf, &kernel), ==, 0);
        g_assert_cmpstr(kernel->image_writer, ==, "kernel");
        g_assert_cmpuint(kernel->image_usec, ==, 0);

        /* one that is there must be a number */
        g_key_file_set_string(kf, HISTORY_GROUP, "ImageUsec", "soon");
        g_autoptr(HistoryCycle) bad = NULL;
        g_assert_cmpint(history_cycle_from_keyfile(kf, &bad), ==, -EBADMSG);
}

static void test_bound(void) {
        Dir d;
        dir_open(&d);
        g_autoptr(History) h = NULL;
        g_assert_cmpint(history_open(d.fd, d.path, 3, &h), ==, 0);
        for (uint64_t id = 1; id <= 5; id++)
                add(h, id);
        g_assert_cmpuint(history_count(h), ==, 3);
        g_assert_cmpuint(history_get(h, 0)->id, ==, 5);
        g_assert_cmpuint(history_get(h, 2)->id, ==, 3);
        g_autofree char *gone = history_file(&d, "2.cycle"), *kept = history_file(&d, "3.cycle");
        g_assert_false(g_file_test(gone, G_FILE_TEST_EXISTS));
        g_assert_true(g_file_test(kept, G_FILE_TEST_EXISTS));
        h = history_free(h);

        /* a smaller bound at the next start applies at once */
        g_assert_cmpint(history_open(d.fd, d.path, 2, &h), ==, 0);
        g_assert_cmpuint(history_count(h), ==, 2);
        g_assert_false(g_file_test(kept, G_FILE_TEST_EXISTS));
        add(h, 6);
        g_assert_cmpuint(history_count(h), ==, 2);
        g_assert_cmpuint(history_get(h, 1)->id, ==, 5);
        /* an id stored again replaces its entry */
        add(h, 6);
        g_assert_cmpuint(history_count(h), ==, 2);
        h = history_free(h);
        dir_close(&d);
}

/* One user starting cycle after cycle pushes out their own, oldest first,
 * and leaves the system's and another user's alone */
static void test_bound_per_uid(void) {
        Dir d;
        dir_open(&d);
        g_autoptr(History) h = NULL;
        g_assert_cmpint(history_open(d.fd, d.path, 4, &h), ==, 0);
        add_as(h, 1, 0);        /* the sleep hook's (root) */
        add_as(h, 2, 1001);     /* another user's */
        for (uint64_t id = 3; id <= 40; id++)
                add_as(h, id, 1000);
        g_assert_cmpuint(history_count(h), ==, 4);
        /* newest first: the flood's two newest, then 2 and 1 */
        g_assert_cmpuint(history_get(h, 0)->id, ==, 40);
        g_assert_cmpuint(history_get(h, 1)->id, ==, 39);
        g_assert_cmpuint(history_get(h, 2)->id, ==, 2);
        g_assert_cmpuint(history_get(h, 3)->id, ==, 1);
        g_autofree char *kept = history_file(&d, "1.cycle"), *gone = history_file(&d, "38.cycle");
        g_assert_true(g_file_test(kept, G_FILE_TEST_EXISTS));
        g_assert_false(g_file_test(gone, G_FILE_TEST_EXISTS));
        /* the others' turn comes once they hold as many: on a tie, the
         * oldest of those goes (2, then 1) */
        add_as(h, 41, 1001);
        g_assert_cmpuint(history_get(h, 3)->id, ==, 1);
        add_as(h, 42, 0);
        g_assert_cmpuint(history_get(h, 3)->id, ==, 39);
        g_assert_cmpuint(history_get(h, 0)->id, ==, 42);
        h = history_free(h);
        dir_close(&d);
}

static void put(const Dir *d, const char *name, const char *text) {
        g_autofree char *path = history_file(d, name);
        g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void test_malformed(void) {
        Dir d;
        dir_open(&d);
        g_autoptr(History) h = NULL;
        g_assert_cmpint(history_open(d.fd, d.path, 10, &h), ==, 0);
        add(h, 1);
        h = history_free(h);

        put(&d, "2.cycle", "not a key file");
        put(&d, "3.cycle", "[Cycle]\nId=3\nKind=suspend\n");                 /* incomplete */
        g_autofree char *five = NULL, *one = history_file(&d, "1.cycle");
        g_assert_true(g_file_get_contents(one, &five, NULL, NULL));
        put(&d, "5.cycle", five);                                            /* names cycle 1 */
        put(&d, "notes.txt", "mine");                                        /* foreign */
        put(&d, "x.cycle", five);
        put(&d, ".9.cycle.tmp", "cut short");                                /* a write cut short: quiet */
        g_assert_cmpint(history_open(d.fd, d.path, 10, &h), ==, 0);
        g_assert_cmpuint(history_count(h), ==, 1);
        g_assert_cmpuint(history_get(h, 0)->id, ==, 1);
        g_test_message("warnings:\n%s", warnings->str);
        const char *const named[] = { "/2.cycle: not a key file", "/3.cycle: its [Cycle] group",
                                      "/5.cycle: its [Cycle] group", "/notes.txt: not a cycle",
                                      "/x.cycle: not a cycle", NULL };
        for (const char *const *n = named; *n; n++)
                g_assert_nonnull(strstr(warnings->str, *n));
        g_assert_null(strstr(warnings->str, ".9.cycle.tmp"));
        h = history_free(h);
        dir_close(&d);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        warnings = g_string_new(NULL);
        log_set_sink(sink, NULL);
        g_test_add_func("/history/round-trip", test_round_trip);
        g_test_add_func("/history/unknown-uid", test_unknown_uid);
        g_test_add_func("/history/image-round-trip", test_image_round_trip);
        g_test_add_func("/history/image-keys-optional", test_image_keys_optional);
        g_test_add_func("/history/bound", test_bound);
        g_test_add_func("/history/bound-per-uid", test_bound_per_uid);
        g_test_add_func("/history/malformed", test_malformed);
        int r = g_test_run();
        log_set_sink(NULL, NULL);
        g_string_free(warnings, TRUE);
        return r;
}
