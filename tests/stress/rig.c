/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "rig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "fridge-config.h"

#define BLOCKED_FILE "power/sync_on_suspend"
#define PHASE_TIMEOUT_MS 15000

Rig *rig_new(unsigned n_cgroups, const char *extra_config) {
        const char *why = scratch_skip_reason();
        if (!why)
                why = harness_skip_reason();
        if (!why && !harness_env("SLOWFS"))
                why = "SLOWFS is not set";
        if (why) {
                g_test_skip(why);
                return NULL;
        }
        Rig *r = g_new0(Rig, 1);
        r->inhibit_fd = r->dirty_fd = -1;
        r->s = scratch_new();
        r->cgroups = g_ptr_array_new();
        for (unsigned i = 0; i < n_cgroups; i++) {
                g_autofree char *name = g_strdup_printf("s%02u.service", i);
                const char *cg = scratch_add(r->s, name);
                scratch_spawn(r->s, cg, NULL);
                g_ptr_array_add(r->cgroups, (char *) cg);
        }
        r->blocker = scratch_add(r->s, "blocker.service");
        /* OnTimeout=continue: a held first flush gives up, so the second
         * one can be held too (flush-again) */
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n[Flush]\nOnTimeout=continue\n%s", r->s->root,
                                                  extra_config ? extra_config : "");
        HarnessOptions o = { .config = config, .real_cgroups = true, .slowfs = true };
        r->h = harness_new(&o);
        harness_control(r->h, "sleep-ms 10");
        return r;
}

void rig_free(Rig *r) {
        if (!r)
                return;
        rig_release(r);
        if (g_test_failed())
                harness_dump_fridged_log(r->h);
        harness_free(r->h);
        scratch_free(r->s); /* after fridged: nothing of it may stay frozen */
        g_ptr_array_unref(r->cgroups);
        g_free(r);
}

static void set_blocker_class(Rig *r, const char *class) {
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(r->h, FRIDGE_INTERFACE, "SetClass", NULL, &err, &msg, "ss", "blocker.service", class) < 0)
                g_error("SetClass blocker.service %s: %s: %s", class, err, msg);
}

/* Inside write(2) (x86-64 and arm64 numbers) and not running */
static bool task_blocked(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/syscall", (int) pid);
        g_autofree char *text = NULL;
        if (!g_file_get_contents(path, &text, NULL, NULL))
                return false;
#if defined(__x86_64__)
        return g_str_has_prefix(text, "1 ");
#else
        return g_str_has_prefix(text, "64 ");
#endif
}

/* A process in blocker.service inside a fakesys write that is held: the
 * freezer cannot stop it, so the stage waits until the hold goes */
static void hold_freeze(Rig *r, const char *class) {
        set_blocker_class(r, class);
        harness_control(r->h, "hold-write " BLOCKED_FILE);
        g_autofree char *target = g_build_filename(r->h->root, "sys", BLOCKED_FILE, NULL);
        g_autofree char *script = g_strdup_printf("echo 1 > '%s'", target);
        char *argv[] = { (char *) "sh", (char *) "-c", script, NULL };
        r->blocker_pid = scratch_spawn(r->s, r->blocker, argv);
        for (int i = 0; i < 500 && !task_blocked(r->blocker_pid); i++)
                g_usleep(2000);
        g_assert_true(task_blocked(r->blocker_pid));
}

/* Dirty pages on slowfs whose writeback is held: syncfs() waits */
static void hold_flush(Rig *r) {
        g_autofree char *path = g_strdup_printf("%s/dirty-%u", r->h->slow, r->dirty_n++);
        r->dirty_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        g_assert_cmpint(r->dirty_fd, >=, 0);
        char buf[65536];
        memset(buf, 'd', sizeof(buf));
        for (int i = 0; i < 4; i++)
                g_assert_cmpint(write(r->dirty_fd, buf, sizeof(buf)), ==, (ssize_t) sizeof(buf));
        harness_slowfs_hold(r->h);
}

