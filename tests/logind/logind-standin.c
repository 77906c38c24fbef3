/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * logind-standin: org.freedesktop.login1 on a private test bus, enough of
 * it to drive fridged's logind driver and the sleep hook end to end on
 * fakesys, as logind and systemd-sleep would on a real machine:
 *
 *   logind-standin --bus-address=ADDRESS --sysfs-root=DIR --log=FILE
 *                  [--delay-max-ms=5000] [--sleep-conf=FILE] -- HOOK [ARGS...]
 *
 * Manager.Inhibit(what, who, why, mode) → h: the caller gets the write end
 * of a pipe; the inhibitor lasts until every copy of it is closed.
 * Manager.ListInhibitors() → a(ssssuu): what, who, why, mode, and the
 * holder's uid and pid.
 * Manager.SuspendWithFlags(t) (and Hibernate…, HybridSleep…) as below, but
 * with flag 1 (SD_LOGIND_ROOT_CHECK_INHIBITORS) refused while a block
 * inhibitor is held, as logind refuses root then; logged "sleep KIND
 * flags=N". (Stricter than logind, which passes over the inhibitors of the
 * caller's own uid.) A caller other than root is refused while a block
 * inhibitor of another uid is held, as logind refuses it when polkit does
 * not grant the ignore-inhibit action; logged "refused KIND uid=N".
 * Manager.Suspend(b) / Hibernate(b) / HybridSleep(b): answer at once, then
 * emit PrepareForSleep(true), wait for the delay inhibitors to close
 * (at most --delay-max-ms, like InhibitDelayMaxSec), run `HOOK ARGS pre
 * KIND` with SYSTEMD_SLEEP_ACTION=KIND and DBUS_SYSTEM_BUS_ADDRESS=ADDRESS,
 * write mem or disk to DIR/sys/power/state, run `HOOK ARGS post KIND`,
 * emit PrepareForSleep(false). A second sleep meanwhile is refused.
 *
 * With --sleep-conf, systemd-sleep's own settings from FILE (one
 * sleep.conf, [Sleep] keys only) are obeyed as systemd-sleep does: before
 * the pre hook, the first of HibernateMode= goes to sys/power/disk for a
 * hibernation and the first of MemorySleepMode= (systemd v254 and later)
 * to sys/power/mem_sleep for a suspend; the suspend's state word is the
 * first of SuspendState=.
 *
 * Every step is appended to FILE, one line each, so tests can check the
 * order: "inhibit WHO MODE", "released WHO MODE", "sleep KIND",
 * "prepare-for-sleep true", "delay-done N-left", "mode FILE VALUE ok|ERRNO",
 * "hook pre KIND STATUS",
 * "state VALUE ok|ERRNO", "hook post KIND STATUS", "prepare-for-sleep false".
 * Prints READY on stdout once it owns the name.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "standin.h"

#define PATH      "/org/freedesktop/login1"
#define INTERFACE "org.freedesktop.login1.Manager"
#define MAX_INHIBITORS 32

typedef struct Inhibitor {
        char *what, *who, *why, *mode;
        uid_t uid;
        pid_t pid;
        sd_event_source *source; /* on the read end: hang-up = released */
} Inhibitor;

static Inhibitor inhibitors[MAX_INHIBITORS];
static sd_event *event;
static sd_bus *bus;
static const char *log_path, *sysfs_root, *address, *sleep_conf;
static char **hook_argv;
static unsigned delay_max_ms = 5000;
static const char *sleeping_kind; /* NULL: idle */
static sd_event_source *delay_timer;
static sd_event_source *hook_child;

static void logf_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_line(const char *fmt, ...) {
        FILE *f = fopen(log_path, "ae");
        if (!f)
                return;
        va_list ap;
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fputc('\n', f);
        fclose(f);
}

static unsigned held(const char *mode) {
        unsigned n = 0;
        for (int i = 0; i < MAX_INHIBITORS; i++)
                n += inhibitors[i].source && strcmp(inhibitors[i].mode, mode) == 0;
        return n;
}

static unsigned delays_held(void) {
        return held("delay");
}

static void run_hook(const char *when);
static void write_modes(void);

static void delay_done(void) {
        if (!sleeping_kind || !delay_timer)
                return;
        delay_timer = sd_event_source_disable_unref(delay_timer);
        logf_line("delay-done %u-left", delays_held());
        write_modes();
        run_hook("pre");
}

static int on_inhibitor_hup(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Inhibitor *in = userdata;
        logf_line("released %s %s", in->who, in->mode);
        in->source = sd_event_source_disable_unref(in->source);
        free(in->what), free(in->who), free(in->why), free(in->mode);
        *in = (Inhibitor) {};
        if (delays_held() == 0)
                delay_done();
        return 0;
}

static void caller(sd_bus_message *m, uid_t *ret_uid, pid_t *ret_pid) {
        sd_bus_creds *creds = NULL;
        *ret_uid = 0, *ret_pid = 0;
        if (sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID, &creds) >= 0) {
                (void) sd_bus_creds_get_euid(creds, ret_uid);
                (void) sd_bus_creds_get_pid(creds, ret_pid);
        }
        sd_bus_creds_unref(creds);
}

