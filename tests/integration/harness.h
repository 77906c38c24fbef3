/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integration test harness: a private dbus-daemon, the real fridged and a
 * simulated kernel (fakesys, optionally slowfs), all below one mkdtemp dir.
 *
 * Everything the harness starts is killed by PID and every mount it made is
 * unmounted in harness_free(), which also runs from an atexit() handler so
 * a failed assertion (g_assert aborts) or an exit() leaves nothing behind.
 * Children also get PR_SET_PDEATHSIG so they die with the test process.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

typedef struct HarnessOptions {
        /* extra fakesys arguments before the mount point, NULL-terminated */
        const char *const *fakesys_args;
        /* contents of DIR/conf/fridge.conf; NULL: no file */
        const char *config;
        /* contents of DIR/conf/classes.d/test.conf; NULL: no file */
        const char *classes;
        /* a vendor class file (the shipped data/60-desktop.conf) copied into
         * DIR/vendor/classes.d/ under its own name, as installed; NULL: none */
        const char *vendor_classes;
        /* fridged sees the real cgroup v2 mount; `config` must then set
         * [Freeze] Roots= to the test's scratch cgroups. Otherwise its
         * cgroup root is an empty directory and nothing can be frozen. */
        bool real_cgroups;
        /* also mount slowfs on DIR/slow */
        bool slowfs;
        /* with slowfs: fridged's --persistent-dir is DIR/slow/lib (the
         * history, the cycle record), so a held slowfs stalls its writes
         * as a stuck disk would */
        bool persistent_on_slowfs;
        /* fridged's --state-dir (DIR/state) on a tmpfs of its own, as
         * /run is where fridged runs (the benchmarks: the ledger's fsyncs
         * cost there what they cost in production; root only) */
        bool state_on_tmpfs;
        /* name, text pairs, NULL-terminated: files such as "swaps" that
         * fridged's /proc shows instead of the host's (implies the fake
         * /proc described below) */
        const char *const *proc_files;
        /* a polkit stand-in on the bus answering from this table (see
         * tests/polkit/polkit-standin.c: "ACTION UID yes|no|challenge" lines);
         * NULL: no polkit on the bus */
        const char *polkit_table;
        /* any uid may connect to the bus (for clients run with setpriv) */
        bool open_bus;
        /* a umockdev testbed's root (umockdev_testbed_get_root_dir()): fridged
         * runs under umockdev's preload library with UMOCKDEV_DIR set to it,
         * so libudev (the wakeup sources) sees the testbed's /sys instead of
         * the host's. NULL: fridged runs as it is. */
        const char *umockdev_dir;
        /* > 0: fridged runs with WATCHDOG_USEC set to this, as systemd starts
         * it under WatchdogSec=, and the notify socket stays open for
         * harness_wait_notify() */
        uint64_t watchdog_usec;
        /* a logind stand-in on the bus (tests/logind/logind-standin.c),
         * started before fridged; its sleeps write fakesys's state and run
         * the sleep hook: the built one (fridgectl by the name "fridge",
         * on DBUS_SYSTEM_BUS_ADDRESS) with logind_hook_script, else
         * `fridgectl hook` directly */
        bool logind;
        bool logind_hook_script;
        unsigned logind_delay_max_ms;   /* InhibitDelayMaxSec; 0: the stand-in's 5 s */
        /* fridged runs with only the capabilities the installed unit gives
         * it (CapabilityBoundingSet= of systemd-units/fridged.service), by
         * setpriv: no CAP_SYS_ADMIN, so no PROC/TID/stack */
        bool unit_capabilities;
        /* > 0: fridged sees this uid active on seat0, as logind says it
         * (sd_uid_is_on_seat(): /run/systemd/users/UID), in a mount
         * namespace of its own with a tmpfs there; the host's is untouched */
        uid_t seated_uid;
        /* contents of DIR/sleep-root/etc/systemd/sleep.conf, systemd-sleep's
         * settings: fridged reads them under --sleep-conf-root=DIR/sleep-root
         * (always: never the host's), the logind stand-in obeys them; NULL: no file */
        const char *sleep_conf;
} HarnessOptions;

/*
 * fridged's flush runs syncfs() on every writable mount in
 * PROC/self/mountinfo. On a shared test machine a stuck file system of
 * someone else (a held FUSE mount, a loop device over one) would then stall
 * every cycle here. HARNESS_FAKE_PROC=1 gives fridged --proc-root=DIR/proc:
 * symlinks to the real /proc entries, except self/mountinfo and self/mounts,
 * which list only the harness's own mounts (fakesys, slowfs). It is off by
 * default because its PID entries are a snapshot taken at start-up: the
 * processes a test starts later would be invisible to fridged's detection.
 */

