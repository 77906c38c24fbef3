/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Load: many clients at once against the real fridged.
 *  - 50 connections call Sleep at the same moment: exactly one cycle
 *    starts, the other 49 get Busy.
 *  - 200 connections follow a cycle that freezes 300 scratch cgroups (in
 *    two stages, so the progress moves often): every one of them gets
 *    exactly one CycleFinished, and no subscriber sees progress-only
 *    PropertiesChanged closer together than the 10 Hz throttle allows.
 * Prints FIGURE lines.
 */
#include <errno.h>
#include <glib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "fridge-config.h"
#include "harness.h"
#include "macro.h"
#include "scratch.h"

#define N_SLEEPERS 50
#define N_SUBSCRIBERS 200
#define N_CGROUPS 300
/* 10 Hz, plus the leading edge of each burst */
#define PROGRESS_HZ 10

static sd_bus *connect_to(Harness *h) {
        sd_bus *bus = NULL;
        g_assert_cmpint(sd_bus_new(&bus), >=, 0);
        g_assert_cmpint(sd_bus_set_address(bus, h->bus_address), >=, 0);
        g_assert_cmpint(sd_bus_set_bus_client(bus, 1), >=, 0);
        int r = sd_bus_start(bus);
        if (r < 0)
                g_error("connect to %s: %s", h->bus_address, g_strerror(-r));
        return bus;
}

/* ---- 50 concurrent Sleep calls ---- */

typedef struct SleepTally {
        unsigned replies, cycles, busy, other;
        uint64_t cycle;
        GString *others;
} SleepTally;

static int on_sleep_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SleepTally *t = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        t->replies++;
        if (!e && sd_bus_message_read(m, "t", &t->cycle) > 0)
                t->cycles++;
        else if (e && g_str_equal(e->name, FRIDGE_INTERFACE ".Error.Busy"))
                t->busy++;
        else {
                t->other++;
                g_string_append_printf(t->others, " %s", e ? e->name : "(unreadable reply)");
        }
        return 0;
}

static void test_concurrent_sleep(void) {
        g_autoptr(Harness) h = harness_new(NULL);
        sd_bus *clients[N_SLEEPERS];
        SleepTally t = { .others = g_string_new(NULL) };
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;

        /* long enough that every call arrives while the one cycle runs */
        harness_control(h, "sleep-ms 3000");
        g_assert_cmpint(sd_event_new(&event), >=, 0);
        for (int i = 0; i < N_SLEEPERS; i++) {
                clients[i] = connect_to(h);
                g_assert_cmpint(sd_bus_attach_event(clients[i], event, 0), >=, 0);
        }
        for (int i = 0; i < N_SLEEPERS; i++)
                g_assert_cmpint(sd_bus_call_method_async(clients[i], NULL, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                                         FRIDGE_INTERFACE, "Sleep", on_sleep_reply, &t, "sa{sv}",
                                                         "suspend", 0), >=, 0);
        int64_t deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
        while (t.replies < N_SLEEPERS && g_get_monotonic_time() < deadline)
                g_assert_cmpint(sd_event_run(event, 100 * 1000), >=, 0);

        g_print("FIGURE: load: %d concurrent Sleep calls: %u cycle started, %u Busy, %u other%s, %u unanswered\n",
                N_SLEEPERS, t.cycles, t.busy, t.other, t.others->str, N_SLEEPERS - t.replies);
        g_assert_cmpuint(t.replies, ==, N_SLEEPERS);
        g_assert_cmpuint(t.cycles, ==, 1);
        g_assert_cmpuint(t.busy, ==, N_SLEEPERS - 1);

        g_autofree char *result = NULL;
        g_assert_true(harness_wait_finished(h, t.cycle, 30000, &result, NULL, NULL));
        g_assert_cmpstr(result, ==, "done");
        for (int i = 0; i < N_SLEEPERS; i++)
                sd_bus_flush_close_unref(clients[i]);
        g_string_free(t.others, TRUE);
}

/* ---- 200 subscribers ---- */

typedef struct Subscriber {
        sd_bus *bus;
        unsigned finished;
        unsigned changes;          /* PropertiesChanged of fridged */
        unsigned progress_only;    /* of those, the throttled kind */
} Subscriber;

/* Phase and State go out at once by contract; only a change that carries
 * neither is subject to the 10 Hz throttle */
static bool progress_only(sd_bus_message *m) {
        const char *iface, *name;
        bool progress = false, immediate = false;
        if (sd_bus_message_read(m, "s", &iface) < 0 || sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return false;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                if (sd_bus_message_read(m, "s", &name) < 0 || sd_bus_message_skip(m, "v") < 0)
                        return false;
                progress = progress || g_str_has_prefix(name, "Progress");
                immediate = immediate || g_str_equal(name, "Phase") || g_str_equal(name, "State");
                (void) sd_bus_message_exit_container(m);
        }
        return progress && !immediate;
}