/* Block inhibitors held by a uid other than `uid` */
static unsigned blocks_of_others(uid_t uid) {
        unsigned n = 0;
        for (int i = 0; i < MAX_INHIBITORS; i++)
                n += inhibitors[i].source && strcmp(inhibitors[i].mode, "block") == 0 && inhibitors[i].uid != uid;
        return n;
}

static int method_inhibit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *what, *who, *why, *mode;
        int p[2], r = sd_bus_message_read(m, "ssss", &what, &who, &why, &mode);
        if (r < 0)
                return r;
        if (strcmp(mode, "delay") != 0 && strcmp(mode, "block") != 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "mode must be delay or block");
        Inhibitor *in = NULL;
        for (int i = 0; i < MAX_INHIBITORS && !in; i++)
                if (!inhibitors[i].source)
                        in = &inhibitors[i];
        if (!in || pipe2(p, O_CLOEXEC) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_LIMITS_EXCEEDED, "too many inhibitors");
        /* Nobody writes: the read end turns readable (EOF) when the last
         * write end is closed */
        r = sd_event_add_io(event, &in->source, p[0], EPOLLIN, on_inhibitor_hup, in);
        if (r < 0) {
                close(p[0]), close(p[1]);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(in->source, 1);
        in->what = strdup(what), in->who = strdup(who), in->why = strdup(why), in->mode = strdup(mode);
        caller(m, &in->uid, &in->pid);
        logf_line("inhibit %s %s", who, mode);
        r = sd_bus_reply_method_return(m, "h", p[1]);
        close(p[1]);
        return r;
}

static int method_list_inhibitors(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        sd_bus_message *reply = NULL;
        int r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ssssuu)");
        for (int i = 0; r >= 0 && i < MAX_INHIBITORS; i++)
                if (inhibitors[i].source)
                        r = sd_bus_message_append(reply, "(ssssuu)", inhibitors[i].what, inhibitors[i].who,
                                                  inhibitors[i].why, inhibitors[i].mode,
                                                  (uint32_t) inhibitors[i].uid, (uint32_t) inhibitors[i].pid);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

static void emit_prepare(int start) {
        logf_line("prepare-for-sleep %s", start ? "true" : "false");
        (void) sd_bus_emit_signal(bus, PATH, INTERFACE, "PrepareForSleep", "b", start);
        (void) sd_bus_flush(bus);
}

/* The first word of KEY= in --sleep-conf (a later assignment wins), or NULL */
static char *sleep_conf_word(const char *key) {
        FILE *f = sleep_conf ? fopen(sleep_conf, "re") : NULL;
        char line[512], *word = NULL;
        size_t n = strlen(key);
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, key, n) == 0 && line[n] == '=') {
                        free(word);
                        char *v = line + n + 1;
                        v[strcspn(v, " \t\n")] = 0;
                        word = *v ? strdup(v) : NULL;
                }
        if (f)
                fclose(f);
        return word;
}

/* errno of writing value to sys/power/FILE, 0 when it worked */
static int write_power(const char *file, const char *value) {
        char path[4096];
        snprintf(path, sizeof path, "%s/sys/power/%s", sysfs_root, file);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        int e = fd < 0 || write(fd, value, strlen(value)) < 0 ? errno : 0;
        if (fd >= 0)
                close(fd);
        return e;
}

/* What systemd-sleep does before the pre hook */
static void write_modes(void) {
        int suspend = strcmp(sleeping_kind, "suspend") == 0;
        const char *file = suspend ? "mem_sleep" : "disk";
        char *mode = sleep_conf_word(suspend ? "MemorySleepMode" : "HibernateMode");
        if (!mode)
                return;
        int e = write_power(file, mode);
        logf_line("mode %s %s %s", file, mode, e ? strerror(e) : "ok");
        free(mode);
}

/* What systemd-sleep does between the hooks */
static void write_state(void) {
        int suspend = strcmp(sleeping_kind, "suspend") == 0;
        char *configured = suspend ? sleep_conf_word("SuspendState") : NULL;
        const char *value = configured ? configured : suspend ? "mem" : "disk";
        int e = write_power("state", value);
        logf_line("state %s %s", value, e ? strerror(e) : "ok");
        free(configured);
}

static int on_hook_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        const char *when = userdata;
        int status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
        logf_line("hook %s %s %d", when, sleeping_kind, status);
        hook_child = sd_event_source_unref(hook_child);
        if (strcmp(when, "pre") == 0) {
                write_state();
                run_hook("post");
                return 0;
        }
        emit_prepare(0);
        sleeping_kind = NULL;
        return 0;
}

