/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's state machine driven whole, without a bus: sysfs and proc
 * are plain directories (the state write lands in a regular file), the
 * cgroup root is empty, and the journal is the log sink. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cycle-state.h"
#include "log.h"
#include "manager.h"
#include "devices.h"
#include "power.h"
#include "testdir.h"

typedef struct Entry {
        int level;
        char *message;
        char **fields;
} Entry;

typedef struct Fixture {
        char *dir;
        sd_event *event;
        Manager *m;
        GPtrArray *entries;     /* Entry*, everything logged */
        GPtrArray *states;      /* the cycle states seen, in order */
        const char *cancel_at;  /* cancel when this state is entered */
        int cancel_r;
        const char *break_wakeup_at; /* make the wakeup_count write-back fail from this state on */
        bool finished;
        char *state_at_resumed;  /* State when Resumed went out */
        CycleResult result;
        FridgeError error;
        char *message;
} Fixture;

/* config_new_default() as an expression */
static Config *defaults(void) {
        Config *c = NULL;
        g_assert_cmpint(config_new_default(&c), ==, 0);
        return c;
}

static void entry_free(Entry *e) {
        g_free(e->message);
        g_strfreev(e->fields);
        g_free(e);
}

static void sink(int level, const char *message, const char *const *fields, void *userdata) {
        Fixture *f = userdata;
        Entry *e = g_new0(Entry, 1);
        e->level = level;
        e->message = g_strdup(message);
        e->fields = g_strdupv((char **) fields);
        g_ptr_array_add(f->entries, e);
}

static const char *field(const Entry *e, const char *key) {
        size_t n = strlen(key);
        for (char **p = e->fields; *p; p++)
                if (strncmp(*p, key, n) == 0 && (*p)[n] == '=')
                        return *p + n + 1;
        return NULL;
}

static void put(Fixture *f, const char *rel, const char *text) {
        testdir_put(f->dir, rel, text);
}

static char *path(Fixture *f, const char *rel) {
        return g_build_filename(f->dir, rel, NULL);
}

static void on_changed(void *userdata, unsigned what) {
        Fixture *f = userdata;
        const char *s = manager_cycle_state(f->m);
        if (!(what & MANAGER_CHANGED_STATE) || !*s)
                return;
        if (f->states->len == 0 || strcmp(g_ptr_array_index(f->states, f->states->len - 1), s) != 0)
                g_ptr_array_add(f->states, g_strdup(s));
        if (f->break_wakeup_at && strcmp(s, f->break_wakeup_at) == 0) {
                /* a directory cannot be written: the handshake fails as on a stale count */
                g_autofree char *p = path(f, "sys/" POWER_WAKEUP_COUNT);
                g_assert_cmpint(g_unlink(p), ==, 0);
                g_assert_cmpint(g_mkdir(p, 0755), ==, 0);
                f->break_wakeup_at = NULL;
        }
        if (f->cancel_at && strcmp(s, f->cancel_at) == 0) {
                f->cancel_at = NULL;
                g_autofree char *why = NULL;
                f->cancel_r = manager_cancel(f->m, 0, "cancelled by the test", &why);
        }
}

static void on_finished(void *userdata, uint64_t cycle, CycleResult result, FridgeError error, const char *message) {
        Fixture *f = userdata;
        f->finished = true;
        f->result = result;
        f->error = error;
        g_free(f->message);
        f->message = g_strdup(message);
        sd_event_exit(f->event, 0);
}

static void on_resumed(void *userdata, uint64_t cycle, uint64_t slept_usec, const char *wake_reason) {
        Fixture *f = userdata;
        g_free(f->state_at_resumed);
        f->state_at_resumed = g_strdup(manager_state(f->m));
}

static const ManagerOps ops = { .changed = on_changed, .resumed = on_resumed, .finished = on_finished };

static void setup(Fixture *f, gconstpointer data) {
        f->dir = g_dir_make_tmp("fridge-manager-XXXXXX", NULL);
        g_autofree char *sysfs = path(f, "sys");
        testdir_put_power(sysfs);
        put(f, "proc/meminfo", "MemTotal: 1000 kB\nDirty: 0 kB\nWriteback: 0 kB\n");
        put(f, "proc/self/mountinfo", "");
        put(f, "cgroup/.keep", "");
        f->entries = g_ptr_array_new_with_free_func((GDestroyNotify) entry_free);
        f->states = g_ptr_array_new_with_free_func(g_free);
        f->cancel_r = 1;
        log_set_sink(sink, f);
        g_assert_cmpint(sd_event_new(&f->event), >=, 0);
}

