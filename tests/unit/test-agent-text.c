/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What fridge-agent's notifications say (agent/text.c) */
#include <glib.h>
#include <math.h>
#include <stdint.h>

#include "text.h"

static void test_summary(void) {
        g_autofree char *s = text_summary("suspend"), *h = text_summary("hibernate"), *y = text_summary("hybrid-sleep");
        g_assert_cmpstr(s, ==, "Suspending…");
        g_assert_cmpstr(h, ==, "Hibernating…");
        g_assert_cmpstr(y, ==, "Hybrid sleep…");
        g_autofree char *unknown = text_summary("something-new");
        g_assert_cmpstr(unknown, ==, "Suspending…");
}

static void test_body(void) {
        AgentCycle c = { .state = "running", .phase = "flush", .progress_text = "flushing 412 MiB",
                         .cancellable = true, .started_by = "bus" };
        g_autofree char *flush = text_body(&c);
        g_assert_cmpstr(flush, ==, "Writing data to disk: flushing 412 MiB");
        g_assert_null(text_no_cancel_reason(&c));

        c.phase = "freeze-early";
        c.progress_text = "freezing 2/5 (early): waiting for <b>&backup.service";
        g_autofree char *escaped = text_body(&c);
        g_assert_cmpstr(escaped, ==, "Freezing applications: freezing 2/5 (early): waiting for &lt;b&gt;&amp;backup.service");

        c.phase = "kernel";
        c.progress_text = "sleeping (mem)";
        c.cancellable = false;
        g_autofree char *late = text_body(&c);
        g_assert_cmpstr(late, ==, "Going to sleep: sleeping (mem)\n"
                                  "It can no longer be cancelled: the system is past the point of no return.");

        c.phase = "freeze-early";
        c.started_by = "hook";
        g_autofree char *hook = text_body(&c);
        g_assert_cmpstr(hook, ==, "Freezing applications: sleeping (mem)\n"
                                  "The sleep was started by the system and cannot be stopped.");

        AgentCycle q = { .state = "queued", .phase = "", .progress_text = "", .cancellable = true };
        g_autofree char *queued = text_body(&q);
        g_assert_cmpstr(queued, ==, "Waiting for what blocks sleep");

        AgentCycle t = { .state = "thawing", .phase = "thaw", .progress_text = "thawing", .started_by = "bus" };
        g_autofree char *thaw = text_body(&t);
        g_assert_cmpstr(thaw, ==, "Waking up: thawing");

        /* cancelled in the early freeze: thawing, Phase still where it ended;
         * no point of no return to speak of (the real Plasma showed one) */
        AgentCycle e = { .state = "thawing", .phase = "freeze-early", .progress_text = "freezing 1/2 (early)",
                         .started_by = "bus" };
        g_assert_null(text_no_cancel_reason(&e));
}

static void test_value(void) {
        g_assert_cmpint(text_value(0.0), ==, 0);
        g_assert_cmpint(text_value(-0.5), ==, 0);
        g_assert_cmpint(text_value(NAN), ==, 0);
        g_assert_cmpint(text_value(0.419), ==, 41);
        g_assert_cmpint(text_value(0.999), ==, 99);
        g_assert_cmpint(text_value(1.0), ==, 100);
        g_assert_cmpint(text_value(7.0), ==, 100);
}

static void test_duration(void) {
        static const struct { uint64_t usec; const char *text; } cases[] = {
                { 0, "0.0 s" },
                { 3000000, "3.0 s" },
                { 59949999, "59.9 s" },
                { 60000000, "1 min" },
                { 125000000, "2 min 5 s" },
                { 3600000000, "1 h" },
                { 3840000000, "1 h 4 min" },
                { UINT64_C(90000000000), "1 d 1 h" },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *t = text_duration(cases[i].usec);
                g_assert_cmpstr(t, ==, cases[i].text);
        }
}

static void test_result(void) {
        g_autofree char *done = text_result_summary("suspend", "done", "");
        g_assert_cmpstr(done, ==, "Woke up from suspend");
        g_autofree char *hib = text_result_summary("hibernate", "done", "");
        g_assert_cmpstr(hib, ==, "Woke up from hibernation");
        g_autofree char *cancelled = text_result_summary("suspend", "aborted", "io.fridge.Fridge1.Error.Cancelled");
        g_assert_cmpstr(cancelled, ==, "Suspend cancelled");
        g_autofree char *wakeup = text_result_summary("suspend", "aborted", "io.fridge.Fridge1.Error.WakeupEvent");
        g_assert_cmpstr(wakeup, ==, "Suspend stopped");
        g_autofree char *failed = text_result_summary("hibernate", "failed", "io.fridge.Fridge1.Error.Kernel");
        g_assert_cmpstr(failed, ==, "Hibernation failed");

        g_autofree char *slept = text_result_body("done", "", "slept and resumed", 3000000, "rtc0 on 00:04 (rtc_cmos)");
        g_assert_cmpstr(slept, ==, "Slept for 3.0 s; woken by rtc0 on 00:04 (rtc_cmos).");
        g_autofree char *no_resumed = text_result_body("done", "", "", UINT64_MAX, "");
        g_assert_cmpstr(no_resumed, ==, "The machine is awake again; woken by unknown.");
        g_autofree char *why = text_result_body("failed", "io.fridge.Fridge1.Error.FreezeTimeout", "cgroups <x> did not freeze",
                                                UINT64_MAX, NULL);
        g_assert_cmpstr(why, ==, "FreezeTimeout: cgroups &lt;x&gt; did not freeze. Everything runs again.");
        g_autofree char *user = text_result_body("aborted", "io.fridge.Fridge1.Error.Cancelled", "cancelled by user",
                                                 UINT64_MAX, NULL);
        g_assert_cmpstr(user, ==, "Cancelled: cancelled by user. Everything runs again.");

        g_assert_cmpuint(text_result_urgency("failed"), ==, 2);
        g_assert_cmpuint(text_result_urgency("aborted"), ==, 1);
        g_assert_cmpuint(text_result_urgency("done"), ==, 1);
}

