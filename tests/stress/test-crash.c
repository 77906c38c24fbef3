/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Crash at every phase: a cycle over 20 scratch cgroups is held inside a
 * phase (rig.h), fridged is SIGKILLed there and started again. The new
 * fridged must thaw every scratch cgroup from the ledger, report the
 * interrupted cycle id with CycleFinished "failed" / Interrupted naming the
 * phase, and run new cycles with ids that do not repeat. 20 repetitions per
 * phase; the figure is how many cgroups were left frozen.
 *
 * The thaw phase cannot be held (it is a few synchronous writes), so its
 * kill follows the state write's return in fakesys's log at once and lands
 * at the end of the kernel phase, in thaw, or just after the cycle ended:
 * each is checked for what it must give, and the figure says where the
 * kills landed.
 */
#include <glib.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fridge-config.h"
#include "rig.h"

#define N_CGROUPS 20
#define REPS 20

static const char *const held_phases[] = {
        "prepare", "flush", "freeze-early", "flush-again", "freeze-late", "kernel", NULL,
};

typedef struct Tally {
        unsigned restarts, frozen_after, checked;
        uint64_t last_id;
        gint64 worst_restart_usec;
} Tally;

/* After the restart: the interrupted cycle ended failed/Interrupted, nothing frozen */
static void check_after_restart(Rig *r, Tally *t, uint64_t cycle, const char *phase) {
        g_autofree char *result = NULL, *error = NULL, *message = NULL;
        rig_finished(r, cycle, 10000, &result, &error, &message);
        g_assert_cmpstr(result, ==, "failed");
        g_assert_cmpstr(error, ==, FRIDGE_INTERFACE ".Error.Interrupted");
        g_autofree char *during = g_strdup_printf("during phase %s of the previous run", phase);
        if (!strstr(message, during))
                g_error("cycle %" G_GUINT64_FORMAT ": '%s' does not say '%s'", cycle, message, during);
        g_assert_nonnull(strstr(message, "everything it froze was thawed"));
        unsigned frozen = rig_count_frozen(r);
        t->frozen_after += frozen;
        t->checked += N_CGROUPS;
        if (frozen > 0)
                g_error("%u scratch cgroups still frozen after the restart (phase %s)", frozen, phase);
}

static void crash_once(Rig *r, Tally *t, const char *phase) {
        uint64_t cycle = rig_start_held(r, phase, 0);
        if (cycle <= t->last_id)
                g_error("cycle id %" G_GUINT64_FORMAT " after %" G_GUINT64_FORMAT ": ids repeat across restarts",
                        cycle, t->last_id);
        t->last_id = cycle;
        harness_kill_fridged(r->h, SIGKILL);
        rig_release(r); /* a thread stuck in a held syncfs keeps the dead fridged from exiting */
        gint64 start = g_get_monotonic_time();
        harness_restart_fridged(r->h);
        t->worst_restart_usec = MAX(t->worst_restart_usec, g_get_monotonic_time() - start);
        t->restarts++;
        check_after_restart(r, t, cycle, phase);
}