/* A backend with no kernel behind it: enter fails `fake_failures` times,
 * transiently when `fake_transient_ok`, then succeeds */
typedef struct FakeRequest {
        PowerRequest base;
} FakeRequest;

static unsigned fake_failures, fake_entered;
static bool fake_transient_ok;

static bool fake_serves(SleepKind kind, bool pm_test) {
        return true;
}

static bool fake_probe(const PowerContext *ctx) {
        return true;
}

static PowerAnswer fake_can(const PowerContext *ctx, SleepKind kind, char **ret_reason) {
        return POWER_ANSWER_YES;
}

static int fake_check(const PowerContext *ctx, const PowerCycle *cycle, char **ret_set_resume, char **ret_message) {
        return 0;
}

static int fake_prepare(const PowerContext *ctx, PowerCycle *cycle, PowerRequest **ret) {
        devices_wakeup_snapshot_free(g_steal_pointer(&cycle->count_sources));
        FakeRequest *r = g_new0(FakeRequest, 1);
        *ret = &r->base;
        return 0;
}

static const char *fake_wake_reason; /* NULL: unknown */

static int fake_enter(PowerRequest *r) {
        r->slept_usec = 1000;
        g_free(r->wake_reason);
        r->wake_reason = g_strdup(fake_wake_reason);
        return fake_entered++ < fake_failures ? -EBUSY : 0;
}

static CycleResult fake_describe(const PowerRequest *r, FridgeError *ret_error, char **ret_message) {
        *ret_error = FRIDGE_ERROR_KERNEL;
        *ret_message = g_strdup("the fake kernel said no");
        return RESULT_FAILED;
}

static const char *fake_transient(const PowerRequest *r) {
        return fake_transient_ok ? "the fake kernel was busy" : NULL;
}

static void fake_free(PowerRequest *r) {
        g_free(r->wake_reason);
        g_free(r);
}

static const PowerBackend fake_backend = {
        .name = "fake", .serves = fake_serves, .probe = fake_probe, .can = fake_can, .check = fake_check,
        .prepare = fake_prepare, .enter = fake_enter, .describe_failure = fake_describe,
        .transient = fake_transient, .free = fake_free,
};
static const PowerBackend *const fake_backends[] = { &fake_backend, NULL };
static const PowerBackend *const *use_backends;

static void start_manager(Fixture *f, Config *config) {
        g_autofree char *sys = path(f, "sys"), *proc = path(f, "proc"), *cg = path(f, "cgroup"),
                        *state = path(f, "state");
        g_strfreev(config->freeze_roots);
        config->freeze_roots = g_new0(char *, 1);
        ManagerParams p = { .event = f->event, .sysfs_root = sys, .proc_root = proc, .cgroup_root = cg,
                            .state_dir = state, .config = config, .power_backends = use_backends };
        g_assert_cmpint(manager_new(&p, &f->m), ==, 0);
        manager_set_ops(f->m, &ops, f);
}

static void teardown(Fixture *f, gconstpointer data) {
        f->m = manager_free(f->m);
        sd_event_unref(f->event);
        log_set_sink(NULL, NULL);
        use_backends = NULL;
        fake_wake_reason = NULL;
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);
        g_assert_cmpint(system(cmd), ==, 0);
        g_free(f->dir);
        g_free(f->message);
        g_free(f->state_at_resumed);
        g_ptr_array_unref(f->entries);
        g_ptr_array_unref(f->states);
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        g_error("the cycle did not finish within 10 s");
        return 0;
}

static uint64_t run_cycle(Fixture *f, CycleOptions *o) {
        uint64_t id = 0;
        g_autofree char *message = NULL;
        int r = manager_start(f->m, SLEEP_SUSPEND, o, &id, &message);
        if (r != 0)
                g_error("manager_start: %s", message ? message : g_strerror(-r));
        sd_event_source *deadline = NULL;
        g_assert_cmpint(sd_event_add_time_relative(f->event, &deadline, CLOCK_MONOTONIC, 10 * G_USEC_PER_SEC, 0,
                                                   on_deadline, f), >=, 0);
        if (!f->finished)
                g_assert_cmpint(sd_event_loop(f->event), >=, 0);
        sd_event_source_disable_unref(deadline);
        g_assert_true(f->finished);
        return id;
}

