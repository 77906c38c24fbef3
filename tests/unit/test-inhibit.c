/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The inhibitor registry without a bus: pipes, caps, counts, descriptions. */
#include <errno.h>
#include <glib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "inhibit.h"
#include "log.h"

typedef struct Seen {
        GString *released; /* "who," per release */
} Seen;

static void on_released(const Inhibitor *i, void *userdata) {
        Seen *s = userdata;
        g_string_append_printf(s->released, "%s,", i->who);
}

static uint64_t add(Inhibitors *r, const char *who, const char *why, InhibitMode mode, const char *sender,
                    pid_t pid, int *ret_fd) {
        Inhibitor t = { .who = (char *) who, .why = (char *) why, .mode = mode, .sender = (char *) sender,
                        .uid = 1000, .pid = pid };
        uint64_t id = 0;
        g_autofree char *refusal = NULL;
        g_assert_cmpint(inhibit_add(r, &t, ret_fd, &id, &refusal), ==, 0);
        g_assert_null(refusal);
        g_assert_cmpint(*ret_fd, >=, 0);
        return id;
}

static void test_modes(void) {
        g_assert_cmpint(inhibit_mode_from_string("block"), ==, INHIBIT_BLOCK);
        g_assert_cmpint(inhibit_mode_from_string("delay"), ==, INHIBIT_DELAY);
        g_assert_cmpint(inhibit_mode_from_string("Block"), ==, _INHIBIT_MODE_INVALID);
        g_assert_cmpint(inhibit_mode_from_string(""), ==, _INHIBIT_MODE_INVALID);
        g_assert_cmpint(inhibit_mode_from_string(NULL), ==, _INHIBIT_MODE_INVALID);
        g_assert_cmpstr(inhibit_mode_to_string(INHIBIT_DELAY), ==, "delay");
        g_assert_cmpstr(inhibit_mode_to_string(_INHIBIT_MODE_INVALID), ==, "");
}

static void test_counts_and_describe(void) {
        sd_event *e = NULL;
        g_assert_cmpint(sd_event_new(&e), >=, 0);
        Seen s = { g_string_new(NULL) };
        g_autoptr(Inhibitors) r = inhibit_new(e, on_released, &s);
        int fa, fb, fc;

        g_autofree char *none = inhibit_describe(r, INHIBIT_BLOCK, 0);
        g_assert_cmpstr(none, ==, "");
        uint64_t a = add(r, "burner", "writing a disc", INHIBIT_BLOCK, ":1.1", 10, &fa);
        uint64_t mark = inhibit_next_id(r);
        add(r, "locker", "", INHIBIT_DELAY, ":1.2", 11, &fb);
        uint64_t c = add(r, "backup", "copying", INHIBIT_BLOCK, ":1.2", 12, &fc);
        g_assert_cmpuint(a, <, c);
        g_assert_cmpuint(inhibit_count(r, INHIBIT_BLOCK, 0), ==, 2);
        g_assert_cmpuint(inhibit_count(r, INHIBIT_BLOCK, mark), ==, 1);
        g_assert_cmpuint(inhibit_count(r, INHIBIT_DELAY, mark), ==, 0);
        g_assert_cmpuint(inhibit_count_sender(r, ":1.2"), ==, 2);
        g_autofree char *blocks = inhibit_describe(r, INHIBIT_BLOCK, 0);
        g_assert_cmpstr(blocks, ==, "burner (writing a disc, pid 10, uid 1000), backup (copying, pid 12, uid 1000)");
        g_autofree char *delays = inhibit_describe(r, INHIBIT_DELAY, 0);
        g_assert_cmpstr(delays, ==, "locker (pid 11, uid 1000)");
        g_autoptr(GPtrArray) all = inhibit_list(r);
        g_assert_cmpuint(all->len, ==, 3);
        g_assert_cmpstr(((Inhibitor *) all->pdata[1])->who, ==, "locker");

        /* the holder closing its end releases, on the loop */
        close(fa);
        while (sd_event_run(e, 0) > 0)
                ;
        g_assert_cmpstr(s.released->str, ==, "burner,");
        g_assert_cmpuint(inhibit_count(r, INHIBIT_BLOCK, 0), ==, 1);

        /* the connection going: all of its inhibitors, none of the others */
        g_assert_cmpuint(inhibit_release_sender(r, ":1.2"), ==, 2);
        g_assert_cmpstr(s.released->str, ==, "burner,locker,backup,");
        g_assert_false(inhibit_release(r, c));
        close(fb);
        close(fc);
        while (sd_event_run(e, 0) > 0)
                ;
        g_assert_cmpstr(s.released->str, ==, "burner,locker,backup,");
        g_string_free(s.released, TRUE);
        g_clear_pointer(&r, inhibit_free);
        sd_event_unref(e);
}

