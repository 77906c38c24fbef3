/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Refused HoldClass calls cost fridged nothing that stays: uid 65534, in a
 * scratch cgroup inside the freeze roots and allowed by the polkit
 * stand-in, makes 9,200 HoldClass calls in rounds of 46 on a fresh
 * connection each, 8 held first, then the rest pipelined (16 held in all,
 * over 6,000 refused: over the connection's limit, before or after polkit
 * answered, or over the pending authorizations of its uid). fridged's RssAnon
 * (/proc/PID/status) may grow by less than 256 KiB over them; before,
 * each call refused after its polkit answer kept the query and its
 * message (2.1 kB). Prints a FIGURE line. Also: a user's class holds and
 * inhibitors count together against its cap.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "fridge-config.h"
#include "harness.h"
#include "inhibit.h"
#include "polkit.h"
#include "scratch.h"

#define ROUNDS 200
#define PER_ROUND 46
#define GROWTH_MAX_KIB 256

static unsigned long rss_anon_kib(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/status", (int) pid), *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        const char *at = strstr(text, "RssAnon:");
        g_assert_nonnull(at);
        return strtoul(at + strlen("RssAnon:"), NULL, 10);
}

static unsigned polkit_lines(Harness *h) {
        g_autofree char *log = NULL;
        g_assert_true(g_file_get_contents(h->polkit_log, &log, NULL, NULL));
        unsigned n = 0;
        for (const char *p = log; (p = strchr(p, '\n')); p++)
                n++;
        return n;
}

/* One attacker run: ROUNDS × PER_ROUND calls; its tally */
static char *attack(Harness *h, const char *procs, unsigned rounds) {
        HarnessFlood f = harness_flood_start(h, 65534, procs, "HoldClass", PER_ROUND, rounds, "rounds");
        char *tally = harness_flood_result(&f, 240000);
        g_assert_cmpint(harness_flood_end(&f), ==, 0);
        return tally;
}

/* fridged with the scratch root as its freeze root, polkit allowing
 * inhibitors; *ret_procs: the attacker's cgroup.procs */
static Harness *start(Scratch *s, char **ret_procs) {
        const char *cg = scratch_add(s, "attacker.scope");
        g_autofree char *abs = scratch_abs(s, cg);
        *ret_procs = g_build_filename(abs, "cgroup.procs", NULL);
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n", s->root);
        HarnessOptions o = { .config = config, .real_cgroups = true, .open_bus = true,
                             .polkit_table = "io.fridge.inhibit * yes\n" };
        /* Under ASan freed memory waits in a quarantine (256 MiB) before it
         * is reused: fridged's RssAnon would count it */
        const char *asan = g_getenv("ASAN_OPTIONS");
        g_autofree char *no_quarantine = g_strdup_printf("%s%squarantine_size_mb=0:thread_local_quarantine_size_kb=0",
                                                         asan ? asan : "", asan && *asan ? ":" : "");
        g_setenv("ASAN_OPTIONS", no_quarantine, TRUE);
        return harness_new(&o);
}

typedef struct Fixture {
        Scratch *s;
        Harness *h;     /* NULL: the case is skipped */
        char *procs;    /* the attacker's cgroup.procs */
} Fixture;

static void setup(Fixture *f, gconstpointer data) {
        const char *why = harness_scratch_skip_reason();
        if (why) {
                g_test_skip(why);
                return;
        }
        f->s = scratch_new();
        f->h = start(f->s, &f->procs);
}

static void teardown(Fixture *f, gconstpointer data) {
        if (f->h && harness_stop(f->h) != 0) {
                harness_dump_fridged_log(f->h);
                g_error("fridged did not exit 0 on SIGTERM");
        }
        harness_free(f->h);
        scratch_free(f->s); /* after fridged */
        g_free(f->procs);
}