static void assert_states(Fixture *f, const char *const *expected) {
        g_autoptr(GString) seen = g_string_new(NULL);
        for (guint i = 0; i < f->states->len; i++)
                g_string_append_printf(seen, "%s%s", i ? " " : "", (char *) g_ptr_array_index(f->states, i));
        g_autofree char *want = g_strjoinv(" ", (char **) expected);
        g_assert_cmpstr(seen->str, ==, want);
}

/* Every entry from the cycle's start to its finish carries its id; the
 * first lists the settings; each state change is an entry of its own */
static void test_journal(Fixture *f, gconstpointer data) {
        start_manager(f, defaults());
        CycleOptions o = { .dry_run = true, .flush_timeout_ms = 4321 };
        uint64_t id = run_cycle(f, &o);
        g_assert_cmpint(f->result, ==, RESULT_DRY_RUN);
        g_autofree char *want = g_strdup_printf("%" G_GUINT64_FORMAT, id);

        int first = -1, last = -1;
        for (guint i = 0; i < f->entries->len; i++) {
                const Entry *e = f->entries->pdata[i];
                const char *mid = field(e, "MESSAGE_ID");
                if (first < 0 && g_strcmp0(mid, FRIDGE_MESSAGE_CYCLE_START) == 0)
                        first = (int) i;
                if (g_strcmp0(mid, FRIDGE_MESSAGE_CYCLE_FINISH) == 0)
                        last = (int) i;
        }
        g_assert_cmpint(first, >=, 0);
        g_assert_cmpint(last, >, first);
        const Entry *start = f->entries->pdata[first];
        g_assert_nonnull(strstr(field(start, "FRIDGE_SETTINGS"), "dry-run=yes"));
        g_assert_nonnull(strstr(field(start, "FRIDGE_SETTINGS"), "flush-timeout-ms=4321"));
        g_assert_nonnull(strstr(start->message, "flush-timeout-ms=4321"));
        unsigned transitions = 0;
        for (int i = first; i <= last; i++) {
                const Entry *e = f->entries->pdata[i];
                if (g_strcmp0(field(e, "FRIDGE_CYCLE"), want) != 0)
                        g_error("entry without FRIDGE_CYCLE=%s: %s", want, e->message);
                if (g_strcmp0(field(e, "MESSAGE_ID"), FRIDGE_MESSAGE_CYCLE_STATE) == 0) {
                        g_assert_nonnull(field(e, "FRIDGE_STATE"));
                        transitions++;
                }
        }
        /* new → delaying → … → thawing → finished: 9 moves for a dry run */
        g_assert_cmpuint(transitions, ==, 9);
        g_assert_cmpuint(log_get_cycle(), ==, 0);
        static const char *const path_[] = { "delaying", "preparing", "flushing", "freezing-early", "flushing-again",
                                              "freezing-late", "skipping-kernel", "thawing", NULL };
        assert_states(f, path_);
}

static void test_sleeps(Fixture *f, gconstpointer data) {
        start_manager(f, defaults());
        CycleOptions o = {};
        run_cycle(f, &o);
        g_assert_cmpint(f->result, ==, RESULT_DONE);
        g_autofree char *state = NULL, *p = path(f, "sys/" POWER_STATE);
        g_assert_true(g_file_get_contents(p, &state, NULL, NULL));
        g_assert_true(g_str_has_prefix(state, "mem")); /* written over "freeze ..." */
        static const char *const path_[] = { "delaying", "preparing", "flushing", "freezing-early", "flushing-again",
                                              "freezing-late", "sleeping", "resuming", "thawing", NULL };
        assert_states(f, path_);
        /* Resumed (and LastWakeReason) before State leaves "sleeping" */
        g_assert_cmpstr(f->state_at_resumed, ==, "sleeping");
}

/* Cancel in each state a direct cycle passes: aborted where the table
 * allows it, TooLate past the point of no return */