/* However many hold, the description names the first few and counts the rest */
static void test_describe_short(void) {
        sd_event *e = NULL;
        g_assert_cmpint(sd_event_new(&e), >=, 0);
        g_autoptr(Inhibitors) r = inhibit_new(e, NULL, NULL);
        int fds[INHIBIT_DESCRIBE_MAX + 5];
        for (unsigned i = 0; i < G_N_ELEMENTS(fds); i++) {
                g_autofree char *who = g_strdup_printf("h%u", i);
                add(r, who, "", INHIBIT_BLOCK, ":1.1", 10, &fds[i]);
        }
        g_autofree char *text = inhibit_describe(r, INHIBIT_BLOCK, 0);
        g_assert_cmpstr(text, ==, "h0 (pid 10, uid 1000), h1 (pid 10, uid 1000), h2 (pid 10, uid 1000) and 5 more");
        for (unsigned i = 0; i < G_N_ELEMENTS(fds); i++)
                close(fds[i]);
        g_clear_pointer(&r, inhibit_free);
        sd_event_unref(e);
}

static void test_caps(void) {
        /* both ends of INHIBITORS_MAX pipes are open here at once */
        struct rlimit rl;
        g_assert_cmpint(getrlimit(RLIMIT_NOFILE, &rl), ==, 0);
        rl.rlim_cur = rl.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < 2 * INHIBITORS_MAX + 64) {
                g_test_skip("RLIMIT_NOFILE is too low for both ends of INHIBITORS_MAX pipes");
                return;
        }
        sd_event *e = NULL;
        g_assert_cmpint(sd_event_new(&e), >=, 0);
        g_autoptr(Inhibitors) r = inhibit_new(e, NULL, NULL);
        g_autoptr(GArray) fds = g_array_new(FALSE, FALSE, sizeof(int));
        int fd;

        for (unsigned i = 0; i < INHIBITORS_PER_SENDER_MAX; i++) {
                add(r, "many", "", INHIBIT_BLOCK, ":1.5", 1, &fd);
                g_array_append_val(fds, fd);
        }
        Inhibitor t = { .who = (char *) "many", .mode = INHIBIT_BLOCK, .sender = (char *) ":1.5" };
        uint64_t id;
        g_autofree char *refusal = NULL;
        g_assert_cmpint(inhibit_add(r, &t, &fd, &id, &refusal), ==, FRIDGE_ERROR_LIMITS_EXCEEDED);
        g_assert_cmpstr(refusal, ==, "this connection already holds 16 inhibitors");
        g_clear_pointer(&refusal, g_free);
        /* other connections may, up to the global cap */
        unsigned n = INHIBITORS_PER_SENDER_MAX;
        for (unsigned s = 0; n < INHIBITORS_MAX; s++) {
                g_autofree char *sender = g_strdup_printf(":2.%u", s);
                for (unsigned i = 0; i < INHIBITORS_PER_SENDER_MAX && n < INHIBITORS_MAX; i++, n++) {
                        add(r, "all", "", INHIBIT_DELAY, sender, 1, &fd);
                        g_array_append_val(fds, fd);
                }
        }
        t.sender = (char *) ":3.0";
        g_assert_cmpint(inhibit_add(r, &t, &fd, &id, &refusal), ==, FRIDGE_ERROR_LIMITS_EXCEEDED);
        g_assert_cmpstr(refusal, ==, "fridged already keeps 1024 inhibitors");
        g_clear_pointer(&refusal, g_free);
        for (guint i = 0; i < fds->len; i++)
                close(g_array_index(fds, int, i));
        while (sd_event_run(e, 0) > 0)
                ;
        g_assert_cmpuint(inhibit_count(r, INHIBIT_DELAY, 0) + inhibit_count(r, INHIBIT_BLOCK, 0), ==, 0);
        g_assert_cmpint(inhibit_add(r, &t, &fd, &id, &refusal), ==, 0);
        close(fd);
        g_clear_pointer(&r, inhibit_free);
        sd_event_unref(e);
}

