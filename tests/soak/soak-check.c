/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The soak's invariants, checked from outside fridged after every cycle:
 * no scratch cgroup frozen (cgroup.events), every file written before the
 * cycle intact, the kernel knobs back as they were, fridged answering a
 * property read within 100 ms, exactly one CycleFinished per cycle id and
 * no inhibitor left when idle. The first violation stops the run with the
 * seed, the cycle, its faults, fridged's log kept and the replay command.
 */
#include "soak.h"

#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "fridge-config.h"

/* A loop stuck behind a sync or a frozen process answers in seconds; a
 * loaded CI machine under ASan in a few hundred ms */
#define PROPERTY_BUDGET_USEC 1000000

static Soak *current;   /* for the abort handler */
static bool reported;   /* soak_violation() said where, before its abort */
static struct sigaction harness_abort, harness_trap;

static const char *const knobs[4] = {
        "power/pm_test", "power/mem_sleep", "power/disk", "class/rtc/rtc0/wakealarm",
};

/* fridged's log next to the replay command */
static void keep_log(Soak *k) {
        if (!k->h || !k->h->fridged_log)
                return;
        g_autofree char *text = NULL;
        if (!g_file_get_contents(k->h->fridged_log, &text, NULL, NULL))
                return;
        g_autofree char *path = g_strdup_printf("%s/soak-%" PRIu32 "-cycle%u-fridged.log", k->keep_dir, k->seed,
                                                k->index + 1);
        if (g_file_set_contents(path, text, -1, NULL))
                fprintf(stderr, "soak: fridged's log: %s\n", path);
        g_autofree char *fakesys = harness_fakesys_log(k->h);
        g_autofree char *fpath = g_strdup_printf("%s/soak-%" PRIu32 "-cycle%u-fakesys.log", k->keep_dir, k->seed,
                                                 k->index + 1);
        if (fakesys && g_file_set_contents(fpath, fakesys, -1, NULL))
                fprintf(stderr, "soak: fakesys's log: %s\n", fpath);
}

static void say_where(Soak *k) {
        g_autofree char *faults = soak_fault_describe(k);
        fprintf(stderr, "soak: seed %" PRIu32 ", cycle %u (fridged's cycle id %" PRIu64 "), faults: %s\n", k->seed,
                k->index + 1, k->cycle_id, faults);
        fprintf(stderr, "soak: replay: tools/soak --seed %" PRIu32 " --cycles %u\n", k->seed, k->index + 1);
}

static void on_abort(int sig) {
        Soak *k = current;
        current = NULL;
        if (k && !reported) {
                fprintf(stderr, "soak: VIOLATION (an assertion failed, above)\n");
                say_where(k);
                keep_log(k);
        }
        if (k) {
                if (k->state_mounted)
                        (void) umount2(k->state_dir, MNT_DETACH);
                if (k->fuse_pid > 0)
                        (void) kill(k->fuse_pid, SIGCONT);
                soak_tree_unmount_fuse(k);
        }
        struct sigaction *theirs = sig == SIGTRAP ? &harness_trap : &harness_abort;
        (void) sigaction(sig, theirs, NULL);
        if (theirs->sa_handler != SIG_DFL && theirs->sa_handler != SIG_IGN)
                theirs->sa_handler(sig);
        raise(sig);
}

void soak_check_install_handlers(Soak *k) {
        current = k;
        struct sigaction sa = { .sa_handler = on_abort };
        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGABRT, &sa, &harness_abort);
        (void) sigaction(SIGTRAP, &sa, &harness_trap);
}

void soak_violation(Soak *k, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        g_autofree char *what = g_strdup_vprintf(fmt, ap);
        va_end(ap);
        fprintf(stderr, "soak: VIOLATION: %s\n", what);
        say_where(k);
        keep_log(k);
        reported = true;
        /* on_abort still unmounts what the soak mounted */
        g_error("soak: %s", what);
}

void soak_check_baseline(Soak *k) {
        for (unsigned i = 0; i < G_N_ELEMENTS(knobs); i++) {
                g_free(k->baseline[i]);
                k->baseline[i] = g_strstrip(harness_read_sys(k->h, knobs[i]));
        }
}

static void check_knobs(Soak *k) {
        for (unsigned i = 0; i < G_N_ELEMENTS(knobs); i++) {
                g_autofree char *now = g_strstrip(harness_read_sys(k->h, knobs[i]));
                if (!g_str_equal(now, k->baseline[i]))
                        soak_violation(k, "%s reads '%s' after the cycle, '%s' before", knobs[i], now,
                                       k->baseline[i]);
        }
}

static void check_frozen(Soak *k) {
        unsigned n = soak_tree_count_frozen(k);
        k->frozen_left += n;
        if (n == 0)
                return;
        for (guint i = 0; i < k->s->cgroups->len; i++)
                if (scratch_is_frozen(k->s, k->s->cgroups->pdata[i]))
                        fprintf(stderr, "soak: frozen: %s\n", (char *) k->s->cgroups->pdata[i]);
        soak_violation(k, "%u scratch cgroups frozen after the cycle", n);
}