/* One recorded signal from fridged's object path. */
typedef struct HarnessSignal {
        int64_t time_usec;          /* g_get_monotonic_time() at receipt */
        char *interface;
        char *member;
        sd_bus_message *message;    /* rewound, read it with sd_bus_message_* */
} HarnessSignal;

typedef struct Harness {
        char *dir;                  /* mkdtemp */
        char *root;                 /* DIR/root: fakesys mount = sysfs root */
        char *conf_dir;             /* DIR/conf */
        char *slow;                 /* DIR/slow: slowfs mount, or NULL */
        char *bus_address;
        char *fridged_log;          /* DIR/fridged.log */
        char *proc;                 /* DIR/proc with HARNESS_FAKE_PROC, else NULL */

        pid_t fakesys_pid;
        pid_t slowfs_pid;
        pid_t dbus_pid;
        pid_t polkit_pid;
        char *polkit_log;           /* DIR/polkit.log: one line per question; while
                                     * DIR/polkit.hold exists its answers are held */
        pid_t logind_pid;
        char *logind_log;           /* DIR/logind.log: the stand-in's steps, one a line */
        pid_t fridged_pid;
        pid_t dirty_pid;            /* child keeping dirty data open on slowfs */
        pid_t probe_pid;            /* child stuck in syncfs() of the held slowfs */
        int dirty_pipe;             /* closing it lets the dirty child exit */

        bool root_mounted;
        bool slowfs_mounted;
        bool slowfs_held;
        bool state_mounted;         /* DIR/state is a tmpfs (state_on_tmpfs) */
        bool real_cgroups;
        char *persistent;           /* fridged's --persistent-dir: DIR/lib or DIR/slow/lib */
        bool unit_capabilities;
        uid_t seated_uid;           /* HarnessOptions.seated_uid */
        char *umockdev_dir;         /* HarnessOptions.umockdev_dir */
        uint64_t watchdog_usec;     /* HarnessOptions.watchdog_usec */
        int notify_fd;              /* fridged's NOTIFY_SOCKET with watchdog_usec, else -1 */

        bool fridged_started;
        int fridged_status;         /* wait status after teardown, -1 if unknown */

        sd_bus *bus;
        sd_bus_slot *match_slot;
        GPtrArray *signals;         /* HarnessSignal* */
} Harness;

/* Why the integration tests cannot run here, or NULL when they can. */
const char *harness_skip_reason(void);
/* g_test_init(), then exits 77 (skip) with the reason when
 * harness_skip_reason() says the tests cannot run here. */
void harness_init(int *argc, char ***argv);

/* Starts everything; asserts (and cleans up) on failure. */
Harness *harness_new(const HarnessOptions *opts);
/* Stops everything (idempotent); returns fridged's wait status after SIGTERM
 * (0 = clean exit), -1 if it was not running or had to be killed. */
int harness_stop(Harness *h);
/* Stops everything and frees; safe on NULL and on half-started harnesses. */
void harness_free(Harness *h);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Harness, harness_free)

/* With HarnessOptions.watchdog_usec: waits up to timeout_ms for a
 * notification from fridged that has the line `line` (e.g. "WATCHDOG=1");
 * true when one came. */
bool harness_wait_notify(Harness *h, const char *line, int timeout_ms);

/* Sends `sig` to fridged (it is not reaped: see harness_restart_fridged). */
void harness_kill_fridged(Harness *h, int sig);
/* Reaps fridged (it must exit within 10 s; its wait status goes to
 * fridged_status) and starts it again on the same bus, kernel and state
 * directory; returns once it sent READY=1. The test's bus connection and
 * recorded signals stay. */
void harness_restart_fridged(Harness *h);

/* Stops the bus daemon and starts it again on the same address, with the
 * polkit stand-in (its table polkit_table; NULL: none); the test's
 * connection is made again (the signals it recorded stay). fridged loses
 * its connection and exits: harness_restart_fridged() reaps and starts it. */
void harness_restart_bus(Harness *h, bool open_bus, const char *polkit_table);

/* Prints fridged's stderr (the whole file) as test messages. */
void harness_dump_fridged_log(Harness *h);

/*
 * Sleep(kind, options). The options are triplets terminated by NULL:
 *   key, type ("b","s","u","i","t","d"), value
 * with value passed as int (b, i), const char * (s), unsigned (u),
 * uint64_t (t) or double (d).
 * Returns 0 and *ret_cycle on success; on a D-Bus error returns -1 and
 * sets *ret_error (name) and *ret_message (both g_free()).
 */
int harness_sleep(Harness *h, const char *kind, uint64_t *ret_cycle,
                  char **ret_error, char **ret_message, ...) G_GNUC_NULL_TERMINATED;

/* A delay inhibitor held by the test ("test", `why`): its fd, to close.
 * A cycle started meanwhile waits in prepare, before any kernel write. */
