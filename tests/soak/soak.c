/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tools/soak's driver (issue 18): N cycles of the real fridged on the
 * simulated kernel, faults drawn per cycle from a seeded schedule, the
 * invariants checked after each (soak.h). Prints the seed first, a
 * progress line per cycle and "FIGURE soak ..." lines at the end; exits
 * non-zero at the first violation, 77 when the machine cannot run it.
 *
 *   soak [--cycles N] [--minutes M] [--seed S] [--cgroups N] [--keep-dir DIR]
 */
#include "soak.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RSS_SLACK_KIB 512

static gint opt_cycles = 0, opt_minutes = 0, opt_cgroups = 200;
static gint64 opt_seed = -1;
static gchar *opt_keep_dir;

static const GOptionEntry options[] = {
        { "cycles", 0, 0, G_OPTION_ARG_INT, &opt_cycles, "Cycles to run (default 60 without --minutes)", "N" },
        { "minutes", 0, 0, G_OPTION_ARG_INT, &opt_minutes, "Stop starting cycles after M minutes", "M" },
        { "seed", 0, 0, G_OPTION_ARG_INT64, &opt_seed, "The schedule's seed (default: from the time)", "S" },
        { "cgroups", 0, 0, G_OPTION_ARG_INT, &opt_cgroups, "Scratch cgroups over the classes (200)", "N" },
        { "keep-dir", 0, 0, G_OPTION_ARG_FILENAME, &opt_keep_dir, "Where a violation's logs go (.)", "DIR" },
        {},
};

static void tally_result(Soak *k, const char *result, const char *error) {
        if (g_str_equal(result, "done"))
                k->n_done++;
        else if (g_str_equal(result, "aborted"))
                k->n_cancelled++;
        else if (g_str_equal(result, "failed") && error && g_str_has_suffix(error, ".Interrupted"))
                k->n_interrupted++;
        else if (g_str_equal(result, "failed"))
                k->n_failed++;
        else
                k->n_other++;
}

/* A restart (a fault) starts a new process: its growth is measured from
 * its own 10th cycle, and the longest-lived one is what the figure keeps */
static void life_clear(SoakLife *l) {
        g_free(l->fd_list10);
        g_free(l->fd_list_last);
        *l = (SoakLife) {};
}

static void track_life(Soak *k) {
        SoakLife *l = &k->life;
        if (l->pid != k->h->fridged_pid) {
                life_clear(l);
                l->pid = k->h->fridged_pid;
        }
        l->cycles++;
        if (l->cycles < 10)
                return;
        soak_check_memory(l->pid, &l->rss_last_kib, &l->fds_last);
        g_free(l->fd_list_last);
        l->fd_list_last = soak_check_fd_list(l->pid);
        if (l->cycles == 10) {
                l->rss10_kib = l->rss_last_kib;
                l->fds10 = l->fds_last;
                l->fd_list10 = g_strdup(l->fd_list_last);
        }
        if (l->cycles > k->longest.cycles) {
                life_clear(&k->longest);
                k->longest = *l;
                k->longest.fd_list10 = g_strdup(l->fd_list10);
                k->longest.fd_list_last = g_strdup(l->fd_list_last);
        }
}

/* What the fds led to, where their counts differ: what to look at */
static void print_fd_difference(const SoakLife *l) {
        if (l->fds10 == l->fds_last)
                return;
        g_print("soak: fridged's fds at its 10th cycle:\n%s\nsoak: and at its last:\n%s\n", l->fd_list10,
                l->fd_list_last);
}

static bool time_is_up(Soak *k, int64_t start) {
        if (k->cycles && k->index >= k->cycles)
                return true;
        return k->minutes && g_get_monotonic_time() - start >= (int64_t) k->minutes * 60 * G_USEC_PER_SEC;
}

static void print_memory_figure(Soak *k) {
        int64_t rss_growth = (int64_t) k->rss_kib[2] - (int64_t) k->rss_kib[0];
        bool met = k->rss_kib[0] && rss_growth <= RSS_SLACK_KIB && k->fds[2] == k->fds[0];
        g_print("FIGURE soak fridged at cycle 10 / middle / end: RssAnon %" PRIu64 " / %" PRIu64 " / %" PRIu64
                " KiB (%+" PRId64 " KiB), fds %u / %u / %u; goal RssAnon within %d KiB, fds equal: %s%s\n",
                k->rss_kib[0], k->rss_kib[1], k->rss_kib[2], rss_growth, k->fds[0], k->fds[1], k->fds[2],
                RSS_SLACK_KIB, met ? "met" : "NOT met",
                k->sample_pid[0] != k->sample_pid[2] ? " (fridged was restarted in between)" : "");
        const SoakLife *l = &k->longest;
        int64_t growth = (int64_t) l->rss_last_kib - (int64_t) l->rss10_kib;
        if (l->cycles >= 10)
                g_print("FIGURE soak longest-lived fridged (%u cycles without a restart): RssAnon %" PRIu64 " KiB at its "
                        "10th cycle, %" PRIu64 " KiB at its last (%+" PRId64 " KiB), fds %u -> %u: %s\n", l->cycles,
                        l->rss10_kib, l->rss_last_kib, growth, l->fds10, l->fds_last,
                        growth <= RSS_SLACK_KIB && l->fds10 == l->fds_last ? "met" : "NOT met");
        print_fd_difference(l);
}

