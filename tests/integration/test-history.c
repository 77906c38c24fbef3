/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The history of past cycles (ListCycles, fridgectl history) and the
 * resume report: it survives a restart of fridged; a cycle record of
 * another boot (a power cut) becomes an Interrupted entry; a caller sees
 * only its own cycles unless polkit allows io.fridge.history; the
 * simulated RTC's wake is reported with the time the state write took;
 * a stuck disk under the persistent directory (a held slowfs) holds only
 * the history's file, never the bus, nor fridged's exit past its bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <sys/stat.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

typedef HarnessFixture Fixture;

/* One ListCycles entry, as root reads it */
typedef struct Entry {
        uint64_t id, slept_usec, end_usec;
        char *kind, *result, *error, *phase, *message, *wake_source, *starter;
        uint32_t uid;
} Entry;

static void entry_clear(Entry *e) {
        g_free(e->kind);
        g_free(e->result);
        g_free(e->error);
        g_free(e->phase);
        g_free(e->message);
        g_free(e->wake_source);
        g_free(e->starter);
}

static void read_value(sd_bus_message *m, const char *key, Entry *e) {
        static const struct { const char *key; char type; size_t offset; } keys[] = {
                { "id", 't', offsetof(Entry, id) }, { "slept-usec", 't', offsetof(Entry, slept_usec) },
                { "end-usec", 't', offsetof(Entry, end_usec) }, { "uid", 'u', offsetof(Entry, uid) },
                { "kind", 's', offsetof(Entry, kind) }, { "result", 's', offsetof(Entry, result) },
                { "error", 's', offsetof(Entry, error) }, { "phase", 's', offsetof(Entry, phase) },
                { "message", 's', offsetof(Entry, message) }, { "wake-source", 's', offsetof(Entry, wake_source) },
                { "starter", 's', offsetof(Entry, starter) },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
                if (strcmp(keys[i].key, key) != 0)
                        continue;
                const char sig[2] = { keys[i].type, 0 };
                g_assert_cmpint(sd_bus_message_enter_container(m, 'v', sig), >, 0);
                void *field = (char *) e + keys[i].offset;
                if (keys[i].type == 's') {
                        const char *s;
                        g_assert_cmpint(sd_bus_message_read_basic(m, 's', &s), >, 0);
                        *(char **) field = g_strdup(s);
                } else
                        g_assert_cmpint(sd_bus_message_read_basic(m, keys[i].type, field), >, 0);
                g_assert_cmpint(sd_bus_message_exit_container(m), >=, 0);
                return;
        }
        g_assert_cmpint(sd_bus_message_skip(m, "v"), >=, 0);
}

/* ListCycles(max) as root: the entries, newest first */
static GArray *list_cycles(Harness *h, uint32_t max) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_call(h, "io.fridge.Fridge1", "ListCycles", &reply, &err, &msg, "u", max), ==, 0);
        GArray *out = g_array_new(FALSE, TRUE, sizeof(Entry));
        g_array_set_clear_func(out, (GDestroyNotify) entry_clear);
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "a{sv}"), >, 0);
        while (sd_bus_message_enter_container(reply, 'a', "{sv}") > 0) {
                Entry e = {};
                const char *key;
                while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
                        g_assert_cmpint(sd_bus_message_read_basic(reply, 's', &key), >, 0);
                        read_value(reply, key, &e);
                        g_assert_cmpint(sd_bus_message_exit_container(reply), >=, 0);
                }
                g_assert_cmpint(sd_bus_message_exit_container(reply), >=, 0);
                g_array_append_val(out, e);
        }
        sd_bus_message_unref(reply);
        return out;
}

