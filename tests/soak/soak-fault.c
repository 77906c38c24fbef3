/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The soak's faults: per cycle at most one disruption (it decides how the
 * cycle ends: a SIGKILL of fridged, the hook's caller killed, a Cancel,
 * the bus restarted) and any of the conditions it meets (a stopped FUSE
 * server, a task in D state, wakeup events in a phase, EBUSY from the
 * kernel, a slow polkit, cgroups coming and going, a full state disk, an
 * invalid config reloaded). Everything is drawn from the seeded GRand, so
 * a run's schedule follows from its seed.
 */
#include "soak.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness-private.h" /* HarnessSpawn */

#define FINISH_TIMEOUT_MS 60000
#define STEP_MS 5

const char *const soak_disruption_names[_SOAK_DISRUPTION_MAX] = {
        [SOAK_CALM] = "none",
        [SOAK_KILL] = "sigkill-fridged",
        [SOAK_HOOK_KILLED] = "hook-caller-killed",
        [SOAK_CANCEL] = "cancel",
        [SOAK_BUS_RESTART] = "bus-restart",
};

const char *const soak_condition_names[_SOAK_CONDITION_MAX] = {
        [SOAK_FUSE_STOPPED] = "fuse-stopped",
        [SOAK_D_STATE] = "d-state",
        [SOAK_WAKEUP_FLUSH] = "wakeup-flush",
        [SOAK_WAKEUP_EARLY] = "wakeup-freeze-early",
        [SOAK_WAKEUP_LATE] = "wakeup-freeze-late",
        [SOAK_EBUSY] = "state-ebusy",
        [SOAK_POLKIT_SLOW] = "polkit-slow",
        [SOAK_POLKIT_NEVER] = "polkit-never",
        [SOAK_CGROUP_CHURN] = "cgroup-churn",
        [SOAK_DISK_FULL] = "state-disk-full",
        [SOAK_BAD_RELOAD] = "bad-config-reload",
};

static bool condition_possible(Soak *k, SoakCondition c) {
        if (c == SOAK_FUSE_STOPPED)
                return k->fuse_pid > 0;
        if (c == SOAK_BAD_RELOAD)
                return k->sighup_reload;
        return true;
}

void soak_fault_draw(Soak *k) {
        memset(k->conditions, 0, sizeof(k->conditions));
        /* half the cycles are disrupted, the rest end on their own */
        k->disruption = g_rand_int_range(k->rand, 0, 2) == 0
                ? SOAK_CALM : (SoakDisruption) g_rand_int_range(k->rand, 1, _SOAK_DISRUPTION_MAX);
        unsigned n = (unsigned) g_rand_int_range(k->rand, 0, 5) / 2;  /* 0, 0, 1, 1, 2 */
        for (unsigned i = 0; i < n; i++) {
                SoakCondition c = (SoakCondition) g_rand_int_range(k->rand, 0, _SOAK_CONDITION_MAX);
                if (condition_possible(k, c))
                        k->conditions[c] = true;
        }
        k->moment_ms = (unsigned) g_rand_int_range(k->rand, 0, 400);
        k->pm_test = g_rand_boolean(k->rand);
        k->s2idle = g_rand_boolean(k->rand);
        k->wake_alarm = g_rand_boolean(k->rand);
        k->inhibit = g_rand_int_range(k->rand, 0, 4) == 0;
}

char *soak_fault_describe(Soak *k) {
        GString *s = g_string_new(soak_disruption_names[k->disruption]);
        for (int c = 0; c < _SOAK_CONDITION_MAX; c++)
                if (k->conditions[c])
                        g_string_append_printf(s, ",%s", soak_condition_names[c]);
        g_string_append_printf(s, " at %u ms", k->moment_ms);
        return g_string_free(s, FALSE);
}

/* ---- conditions ---- */