int harness_inhibit_delay(Harness *h, const char *why);

/* Cancel(cycle): 0 or -1 with error name/message as above. */
int harness_cancel(Harness *h, uint64_t cycle, char **ret_error, char **ret_message);

/* Generic method call on fridged with an sd-bus signature and values. */
int harness_call(Harness *h, const char *interface, const char *member,
                 sd_bus_message **ret_reply, char **ret_error, char **ret_message,
                 const char *types, ...);

/* GetPlan's row of `cgroup`: its class and reason (g_free); false when the
 * plan has none. Fails the test when GetPlan fails. */
bool harness_plan_row(Harness *h, const char *cgroup, char **ret_class, char **ret_reason);

/*
 * Processes the bus until CycleFinished for `cycle` has been recorded, or
 * timeout_ms passes. Returns true when it was found; fills the out strings
 * (each may be NULL).
 */
bool harness_wait_finished(Harness *h, uint64_t cycle, int timeout_ms,
                           char **ret_result, char **ret_error, char **ret_message);

/* Processes the bus for up to timeout_ms or until pred returns true. */
bool harness_process_until(Harness *h, int timeout_ms,
                           bool (*pred)(Harness *h, void *userdata), void *userdata);

/* Waits for a PropertiesChanged that sets property `name` to string `value`. */
bool harness_wait_property_signal(Harness *h, const char *name, const char *value, int timeout_ms);

/* Index of the first recorded signal `member` (optionally with cycle as first arg t), or -1. */
int harness_find_signal(Harness *h, const char *member, bool match_cycle, uint64_t cycle);

/* One property from a PropertiesChanged on io.fridge.Fridge1. */
typedef struct HarnessPropChange {
        char *name;
        char type;                  /* 's', 'd', 't', or another type (value not kept) */
        char *s;
        double d;
        uint64_t t;
} HarnessPropChange;
void harness_prop_change_free(HarnessPropChange *c);
/* Changed properties of a recorded signal (empty unless it is a
 * PropertiesChanged for io.fridge.Fridge1). */
GPtrArray *harness_parse_props_changed(HarnessSignal *sig);

/* Property getters; assert on bus errors. */
char *harness_get_string(Harness *h, const char *name);
double harness_get_double(Harness *h, const char *name);
uint64_t harness_get_u64(Harness *h, const char *name);

/* fakesys */
char *harness_fakesys_log(Harness *h);
char **harness_fakesys_log_lines(Harness *h);
void harness_control(Harness *h, const char *cmd);
char *harness_read_sys(Harness *h, const char *rel);   /* relative to DIR/root/sys */
/* Fails the test unless `rel` reads `want` (surrounding white space aside) */
void harness_assert_sys(Harness *h, const char *rel, const char *want);
void harness_write_sys(Harness *h, const char *rel, const char *value);
/* Polls the log (bounded) until a line equal to `line` appears. */
bool harness_wait_log_line(Harness *h, const char *line, int timeout_ms);

/* slowfs */
void harness_slowfs_control(Harness *h, const char *cmd);
char *harness_slowfs_stats(Harness *h);
/* Forks a child that writes `bytes` into DIR/slow/dirty and keeps it open. */
void harness_slowfs_make_dirty(Harness *h, size_t bytes);
void harness_slowfs_hold(Harness *h);
void harness_slowfs_release(Harness *h);
/* make_dirty's child closes its file and ends (release slowfs first) */
void harness_slowfs_forget_dirty(Harness *h);
/* A child that moves itself into the cgroup whose cgroup.procs is `procs`,
 * dirties `file` on slowfs, names itself `comm` (NULL: keeps its name) and
 * calls fsync() once slowfs is held (which this does): it sits in the
 * kernel in state D and cannot freeze. The caller ends it (by pid) after
 * harness_slowfs_release(). */
pid_t harness_slowfs_stuck_in_fsync(Harness *h, const char *procs, const char *file, const char *comm);
/* Whether the task is in state D (uninterruptible sleep) now */
bool harness_task_in_state_d(pid_t pid);
/* harness_slowfs_stuck_in_fsync() in the scratch cgroup `cgroup` (its pid
 * among the scratch's, so scratch_free() ends it); file NULL: SLOW/journal */
struct Scratch; /* scratch.h */
pid_t harness_scratch_stuck_in_fsync(Harness *h, struct Scratch *s, const char *cgroup, const char *file,
                                     const char *comm);
/* Until the task is in state D, bounded (3 s); fails the test otherwise */
void harness_assert_task_in_state_d(pid_t pid);
/* With dirty data held: does syncfs() of slowfs wait for it? Probes with a
 * child process (left blocked until release when it does). Kernels with
 * SB_I_NO_DATA_INTEGRITY on FUSE (6.18) do not wait. */
