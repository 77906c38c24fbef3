/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Retries with backoff ([Sleep] Retries=2, RetryDelayMs=100): a state
 * write that fails with EBUSY, or a wakeup event that spoils the
 * handshake, is tried again after 100 ms, then 200 ms; each attempt runs
 * freeze-early … kernel again as phases, with Phase "retry" in between,
 * when every scratch cgroup is thawed. After the last attempt the cycle
 * fails with the last reason.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "fridge-config.h"
#include "rig.h"

#define N_CGROUPS 20
#define DELAY_MS 100

typedef struct Attempts {
        unsigned kernels, retries, frozen_between;
        gint64 retry_start[8], retry_len_usec[8];
} Attempts;

static const char *phase_change(HarnessSignal *s) {
        g_autoptr(GPtrArray) ch = harness_parse_props_changed(s);
        for (guint i = 0; i < ch->len; i++) {
                HarnessPropChange *c = ch->pdata[i];
                if (g_str_equal(c->name, "Phase"))
                        return g_intern_string(c->s);
        }
        return NULL;
}

/* Follows the phases live until CycleFinished: at each "retry" the
 * scratch cgroups must all be thawed already (the wait lasts ≥ 100 ms) */
static void follow(Rig *r, uint64_t cycle, Attempts *a) {
        guint seen = 0;
        gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
        while (harness_find_signal(r->h, "CycleFinished", true, cycle) < 0) {
                g_assert_cmpint(g_get_monotonic_time(), <, deadline);
                harness_process_until(r->h, 5, NULL, NULL);
                for (; seen < r->h->signals->len; seen++) {
                        HarnessSignal *s = r->h->signals->pdata[seen];
                        const char *p = phase_change(s);
                        if (a->retries > 0 && a->retry_len_usec[a->retries - 1] == 0 && p &&
                            !g_str_equal(p, "retry"))
                                a->retry_len_usec[a->retries - 1] = s->time_usec - a->retry_start[a->retries - 1];
                        if (p && g_str_equal(p, "kernel"))
                                a->kernels++;
                        if (p && g_str_equal(p, "retry") && a->retries < G_N_ELEMENTS(a->retry_start)) {
                                a->retry_start[a->retries++] = s->time_usec;
                                a->frozen_between += rig_count_frozen(r);
                        }
                }
        }
}

static uint64_t sleep_now(Rig *r) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_ptr_array_set_size(r->h->signals, 0);
        if (harness_sleep(r->h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep: %s: %s", err, msg);
        return cycle;
}

static void expect(Rig *r, uint64_t cycle, const char *result, const char *error, const char *in_message) {
        g_autofree char *res = NULL, *err = NULL, *msg = NULL;
        rig_finished(r, cycle, 1000, &res, &err, &msg);
        if (!g_str_equal(res, result) || !g_str_equal(err, error) || (in_message && !strstr(msg, in_message)))
                g_error("cycle ended (%s, %s, %s); expected (%s, %s, …%s…)", res, err, msg, result, error,
                        in_message ? in_message : "");
}

static void test_retry(void) {
        Rig *r = rig_new(N_CGROUPS, "[Sleep]\nRetries=2\nRetryDelayMs=100\n");
        if (!r)
                return;

        /* EBUSY twice, then it sleeps */
        Attempts ok = {};
        harness_control(r->h, "fail-state EBUSY 2");
        uint64_t cycle = sleep_now(r);
        follow(r, cycle, &ok);
        expect(r, cycle, "done", "", NULL);
        g_assert_cmpuint(ok.kernels, ==, 3);
        g_assert_cmpuint(ok.retries, ==, 2);
        g_assert_cmpuint(ok.frozen_between, ==, 0);
        g_assert_cmpint(ok.retry_len_usec[0], >=, DELAY_MS * 1000);
        g_assert_cmpint(ok.retry_len_usec[1], >=, 2 * DELAY_MS * 1000);
        g_assert_cmpuint(rig_count_frozen(r), ==, 0);

        /* EBUSY every time: failed with the last reason after 3 attempts */
        Attempts busy = {};
        harness_control(r->h, "fail-state EBUSY 3");
        cycle = sleep_now(r);
        follow(r, cycle, &busy);
        expect(r, cycle, "failed", FRIDGE_INTERFACE ".Error.Kernel", "(attempt 3 of 3)");
        g_assert_cmpuint(busy.kernels, ==, 3);
        g_assert_cmpuint(busy.frozen_between, ==, 0);
        g_assert_cmpuint(rig_count_frozen(r), ==, 0);

        /* a wakeup event just after the handshake: the state write gets
         * EBUSY (pm_wakeup_pending); the second attempt sleeps */
        Attempts wake = {};
        harness_control(r->h, "wakeup-on-write power/wakeup_count");
        cycle = sleep_now(r);
        follow(r, cycle, &wake);
        expect(r, cycle, "done", "", NULL);
        g_assert_cmpuint(wake.kernels, ==, 2);
        g_assert_cmpuint(wake.frozen_between, ==, 0);

        g_print("FIGURE: retry: EBUSY x2 then sleep: %u attempts, waits %.0f ms and %.0f ms (RetryDelayMs=%d, "
                "doubling), cgroups frozen between attempts %u of %u\n", ok.kernels,
                (double) ok.retry_len_usec[0] / 1000.0, (double) ok.retry_len_usec[1] / 1000.0, DELAY_MS,
                ok.frozen_between + busy.frozen_between + wake.frozen_between,
                (ok.retries + busy.retries + wake.retries) * (N_CGROUPS + 1));
        g_print("FIGURE: retry: EBUSY x3: failed (Kernel) after %u attempts; wakeup event once: done after %u\n",
                busy.kernels, wake.kernels);
        rig_free(r);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/retry/backoff", test_retry);
        return g_test_run();
}