static uint64_t cycle_done(Harness *h, int r, uint64_t cycle, const char *want_result) {
        g_assert_cmpint(r, ==, 0);
        g_autofree char *result = NULL;
        g_assert_true(harness_wait_finished(h, cycle, 15000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, want_result);
        return cycle;
}

/* Sleep(suspend, OPTIONS…) as root, to its end with `want_result` */
#define RUN_CYCLE(h, want_result, ...)                                                         \
        ({                                                                                     \
                uint64_t _c = 0;                                                               \
                g_autofree char *_e = NULL, *_m = NULL;                                        \
                int _r = harness_sleep(h, "suspend", &_c, &_e, &_m, __VA_ARGS__);              \
                cycle_done(h, _r, _c, want_result);                                            \
        })

/* fridged is stopped (SIGTERM) and reaped, so that its files can be changed */
static void stop_fridged(Harness *h) {
        harness_kill_fridged(h, SIGTERM);
        int status = harness_wait_pid(h->fridged_pid, 10000);
        g_assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        h->fridged_pid = 0;
}

/* Two cycles, a restart, and both are there, newest first; fridgectl
 * history prints them plain and as JSON, -n bounds them */
static void test_survives_restart(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        uint64_t first = RUN_CYCLE(h, "dry-run", "dry-run", "b", 1, NULL);
        uint64_t second = RUN_CYCLE(h, "done", "mem-sleep", "s", "deep", NULL);
        stop_fridged(h);
        harness_restart_fridged(h);

        g_autoptr(GArray) all = list_cycles(h, 0);
        g_assert_cmpuint(all->len, ==, 2);
        Entry *newest = &g_array_index(all, Entry, 0), *oldest = &g_array_index(all, Entry, 1);
        g_assert_cmpuint(newest->id, ==, second);
        g_assert_cmpstr(newest->result, ==, "done");
        g_assert_cmpstr(newest->error, ==, "");
        g_assert_cmpstr(newest->kind, ==, "suspend");
        g_assert_cmpstr(newest->starter, ==, "caller");
        g_assert_cmpuint(newest->uid, ==, 0);
        g_assert_cmpuint(oldest->id, ==, first);
        g_assert_cmpstr(oldest->result, ==, "dry-run");
        /* the cycle's file carries the timeline's groups beside [Cycle] */
        g_autofree char *name = g_strdup_printf("%" G_GUINT64_FORMAT ".cycle", second);
        g_autofree char *file = g_build_filename(h->dir, "lib", "history", name, NULL);
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_assert_true(g_key_file_load_from_file(kf, file, G_KEY_FILE_NONE, NULL));
        g_assert_true(g_key_file_has_group(kf, "Cycle"));
        g_assert_true(g_key_file_has_group(kf, "Timeline"));
        g_assert_true(g_key_file_has_group(kf, "Phases"));
        /* root's alone, whatever umask fridged was started with (this test's is 022) */
        struct stat st;
        g_assert_cmpint(stat(file, &st), ==, 0);
        g_assert_cmpint(st.st_mode & 07777, ==, 0600);
        g_autofree char *dir = g_path_get_dirname(file);
        g_assert_cmpint(stat(dir, &st), ==, 0);
        g_assert_cmpint(st.st_mode & 07777, ==, 0700);

        g_autoptr(GArray) one = list_cycles(h, 1);
        g_assert_cmpuint(one->len, ==, 1);
        g_assert_cmpuint(g_array_index(one, Entry, 0).id, ==, second);

        g_autofree char *plain = NULL, *json = NULL, *bounded = NULL;
        g_assert_cmpint(harness_fridgectl(h, 10000, &plain, "history", NULL, NULL), ==, 0);
        g_assert_nonnull(strstr(plain, "RESULT"));
        g_assert_nonnull(strstr(plain, "dry-run"));
        g_assert_nonnull(strstr(plain, "2 cycles"));
        g_assert_cmpint(harness_fridgectl(h, 10000, &bounded, "history", "-n", "1"), ==, 0);
        g_assert_nonnull(strstr(bounded, "1 cycle\n"));
        g_assert_null(strstr(bounded, "dry-run"));
        g_assert_cmpint(harness_fridgectl(h, 10000, &json, "--json", "history", NULL), ==, 0);
        g_autofree char *id_new = g_strdup_printf("\"id\":%" G_GUINT64_FORMAT ",", second);
        g_autofree char *id_old = g_strdup_printf("\"id\":%" G_GUINT64_FORMAT ",", first);
        g_assert_true(json[0] == '[');
        g_assert_nonnull(strstr(json, id_new));
        g_assert_true(strstr(json, id_new) < strstr(json, id_old));
        g_assert_nonnull(strstr(json, "\"result\":\"dry-run\""));
}

static void write_record(Harness *h, uint64_t id, const char *boot_id) {
        g_autofree char *path = g_build_filename(h->dir, "lib", "cycle", NULL);
        g_autofree char *text = g_strdup_printf("ID=%" G_GUINT64_FORMAT "\nKIND=suspend\nPHASE=kernel\n"
                                                "STARTED_USEC=1700000000000000\nPID=4242\nBOOT_ID=%s\n"
                                                "STARTER=caller\nSTARTER_UID=1000\nSTARTER_PID=77\n",
                                                id, boot_id);
        g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static char *this_boot_id(void) {
        char *text = NULL;
        g_assert_true(g_file_get_contents("/proc/sys/kernel/random/boot_id", &text, NULL, NULL));
        return g_strstrip(text);
}

/* A record of another boot is a cycle the machine went down in (a power
 * cut); one of this boot, a fridged that was killed */
static void test_power_cut(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        stop_fridged(h);
        write_record(h, 40, "00000000-0000-4000-8000-000000000000");
        harness_restart_fridged(h);
        g_autofree char *result = NULL, *error = NULL, *message = NULL;
        g_assert_true(harness_wait_finished(h, 40, 10000, &result, &error, &message));
        g_assert_cmpstr(error, ==, "io.fridge.Fridge1.Error.Interrupted");
        g_assert_nonnull(strstr(message, "the machine went down during the cycle"));

        stop_fridged(h);
        g_autofree char *boot = this_boot_id();
        write_record(h, 41, boot);
        harness_restart_fridged(h);
        g_autofree char *message2 = NULL;
        g_assert_true(harness_wait_finished(h, 41, 10000, NULL, NULL, &message2));
        g_assert_nonnull(strstr(message2, "fridged stopped during phase kernel"));

        g_autoptr(GArray) all = list_cycles(h, 0);
        g_assert_cmpuint(all->len, ==, 2);
        Entry *crash = &g_array_index(all, Entry, 0), *cut = &g_array_index(all, Entry, 1);
        g_assert_cmpuint(cut->id, ==, 40);
        g_assert_cmpstr(cut->result, ==, "failed");
        g_assert_cmpstr(cut->error, ==, "io.fridge.Fridge1.Error.Interrupted");
        g_assert_cmpstr(cut->phase, ==, "kernel");
        g_assert_cmpuint(cut->uid, ==, 1000);
        g_assert_cmpuint(cut->end_usec, ==, 0);
        g_assert_nonnull(strstr(cut->message, "the machine went down"));
        g_assert_cmpuint(crash->id, ==, 41);
        /* ids go on after both */
        uint64_t next = RUN_CYCLE(h, "dry-run", "dry-run", "b", 1, NULL);
        g_assert_cmpuint(next, ==, 42);

        /* and after the history's, should next-cycle-id be lost */
        stop_fridged(h);
        g_autofree char *next_id = g_build_filename(h->dir, "lib", "next-cycle-id", NULL);
        g_assert_cmpint(g_unlink(next_id), ==, 0);
        harness_restart_fridged(h);
        g_assert_cmpuint(RUN_CYCLE(h, "dry-run", "dry-run", "b", 1, NULL), ==, 43);
        g_autoptr(GArray) after = list_cycles(h, 0);
        g_assert_cmpuint(after->len, ==, 4);
}

/* No CycleFinished for cycle `id` among the signals from `from` on */
static void assert_not_finished_since(Harness *h, guint from, uint64_t id) {
        for (guint i = from; i < h->signals->len; i++) {
                HarnessSignal *sig = h->signals->pdata[i];
                uint64_t got = 0;
                if (!g_str_equal(sig->member, "CycleFinished"))
                        continue;
                g_assert_cmpint(sd_bus_message_rewind(sig->message, true), >=, 0);
                g_assert_cmpint(sd_bus_message_read(sig->message, "t", &got), >, 0);
                g_assert_cmpuint(got, !=, id);
        }
}

/* A fridged killed after a cycle's end was announced and stored in the
 * history, before the record's removal (queued after it) was done: the
 * next one removes the record and reports nothing (the soak's seed
 * 3195396639 saw CycleFinished twice for one id, the second "failed") */
static void test_finished_record_left(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        uint64_t done = RUN_CYCLE(h, "dry-run", "dry-run", "b", 1, NULL);
        stop_fridged(h);
        g_autofree char *boot = this_boot_id();
        write_record(h, done, boot);
        guint before = h->signals->len;
        harness_restart_fridged(h);
        uint64_t next = RUN_CYCLE(h, "dry-run", "dry-run", "b", 1, NULL);
        g_assert_cmpuint(next, ==, done + 1);
        assert_not_finished_since(h, before, done);
        g_autoptr(GArray) all = list_cycles(h, 0);
        g_assert_cmpuint(all->len, ==, 2);
        g_assert_cmpuint(g_array_index(all, Entry, 1).id, ==, done);
        g_assert_cmpstr(g_array_index(all, Entry, 1).result, ==, "dry-run");
        /* the new cycle's own record goes on the write queue, after its
         * CycleFinished: waited for, bounded (it failed under load) */
        g_autofree char *record = g_build_filename(h->dir, "lib", "cycle", NULL);
        for (int i = 0; i < 1000 && g_file_test(record, G_FILE_TEST_EXISTS); i++)
                g_usleep(10000);
        g_assert_false(g_file_test(record, G_FILE_TEST_EXISTS));
}

static unsigned count_ids(const char *json) {
        unsigned n = 0;
        for (const char *p = json; (p = strstr(p, "\"id\":")); p++)
                n++;
        return n;
}

/* ListCycles as uid 65534 through busctl, which allows interactive
 * authorization: fridged asks polkit without it all the same (flags 0) */
static void assert_asked_quietly(Harness *h, const char *answer) {
        g_autofree char *cmd = g_strdup_printf("exec setpriv --reuid=65534 --regid=65534 --clear-groups -- busctl "
                                               "--allow-interactive-authorization=yes --address='%s' call "
                                               "io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 ListCycles "
                                               "u 0 2>&1", h->bus_address);
        char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
        g_autofree char *out = NULL, *log = NULL;
        int status = harness_run(sh, 20000, &out);
        g_test_message("ListCycles as nobody -> %d: %s", status, out);
        g_assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        g_assert_true(g_file_get_contents(h->polkit_log, &log, NULL, NULL));
        g_autofree char *line = g_strdup_printf("io.fridge.history 65534 %s 0\n", answer);
        g_test_message("polkit was asked:\n%s", log);
        g_assert_nonnull(strstr(log, line));
        g_assert_null(strstr(log, "io.fridge.history 65534 yes 1"));
        g_assert_null(strstr(log, "io.fridge.history 65534 no 1"));
}

/* uid 65534 sees the cycle it started, not root's; with io.fridge.history
 * it sees both */
static void check_visibility(Fixture *f, const char *table, unsigned want) {
        HarnessOptions o = { .open_bus = true, .polkit_table = table };
        Harness *h = f->h = harness_new(&o);
        uint64_t roots = RUN_CYCLE(h, "dry-run", "dry-run", "b", 1, NULL);
        const char *const suspend_dry[] = { "suspend", "--dry-run", "--no-progress", NULL };
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl_nobody_exit(h, &out, suspend_dry), ==, 0);
        g_autoptr(GArray) all = list_cycles(h, 0);
        g_assert_cmpuint(all->len, ==, 2);
        Entry *nobodys = &g_array_index(all, Entry, 0);
        g_assert_cmpuint(nobodys->uid, ==, 65534);

        const char *const history[] = { "--json", "history", NULL };
        g_autofree char *json = NULL;
        g_assert_cmpint(harness_fridgectl_nobody_exit(h, &json, history), ==, 0);
        g_test_message("history as nobody: %s", json);
        g_autofree char *own = g_strdup_printf("\"id\":%" G_GUINT64_FORMAT ",", nobodys->id);
        g_autofree char *other = g_strdup_printf("\"id\":%" G_GUINT64_FORMAT ",", roots);
        g_assert_nonnull(strstr(json, own));
        g_assert_cmpuint(count_ids(json), ==, want);
        if (want == 1)
                g_assert_null(strstr(json, other));
        assert_asked_quietly(h, want == 1 ? "no" : "yes");
}

/* An attacker's flood: uid 65534, allowed to sleep, starts cycle after
 * cycle; with MaxCycles=3 the history keeps root's cycle and drops the
 * flood's oldest */
static void test_flood_keeps_others(Fixture *f, gconstpointer data) {
        HarnessOptions o = { .open_bus = true, .config = "[History]\nMaxCycles=3\n",
                             .polkit_table = "io.fridge.sleep 65534 yes\nio.fridge.manage 65534 yes\n" };
        Harness *h = f->h = harness_new(&o);
        uint64_t roots = RUN_CYCLE(h, "dry-run", "dry-run", "b", 1, NULL);
        const char *const suspend_dry[] = { "suspend", "--dry-run", "--no-progress", NULL };
        for (int i = 0; i < 5; i++) {
                g_autofree char *out = NULL;
                g_assert_cmpint(harness_fridgectl_nobody_exit(h, &out, suspend_dry), ==, 0);
        }
        g_autoptr(GArray) all = list_cycles(h, 0);
        g_assert_cmpuint(all->len, ==, 3);
        g_assert_cmpuint(g_array_index(all, Entry, 0).uid, ==, 65534);
        g_assert_cmpuint(g_array_index(all, Entry, 1).uid, ==, 65534);
        g_assert_cmpuint(g_array_index(all, Entry, 2).id, ==, roots);
        g_assert_cmpuint(g_array_index(all, Entry, 2).uid, ==, 0);
}

static void test_visibility_own(Fixture *f, gconstpointer data) {
        check_visibility(f, "io.fridge.sleep 65534 yes\nio.fridge.manage 65534 yes\nio.fridge.history 65534 no\n", 1);
}

static void test_visibility_allowed(Fixture *f, gconstpointer data) {
        check_visibility(f, "io.fridge.sleep 65534 yes\nio.fridge.manage 65534 yes\nio.fridge.history 65534 yes\n",
                         2);
}

/* A 3 s RTC alarm ends a simulated sleep that would last 30 s: Resumed,
 * LastWakeReason and the history say about 3 s and the RTC */
static void test_resume_rtc(Fixture *f, gconstpointer data) {
        const char *const args[] = { "--sleep-ms=30000", NULL };
        HarnessOptions o = { .fakesys_args = args };
        Harness *h = f->h = harness_new(&o);
        uint64_t cycle = RUN_CYCLE(h, "done", "wake-after-sec", "u", 3, NULL);
        int i = harness_find_signal(h, "Resumed", true, cycle);
        g_assert_cmpint(i, >=, 0);
        uint64_t id = 0, slept = 0;
        const char *reason = NULL;
        sd_bus_message *m = ((HarnessSignal *) g_ptr_array_index(h->signals, i))->message;
        g_assert_cmpint(sd_bus_message_rewind(m, true), >=, 0);
        g_assert_cmpint(sd_bus_message_read(m, "tts", &id, &slept, &reason), >, 0);
        g_test_message("Resumed: %" G_GUINT64_FORMAT " µs, %s", slept, reason);
        /* the alarm is in whole seconds: 2 to 3 s from the write, plus the start of the write */
        g_assert_cmpuint(slept, >=, 1500000);
        g_assert_cmpuint(slept, <=, 6000000);
        g_assert_cmpstr(reason, ==, "rtc0; irq 8");
        g_autofree char *last = harness_get_string(h, "LastWakeReason");
        g_assert_cmpstr(last, ==, "rtc0; irq 8");
        g_autoptr(GArray) all = list_cycles(h, 1);
        Entry *e = &g_array_index(all, Entry, 0);
        g_assert_cmpuint(e->slept_usec, ==, slept);
        g_assert_cmpstr(e->wake_source, ==, "rtc0; irq 8");

        /* what tools/try shows: fridgectl's resume line */
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 30000, &out, "suspend", "--wake-after", "3"), ==, 0);
        g_assert_nonnull(strstr(out, "(wake: rtc0; irq 8)"));
        g_assert_null(strstr(out, "resumed after 0.0 s"));
}