static void hold_prepare(Rig *r) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(r->h, FRIDGE_INTERFACE, "Inhibit", &reply, &err, &msg, "sss", "rig", "hold prepare",
                         "delay") < 0)
                g_error("Inhibit: %s: %s", err, msg);
        int fd = -1;
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        r->inhibit_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        sd_bus_message_unref(reply);
}

static bool log_has_prefix(Harness *h, const char *prefix, const char *suffix) {
        g_auto(GStrv) lines = harness_fakesys_log_lines(h);
        for (char **l = lines; *l; l++)
                if (g_str_has_prefix(*l, prefix) && g_str_has_suffix(*l, suffix))
                        return true;
        return false;
}

static void wait_log_prefix(Harness *h, const char *prefix, const char *suffix) {
        for (int i = 0; i < PHASE_TIMEOUT_MS / 10; i++) {
                if (log_has_prefix(h, prefix, suffix))
                        return;
                harness_process_until(h, 10, NULL, NULL);
        }
        g_error("fakesys never logged '%s…%s'", prefix, suffix);
}

/* Whether a thread of pid is in write(2) on a file whose path ends in
 * `suffix` (from /proc: its syscall and the fd's link) */
static bool writing_to(pid_t pid, const char *suffix) {
        g_autofree char *tasks = g_strdup_printf("/proc/%d/task", (int) pid);
        g_autoptr(GDir) d = g_dir_open(tasks, 0, NULL);
        for (const char *t; d && (t = g_dir_read_name(d));) {
                g_autofree char *p = g_strdup_printf("%s/%s/syscall", tasks, t);
                g_autofree char *text = NULL;
                long nr = -1;
                unsigned long fd = 0;
                if (!g_file_get_contents(p, &text, NULL, NULL) || sscanf(text, "%ld %lx", &nr, &fd) != 2 ||
                    nr != SYS_write)
                        continue;
                g_autofree char *link = g_strdup_printf("/proc/%d/fd/%lu", (int) pid, fd);
                g_autofree char *target = g_file_read_link(link, NULL);
                if (target && g_str_has_suffix(target, suffix))
                        return true;
        }
        return false;
}

/* The held write has reached fakesys: a kill now leaves it in flight, to
 * be released (fakesys logs a held write only once it is done, and the
 * wakeup_count write before it says only that it comes next) */
static void wait_write_held(Rig *r, const char *suffix) {
        for (int i = 0; i < PHASE_TIMEOUT_MS / 10; i++) {
                if (writing_to(r->h->fridged_pid, suffix))
                        return;
                harness_process_until(r->h, 10, NULL, NULL);
        }
        g_error("no thread of fridged (pid %d) came to write %s", (int) r->h->fridged_pid, suffix);
}

static uint64_t sleep_or_die(Rig *r, const char *phase, unsigned flags) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        /* flush-again: the first flush gives up after this, the second waits */
        unsigned flush_ms = g_str_equal(phase, "flush-again") ? 300 : 30000;
        int k = flags & RIG_MEM_SLEEP
                ? harness_sleep(r->h, "suspend", &cycle, &err, &msg, "flush-timeout-ms", "u", flush_ms,
                                "freeze-timeout-ms", "u", 60000, "pm-test", "s", "devices", "wake-after-sec", "u",
                                300, "mem-sleep", "s", "s2idle", NULL)
                : flags & RIG_PM_TEST
                ? harness_sleep(r->h, "suspend", &cycle, &err, &msg, "flush-timeout-ms", "u", flush_ms,
                                "freeze-timeout-ms", "u", 60000, "pm-test", "s", "devices", "wake-after-sec", "u",
                                300, NULL)
                : harness_sleep(r->h, "suspend", &cycle, &err, &msg, "flush-timeout-ms", "u", flush_ms,
                                "freeze-timeout-ms", "u", 60000, NULL);
        if (k < 0)
                g_error("Sleep: %s: %s", err, msg);
        return cycle;
}