static void print_figures(Soak *k) {
        g_print("FIGURE soak cycles run: %u (seed %" PRIu32 ", %u fridged restarts)\n", k->n_run, k->seed,
                k->restarts);
        GString *s = g_string_new(NULL);
        for (int d = 1; d < _SOAK_DISRUPTION_MAX; d++)
                g_string_append_printf(s, " %s=%u", soak_disruption_names[d], k->n_disruption[d]);
        for (int c = 0; c < _SOAK_CONDITION_MAX; c++)
                g_string_append_printf(s, " %s=%u", soak_condition_names[c], k->n_condition[c]);
        g_print("FIGURE soak faults injected:%s%s\n", s->str,
                k->sighup_reload ? "" : " (bad-config-reload off: fridged has no SIGHUP reload)");
        g_string_free(s, TRUE);
        g_print("FIGURE soak cycles ended: done=%u cancelled=%u failed=%u interrupted=%u refused=%u\n", k->n_done,
                k->n_cancelled, k->n_failed, k->n_interrupted, k->n_other);
        g_print("FIGURE soak cgroups left frozen: %u (goal 0)\n", k->frozen_left);
        g_print("FIGURE soak CycleFinished lost with a restarted bus daemon (the history had the result): %u\n",
                k->n_lost_finished);
        g_print("FIGURE soak files corrupted: %u of %u written (goal 0)\n", k->files_corrupted, k->file_n);
        print_memory_figure(k);
        g_print("FIGURE soak longest crash to everything thawed: %.1f ms; slowest property read %.1f ms\n",
                (double) k->worst_thaw_usec / 1000.0, (double) k->worst_property_usec / 1000.0);
}

/* fridged reloads on SIGHUP when its source says so; until then the
 * bad-config-reload fault is left out (and the figure says why) */
static bool fridged_reloads_on_sighup(void) {
        const char *fridged = harness_env("FRIDGED");
        g_autofree char *out = NULL;
        char *argv[] = { (char *) fridged, (char *) "--help", NULL };
        return fridged && harness_run(argv, 10000, &out) == 0 && out && strstr(out, "SIGHUP");
}

static void run(gconstpointer data) {
        Soak *k = (Soak *) data;
        if (scratch_skip_reason() || !harness_env("SLOWFS") || !harness_env("FRIDGECTL")) {
                g_print("soak: skipped: %s\n", scratch_skip_reason() ? scratch_skip_reason()
                                                                      : "SLOWFS or FRIDGECTL is not set");
                exit(77);
        }
        k->sighup_reload = fridged_reloads_on_sighup();
        soak_tree_build(k, (unsigned) opt_cgroups);
        soak_check_install_handlers(k);
        int64_t start = g_get_monotonic_time();
        unsigned middle = k->cycles ? k->cycles / 2 : 0;
        for (k->index = 0; !time_is_up(k, start); k->index++) {
                g_autofree char *result = NULL, *error = NULL, *message = NULL;
                soak_fault_draw(k);
                soak_fault_run_cycle(k, &result, &error, &message);
                tally_result(k, result, error);
                soak_check_cycle(k);
                track_life(k);
                k->n_run++;
                if (k->index + 1 == 10)
                        soak_check_sample(k, 0);
                if (k->index + 1 == middle)
                        soak_check_sample(k, 1);
                g_autofree char *faults = soak_fault_describe(k);
                g_print("soak: cycle %u/%u id %" PRIu64 " %s%s%s [%s] %.0f s%s%s\n", k->index + 1, k->cycles,
                        k->cycle_id, result, error && *error ? " " : "", error ? error : "", faults,
                        (double) (g_get_monotonic_time() - start) / G_USEC_PER_SEC,
                        g_strcmp0(result, "done") ? ": " : "", g_strcmp0(result, "done") && message ? message : "");
        }
        if (!k->cycles)
                soak_check_sample(k, 1);
        soak_check_sample(k, 2);
        print_figures(k);
        life_clear(&k->life);
        life_clear(&k->longest);
        soak_tree_free(k);
}

int main(int argc, char *argv[]) {
        /* ours first: GTest has a --seed of its own */
        g_autoptr(GOptionContext) ctx = g_option_context_new("- the soak: cycles under random faults");
        g_option_context_add_main_entries(ctx, options, NULL);
        g_option_context_set_ignore_unknown_options(ctx, TRUE);
        g_autoptr(GError) e = NULL;
        if (!g_option_context_parse(ctx, &argc, &argv, &e)) {
                fprintf(stderr, "soak: %s\n", e->message);
                return 2;
        }
        harness_init(&argc, &argv);
        if (opt_cycles < 0 || opt_minutes < 0 || opt_cgroups < 4 || opt_seed < -1 || opt_seed > G_MAXUINT32) {
                fprintf(stderr, "soak: --cycles and --minutes must be >= 0, --cgroups >= 4, --seed 0..%u\n",
                        G_MAXUINT32);
                return 2;
        }
        static Soak k;
        k.cycles = (unsigned) opt_cycles;
        k.minutes = (unsigned) opt_minutes;
        if (!k.cycles && !k.minutes)
                k.cycles = 60;
        k.seed = opt_seed >= 0 ? (guint32) opt_seed : (guint32) (g_get_real_time() ^ getpid());
        k.rand = g_rand_new_with_seed(k.seed);
        k.keep_dir = g_strdup(opt_keep_dir ? opt_keep_dir : ".");
        k.finished = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        g_print("soak: seed %" PRIu32 " (replay: tools/soak --seed %" PRIu32 "), %u cycles, %u minutes, %d cgroups\n",
                k.seed, k.seed, k.cycles, k.minutes, opt_cgroups);
        g_test_add_data_func("/soak/run", &k, run);
        int r = g_test_run();
        g_rand_free(k.rand);
        g_hash_table_unref(k.finished);
        for (unsigned i = 0; i < G_N_ELEMENTS(k.baseline); i++)
                g_free(k.baseline[i]);
        g_free(k.keep_dir);
        g_free(opt_keep_dir);
        return r;
}