static void check_files(Soak *k) {
        for (guint i = 0; i < k->files->len; i++) {
                SoakFile *f = k->files->pdata[i];
                g_autofree char *data = NULL;
                gsize len = 0;
                g_autofree char *sum = NULL;
                if (g_file_get_contents(f->path, &data, &len, NULL))
                        sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (guchar *) data, len);
                if (!sum || !g_str_equal(sum, f->sha256)) {
                        k->files_corrupted++;
                        soak_violation(k, "%s changed (sha256 %s, %s when written)", f->path, sum ? sum : "unreadable",
                                       f->sha256);
                }
        }
}

/* State idle, read within the budget: fridged's loop is not stuck */
static void check_answers(Soak *k) {
        int64_t start = g_get_monotonic_time();
        g_autofree char *state = harness_get_string(k->h, "State");
        int64_t took = g_get_monotonic_time() - start;
        k->worst_property_usec = MAX(k->worst_property_usec, took);
        if (took > PROPERTY_BUDGET_USEC)
                soak_violation(k, "reading State took %" PRId64 " ms (budget %d)", took / 1000,
                               PROPERTY_BUDGET_USEC / 1000);
        if (!g_str_equal(state, "idle"))
                soak_violation(k, "State is '%s' after the cycle ended", state);
}

/* Every CycleFinished seen so far counted per id; one per id, and one for this cycle */
static void check_finished(Soak *k) {
        GPtrArray *sigs = k->h->signals;
        for (guint i = 0; i < sigs->len; i++) {
                HarnessSignal *sig = sigs->pdata[i];
                uint64_t id = 0;
                if (!g_str_equal(sig->member, "CycleFinished") || sd_bus_message_rewind(sig->message, true) < 0 ||
                    sd_bus_message_read(sig->message, "t", &id) <= 0)
                        continue;
                guint n = GPOINTER_TO_UINT(g_hash_table_lookup(k->finished, &id)) + 1;
                g_hash_table_replace(k->finished, g_memdup2(&id, sizeof(id)), GUINT_TO_POINTER(n));
                if (n > 1)
                        soak_violation(k, "%u CycleFinished for cycle id %" PRIu64, n, id);
        }
        g_ptr_array_set_size(sigs, 0);
        if (k->cycle_id && !k->lost_finished && !g_hash_table_contains(k->finished, &k->cycle_id))
                soak_violation(k, "no CycleFinished for cycle id %" PRIu64, k->cycle_id);
}

static void check_ledger(Soak *k) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(k->h, FRIDGE_INTERFACE, "ListInhibitors", &reply, &err, &msg, "") < 0)
                soak_violation(k, "ListInhibitors: %s: %s", err, msg);
        unsigned n = 0;
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ssssuu)"), >=, 0);
        while (sd_bus_message_skip(reply, "(ssssuu)") > 0)
                n++;
        sd_bus_message_unref(reply);
        if (n > 0)
                soak_violation(k, "%u inhibitors listed when idle, none held", n);
}

void soak_check_cycle(Soak *k) {
        check_frozen(k);
        check_files(k);
        check_knobs(k);
        check_answers(k);
        check_finished(k);
        check_ledger(k);
}

static unsigned count_fds(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/fd", (int) pid);
        DIR *d = opendir(path);
        unsigned n = 0;
        if (!d)
                return 0;
        for (struct dirent *e; (e = readdir(d));)
                n += e->d_name[0] != '.';
        closedir(d);
        return n;
}

void soak_check_memory(pid_t pid, uint64_t *ret_rss_kib, unsigned *ret_fds) {
        g_autofree char *path = g_strdup_printf("/proc/%d/status", (int) pid);
        g_autofree char *text = NULL;
        *ret_rss_kib = 0;
        if (g_file_get_contents(path, &text, NULL, NULL)) {
                const char *line = strstr(text, "\nRssAnon:");
                if (line)
                        *ret_rss_kib = g_ascii_strtoull(line + strlen("\nRssAnon:"), NULL, 10);
        }
        *ret_fds = count_fds(pid);
}

static gint compare_strings(gconstpointer a, gconstpointer b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

char *soak_check_fd_list(pid_t pid) {
        g_autofree char *fd_dir = g_strdup_printf("/proc/%d/fd", (int) pid);
        g_autoptr(GDir) d = g_dir_open(fd_dir, 0, NULL);
        g_autoptr(GPtrArray) targets = g_ptr_array_new_with_free_func(g_free);
        for (const char *name; d && (name = g_dir_read_name(d));) {
                g_autofree char *link = g_build_filename(fd_dir, name, NULL);
                char *target = g_file_read_link(link, NULL);
                if (target)
                        g_ptr_array_add(targets, target);
        }
        g_ptr_array_sort(targets, compare_strings);
        g_ptr_array_add(targets, NULL);
        return g_strjoinv("\n", (char **) targets->pdata);
}

void soak_check_sample(Soak *k, unsigned slot) {
        soak_check_memory(k->h->fridged_pid, &k->rss_kib[slot], &k->fds[slot]);
        k->sample_pid[slot] = k->h->fridged_pid;
}