static void test_cancel_each_state(Fixture *f, gconstpointer data) {
        const char *at = data;
        start_manager(f, defaults());
        f->cancel_at = at;
        CycleOptions o = {};
        run_cycle(f, &o);
        bool cancellable = cycle_state_cancellable(cycle_state_from_string(at));
        g_assert_cmpint(f->cancel_r, ==, cancellable ? 0 : FRIDGE_ERROR_TOO_LATE);
        g_assert_cmpint(f->result, ==, cancellable ? RESULT_ABORTED : RESULT_DONE);
        if (cancellable) {
                g_assert_cmpint(f->error, ==, FRIDGE_ERROR_CANCELLED);
                g_assert_cmpstr(f->message, ==, "cancelled by the test");
                /* straight from there to the thaw */
                g_assert_cmpstr(g_ptr_array_index(f->states, f->states->len - 3), ==, at);
                g_assert_cmpstr(g_ptr_array_index(f->states, f->states->len - 2), ==, "ending");
                g_assert_cmpstr(g_ptr_array_index(f->states, f->states->len - 1), ==, "thawing");
        }
}

static void test_cancel_new(Fixture *f, gconstpointer data) {
        start_manager(f, defaults());
        uint64_t id = 0;
        g_autofree char *message = NULL;
        CycleOptions o = {};
        g_assert_cmpint(manager_start(f->m, SLEEP_SUSPEND, &o, &id, &message), ==, 0);
        g_assert_cmpstr(manager_cycle_state(f->m), ==, "new");
        g_assert_cmpint(manager_cancel(f->m, id, "cancelled at once", NULL), ==, 0);
        g_assert_cmpint(sd_event_loop(f->event), >=, 0);
        g_assert_cmpint(f->result, ==, RESULT_ABORTED);
        static const char *const path_[] = { "ending", "thawing", NULL };
        assert_states(f, path_);
}

/* The failure edge of the kernel phase, without and with a retry: a
 * retry is a transition through its own states, not a faked phase */
static void test_kernel_failure(Fixture *f, gconstpointer data) {
        start_manager(f, defaults());
        f->break_wakeup_at = "freezing-late";
        CycleOptions o = {};
        run_cycle(f, &o);
        g_assert_cmpint(f->result, ==, RESULT_ABORTED);
        g_assert_cmpint(f->error, ==, FRIDGE_ERROR_WAKEUP_EVENT);
        g_assert_cmpstr(g_ptr_array_index(f->states, f->states->len - 3), ==, "sleeping");
        g_assert_cmpstr(g_ptr_array_index(f->states, f->states->len - 2), ==, "ending");
}

static void test_kernel_retry(Fixture *f, gconstpointer data) {
        Config *c = defaults();
        c->retries = 1;
        c->retry_delay_ms = 10;
        start_manager(f, c);
        f->break_wakeup_at = "freezing-late";
        CycleOptions o = {};
        run_cycle(f, &o);
        /* the second handshake finds no wakeup_count and sleeps without it */
        g_assert_cmpint(f->result, ==, RESULT_DONE);
        static const char *const path_[] = { "delaying", "preparing", "flushing", "freezing-early", "flushing-again",
                                              "freezing-late", "sleeping", "retry-waiting", "retry-preparing",
                                              "freezing-early", "flushing-again", "freezing-late", "sleeping",
                                              "resuming", "thawing", NULL };
        assert_states(f, path_);
}

/* The timeline follows the phases, a retry's included, and is kept with
 * its owner once the cycle is over */
static void test_timeline(Fixture *f, gconstpointer data) {
        Config *c = defaults();
        c->retries = 1;
        c->retry_delay_ms = 10;
        start_manager(f, c);
        f->break_wakeup_at = "freezing-late";
        manager_set_client_uid(f->m, 1000);
        CycleOptions o = {};
        uint64_t id = run_cycle(f, &o);
        uid_t owner = 0;
        const Timeline *t = manager_timeline(f->m, id, &owner);
        g_assert_nonnull(t);
        g_assert_cmpuint(owner, ==, 1000);
        g_assert_cmpstr(t->result, ==, "done");
        g_autoptr(GString) seen = g_string_new(NULL);
        for (guint i = 0; i < t->phases->len; i++) {
                const TimelinePhase *p = &g_array_index(t->phases, TimelinePhase, i);
                g_assert_cmpuint(p->end, <=, t->end);
                g_string_append_printf(seen, "%s%s", i ? " " : "", p->name);
        }
        g_assert_cmpstr(seen->str, ==, "prepare flush freeze-early flush-again freeze-late kernel retry "
                                       "freeze-early flush-again freeze-late kernel thaw");
        /* the first flush's (nothing is frozen here: flushing-again flushes not) */
        g_assert_cmpuint(t->samples->len, >=, 2);
        g_assert_null(manager_timeline(f->m, id + 1, &owner));
}