/* systemd's sleep path: the hook started the cycle, as root */
static void test_hook_starter(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        g_assert_cmpint(harness_fridgectl(h, 30000, NULL, "hook", "pre", "suspend"), ==, 0);
        g_assert_cmpint(harness_fridgectl(h, 30000, NULL, "hook", "post", "suspend"), ==, 0);
        g_autoptr(GArray) all = list_cycles(h, 0);
        g_assert_cmpuint(all->len, ==, 1);
        Entry *e = &g_array_index(all, Entry, 0);
        g_assert_cmpstr(e->starter, ==, "hook");
        g_assert_cmpuint(e->uid, ==, 0);
        g_assert_cmpstr(e->result, ==, "done");
        g_assert_cmpstr(e->phase, ==, "");
}

/* A delay inhibitor holds the cycle in prepare, where it is cancelled:
 * the entry and fridgectl history name the phase and the error */
static void test_failing_phase(Fixture *f, gconstpointer data) {
        Harness *h = f->h = harness_new(NULL);
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int fd = -1;
        g_assert_cmpint(sd_bus_call_method(h->bus, "io.fridge.Fridge1", "/io/fridge/Fridge1", "io.fridge.Fridge1",
                                           "Inhibit", &e, &reply, "sss", "test", "hold in prepare", "delay"), >=, 0);
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        sd_bus_message_unref(reply);
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, NULL), ==, 0);
        g_assert_true(harness_wait_property_signal(h, "Phase", "prepare", 10000));
        g_assert_cmpint(harness_cancel(h, cycle, &err, &msg), ==, 0);
        g_assert_true(harness_wait_finished(h, cycle, 15000, &result, NULL, NULL));
        close(fd);
        g_assert_cmpstr(result, ==, "aborted");
        g_autoptr(GArray) all = list_cycles(h, 0);
        Entry *entry = &g_array_index(all, Entry, 0);
        g_assert_cmpstr(entry->error, ==, "io.fridge.Fridge1.Error.Cancelled");
        g_assert_cmpstr(entry->phase, ==, "prepare");
        g_assert_cmpstr(entry->wake_source, ==, "");
        g_assert_cmpuint(entry->slept_usec, ==, 0);
        g_autofree char *plain = NULL;
        g_assert_cmpint(harness_fridgectl(h, 10000, &plain, "history", NULL, NULL), ==, 0);
        g_assert_nonnull(strstr(plain, "prepare: Cancelled: "));
}