static int on_props(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Subscriber *s = userdata;
        s->changes++;
        s->progress_only += progress_only(m);
        return 0;
}

static int on_finished(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        ((Subscriber *) userdata)->finished++;
        return 0;
}

static void subscribe(Subscriber *s, Harness *h, sd_event *event) {
        s->bus = connect_to(h);
        g_assert_cmpint(sd_bus_match_signal(s->bus, NULL, NULL, FRIDGE_OBJECT_PATH, "org.freedesktop.DBus.Properties",
                                            "PropertiesChanged", on_props, s), >=, 0);
        g_assert_cmpint(sd_bus_match_signal(s->bus, NULL, NULL, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                            "CycleFinished", on_finished, s), >=, 0);
        g_assert_cmpint(sd_bus_attach_event(s->bus, event, 0), >=, 0);
}

static Scratch *make_cgroups(GString *late_globs) {
        Scratch *sc = scratch_new();
        for (int i = 0; i < N_CGROUPS; i++) {
                /* alternate classes among siblings: the plan cannot fold them into their parent */
                g_autofree char *name = g_strdup_printf("%c%03d", i % 2 ? 'l' : 'e', i);
                const char *cg = scratch_add(sc, name);
                scratch_spawn(sc, cg, NULL);
                if (i % 2)
                        g_string_append_printf(late_globs, "%s;", cg);
        }
        return sc;
}

static void test_subscribers(void) {
        const char *why = scratch_skip_reason();
        if (why) {
                g_test_skip(why);
                return;
        }
        g_autoptr(GString) late = g_string_new("[Late]\nCgroups=");
        g_autoptr(Scratch) sc = make_cgroups(late);
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n", sc->root);
        g_string_append_c(late, '\n');
        HarnessOptions o = { .config = config, .classes = late->str, .real_cgroups = true };
        g_autoptr(Harness) h = harness_new(&o);
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        Subscriber *subs = g_new0(Subscriber, N_SUBSCRIBERS);

        g_assert_cmpint(sd_event_new(&event), >=, 0);
        for (int i = 0; i < N_SUBSCRIBERS; i++)
                subscribe(&subs[i], h, event);
        for (int i = 0; i < 20; i++) /* let the AddMatch calls land */
                (void) sd_event_run(event, 10 * 1000);

        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep: %s: %s", err, msg);
        int64_t start = g_get_monotonic_time(), deadline = start + 60 * G_USEC_PER_SEC;
        unsigned done = 0;
        while (done < N_SUBSCRIBERS && g_get_monotonic_time() < deadline) {
                g_assert_cmpint(sd_event_run(event, 100 * 1000), >=, 0);
                done = 0;
                for (int i = 0; i < N_SUBSCRIBERS; i++)
                        done += subs[i].finished > 0;
        }
        for (int i = 0; i < 10; i++) /* late duplicates, if any, would show now */
                (void) sd_event_run(event, 10 * 1000);

        /* Rates, not gaps: one process reading 200 connections sees signals
         * in batches, so arrival times say little about emission times */
        double seconds = (double) (g_get_monotonic_time() - start) / 1e6;
        unsigned exactly_once = 0, min_changes = G_MAXUINT, max_changes = 0, max_progress = 0;
        for (int i = 0; i < N_SUBSCRIBERS; i++) {
                exactly_once += subs[i].finished == 1;
                min_changes = MIN(min_changes, subs[i].changes);
                max_changes = MAX(max_changes, subs[i].changes);
                max_progress = MAX(max_progress, subs[i].progress_only);
        }
        unsigned allowed = (unsigned) (seconds * PROGRESS_HZ) + 2;
        g_print("FIGURE: load: %d subscribers, %d cgroups frozen in two stages: CycleFinished exactly once at %u/%d; "
                "PropertiesChanged per subscriber %u..%u, progress-only at most %u in %.2f s (%.1f Hz; 10 Hz allows %u)\n",
                N_SUBSCRIBERS, N_CGROUPS, exactly_once, N_SUBSCRIBERS, min_changes, max_changes, max_progress,
                seconds, max_progress / seconds, allowed);
        g_assert_cmpuint(exactly_once, ==, N_SUBSCRIBERS);
        g_assert_cmpuint(min_changes, >, 0);
        g_assert_cmpuint(max_progress, <=, allowed);
        for (int i = 0; i < N_SUBSCRIBERS; i++)
                sd_bus_flush_close_unref(subs[i].bus);
        g_free(subs);
        for (guint i = 0; i < sc->cgroups->len; i++)
                g_assert_false(scratch_is_frozen(sc, sc->cgroups->pdata[i]));
}

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        g_test_add_func("/load/concurrent-sleep", test_concurrent_sleep);
        g_test_add_func("/load/subscribers", test_subscribers);
        return g_test_run();
}