/* Where the thaw-phase kill landed: "kernel"/"thaw" (interrupted) or "after" */
static const char *crash_at_thaw(Rig *r, Tally *t) {
        g_ptr_array_set_size(r->h->signals, 0);
        harness_control(r->h, "clear-log");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_sleep(r->h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep: %s: %s", err, msg);
        g_assert_cmpuint(cycle, >, t->last_id);
        t->last_id = cycle;
        g_assert_true(harness_wait_log_line(r->h, "power/state mem ok", 15000));
        harness_kill_fridged(r->h, SIGKILL);
        harness_restart_fridged(r->h);
        t->restarts++;

        g_autofree char *result = NULL, *error = NULL, *message = NULL;
        rig_finished(r, cycle, 10000, &result, &error, &message);
        unsigned frozen = rig_count_frozen(r);
        t->frozen_after += frozen;
        t->checked += N_CGROUPS;
        g_assert_cmpuint(frozen, ==, 0);
        if (g_str_equal(result, "done"))
                return "after";
        g_assert_cmpstr(error, ==, FRIDGE_INTERFACE ".Error.Interrupted");
        return strstr(message, "phase thaw") ? "thaw" : strstr(message, "phase kernel") ? "kernel" : "other";
}

static void test_crash_every_phase(void) {
        Rig *r = rig_new(N_CGROUPS, NULL);
        if (!r)
                return;
        Tally t = {};
        gint64 start = g_get_monotonic_time();
        for (const char *const *p = held_phases; *p; p++) {
                gint64 phase_start = g_get_monotonic_time();
                for (int i = 0; i < REPS; i++)
                        crash_once(r, &t, *p);
                t.last_id = rig_full_cycle(r);
                g_print("FIGURE: crash: SIGKILL in %s: %d restarts, %.0f ms each on average\n", *p, REPS,
                        (double) (g_get_monotonic_time() - phase_start) / 1000.0 / REPS);
        }
        unsigned in_thaw = 0, in_kernel = 0, after = 0;
        for (int i = 0; i < REPS; i++) {
                const char *where = crash_at_thaw(r, &t);
                in_thaw += g_str_equal(where, "thaw");
                in_kernel += g_str_equal(where, "kernel");
                after += g_str_equal(where, "after");
        }
        t.last_id = rig_full_cycle(r);
        g_print("FIGURE: crash: SIGKILL at the state write's return (thaw): %u in thaw, %u at the end of kernel, "
                "%u after the cycle ended\n", in_thaw, in_kernel, after);
        g_print("FIGURE: crash: cgroups left frozen %u of %u (%u restarts, slowest restart %.0f ms, %.1f s in all)\n",
                t.frozen_after, t.checked, t.restarts, (double) t.worst_restart_usec / 1000.0,
                (double) (g_get_monotonic_time() - start) / G_USEC_PER_SEC);
        g_assert_cmpuint(t.frozen_after, ==, 0);
        rig_free(r);
}

/* ---- the kernel settings after a kill in the kernel phase ---- */

static char *sys_value(Rig *r, const char *rel) {
        char *v = harness_read_sys(r->h, rel);
        return g_strstrip(v);
}

#define DISK_BEFORE "platform [shutdown] reboot suspend test_resume"

static void assert_restored(Rig *r) {
        harness_assert_sys(r->h, "power/pm_test", "none core processors [platform] devices freezer");
        harness_assert_sys(r->h, "power/mem_sleep", "s2idle [deep]");
        harness_assert_sys(r->h, "power/disk", DISK_BEFORE);
        harness_assert_sys(r->h, "class/rtc/rtc0/wakealarm", "");
}

/* fridged --thaw-all, as ExecStopPost= runs it after the kill */
static void run_thaw_all(Rig *r) {
        g_autofree char *state = g_strdup_printf("--state-dir=%s/state", r->h->dir);
        g_autofree char *sys = g_strdup_printf("--sysfs-root=%s", r->h->root);
        g_autofree char *cg = g_strdup_printf("--cgroup-root=%s", r->s->mount);
        char *argv[] = { (char *) harness_env("FRIDGED"), (char *) "--thaw-all", state, sys, cg, NULL };
        g_autofree char *out = NULL;
        int status = harness_run(argv, 30000, &out);
        g_test_message("fridged --thaw-all: %s", out ? out : "");
        g_assert_cmpint(status, ==, 0);
}

/* A cycle sets pm_test, mem_sleep and the RTC alarm, is killed while its
 * state write is held; the restart, or --thaw-all before it, puts all of
 * them, and disk (changed by hand where a hibernation would have), back as
 * they were before the cycle, not to fakesys's defaults. */
static void crash_in_kernel_restores(Rig *r, bool thaw_all) {
        harness_control(r->h, "set power/disk " DISK_BEFORE);
        harness_control(r->h, "set power/pm_test none core processors [platform] devices freezer");
        uint64_t cycle = rig_start_held(r, "kernel", RIG_PM_TEST | RIG_MEM_SLEEP);
        harness_assert_sys(r->h, "power/pm_test", "none core processors platform [devices] freezer");
        harness_assert_sys(r->h, "power/mem_sleep", "[s2idle] deep");
        g_autofree char *alarm = sys_value(r, "class/rtc/rtc0/wakealarm");
        g_assert_cmpstr(alarm, !=, "");

        harness_kill_fridged(r->h, SIGKILL);
        rig_release(r);
        /* the dead fridged put nothing back */
        harness_assert_sys(r->h, "power/pm_test", "none core processors platform [devices] freezer");
        harness_control(r->h, "set power/disk [platform] shutdown reboot suspend test_resume");

        if (thaw_all) { /* on its own, before any restart */
                run_thaw_all(r);
                assert_restored(r);
        }
        harness_restart_fridged(r->h);
        g_autofree char *result = NULL, *error = NULL, *message = NULL;
        rig_finished(r, cycle, 10000, &result, &error, &message);
        g_assert_cmpstr(result, ==, "failed");
        g_assert_cmpuint(rig_count_frozen(r), ==, 0);
        assert_restored(r);
        harness_control(r->h, "set power/pm_test [none] core processors platform devices freezer");
}

static void test_crash_restores_kernel_settings(gconstpointer data) {
        Rig *r = rig_new(2, NULL);
        if (!r)
                return;
        crash_in_kernel_restores(r, GPOINTER_TO_INT(data));
        (void) rig_full_cycle(r);
        rig_free(r);
}

/* The bus daemon restarted in the middle of a cycle (found by the soak,
 * seed 1291130754, cycle 13): fridged thaws and exits without a bus to send
 * CycleFinished on, so the next fridged must report the cycle as
 * Interrupted; it used to record it finished "aborted" and say nothing,
 * leaving every client waiting for a CycleFinished that never came. */
static void test_bus_lost_reported(gconstpointer data) {
        const char *phase = data;
        Rig *r = rig_new(4, NULL);
        if (!r)
                return;
        uint64_t cycle = rig_start_held(r, phase, 0);
        harness_restart_bus(r->h, false, NULL);
        rig_release(r); /* a thread stuck in a held syncfs keeps fridged from exiting */
        harness_restart_fridged(r->h);
        Tally t = {};
        check_after_restart(r, &t, cycle, phase);
        g_assert_cmpuint(rig_full_cycle(r), >, cycle);
        rig_free(r);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/crash/every-phase", test_crash_every_phase);
        g_test_add_data_func("/crash/kernel-settings-restart", GINT_TO_POINTER(0), test_crash_restores_kernel_settings);
        g_test_add_data_func("/crash/kernel-settings-thaw-all", GINT_TO_POINTER(1), test_crash_restores_kernel_settings);
        g_test_add_data_func("/crash/bus-lost-prepare", "prepare", test_bus_lost_reported);
        g_test_add_data_func("/crash/bus-lost-freeze-late", "freeze-late", test_bus_lost_reported);
        return g_test_run();
}