/* A hook cycle whose end is written to a stuck disk: the persistent
 * directory is on slowfs, held from the kernel phase on, so that every
 * write there (the record's thaw phase, the history file, the record's
 * removal) waits until harness_slowfs_release(). Its id. */
static uint64_t cycle_onto_stuck_disk(Harness *h) {
        g_assert_cmpint(harness_fridgectl(h, 30000, NULL, "hook", "pre", "suspend"), ==, 0);
        harness_slowfs_hold(h);
        /* post returns when the cycle ended: on the loop's writes it would wait for good */
        g_assert_cmpint(harness_fridgectl(h, 20000, NULL, "hook", "post", "suspend"), ==, 0);
        g_autoptr(GArray) all = list_cycles(h, 0);
        g_assert_cmpuint(all->len, ==, 1);
        g_assert_cmpstr(g_array_index(all, Entry, 0).result, ==, "done");
        return g_array_index(all, Entry, 0).id;
}

/* A harness whose persistent directory is on slowfs, and a cycle ended
 * onto it held (cycle_onto_stuck_disk()); NULL where slowfs cannot run
 * (the harness said why) */
static Harness *stuck_disk_harness(Fixture *f, uint64_t *ret_id) {
        HarnessOptions o = { .slowfs = true, .persistent_on_slowfs = true };
        Harness *h = f->h = harness_new(&o);
        if (!h->slow || !h->slowfs_pid)
                return NULL;
        *ret_id = cycle_onto_stuck_disk(h);
        return h;
}