/* On a backend with no kernel at all: its failure ends the cycle with the
 * backend's own words; a transient one is retried through the retry
 * states, until the retries are spent */
typedef struct FakeCase {
        unsigned failures, retries;
        bool transient;
        CycleResult result;
        unsigned entered, retry_waits;
        const char *message;
} FakeCase;

static const FakeCase fake_failure = { 1, 0, false, RESULT_FAILED, 1, 0, "the fake kernel said no" };
static const FakeCase fake_retry = { 2, 2, true, RESULT_DONE, 3, 2, "slept and resumed" };
static const FakeCase fake_retries_spent = { 5, 1, true, RESULT_FAILED, 2, 1,
                                             "the fake kernel said no (attempt 2 of 2)" };

static void test_fake_backend(Fixture *f, gconstpointer data) {
        const FakeCase *k = data;
        use_backends = fake_backends;
        fake_entered = 0, fake_failures = k->failures, fake_transient_ok = k->transient;
        Config *c = defaults();
        c->retries = k->retries;
        c->retry_delay_ms = 10;
        start_manager(f, c);
        CycleOptions o = {};
        run_cycle(f, &o);
        g_assert_cmpint(f->result, ==, k->result);
        g_assert_cmpstr(f->message, ==, k->message);
        g_assert_cmpuint(fake_entered, ==, k->entered);
        unsigned waits = 0;
        for (guint i = 0; i < f->states->len; i++)
                waits += g_str_equal(g_ptr_array_index(f->states, i), "retry-waiting");
        g_assert_cmpuint(waits, ==, k->retry_waits);
        if (k->result == RESULT_FAILED)
                g_assert_cmpint(f->error, ==, FRIDGE_ERROR_KERNEL);
}

/* A wake reason of any length reaches the journal and the property whole */
static void test_wake_reason_whole(Fixture *f, gconstpointer data) {
        g_autoptr(GString) reason = g_string_new(NULL);
        for (unsigned i = 0; reason->len < 3000; i++)
                g_string_append_printf(reason, "%s0000:00:%02x.0 (xhci_hcd)", i ? ", " : "", i % 256);
        use_backends = fake_backends;
        fake_entered = 0, fake_failures = 0, fake_transient_ok = false;
        fake_wake_reason = reason->str;
        start_manager(f, defaults());
        CycleOptions o = {};
        run_cycle(f, &o);
        g_assert_cmpint(f->result, ==, RESULT_DONE);
        g_assert_cmpstr(manager_last_wake_reason(f->m), ==, reason->str);
        bool found = false;
        for (guint i = 0; i < f->entries->len; i++) {
                const Entry *e = f->entries->pdata[i];
                if (g_strcmp0(field(e, "MESSAGE_ID"), FRIDGE_MESSAGE_RESUMED) != 0)
                        continue;
                g_assert_cmpstr(field(e, "FRIDGE_WAKE_REASON"), ==, reason->str);
                found = true;
        }
        g_assert_true(found);
}

/* The timeouts of the waiting states: the queue's ends the cycle, the
 * delay's lets it go on without the late holders */
static void test_queue_timeout(Fixture *f, gconstpointer data) {
        start_manager(f, defaults());
        Inhibitor block = { .mode = INHIBIT_BLOCK, .who = (char *) "test", .why = (char *) "blocking",
                            .sender = (char *) "" };
        int fd = -1;
        uint64_t iid = 0;
        g_assert_cmpint(manager_inhibit(f->m, &block, &fd, &iid, NULL), ==, 0);
        CycleOptions o = { .queue = true, .queue_timeout_ms = 100 };
        run_cycle(f, &o);
        g_assert_cmpint(f->result, ==, RESULT_FAILED);
        g_assert_cmpint(f->error, ==, FRIDGE_ERROR_INHIBITED);
        static const char *const path_[] = { "queued", "ending", "thawing", NULL };
        assert_states(f, path_);
        close(fd);
}