static void run_hook(const char *when) {
        int n = 0;
        while (hook_argv[n])
                n++;
        pid_t pid = fork();
        if (pid == 0) {
                char **argv = calloc((size_t) n + 3, sizeof(char *));
                memcpy(argv, hook_argv, (size_t) n * sizeof(char *));
                argv[n] = (char *) when;
                argv[n + 1] = (char *) sleeping_kind;
                setenv("SYSTEMD_SLEEP_ACTION", sleeping_kind, 1);
                setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1);
                /* both to one place, as systemd-sleep's to the journal
                 * (stdout is the pipe READY went to, long closed) */
                (void) dup2(STDERR_FILENO, STDOUT_FILENO);
                execvp(argv[0], argv);
                _exit(127);
        }
        if (pid < 0 || sd_event_add_child(event, &hook_child, pid, WEXITED, on_hook_exit, (void *) when) < 0) {
                logf_line("hook %s %s cannot-run", when, sleeping_kind);
                emit_prepare(0);
                sleeping_kind = NULL;
        }
}

static int on_delay_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        delay_done();
        return 0;
}

static int start_sleep(sd_bus_message *m, const char *kind, sd_bus_error *error) {
        bool with_flags = strstr(sd_bus_message_get_member(m), "WithFlags") != NULL;
        int interactive;
        uint64_t flags = 0;
        int r = with_flags ? sd_bus_message_read(m, "t", &flags) : sd_bus_message_read(m, "b", &interactive);
        if (r < 0)
                return r;
        if (sleeping_kind)
                return sd_bus_error_set(error, "org.freedesktop.login1.OperationInProgress",
                                        "There's already a shutdown or sleep operation in progress");
        uid_t uid;
        pid_t pid;
        caller(m, &uid, &pid);
        if (uid != 0 && blocks_of_others(uid) > 0) {
                logf_line("refused %s uid=%u", kind, (unsigned) uid);
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Operation denied due to active block inhibitor");
        }
        if ((flags & 1) && held("block") > 0) {
                logf_line("refused %s flags=%llu", kind, (unsigned long long) flags);
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Operation denied due to active block inhibitor");
        }
        sleeping_kind = kind;
        if (with_flags)
                logf_line("sleep %s flags=%llu", kind, (unsigned long long) flags);
        else
                logf_line("sleep %s", kind);
        r = sd_bus_reply_method_return(m, NULL);
        emit_prepare(1);
        (void) sd_event_add_time_relative(event, &delay_timer, CLOCK_MONOTONIC,
                                          delays_held() ? (uint64_t) delay_max_ms * 1000 : 0, 0,
                                          on_delay_timeout, NULL);
        return r;
}

static int method_suspend(sd_bus_message *m, void *u, sd_bus_error *e) { return start_sleep(m, "suspend", e); }
static int method_hibernate(sd_bus_message *m, void *u, sd_bus_error *e) { return start_sleep(m, "hibernate", e); }
static int method_hybrid(sd_bus_message *m, void *u, sd_bus_error *e) { return start_sleep(m, "hybrid-sleep", e); }

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Inhibit", "ssss", "h", method_inhibit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ListInhibitors", "", "a(ssssuu)", method_list_inhibitors, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Suspend", "b", "", method_suspend, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Hibernate", "b", "", method_hibernate, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("HybridSleep", "b", "", method_hybrid, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("SuspendWithFlags", "t", "", method_suspend, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("HibernateWithFlags", "t", "", method_hibernate, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("HybridSleepWithFlags", "t", "", method_hybrid, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL("PrepareForSleep", "b", 0),
        SD_BUS_VTABLE_END,
};

static int parse_args(int argc, char **argv) {
        static const struct option opts[] = {
                { "bus-address", required_argument, NULL, 'a' },
                { "sysfs-root", required_argument, NULL, 's' },
                { "log", required_argument, NULL, 'l' },
                { "delay-max-ms", required_argument, NULL, 'd' },
                { "sleep-conf", required_argument, NULL, 'c' },
                {}
        };
        int c;
        while ((c = getopt_long(argc, argv, "+", opts, NULL)) >= 0)
                switch (c) {
                case 'a': address = optarg; break;
                case 's': sysfs_root = optarg; break;
                case 'l': log_path = optarg; break;
                case 'd': delay_max_ms = (unsigned) strtoul(optarg, NULL, 10); break;
                case 'c': sleep_conf = optarg; break;
                default: return -EINVAL;
                }
        hook_argv = argv + optind;
        return address && sysfs_root && log_path && hook_argv[0] ? 0 : -EINVAL;
}

int main(int argc, char **argv) {
        if (parse_args(argc, argv) < 0) {
                fprintf(stderr, "usage: logind-standin --bus-address=ADDRESS --sysfs-root=DIR --log=FILE "
                                "[--delay-max-ms=MS] [--sleep-conf=FILE] -- HOOK [ARGS...]\n");
                return 2;
        }
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigprocmask(SIG_BLOCK, &mask, NULL); /* for sd_event_add_child */

        /* the default loop, which standin_serve runs: the hook's child sources go there too */
        int r = sd_event_default(&event);
        if (r < 0) {
                fprintf(stderr, "logind-standin: %s\n", strerror(-r));
                return 1;
        }
        r = standin_serve("logind-standin", address, "org.freedesktop.login1", PATH, INTERFACE, manager_vtable, &bus);
        sd_event_unref(event);
        return r;
}