static char *history_file(Harness *h, uint64_t id) {
        g_autofree char *name = g_strdup_printf("%" G_GUINT64_FORMAT ".cycle", id);
        return g_build_filename(h->persistent, "history", name, NULL);
}

/* Polls up to 10 s for `path` to be there (or gone) */
static bool wait_path(const char *path, bool there) {
        for (int i = 0; i < 1000; i++) {
                if (there ? access(path, F_OK) == 0 : access(path, F_OK) < 0 && errno == ENOENT)
                        return true;
                g_usleep(10000);
        }
        return false;
}

/* The bus answers while the history's write is held, ListCycles already
 * has the cycle, and after the release the file and the record's removal
 * reach the disk in order */
static void test_stuck_disk(Fixture *f, gconstpointer data) {
        uint64_t id;
        Harness *h = stuck_disk_harness(f, &id);
        if (!h)
                return;
        g_autofree char *file = history_file(h, id);
        g_autofree char *record = g_build_filename(h->persistent, "cycle", NULL);
        /* held: neither written nor removed yet */
        g_assert_cmpint(access(file, F_OK), <, 0);
        g_assert_cmpint(access(record, F_OK), ==, 0);
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_call(h, "org.freedesktop.DBus.Properties", "GetAll", &reply, &err, &msg, "s",
                                     "io.fridge.Fridge1"), ==, 0);
        sd_bus_message_unref(reply);
        g_autofree char *state = harness_get_string(h, "State");
        g_assert_cmpstr(state, ==, "idle");
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, ==, "done");

        harness_slowfs_release(h);
        g_assert_true(wait_path(file, true));
        g_assert_true(wait_path(record, false));
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_assert_true(g_key_file_load_from_file(kf, file, G_KEY_FILE_NONE, NULL));
        g_assert_true(g_key_file_has_group(kf, "Timeline"));
}