bool harness_slowfs_syncfs_blocks(Harness *h, int within_ms);
/* 1 MiB dirty on slowfs, held, and syncfs() waiting for it: every flush
 * stalls until harness_slowfs_release(). False (released again) on a
 * kernel where syncfs() does not wait: the case skips. */
bool harness_slowfs_stall_flushes(Harness *h);

/* Runs a program with a timeout, capturing stdout. Returns the wait status
 * (or -1 on timeout, the child is then killed). */
int harness_run(char **argv, int timeout_ms, char **ret_stdout);

/* Starts a program in the background with stdout to a pipe (*ret_stdout_fd). */
pid_t harness_spawn_bg(char **argv, int *ret_stdout_fd);
/* Waits for a background program; returns wait status or -1 on timeout (then killed). */
int harness_wait_pid(pid_t pid, int timeout_ms);
/* Reads everything from fd until EOF and closes it. */
char *harness_read_all(int fd);

/* Runs fridgectl with ARGS as uid/gid 65534 (setpriv) against the bus;
 * returns the wait status, output (stdout and stderr) in *ret_output.
 * Needs HarnessOptions.open_bus. */
int harness_fridgectl_as_nobody(Harness *h, char **ret_output, const char *const *args);

/* The program at `path` (the build tree's) as another user can run it:
 * `path` itself where every directory above it lets others through, else
 * a copy in a 0755 directory of this process's under /tmp (made once,
 * removed at exit). A clone in root's home (0700 on Debian) keeps uid
 * 65534 out of the build tree. */
const char *harness_exe_for_others(const char *path);

/* An attacker (bus-flood.c) run as `uid`/`uid` through setpriv, in the
 * cgroup whose cgroup.procs is `procs` (NULL: the test's own): it calls
 * METHOD (HoldClass late, Inhibit block) COUNT times on each of CONNECTIONS
 * connections, `how`: "pipelined" (all sent before any answer is read),
 * "sequential" (one after the other) or "rounds" (8 one after the other,
 * the rest pipelined, each connection closed before the next), and keeps what it got until
 * harness_flood_end(). */
typedef struct HarnessFlood {
        pid_t pid;
        int stdin_fd, stdout_fd;
} HarnessFlood;
HarnessFlood harness_flood_start(Harness *h, unsigned uid, const char *procs, const char *method, unsigned count,
                                 unsigned connections, const char *how);
/* Its tally, "NAME N" a line ("ok N" for replies), once every answer is in */
char *harness_flood_result(HarnessFlood *f, int timeout_ms);
/* N of "NAME N" in a tally; 0 when absent */
unsigned harness_flood_count(const char *tally, const char *name);
/* Lets it go (its connections and fds go with it); its wait status */
int harness_flood_end(HarnessFlood *f);

/* fridgectl --bus-address=… --no-progress W1 [W2 [W3]] as root: the exit
 * status (-1: killed or timed out), output in *ret_out (may be NULL) */
int harness_fridgectl(Harness *h, int timeout_ms, char **ret_out, const char *w1, const char *w2, const char *w3);
/* harness_fridgectl_as_nobody()'s exit code, which it must have */
int harness_fridgectl_nobody_exit(Harness *h, char **ret_output, const char *const *args);
/* fridgectl ARGS as nobody exits 4 with AccessDenied, saying `says` */
void harness_expect_denied_as_nobody(Harness *h, const char *const *args, const char *says);

/* The scratch cgroups and the harness both: why a test needing them is
 * skipped here, or NULL */
const char *harness_scratch_skip_reason(void);

/* The logind stand-in (HarnessOptions.logind) */
char *harness_logind_log(Harness *h);
/* Polls (bounded) until the stand-in's log has a line equal to `line`. */
bool harness_wait_logind_line(Harness *h, const char *line, int timeout_ms);
/* "WHO MODE" of each inhibitor the stand-in holds, one a line. */
char *harness_logind_inhibitors(Harness *h);
/* Polls (bounded) until `who` holds (or, !held, no longer holds) a delay lock. */
bool harness_wait_logind_delay(Harness *h, const char *who, bool held, int timeout_ms);
/* Calls the stand-in's METHOD(false) (Suspend, Hibernate, HybridSleep) as a
 * third party would (systemctl suspend); 0 or -1 with error and message. */
int harness_logind_sleep(Harness *h, const char *method, char **ret_error, char **ret_message);

/* The fixture of cases that need nothing but a harness (f->h, which the
 * case starts); the teardown frees it, after printing fridged's log when
 * the case failed. */
typedef struct HarnessFixture {
        Harness *h;
} HarnessFixture;
void harness_fixture_setup(HarnessFixture *f, gconstpointer data);
void harness_fixture_teardown(HarnessFixture *f, gconstpointer data);

/* Environment-provided paths (NULL when unset). */
const char *harness_env(const char *name);