static void test_refused_holds(Fixture *f, gconstpointer data) {
        if (!f->h)
                return;
        Harness *h = f->h;
        const char *procs = f->procs;

        /* a first run settles fridged's allocator and the bus's buffers */
        g_autofree char *warm = attack(h, procs, ROUNDS / 2);
        g_assert_cmpuint(harness_flood_count(warm, "ok"), >, 0);
        unsigned long before = rss_anon_kib(h->fridged_pid);
        g_autofree char *tally = attack(h, procs, ROUNDS);
        unsigned long after = rss_anon_kib(h->fridged_pid);
        unsigned held = harness_flood_count(tally, "ok");
        unsigned refused = ROUNDS * PER_ROUND - held;
        g_test_message("attacker's tally:\n%s", tally);
        g_print("FIGURE: hold-memory: %u HoldClass calls refused (%u held and let go) grew fridged's RssAnon "
                "from %lu to %lu KiB (%+ld KiB; bound %d KiB)\n", refused, held, before, after,
                (long) after - (long) before, GROWTH_MAX_KIB);
        g_assert_cmpuint(refused, >=, 6000);
        g_assert_cmpint((long) after - (long) before, <, GROWTH_MAX_KIB);
        /* and no answer outlived its call (counted against the uid's pending
         * authorizations): while polkit holds its answers, the uid may still
         * wait for as many as at first */
        g_autofree char *hold = g_build_filename(h->dir, "polkit.hold", NULL);
        g_assert_true(g_file_set_contents(hold, "", 0, NULL));
        unsigned asked = polkit_lines(h);
        HarnessFlood again = harness_flood_start(h, 65534, procs, "HoldClass", POLKIT_PENDING_PER_UID_DEFAULT, 1,
                                                 "pipelined");
        for (int i = 0; i < 1000 && polkit_lines(h) < asked + POLKIT_PENDING_PER_UID_DEFAULT; i++)
                g_usleep(10000);
        g_assert_cmpint(g_unlink(hold), ==, 0);
        g_autofree char *last = harness_flood_result(&again, 30000);
        g_assert_cmpint(harness_flood_end(&again), ==, 0);
        g_test_message("%u calls while polkit held its answers: %s", POLKIT_PENDING_PER_UID_DEFAULT, last);
        g_assert_cmpuint(harness_flood_count(last, "ok"), ==, POLKIT_PENDING_PER_UID_DEFAULT);
}

static void wait_no_inhibitors(Harness *h) {
        for (int i = 0; i < 1000; i++) {
                sd_bus_message *reply = NULL;
                g_autofree char *err = NULL, *msg = NULL;
                if (harness_call(h, FRIDGE_INTERFACE, "ListInhibitors", &reply, &err, &msg, "") < 0)
                        g_error("ListInhibitors failed: %s: %s", err, msg);
                g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ssssuu)"), >, 0);
                int empty = sd_bus_message_at_end(reply, false);
                sd_bus_message_unref(reply);
                if (empty > 0)
                        return;
                g_usleep(10000);
        }
        g_error("fridged still lists inhibitors");
}

/* 64 of `first` (Inhibit or HoldClass) on 4 connections, kept; then one
 * `then` on a fresh connection must be refused */
static void fill_then_refused(Fixture *f, const char *first, const char *then) {
        unsigned conns = INHIBITORS_PER_USER_DEFAULT / INHIBITORS_PER_SENDER_MAX;
        const char *first_procs = g_str_equal(first, "HoldClass") ? f->procs : NULL;
        const char *then_procs = g_str_equal(then, "HoldClass") ? f->procs : NULL;
        HarnessFlood full = harness_flood_start(f->h, 65534, first_procs, first, INHIBITORS_PER_SENDER_MAX, conns,
                                                "sequential");
        g_autofree char *got = harness_flood_result(&full, 60000);
        g_assert_cmpuint(harness_flood_count(got, "ok"), ==, INHIBITORS_PER_USER_DEFAULT);
        HarnessFlood more = harness_flood_start(f->h, 65534, then_procs, then, 1, 1, "sequential");
        g_autofree char *refused = harness_flood_result(&more, 30000);
        g_test_message("%s beside %u of %s: %s", then, INHIBITORS_PER_USER_DEFAULT, first, refused);
        g_assert_cmpuint(harness_flood_count(refused, "org.freedesktop.DBus.Error.LimitsExceeded"), ==, 1);
        g_assert_cmpint(harness_flood_end(&more), ==, 0);
        g_assert_cmpint(harness_flood_end(&full), ==, 0);
}

/* A user's class holds and inhibitors share its cap: with its inhibitors
 * at the cap, a hold on a fresh connection is refused, and the other way
 * round */
static void test_holds_in_user_cap(Fixture *f, gconstpointer data) {
        if (!f->h)
                return;
        fill_then_refused(f, "Inhibit", "HoldClass");
        /* once fridged has seen the inhibitors' connections go */
        wait_no_inhibitors(f->h);
        fill_then_refused(f, "HoldClass", "Inhibit");
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add("/stress/hold-memory", Fixture, NULL, setup, test_refused_holds, teardown);
        g_test_add("/stress/holds-in-user-cap", Fixture, NULL, setup, test_holds_in_user_cap, teardown);
        return g_test_run();
}