/* Polls up to 10 s for `text` in fridged's log */
static bool wait_log(Harness *h, const char *text) {
        for (int i = 0; i < 1000; i++) {
                g_autofree char *log = NULL;
                if (g_file_get_contents(h->fridged_log, &log, NULL, NULL) && strstr(log, text))
                        return true;
                g_usleep(10000);
        }
        return false;
}

/* SIGTERM while the history's write is held: fridged stops after its
 * bounded wait and names each write it could not do */
static void test_stuck_disk_stop(Fixture *f, gconstpointer data) {
        uint64_t id;
        Harness *h = stuck_disk_harness(f, &id);
        if (!h)
                return;
        harness_kill_fridged(h, SIGTERM);
        g_assert_true(wait_log(h, "were not done before stopping"));
        /* Its main thread is done then; under ASan the leak check waits
         * for the thread the kernel keeps in the stuck write, so the exit
         * status comes once the disk answers */
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &log, NULL, NULL));
        g_autofree char *name = g_strdup_printf("history/%" G_GUINT64_FORMAT ".cycle", id);
        const char *line = strstr(log, "Not written before fridged stopped");
        g_assert_nonnull(line);
        g_assert_nonnull(strstr(line, name));
        /* the disk answers: the stuck write ends, and the process with it */
        harness_slowfs_release(h);
        int status = harness_wait_pid(h->fridged_pid, 10000);
        g_assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        h->fridged_pid = 0;
}

