/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cancel at every phase before the kernel's, and SIGTERM at every phase: a
 * cycle over 20 scratch cgroups (with pm-test and an RTC alarm) is held
 * inside the phase (rig.h) and ended there. Afterwards every scratch
 * cgroup is thawed, pm_test reads none and the RTC alarm is clear.
 *
 * Results: a Cancel ends the cycle "aborted" (Cancelled); in the kernel
 * phase Cancel is TooLate. SIGTERM ends it "aborted" before the kernel
 * phase and "failed" in it: the state write was issued, so fridged cannot
 * promise that nothing happened (documented in dbus/io.fridge.Fridge1.xml).
 * A SIGTERMed fridged leaves no cycle record: the next one reports nothing.
 */
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fridge-config.h"
#include "rig.h"

#define N_CGROUPS 20

static const char *const phases[] = {
        "prepare", "flush", "freeze-early", "flush-again", "freeze-late", "kernel", NULL,
};

typedef struct Tally {
        unsigned frozen, checked, kernel_restored, cases, clean_exits;
} Tally;

static void check_clean(Rig *r, Tally *t, const char *what, const char *phase) {
        unsigned frozen = rig_count_frozen(r);
        g_autofree char *pm_test = harness_read_sys(r->h, "power/pm_test");
        g_autofree char *alarm = harness_read_sys(r->h, "class/rtc/rtc0/wakealarm");
        t->frozen += frozen;
        t->checked += N_CGROUPS;
        t->cases++;
        if (frozen > 0)
                g_error("%s in %s: %u scratch cgroups left frozen", what, phase, frozen);
        if (!g_str_has_prefix(pm_test, "[none]"))
                g_error("%s in %s: pm_test is '%s'", what, phase, g_strstrip(pm_test));
        if (*g_strstrip(alarm))
                g_error("%s in %s: the RTC alarm is still set (%s)", what, phase, alarm);
}

static void expect_result(Rig *r, uint64_t cycle, const char *result, const char *error) {
        g_autofree char *res = NULL, *err = NULL, *msg = NULL;
        rig_finished(r, cycle, 15000, &res, &err, &msg);
        if (!g_str_equal(res, result) || !g_str_equal(err, error))
                g_error("cycle %" G_GUINT64_FORMAT " ended (%s, %s, %s); expected (%s, %s)", cycle, res, err, msg,
                        result, error);
}

static void cancel_in(Rig *r, Tally *t, const char *phase) {
        uint64_t cycle = rig_start_held(r, phase, RIG_PM_TEST);
        g_autofree char *err = NULL, *msg = NULL;
        int k = harness_cancel(r->h, cycle, &err, &msg);
        if (g_str_equal(phase, "kernel")) {
                g_assert_cmpint(k, <, 0);
                g_assert_cmpstr(err, ==, FRIDGE_INTERFACE ".Error.TooLate");
                rig_release(r);
                expect_result(r, cycle, "done", "");
        } else {
                g_assert_cmpint(k, ==, 0);
                expect_result(r, cycle, "aborted", FRIDGE_INTERFACE ".Error.Cancelled");
                rig_release(r);
        }
        check_clean(r, t, "Cancel", phase);
}

static void sigterm_in(Rig *r, Tally *t, const char *phase) {
        bool kernel = g_str_equal(phase, "kernel");
        uint64_t cycle = rig_start_held(r, phase, RIG_PM_TEST);
        harness_kill_fridged(r->h, SIGTERM);
        expect_result(r, cycle, kernel ? "failed" : "aborted",
                      kernel ? "org.freedesktop.DBus.Error.Failed" : FRIDGE_INTERFACE ".Error.Cancelled");
        /* thawed and restored before it exits: checked while the holds stay */
        unsigned frozen = rig_count_frozen(r);
        if (frozen > 0)
                g_error("SIGTERM in %s: %u cgroups frozen after CycleFinished", phase, frozen);
        rig_release(r);
        harness_restart_fridged(r->h);
        /* 0 also means no leak report: the suites run under ASan with detect_leaks=1 */
        if (r->h->fridged_status != 0)
                g_error("SIGTERM in %s: fridged's wait status 0x%x", phase, (unsigned) r->h->fridged_status);
        t->clean_exits++;
        check_clean(r, t, "SIGTERM", phase);
        t->kernel_restored += kernel;
        /* finished cleanly: no second CycleFinished from the new fridged */
        harness_process_until(r->h, 50, NULL, NULL);
        unsigned n = 0;
        for (guint i = 0; i < r->h->signals->len; i++) {
                HarnessSignal *s = r->h->signals->pdata[i];
                n += g_str_equal(s->member, "CycleFinished");
        }
        g_assert_cmpuint(n, ==, 1);
}

static void test_abort_every_phase(void) {
        Rig *r = rig_new(N_CGROUPS, NULL);
        if (!r)
                return;
        Tally t = {};
        for (const char *const *p = phases; *p; p++)
                cancel_in(r, &t, *p);
        unsigned cancels = t.cases;
        for (const char *const *p = phases; *p; p++)
                sigterm_in(r, &t, *p);
        rig_full_cycle(r);
        g_print("FIGURE: abort: fridged exited 0 after SIGTERM in %u of %u phases (under ASan: no leak reports)\n",
                t.clean_exits, t.cases - cancels);
        g_print("FIGURE: abort: Cancel in %u phases (kernel: TooLate), SIGTERM in %u phases: cgroups left frozen "
                "%u of %u; pm_test none and RTC alarm clear after all %u\n", cancels, t.cases - cancels, t.frozen,
                t.checked, t.cases);
        rig_free(r);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/abort/every-phase", test_abort_every_phase);
        return g_test_run();
}