static gpointer churn_thread(gpointer data) {
        Soak *k = data;
        g_autofree char *root = scratch_abs(k->s, k->s->root);
        for (unsigned i = 0; !g_atomic_int_get(&k->churn_stop); i++) {
                g_autofree char *a = g_strdup_printf("%s/churn%u.service", root, i % 8);
                g_autofree char *b = g_strdup_printf("%s/churn%u.slice", root, i % 8);
                g_autofree char *c = g_strdup_printf("%s/inner.service", b);
                (void) mkdir(a, 0755);
                (void) mkdir(b, 0755);
                (void) mkdir(c, 0755);
                g_usleep(1000);
                (void) rmdir(a);
                (void) rmdir(c);
                (void) rmdir(b);
        }
        return NULL;
}

static void fill_state_disk(Soak *k) {
        k->filler = g_build_filename(k->state_dir, "filler", NULL);
        int fd = open(k->filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        g_assert_cmpint(fd, >=, 0);
        char buf[16384];
        memset(buf, 'x', sizeof(buf));
        while (write(fd, buf, sizeof(buf)) > 0)
                ;
        while (write(fd, buf, 1) > 0)
                ;
        close(fd);
}

static pid_t spawn_polkit_client(Soak *k) {
        g_autofree char *hold = g_build_filename(k->h->dir, "polkit.hold", NULL);
        harness_write_file(hold, "");
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", k->h->bus_address);
        /* harness_spawn execs without a PATH search */
        g_autofree char *setpriv = g_find_program_in_path("setpriv");
        if (!setpriv)
                g_error("soak: setpriv (util-linux) is needed for the polkit faults");
        char *argv[] = { setpriv, (char *) "--reuid=65534", (char *) "--regid=65534",
                         (char *) "--clear-groups", (char *) "--", (char *) harness_env("FRIDGECTL"), a_bus,
                         (char *) "--no-progress", (char *) "suspend", NULL };
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .extra_fd = -1 };
        return harness_spawn(&s);
}

/* The phase-bound ones (wakeups, the reload) count when they are sent */
static bool counted_when_sent(SoakCondition c) {
        return c == SOAK_WAKEUP_FLUSH || c == SOAK_WAKEUP_EARLY || c == SOAK_WAKEUP_LATE || c == SOAK_BAD_RELOAD;
}

static void set_conditions(Soak *k) {
        bool *c = k->conditions;
        for (int i = 0; i < _SOAK_CONDITION_MAX; i++)
                k->n_condition[i] += c[i] && !counted_when_sent((SoakCondition) i);
        if (c[SOAK_EBUSY])
                harness_control(k->h, "fail-state EBUSY");
        if (c[SOAK_D_STATE]) {
                g_autofree char *dir = scratch_abs(k->s, k->stuck_cg);
                g_autofree char *procs = g_build_filename(dir, "cgroup.procs", NULL);
                g_autofree char *name = g_strdup_printf("stuck-%u", k->index);
                g_autofree char *file = g_build_filename(k->h->slow, name, NULL); /* on slowfs, to hang there */
                k->stuck_pid = harness_slowfs_stuck_in_fsync(k->h, procs, file, "soak-stuck");
        }
        if (c[SOAK_FUSE_STOPPED])
                g_assert_cmpint(kill(k->fuse_pid, SIGSTOP), ==, 0);
        if (c[SOAK_DISK_FULL])
                fill_state_disk(k);
        if (c[SOAK_POLKIT_SLOW] || c[SOAK_POLKIT_NEVER])
                k->polkit_client_pid = spawn_polkit_client(k);
        if (c[SOAK_CGROUP_CHURN]) {
                g_atomic_int_set(&k->churn_stop, 0);
                k->churn = g_thread_new("churn", churn_thread, k);
        }
}