/* SIGKILL after CycleFinished went out, while the cycle's history entry
 * and its record's removal wait on a stuck disk: the restarted fridged
 * finds the record, and does not announce the cycle a second time (the
 * soak caught it doing so after a kill at the end of a cycle) */
static void test_announced_then_killed(Fixture *f, gconstpointer data) {
        uint64_t id;
        Harness *h = stuck_disk_harness(f, &id);
        if (!h)
                return;
        g_autofree char *record = g_build_filename(h->persistent, "cycle", NULL);
        guint before = h->signals->len;
        harness_kill_fridged(h, SIGKILL);
        harness_slowfs_release(h);
        g_assert_cmpint(access(record, F_OK), ==, 0); /* left behind */
        harness_restart_fridged(h);
        g_autofree char *line = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " had finished before the previous run",
                                                id);
        g_assert_true(wait_log(h, line));
        g_assert_true(wait_path(record, false));
        assert_not_finished_since(h, before, id);
        g_autofree char *last = harness_get_string(h, "LastResult");
        g_assert_cmpstr(last, !=, "failed");
}

#define ADD(path, fn) g_test_add("/history/" path, Fixture, NULL, harness_fixture_setup, fn, harness_fixture_teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        ADD("survives-restart", test_survives_restart);
        ADD("power-cut", test_power_cut);
        ADD("finished-record-left", test_finished_record_left);
        ADD("visibility-own", test_visibility_own);
        ADD("visibility-allowed", test_visibility_allowed);
        ADD("flood-keeps-others", test_flood_keeps_others);
        ADD("resume-rtc", test_resume_rtc);
        ADD("hook-starter", test_hook_starter);
        ADD("failing-phase", test_failing_phase);
        ADD("stuck-disk", test_stuck_disk);
        ADD("stuck-disk-stop", test_stuck_disk_stop);
        ADD("announced-then-killed", test_announced_then_killed);
        return g_test_run();
}