uint64_t rig_start_held(Rig *r, const char *phase, unsigned flags) {
        g_ptr_array_set_size(r->h->signals, 0);
        harness_control(r->h, "clear-log");
        if (g_str_equal(phase, "prepare"))
                hold_prepare(r);
        else if (g_str_equal(phase, "flush") || g_str_equal(phase, "flush-again"))
                hold_flush(r);
        else if (g_str_equal(phase, "freeze-early") || g_str_equal(phase, "freeze-late"))
                hold_freeze(r, g_str_equal(phase, "freeze-early") ? "early" : "late");
        else if (g_str_equal(phase, "kernel") && (flags & RIG_PM_TEST)) {
                harness_control(r->h, "hold-write power/state");
                r->state_held = true;
        } else if (g_str_equal(phase, "kernel")) {
                harness_control(r->h, "sleep-ms 600000");
                r->sleeping = true;
        } else
                g_error("the rig cannot hold phase %s", phase);

        uint64_t cycle = sleep_or_die(r, phase, flags);
        if (!harness_wait_property_signal(r->h, "Phase", phase, PHASE_TIMEOUT_MS))
                g_error("cycle %" G_GUINT64_FORMAT " never reached phase %s", cycle, phase);
        if (r->state_held) {
                wait_log_prefix(r->h, "power/wakeup_count ", " ok"); /* the last step before it */
                wait_write_held(r, "/power/state");
        }
        else if (r->sleeping)
                wait_log_prefix(r->h, "power/state mem sleeping", "");
        return cycle;
}

static void release_kernel(Rig *r) {
        if (r->sleeping) {
                harness_control(r->h, "sleep-ms 10");
                harness_control(r->h, "wakeup");
        }
        if (r->state_held)
                harness_control(r->h, "release-write power/state");
        /* whoever wrote it is gone or back: the write itself must be done
         * before the next cycle, or that one gets EBUSY */
        wait_log_prefix(r->h, "power/state mem ", " ok");
        r->sleeping = r->state_held = false;
}

void rig_release(Rig *r) {
        if (r->inhibit_fd >= 0)
                close(r->inhibit_fd);
        r->inhibit_fd = -1;
        if (r->h->slowfs_held)
                harness_slowfs_release(r->h);
        if (r->dirty_fd >= 0)
                close(r->dirty_fd); /* after the release: close() flushes */
        r->dirty_fd = -1;
        if (r->blocker_pid > 0) {
                harness_control(r->h, "release-write " BLOCKED_FILE);
                /* it may be frozen (a cycle still running): its cgroup is thawed later */
                (void) harness_wait_pid(r->blocker_pid, 100);
                r->blocker_pid = 0;
        }
        if (r->sleeping || r->state_held)
                release_kernel(r);
}

unsigned rig_count_frozen(Rig *r) {
        unsigned n = 0;
        for (guint i = 0; i < r->cgroups->len; i++)
                n += scratch_is_frozen(r->s, r->cgroups->pdata[i]);
        return n + scratch_is_frozen(r->s, r->blocker);
}

void rig_finished(Rig *r, uint64_t cycle, int timeout_ms, char **ret_result, char **ret_error, char **ret_message) {
        if (!harness_wait_finished(r->h, cycle, timeout_ms, ret_result, ret_error, ret_message))
                g_error("no CycleFinished for cycle %" G_GUINT64_FORMAT, cycle);
}

uint64_t rig_full_cycle(Rig *r) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL, *result = NULL, *message = NULL;
        if (harness_sleep(r->h, "suspend", &cycle, &err, &msg, NULL) < 0)
                g_error("Sleep: %s: %s", err, msg);
        rig_finished(r, cycle, 20000, &result, NULL, &message);
        if (!g_str_equal(result, "done"))
                g_error("cycle %" G_GUINT64_FORMAT " ended %s: %s", cycle, result, message);
        return cycle;
}