static void clear_conditions(Soak *k) {
        bool *c = k->conditions;
        if (c[SOAK_EBUSY])
                harness_control(k->h, "fail-state EBUSY 0"); /* unused when the cycle ended before the write */
        if (c[SOAK_FUSE_STOPPED])
                g_assert_cmpint(kill(k->fuse_pid, SIGCONT), ==, 0);
        if (k->h->slowfs_held)
                harness_slowfs_release(k->h);
        if (k->stuck_pid > 0 && harness_wait_pid(k->stuck_pid, 10000) == -1)
                soak_violation(k, "the task in fsync (pid %d) is still stuck after the release", (int) k->stuck_pid);
        k->stuck_pid = 0;
        if (k->filler) {
                (void) unlink(k->filler);
                g_clear_pointer(&k->filler, g_free);
        }
        if (k->polkit_client_pid > 0) {
                g_autofree char *hold = g_build_filename(k->h->dir, "polkit.hold", NULL);
                if (c[SOAK_POLKIT_NEVER])
                        (void) kill(k->polkit_client_pid, SIGKILL); /* gave up before any answer */
                (void) unlink(hold);
                (void) harness_wait_pid(k->polkit_client_pid, 10000);
                k->polkit_client_pid = 0;
        }
        if (k->churn) {
                g_atomic_int_set(&k->churn_stop, 1);
                g_thread_join(g_steal_pointer(&k->churn));
        }
        soak_tree_inhibit(k, false);
}

/* ---- starting the cycle ---- */

static uint64_t find_imminent(Soak *k) {
        for (guint i = 0; i < k->h->signals->len; i++) {
                HarnessSignal *sig = k->h->signals->pdata[i];
                uint64_t id = 0;
                if (g_str_equal(sig->member, "SleepImminent") && sd_bus_message_read(sig->message, "t", &id) > 0) {
                        (void) sd_bus_message_rewind(sig->message, true);
                        return id;
                }
        }
        return 0;
}

static bool imminent_pred(Harness *h, void *userdata) {
        return find_imminent(userdata) > 0;
}

/* As systemd-sleep's hook does: fridgectl hook pre suspend */
static void start_by_hook(Soak *k) {
        g_autofree char *a_bus = g_strdup_printf("--bus-address=%s", k->h->bus_address);
        char *argv[] = { (char *) harness_env("FRIDGECTL"), a_bus, (char *) "hook", (char *) "pre",
                         (char *) "suspend", NULL };
        HarnessSpawn s = { .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1, .extra_fd = -1 };
        k->hook_pid = harness_spawn(&s);
        if (!harness_process_until(k->h, 10000, imminent_pred, k))
                soak_violation(k, "Hook(pre) started no cycle within 10 s");
        k->cycle_id = find_imminent(k);
}

/* Sleep, or the error it gave (then no cycle runs) */
static char *start_by_sleep(Soak *k) {
        char *err = NULL;
        g_autofree char *msg = NULL;
        const char *mem = k->s2idle ? "s2idle" : "deep";
        uint64_t *id = &k->cycle_id;
        Harness *h = k->h;
        int r;
        /* the optional knobs last: a NULL key ends the list early */
        const char *k1 = k->pm_test ? "pm-test" : k->wake_alarm ? "wake-after-sec" : NULL;
        const char *k2 = k->pm_test && k->wake_alarm ? "wake-after-sec" : NULL;
        if (k->pm_test)
                r = harness_sleep(h, "suspend", id, &err, &msg, "flush-timeout-ms", "u", 800, "freeze-timeout-ms", "u",
                                  800, "mem-sleep", "s", mem, k1, "s", "devices", k2, "u", 300, NULL);
        else
                r = harness_sleep(h, "suspend", id, &err, &msg, "flush-timeout-ms", "u", 800, "freeze-timeout-ms", "u",
                                  800, "mem-sleep", "s", mem, k1, "u", 300, NULL);
        if (r < 0)
                g_print("soak: cycle %u: Sleep refused: %s: %s\n", k->index + 1, err, msg);
        return r < 0 ? err : NULL;
}

/* ---- during the cycle ---- */