static void test_delay_timeout(Fixture *f, gconstpointer data) {
        Config *c = defaults();
        c->delay_timeout_ms = 100;
        start_manager(f, c);
        Inhibitor delay = { .mode = INHIBIT_DELAY, .who = (char *) "test", .why = (char *) "saving",
                            .sender = (char *) "" };
        int fd = -1;
        uint64_t iid = 0;
        g_assert_cmpint(manager_inhibit(f->m, &delay, &fd, &iid, NULL), ==, 0);
        CycleOptions o = { .dry_run = true };
        run_cycle(f, &o);
        g_assert_cmpint(f->result, ==, RESULT_DRY_RUN);
        bool named = false;
        for (guint i = 0; i < f->entries->len; i++)
                named |= strstr(((Entry *) f->entries->pdata[i])->message, "delay inhibitors still held") != NULL;
        g_assert_true(named);
        close(fd);
}

/* What the cycle reads was fixed at its start */
static void test_settings_fixed(Fixture *f, gconstpointer data) {
        start_manager(f, defaults());
        uint64_t id = 0;
        g_autofree char *message = NULL;
        CycleOptions o = { .dry_run = true, .freeze_timeout_ms = 2222 };
        g_assert_cmpint(manager_start(f->m, SLEEP_SUSPEND, &o, &id, &message), ==, 0);
        g_auto(GStrv) settings = manager_cycle_settings(f->m);
        g_assert_true(g_strv_contains((const char *const *) settings, "freeze-timeout-ms=2222"));
        g_assert_true(g_strv_contains((const char *const *) settings, "dry-run=yes"));
        g_assert_cmpint(sd_event_loop(f->event), >=, 0);
        g_auto(GStrv) idle = manager_cycle_settings(f->m);
        g_assert_cmpuint(g_strv_length(idle), ==, 0);
}

/* ---- exempted processes: pinned, not their pid numbers ---- */

/* A /proc/PID/stat whose start time (field 22) is `start`; the name has
 * the parentheses and spaces a hostile comm may */
static void put_stat(Fixture *f, pid_t pid, uint64_t start) {
        g_autoptr(GString) s = g_string_new(NULL);
        g_string_append_printf(s, "%d (a) b) S", (int) pid);
        for (int field = 4; field <= 21; field++)
                g_string_append(s, " 0");
        g_string_append_printf(s, " %" G_GUINT64_FORMAT " 0 0\n", start);
        g_autofree char *rel = g_strdup_printf("proc/%d/stat", (int) pid);
        put(f, rel, s->str);
}

static bool exempted(Fixture *f, const char *cgroup) {
        g_autoptr(GHashTable) t = manager_exempt_cgroups(f->m);
        return g_hash_table_contains(t, cgroup);
}

/* A pidfd whose process exited: the pid's next owner (here /proc still
 * names a cgroup for the number) is not exempted */
static void test_exempt_pidfd(Fixture *f, gconstpointer data) {
        start_manager(f, defaults());
        pid_t kid = fork();
        g_assert_cmpint(kid, >=, 0);
        if (kid == 0) {
                pause();
                _exit(0);
        }
        PidRef ref = { .pid = kid, .fd = (int) syscall(SYS_pidfd_open, kid, 0) };
        if (ref.fd < 0) {
                kill(kid, SIGKILL);
                (void) waitpid(kid, NULL, 0);
                g_test_skip("no pidfd_open on this kernel");
                return;
        }
        g_autofree char *rel = g_strdup_printf("proc/%d/cgroup", (int) kid);
        put(f, rel, "0::/reused.slice/other.service\n");
        g_assert_cmpint(manager_exempt_process(f->m, &ref, "the test's child"), ==, 0);
        g_assert_true(exempted(f, "reused.slice/other.service"));

        g_assert_cmpint(kill(kid, SIGKILL), ==, 0);
        g_assert_cmpint(waitpid(kid, NULL, 0), ==, kid);
        g_assert_false(exempted(f, "reused.slice/other.service"));
        pidref_done(&ref);
}