/* A hibernation's image write under the result: read from the cycle's
 * ListCycles entry, and only from that cycle's */
static void test_image_write(void) {
        g_autoptr(GVariantBuilder) b = g_variant_builder_new(G_VARIANT_TYPE("a{sv}"));
        g_variant_builder_add(b, "{sv}", "id", g_variant_new_uint64(9));
        g_variant_builder_add(b, "{sv}", "image-writer", g_variant_new_string("fridge"));
        g_variant_builder_add(b, "{sv}", "image-raw-bytes", g_variant_new_uint64(78 * 1048576ULL));
        g_variant_builder_add(b, "{sv}", "image-written-bytes", g_variant_new_uint64(14365491));
        g_variant_builder_add(b, "{sv}", "image-usec", g_variant_new_uint64(1200000));
        g_autoptr(GVariant) entry = g_variant_ref_sink(g_variant_builder_end(b));

        ImageWrite w = text_image_write(entry, 9);
        g_assert_cmpstr(w.writer, ==, "fridge");
        g_assert_cmpuint(w.raw_bytes, ==, 78 * 1048576ULL);
        g_autofree char *body = text_body_with_image("Slept for 5 s; woken by <b>.", &w);
        g_assert_cmpstr(body, ==, "Slept for 5 s; woken by <b>.\n"
                                  "image: 78.0 MiB written as 13.7 MiB (5.7x) in 1.2 s, 65 MiB/s");

        ImageWrite other = text_image_write(entry, 10);
        g_assert_null(other.writer);
        g_autofree char *plain = text_body_with_image("Slept.", &other);
        g_assert_cmpstr(plain, ==, "Slept.");
}

static void test_bar(void) {
        g_autofree char *zero = text_bar(0), *half = text_bar(48), *full = text_bar(100), *over = text_bar(250),
                        *under = text_bar(-3);
        g_assert_cmpstr(zero, ==, "▱▱▱▱▱▱▱▱▱▱ 0 %");
        g_assert_cmpstr(half, ==, "▰▰▰▰▱▱▱▱▱▱ 48 %");
        g_assert_cmpstr(full, ==, "▰▰▰▰▰▰▰▰▰▰ 100 %");
        g_assert_cmpstr(over, ==, full);
        g_assert_cmpstr(under, ==, zero);
}

/* Each server as it names itself (GetServerInformation), measured on the
 * real ones; the settings' names round-trip */
static void test_style(void) {
        g_assert_cmpint(progress_style_for_server("gnome-shell", "GNOME"), ==, PROGRESS_STYLE_TEXT);
        g_assert_cmpint(progress_style_for_server("Plasma", "KDE"), ==, PROGRESS_STYLE_JOB_VIEW);
        g_assert_cmpint(progress_style_for_server("dunst", "knopwob"), ==, PROGRESS_STYLE_VALUE);
        g_assert_cmpint(progress_style_for_server("mako", "emersion"), ==, PROGRESS_STYLE_VALUE);
        g_assert_cmpint(progress_style_for_server("Xfce Notify Daemon", "Xfce"), ==, PROGRESS_STYLE_VALUE);
        g_assert_cmpint(progress_style_for_server(NULL, NULL), ==, PROGRESS_STYLE_VALUE);
        for (int i = 0; i < _PROGRESS_STYLE_MAX; i++)
                g_assert_cmpint(progress_style_from_string(progress_style_to_string((ProgressStyle) i)), ==, i);
        g_assert_cmpint(progress_style_from_string("bar"), ==, _PROGRESS_STYLE_INVALID);
        g_assert_cmpint(progress_style_from_string(NULL), ==, _PROGRESS_STYLE_INVALID);
        g_assert_null(progress_style_to_string(_PROGRESS_STYLE_MAX));
}

/* GNOME Shell before 46 empties an updated banner's buttons (measured on
 * 43.9); 46 rebuilt the message tray; an unreadable version renews */
static void test_drops_updated_actions(void) {
        g_assert_true(text_server_drops_updated_actions("gnome-shell", "43.9"));
        g_assert_true(text_server_drops_updated_actions("gnome-shell", "45.beta"));
        g_assert_false(text_server_drops_updated_actions("gnome-shell", "46.0"));
        g_assert_false(text_server_drops_updated_actions("gnome-shell", "48.4"));
        g_assert_true(text_server_drops_updated_actions("gnome-shell", ""));
        g_assert_true(text_server_drops_updated_actions("gnome-shell", NULL));
        g_assert_true(text_server_drops_updated_actions("gnome-shell", "99999999999"));
        g_assert_false(text_server_drops_updated_actions("Plasma", "5.27.5"));
        g_assert_false(text_server_drops_updated_actions(NULL, "43.9"));
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/agent-text/summary", test_summary);
        g_test_add_func("/agent-text/body", test_body);
        g_test_add_func("/agent-text/value", test_value);
        g_test_add_func("/agent-text/bar", test_bar);
        g_test_add_func("/agent-text/style", test_style);
        g_test_add_func("/agent-text/drops-updated-actions", test_drops_updated_actions);
        g_test_add_func("/agent-text/duration", test_duration);
        g_test_add_func("/agent-text/result", test_result);
        g_test_add_func("/agent-text/image-write", test_image_write);
        return g_test_run();
}