static const char *const wakeup_phase[_SOAK_CONDITION_MAX] = {
        [SOAK_WAKEUP_FLUSH] = "flush",
        [SOAK_WAKEUP_EARLY] = "freeze-early",
        [SOAK_WAKEUP_LATE] = "freeze-late",
};

/* A wakeup event as soon as the phase a wakeup condition waits for shows */
static void inject_wakeups(Soak *k, guint *scanned, bool *sent) {
        for (; *scanned < k->h->signals->len; (*scanned)++) {
                g_autoptr(GPtrArray) changes = harness_parse_props_changed(k->h->signals->pdata[*scanned]);
                for (guint j = 0; j < changes->len; j++) {
                        HarnessPropChange *p = changes->pdata[j];
                        if (!g_str_equal(p->name, "Phase") || p->type != 's')
                                continue;
                        for (int c = 0; c < _SOAK_CONDITION_MAX; c++)
                                if (wakeup_phase[c] && k->conditions[c] && !sent[c] &&
                                    g_str_equal(p->s, wakeup_phase[c])) {
                                        harness_control(k->h, "wakeup");
                                        sent[c] = true;
                                        k->n_condition[c]++;
                                }
                }
        }
}

/* An invalid config file, then SIGHUP, then the good one back */
static void bad_reload(Soak *k) {
        g_autofree char *conf = g_build_filename(k->h->conf_dir, "fridge.conf", NULL);
        g_autofree char *good = NULL;
        g_assert_true(g_file_get_contents(conf, &good, NULL, NULL));
        harness_write_file(conf, "[Freeze\nRoots=\x01\n[Flush]\nOnTimeout=maybe\n");
        harness_kill_fridged(k->h, SIGHUP);
        g_usleep(50000);
        harness_write_file(conf, good);
}

static void restart_after_kill(Soak *k, int64_t start) {
        harness_restart_fridged(k->h);
        k->restarts++;
        while (soak_tree_count_frozen(k) > 0 && g_get_monotonic_time() - start < 30 * G_USEC_PER_SEC)
                g_usleep(1000);
        k->worst_thaw_usec = MAX(k->worst_thaw_usec, g_get_monotonic_time() - start);
}

static void kill_fridged(Soak *k) {
        harness_kill_fridged(k->h, SIGKILL);
        int64_t start = g_get_monotonic_time();
        /* a thread stuck in a held syncfs keeps the dead fridged from exiting */
        if (k->h->slowfs_held)
                harness_slowfs_release(k->h);
        if (k->conditions[SOAK_FUSE_STOPPED])
                (void) kill(k->fuse_pid, SIGCONT);
        restart_after_kill(k, start);
}

/* One cycle's fields from ListCycles: id and result */
static bool read_cycle_entry(sd_bus_message *m, uint64_t *ret_id, char **ret_result) {
        if (sd_bus_message_enter_container(m, 'a', "{sv}") <= 0)
                return false;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                const char *key = NULL, *s = NULL;
                g_assert_cmpint(sd_bus_message_read(m, "s", &key), >, 0);
                if (g_str_equal(key, "id"))
                        g_assert_cmpint(sd_bus_message_read(m, "v", "t", ret_id), >, 0);
                else if (g_str_equal(key, "result")) {
                        g_assert_cmpint(sd_bus_message_read(m, "v", "s", &s), >, 0);
                        *ret_result = g_strdup(s);
                } else
                        g_assert_cmpint(sd_bus_message_skip(m, "v"), >, 0);
                g_assert_cmpint(sd_bus_message_exit_container(m), >, 0);
        }
        g_assert_cmpint(sd_bus_message_exit_container(m), >, 0);
        return true;
}

/* The result the history keeps for cycle `id`, or NULL */
static char *history_result(Soak *k, uint64_t id) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        char *found = NULL;
        if (harness_call(k->h, FRIDGE_INTERFACE, "ListCycles", &reply, &err, &msg, "u", 8) < 0)
                soak_violation(k, "ListCycles: %s: %s", err, msg);
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "a{sv}"), >, 0);
        for (;;) {
                uint64_t cid = 0;
                g_autofree char *result = NULL;
                if (!read_cycle_entry(reply, &cid, &result))
                        break;
                if (cid == id && !found)
                        found = g_steal_pointer(&result);
        }
        sd_bus_message_unref(reply);
        return found;
}