/* Without a pidfd, the start time: another start time under the same pid
 * is another process */
static void test_exempt_starttime(Fixture *f, gconstpointer data) {
        start_manager(f, defaults());
        const pid_t pid = 4242; /* only in the fake /proc */
        put(f, "proc/4242/cgroup", "0::/first.slice/a.service\n");
        put_stat(f, pid, 1000);
        int proc_fd = testdir_open(f->dir, "proc");
        PidRef ref = { .pid = pid, .fd = -1 };
        g_assert_cmpint(pidref_read_starttime(proc_fd, pid, &ref.starttime), ==, 0);
        close(proc_fd);
        g_assert_cmpuint(ref.starttime, ==, 1000);
        g_assert_cmpint(manager_exempt_process(f->m, &ref, "the bus daemon"), ==, 0);
        g_assert_true(exempted(f, "first.slice/a.service"));

        put(f, "proc/4242/cgroup", "0::/second.slice/b.service\n");
        put_stat(f, pid, 2000);
        g_assert_false(exempted(f, "second.slice/b.service"));
        g_assert_false(exempted(f, "first.slice/a.service"));
}

/* ---- the kernel settings an interrupted kernel phase changed ---- */

static char *sys_read(Fixture *f, const char *rel) {
        g_autofree char *p = path(f, rel);
        char *text = NULL;
        g_assert_true(g_file_get_contents(p, &text, NULL, NULL));
        return g_strstrip(text);
}

/* What a cycle killed in its kernel phase left, and its saved file: the
 * next start puts back what the file says, clears the alarm, drops it;
 * a line it does not know or a value that is no word is not written */
static void test_kernel_settings_restored(Fixture *f, gconstpointer data) {
        /* sysfs writes do not truncate, nor does the fake: values that start otherwise */
        put(f, "sys/" POWER_PM_TEST, "[devices] none\n");
        put(f, "sys/" POWER_MEM_SLEEP, "[s2idle] deep\n");
        put(f, "sys/" POWER_DISK, "[shutdown] platform\n");
        put(f, "sys/" POWER_RTC_ALARM, "1800000000\n");
        put(f, "state/kernel", "fridge-kernel 1\npm_test none\nmem_sleep deep\nwakealarm 0\ndisk ../../etc\n"
                               "state mem\ndisk platform\n");
        start_manager(f, defaults());
        const char *const want[][2] = {
                { "sys/" POWER_PM_TEST, "none" }, { "sys/" POWER_MEM_SLEEP, "deep" },
                { "sys/" POWER_DISK, "platform" }, { "sys/" POWER_RTC_ALARM, "0" },
                { "sys/" POWER_STATE, "freeze mem disk" },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
                g_autofree char *v = sys_read(f, want[i][0]);
                if (!g_str_has_prefix(v, want[i][1]))
                        g_error("%s reads \"%s\", not %s", want[i][0], v, want[i][1]);
        }
        g_autofree char *saved = path(f, "state/kernel");
        g_assert_false(g_file_test(saved, G_FILE_TEST_EXISTS));
}

/* A knob that cannot be written back keeps the saved file for the next try */
static void test_kernel_settings_kept(Fixture *f, gconstpointer data) {
        put(f, "sys/" POWER_PM_TEST, "[devices] none\n");
        g_autofree char *mem_sleep = path(f, "sys/" POWER_MEM_SLEEP);
        (void) unlink(mem_sleep);
        g_assert_cmpint(g_mkdir_with_parents(mem_sleep, 0755), ==, 0); /* a write fails: EISDIR */
        put(f, "state/kernel", "fridge-kernel 1\npm_test none\nmem_sleep deep\n");
        start_manager(f, defaults());
        g_autofree char *pm_test = sys_read(f, "sys/" POWER_PM_TEST);
        g_assert_true(g_str_has_prefix(pm_test, "none"));
        g_autofree char *saved = path(f, "state/kernel");
        g_assert_true(g_file_test(saved, G_FILE_TEST_EXISTS));
}

/* GetPlan's waiters are capped per uid (root excepted): the build cannot
 * end before the loop runs, so every call here waits at once */
typedef struct PlanTally {
        sd_event *event;
        unsigned answered, failed, expected;
} PlanTally;