/* logind's why for the mirror: "N inhibitors: who (why), …", bounded */
static void test_summary(void) {
        sd_event *e = NULL;
        g_assert_cmpint(sd_event_new(&e), >=, 0);
        Seen s = { g_string_new(NULL) };
        g_autoptr(Inhibitors) r = inhibit_new(e, on_released, &s);
        int fds[8];

        g_assert_null(inhibit_summary(r, INHIBIT_BLOCK, 128));
        add(r, "locker", "lock", INHIBIT_DELAY, ":1.1", 10, &fds[0]);
        g_assert_null(inhibit_summary(r, INHIBIT_BLOCK, 128));
        add(r, "burner", "writing a disc", INHIBIT_BLOCK, ":1.1", 11, &fds[1]);
        g_autofree char *one = inhibit_summary(r, INHIBIT_BLOCK, 128);
        g_assert_cmpstr(one, ==, "1 inhibitor: burner (writing a disc)");
        add(r, "backup", "", INHIBIT_BLOCK, ":1.1", 12, &fds[2]);
        g_autofree char *two = inhibit_summary(r, INHIBIT_BLOCK, 128);
        g_assert_cmpstr(two, ==, "2 inhibitors: burner (writing a disc), backup");
        /* a long who or why is cut by characters, never inside one */
        g_autofree char *longer = g_strnfill(60, 'x');
        g_autofree char *wide = g_strjoinv("", (char *[]) { longer, "\u00e9\u00e9\u00e9", NULL });
        add(r, wide, "é", INHIBIT_BLOCK, ":1.1", 13, &fds[3]);
        for (int i = 4; i < 8; i++)
                add(r, "more", "", INHIBIT_BLOCK, ":1.1", 14, &fds[i]);
        g_autofree char *cut = inhibit_summary(r, INHIBIT_BLOCK, 128);
        g_assert_true(g_utf8_validate(cut, -1, NULL));
        g_assert_cmpuint(strlen(cut), <=, 128);
        g_assert_true(g_str_has_prefix(cut, "7 inhibitors: burner (writing a disc), backup, xxx"));
        g_assert_true(g_str_has_suffix(cut, " more"));
        g_autofree char *tiny = inhibit_summary(r, INHIBIT_BLOCK, 40);
        g_assert_cmpstr(tiny, ==, "7 inhibitors: 7 more");
        for (int i = 0; i < 8; i++)
                close(fds[i]);
        g_string_free(s.released, TRUE);
        r = inhibit_free(g_steal_pointer(&r));
        sd_event_unref(e);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        log_set_max_level(LOG_WARNING);
        g_test_add_func("/inhibit/modes", test_modes);
        g_test_add_func("/inhibit/counts-and-describe", test_counts_and_describe);
        g_test_add_func("/inhibit/describe-short", test_describe_short);
        g_test_add_func("/inhibit/caps", test_caps);
        g_test_add_func("/inhibit/summary", test_summary);
        return g_test_run();
}