/* fridged's log has the cycle's end before its last lost bus */
static bool finished_before_bus_lost(Soak *k) {
        g_autofree char *log = NULL;
        if (!g_file_get_contents(k->h->fridged_log, &log, NULL, NULL))
                return false;
        g_autofree char *end = g_strdup_printf("\nCycle %" PRIu64 " (suspend) finished: ", k->cycle_id);
        const char *lost = g_strrstr(log, "The bus connection was lost");
        const char *finished = strstr(log, end);
        return finished && (!lost || finished < lost);
}

/* The bus daemon goes and comes back on the same address: fridged loses
 * its connection (it thaws and exits, to be restarted), so do the polkit
 * stand-in, the agent and our own connection */
static void restart_bus(Soak *k) {
        Harness *h = k->h;
        soak_tree_inhibit(k, false);
        int64_t start = g_get_monotonic_time();
        if (h->slowfs_held) /* a thread stuck in a held syncfs keeps fridged from exiting */
                harness_slowfs_release(h);
        if (k->conditions[SOAK_FUSE_STOPPED])
                (void) kill(k->fuse_pid, SIGCONT);
        harness_restart_bus(h, true, SOAK_POLKIT_TABLE);
        restart_after_kill(k, start);
        /* A CycleFinished the bus daemon took down with it is lost to every
         * client: allowed only when fridged had finished the cycle before
         * it lost the bus (its log says so), and the history must then say
         * how the cycle ended. One cut short must be reported after the restart. */
        if (!harness_wait_finished(h, k->cycle_id, 2000, NULL, NULL, NULL)) {
                if (!finished_before_bus_lost(k))
                        soak_violation(k, "no CycleFinished for cycle %" PRIu64 ", cut short by the bus restart",
                                       k->cycle_id);
                g_free(k->lost_finished);
                k->lost_finished = history_result(k, k->cycle_id);
                k->n_lost_finished += k->lost_finished != NULL;
        }
        if (k->agent_pid > 0 && waitpid(k->agent_pid, NULL, WNOHANG) == k->agent_pid)
                soak_tree_start_agent(k);
}

static void disrupt(Soak *k) {
        g_autofree char *err = NULL, *msg = NULL;
        switch (k->disruption) {
        case SOAK_KILL:
                kill_fridged(k);
                break;
        case SOAK_HOOK_KILLED:
                (void) kill(k->hook_pid, SIGKILL);
                break;
        case SOAK_CANCEL:
                if (harness_cancel(k->h, k->cycle_id, &err, &msg) < 0 &&
                    !g_str_equal(err, FRIDGE_INTERFACE ".Error.TooLate") &&
                    !g_str_equal(err, FRIDGE_INTERFACE ".Error.NoSuchCycle"))
                        soak_violation(k, "Cancel: %s: %s", err, msg);
                break;
        case SOAK_BUS_RESTART:
                restart_bus(k);
                break;
        default:
                break;
        }
}

/* The hook's pre answered before its caller was killed (it may have been
 * killed before it could exit): the cycle waits in the kernel phase for
 * the post, which systemd-sleep sends after its own sleep whatever
 * became of the pre's fridgectl */
static void hook_post(Soak *k) {
        (void) harness_wait_pid(k->hook_pid, FINISH_TIMEOUT_MS);
        k->hook_pid = 0;
        g_autofree char *state = harness_get_string(k->h, "State");
        if (!g_str_equal(state, "sleeping"))
                return;
        harness_control(k->h, "wakeup");
        (void) harness_fridgectl(k->h, FINISH_TIMEOUT_MS, NULL, "hook", "post", "suspend");
}