static void on_plan(void *userdata, int r, const Plan *plan, GHashTable *private_reasons) {
        PlanTally *t = userdata;
        t->answered++;
        t->failed += r < 0;
}

static void run_plans(PlanTally *t) {
        while (t->answered < t->expected)
                g_assert_cmpint(sd_event_run(t->event, UINT64_MAX), >=, 0);
}

static int ask_plan(Fixture *f, uid_t uid, PlanTally *t, char **ret_message) {
        int r = manager_get_plan(f->m, uid, on_plan, t, ret_message);
        t->expected += r == 0;
        return r;
}

static void ask_plans(Fixture *f, uid_t uid, unsigned n, PlanTally *t) {
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *message = NULL;
                g_assert_cmpint(ask_plan(f, uid, t, &message), ==, 0);
        }
}

static void test_plan_cap(Fixture *f, gconstpointer data) {
        Config *c = defaults();
        c->pending_plans_per_user = 3;
        start_manager(f, c);
        PlanTally t = { .event = f->event };
        ask_plans(f, 65534, 3, &t);
        g_autofree char *message = NULL;
        g_assert_cmpint(ask_plan(f, 65534, &t, &message), ==, FRIDGE_ERROR_LIMITS_EXCEEDED);
        g_assert_nonnull(strstr(message, "PendingPlansPerUser=3"));
        ask_plans(f, 1, 3, &t);
        ask_plans(f, 0, 10, &t);
        run_plans(&t);
        g_assert_cmpuint(t.answered, ==, 16);
        g_assert_cmpuint(t.failed, ==, 0);
        /* the answered calls no longer count */
        ask_plans(f, 65534, 3, &t);
        run_plans(&t);
        g_assert_cmpuint(t.answered, ==, 19);
        /* fridged stopping answers (and so releases) every waiter */
        ask_plans(f, 65534, 3, &t);
        f->m = manager_free(f->m);
        g_assert_cmpuint(t.answered, ==, 22);
        g_assert_cmpuint(t.failed, ==, 3);
}

typedef struct Case {
        const char *name;
        void (*fn)(Fixture *f, gconstpointer data);
        const void *data;
} Case;

static const Case cases[] = {
        { "journal", test_journal, NULL },
        { "sleeps", test_sleeps, NULL },
        { "cancel/new", test_cancel_new, NULL },
        { "cancel/delaying", test_cancel_each_state, "delaying" },
        { "cancel/preparing", test_cancel_each_state, "preparing" },
        { "cancel/flushing", test_cancel_each_state, "flushing" },
        { "cancel/freezing-early", test_cancel_each_state, "freezing-early" },
        { "cancel/flushing-again", test_cancel_each_state, "flushing-again" },
        { "cancel/freezing-late", test_cancel_each_state, "freezing-late" },
        { "cancel/sleeping", test_cancel_each_state, "sleeping" },
        { "cancel/resuming", test_cancel_each_state, "resuming" },
        { "cancel/thawing", test_cancel_each_state, "thawing" },
        { "kernel-failure", test_kernel_failure, NULL },
        { "kernel-retry", test_kernel_retry, NULL },
        { "timeline", test_timeline, NULL },
        { "fake-backend/failure", test_fake_backend, &fake_failure },
        { "fake-backend/retry", test_fake_backend, &fake_retry },
        { "fake-backend/retries-spent", test_fake_backend, &fake_retries_spent },
        { "wake-reason-whole", test_wake_reason_whole, NULL },
        { "queue-timeout", test_queue_timeout, NULL },
        { "delay-timeout", test_delay_timeout, NULL },
        { "settings-fixed", test_settings_fixed, NULL },
        { "exempt/pidfd", test_exempt_pidfd, NULL },
        { "exempt/starttime", test_exempt_starttime, NULL },
        { "kernel-settings/restored", test_kernel_settings_restored, NULL },
        { "kernel-settings/kept-when-a-write-fails", test_kernel_settings_kept, NULL },
        { "plan-cap", test_plan_cap, NULL },
};

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        log_set_max_level(LOG_WARNING);
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *name = g_strdup_printf("/manager/%s", cases[i].name);
                g_test_add(name, Fixture, cases[i].data, setup, cases[i].fn, teardown);
        }
        return g_test_run();
}