static bool finished_pred(Harness *h, void *userdata) {
        Soak *k = userdata;
        return k->lost_finished || harness_find_signal(h, "CycleFinished", true, k->cycle_id) >= 0;
}

/* Until CycleFinished: the wakeups when their phase shows, the inhibitor
 * dropped and the disruption at the moment drawn, a bad reload early
 * (within 5 ms: most cycles are over in tens of milliseconds) */
static void follow(Soak *k) {
        int64_t start = g_get_monotonic_time(), deadline = start + FINISH_TIMEOUT_MS * 1000LL;
        int64_t moment = start + k->moment_ms * 1000LL;
        bool sent[_SOAK_CONDITION_MAX] = {}, disrupted = false, reloaded = false;
        guint scanned = 0;
        while (!finished_pred(k->h, k)) {
                int64_t now = g_get_monotonic_time();
                if (now > deadline)
                        soak_violation(k, "no CycleFinished for cycle %" PRIu64 " within %d s", k->cycle_id,
                                       FINISH_TIMEOUT_MS / 1000);
                inject_wakeups(k, &scanned, sent);
                if (now >= start + k->moment_ms * 500LL && k->inhibit_fds->len > 0)
                        soak_tree_inhibit(k, false);
                if (!reloaded && k->conditions[SOAK_BAD_RELOAD] && now >= start + MIN(k->moment_ms * 700LL, 5000)) {
                        bad_reload(k);
                        k->n_condition[SOAK_BAD_RELOAD]++;
                        reloaded = true;
                }
                if (!disrupted && now >= moment) {
                        disrupted = true;
                        k->n_disruption[k->disruption]++;
                        disrupt(k);
                        if (k->disruption == SOAK_HOOK_KILLED)
                                hook_post(k);
                }
                (void) harness_process_until(k->h, STEP_MS, finished_pred, k);
        }
        if (k->hook_pid > 0)
                hook_post(k);
}

/* A runtime class for one cgroup of the tree, or its override removed,
 * as an administrator's SetClass would */
static void reclass(Soak *k) {
        static const char *const classes[] = { "early", "late", "nofreeze", "ui", "" };
        const char *cg = k->cgroups->pdata[g_rand_int_range(k->rand, 0, (gint32) k->cgroups->len)];
        const char *class = classes[g_rand_int_range(k->rand, 0, G_N_ELEMENTS(classes))];
        g_autofree char *unit = g_path_get_basename(cg);
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(k->h, FRIDGE_INTERFACE, "SetClass", NULL, &err, &msg, "ss", unit, class) < 0)
                soak_violation(k, "SetClass %s '%s': %s: %s", unit, class, err, msg);
}

void soak_fault_run_cycle(Soak *k, char **ret_result, char **ret_error, char **ret_message) {
        reclass(k);
        soak_tree_write_files(k);
        soak_check_baseline(k);
        if (k->inhibit)
                soak_tree_inhibit(k, true);
        set_conditions(k);
        k->cycle_id = 0;
        g_clear_pointer(&k->lost_finished, g_free);
        g_autofree char *refused = NULL;
        if (k->disruption == SOAK_HOOK_KILLED)
                start_by_hook(k);
        else
                refused = start_by_sleep(k);
        if (refused) {
                clear_conditions(k);
                *ret_result = g_strdup("refused");
                *ret_error = g_steal_pointer(&refused);
                *ret_message = NULL;
                return;
        }
        follow(k);
        clear_conditions(k);
        if (k->lost_finished) {
                *ret_result = g_strdup(k->lost_finished);
                *ret_error = g_strdup("");
                *ret_message = g_strdup("CycleFinished lost with the bus daemon; the history's result");
                return;
        }
        if (!harness_wait_finished(k->h, k->cycle_id, 1000, ret_result, ret_error, ret_message))
                soak_violation(k, "CycleFinished for cycle %" PRIu64 " vanished", k->cycle_id);
}
