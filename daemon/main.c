/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "bus.h"
#include "cgroups.h"
#include "conf-files.h"
#include "config.h"
#include "fileio.h"
#include "fridge-config.h"
#include "fridged-options.h"
#include "ledger.h"
#include "log.h"
#include "logind.h"
#include "manager.h"
#include "power-saved.h"
#include "time-util.h"
#include "util.h"

typedef struct Args {
        const char *bus_kind; /* "system" or "session" */
        const char *bus_address;
        const char *sysfs_root;
        const char *proc_root;
        const char *config_root; /* NULL: the built-in directories */
        const char *config_dir;  /* NULL: the search path's */
        const char *vendor_dir;
        const char *cgroup_root;
        const char *state_dir;
        const char *persistent_dir;
        const char *sleep_conf_root;
        bool thaw_all;
} Args;

static void help(void) {
        printf("Usage: fridged [OPTIONS]\n\n"
               "Suspend orchestration daemon: owns %s on the system bus.\n\n", FRIDGE_BUS_NAME);
        fridged_options_help(stdout);
        printf("\nSIGHUP (systemctl reload fridged) reloads fridge.conf, classes.d and sleep.conf;\n"
               "a cycle already running keeps the settings it started with.\n");
}

static int parse_args(int argc, char *argv[], Args *a) {
        struct option longopts[FRIDGED_OPTIONS_MAX + 1];
        char shortopts[2 * FRIDGED_OPTIONS_MAX + 1];
        fridged_options_getopt(longopts, shortopts);
        int c;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) >= 0) {
                switch (c) {
                case FRIDGED_OPTION_BUS:
                        if (strcmp(optarg, "system") != 0 && strcmp(optarg, "session") != 0) {
                                log_error("--bus must be system or session, not '%s'", optarg);
                                return -EINVAL;
                        }
                        a->bus_kind = optarg;
                        break;
                case FRIDGED_OPTION_BUS_ADDRESS:     a->bus_address = optarg; break;
                case FRIDGED_OPTION_SYSFS_ROOT:      a->sysfs_root = optarg; break;
                case FRIDGED_OPTION_PROC_ROOT:       a->proc_root = optarg; break;
                case FRIDGED_OPTION_CONFIG_ROOT:     a->config_root = optarg; break;
                case FRIDGED_OPTION_CONFIG_DIR:      a->config_dir = optarg; break;
                case FRIDGED_OPTION_VENDOR_DIR:      a->vendor_dir = optarg; break;
                case FRIDGED_OPTION_CGROUP_ROOT:     a->cgroup_root = optarg; break;
                case FRIDGED_OPTION_STATE_DIR:       a->state_dir = optarg; break;
                case FRIDGED_OPTION_PERSISTENT_DIR:  a->persistent_dir = optarg; break;
                case FRIDGED_OPTION_SLEEP_CONF_ROOT: a->sleep_conf_root = optarg; break;
                case FRIDGED_OPTION_THAW_ALL:        a->thaw_all = true; break;
                case FRIDGED_OPTION_VERBOSE:         log_set_max_level(LOG_DEBUG); break;
                case FRIDGED_OPTION_HELP:            help(); return 0;
                case FRIDGED_OPTION_VERSION:         printf("fridged %s\n", FRIDGE_VERSION); return 0;
                default:                             return -EINVAL;
                }
        }
        if (optind < argc) {
                log_error("Unexpected argument '%s'; see --help", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

static int bus_connect(const Args *a, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        if (a->bus_address) {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, a->bus_address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, true);
                if (r >= 0)
                        r = sd_bus_start(bus);
        } else if (strcmp(a->bus_kind, "session") == 0)
                r = sd_bus_open_user(&bus);
        else
                r = sd_bus_open_system(&bus);
        if (r < 0) {
                sd_bus_unref(bus);
                return log_error_errno(r, "Failed to connect to the %s bus: %m",
                                       a->bus_address ? a->bus_address : a->bus_kind);
        }
        *ret = bus;
        return 0;
}

typedef struct Daemon {
        char **config_dirs;     /* fridge's search path, highest priority first */
        sd_event *event;
        sd_bus *bus;
        Manager *manager;
        Bus *bus_object;
        Logind *logind;
} Daemon;

static int on_name_acquired(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Daemon *d = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        if (e) {
                log_error("Failed to own %s: %s", FRIDGE_BUS_NAME, e->message);
                /* the bus policy says no (a non-root fridged), or another owns it */
                return sd_event_exit(d->event,
                                     sd_bus_error_has_name(e, SD_BUS_ERROR_ACCESS_DENIED) ? -EACCES : -EEXIST);
        }
        /* Clients watching across the restart learn how the last cycle ended */
        manager_report_interrupted(d->manager);
        log_info("fridged %s ready on %s", FRIDGE_VERSION, FRIDGE_BUS_NAME);
        (void) sd_notify(false, "READY=1\nSTATUS=Idle.");
        return 0;
}

/* Without its bus nobody can reach fridged, and a cycle cannot report:
 * thaw, and exit non-zero so that Restart=on-failure brings it back (the
 * next start reports the cut cycle as Interrupted) */
static int on_bus_lost(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Daemon *d = userdata;
        log_error("The bus connection was lost; thawing and exiting so that fridged is restarted");
        manager_shutdown(d->manager, true);
        return sd_event_exit(d->event, -ECONNRESET);
}

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;
        log_info("Received %s, stopping", strsignal((int) si->ssi_signo));
        (void) sd_notify(false, "STOPPING=1");
        manager_shutdown(d->manager, false);
        (void) sd_bus_flush(d->bus);
        return sd_event_exit(d->event, 0);
}

/* SIGHUP (systemctl reload): fridge.conf and classes.d read again; with
 * anything wrong in them, the configuration in effect stays */
static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;
        g_autofree char *reloading = g_strdup_printf("RELOADING=1\nSTATUS=Reloading the configuration.\n"
                                                     "MONOTONIC_USEC=%" G_GUINT64_FORMAT, now(CLOCK_MONOTONIC));
        (void) sd_notify(false, reloading);
        log_info("Received SIGHUP, reloading the configuration");
        Config *config = NULL;
        unsigned problems = 0;
        int r = config_load(d->config_dirs, &config, &problems);
        if (r < 0)
                log_error_errno(r, "Reload failed: %m; the configuration in effect is unchanged");
        else
                (void) manager_reload(d->manager, config, problems);
        (void) sd_notify(false, r < 0 ? "READY=1\nSTATUS=Reload failed; see the journal." : "READY=1\nSTATUS=Idle.");
        return 0;
}

/* The bus daemon must keep running for anyone to talk to us after resume */
static void exempt_bus_daemon(Daemon *d) {
        sd_bus_creds *creds = NULL;
        pid_t pid;
        if (sd_bus_get_name_creds(d->bus, "org.freedesktop.DBus", SD_BUS_CREDS_PID, &creds) >= 0 &&
            sd_bus_creds_get_pid(creds, &pid) >= 0)
                manager_exempt_pid(d->manager, pid, "the bus daemon");
        else
                log_debug("Cannot tell the bus daemon's pid; its cgroup is not exempted by pid");
        sd_bus_creds_unref(creds);
}

/* Thawing opens files: never let a low soft limit stand between a frozen
 * cgroup and its thaw */
static void raise_fd_limit(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

static int daemon_setup(Daemon *d, const Args *a) {
        g_autoptr(Config) config = NULL;
        raise_fd_limit();
        int r = conf_fridge_dirs(a->config_root, a->config_dir, a->vendor_dir, &d->config_dirs);
        if (r < 0)
                return log_error_errno(r, "Failed to make the configuration's search path: %m");
        r = config_load(d->config_dirs, &config, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to load the configuration: %m");

        r = sd_event_default(&d->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");
        /* Block before any thread starts so workers inherit the mask */
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        (void) sd_event_add_signal(d->event, NULL, SIGTERM, on_terminate, d);
        (void) sd_event_add_signal(d->event, NULL, SIGINT, on_terminate, d);
        (void) sd_event_add_signal(d->event, NULL, SIGHUP, on_reload, d);
        (void) sd_event_set_watchdog(d->event, true);

        g_auto(GStrv) class_dirs = g_new0(char *, g_strv_length(d->config_dirs) + 1);
        for (size_t i = 0; d->config_dirs[i]; i++)
                class_dirs[i] = g_build_filename(d->config_dirs[i], "classes.d", NULL);
        ManagerParams p = { .event = d->event, .sysfs_root = a->sysfs_root, .proc_root = a->proc_root,
                            .cgroup_root = a->cgroup_root, .state_dir = a->state_dir,
                            .persistent_dir = a->persistent_dir,
                            .sleep_conf_root = a->sleep_conf_root,
                            .class_dirs = (const char *const *) class_dirs, .config = g_steal_pointer(&config) };
        r = manager_new(&p, &d->manager); /* takes the config, even when it fails */
        if (r < 0)
                return r;

        r = bus_connect(a, &d->bus);
        if (r < 0)
                return r;
        r = sd_bus_match_signal(d->bus, NULL, "org.freedesktop.DBus.Local", NULL, "org.freedesktop.DBus.Local",
                                "Disconnected", on_bus_lost, d);
        if (r < 0)
                return log_error_errno(r, "Failed to watch for the end of the bus connection: %m");
        /* the fallback: sd-bus ends the loop with EXIT_FAILURE (> 0) */
        (void) sd_bus_set_exit_on_disconnect(d->bus, true);
        r = sd_bus_attach_event(d->bus, d->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        r = bus_new(d->bus, d->manager, &d->bus_object);
        if (r < 0)
                return r;
        exempt_bus_daemon(d);
        r = logind_new(d->bus, manager_on_prepare_for_sleep, d->manager, &d->logind);
        if (r < 0)
                return r;
        manager_set_logind(d->manager, d->logind);
        r = sd_bus_request_name_async(d->bus, NULL, FRIDGE_BUS_NAME, 0, on_name_acquired, d);
        if (r < 0)
                return log_error_errno(r, "Failed to request %s: %m", FRIDGE_BUS_NAME);
        return 0;
}

static void daemon_done(Daemon *d) {
        bus_free(d->bus_object);
        if (d->manager)
                manager_set_logind(d->manager, NULL);
        logind_free(d->logind);
        manager_free(d->manager);
        sd_bus_flush_close_unref(d->bus);
        sd_event_unref(d->event);
        strv_free(d->config_dirs);
}

/* The /sys/power knobs a cycle killed in its kernel phase had changed */
static int restore_kernel_settings(const Args *a) {
        _cleanup_close_ int state_fd = open(a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0 && errno == ENOENT)
                return 0;
        if (state_fd < 0)
                return log_error_errno(-errno, "Cannot open %s: %m", a->state_dir);
        _cleanup_close_ int sysfs_fd = root_open(a->sysfs_root);
        if (sysfs_fd < 0)
                return log_error_errno(sysfs_fd, "Cannot open the sysfs root %s: %m", a->sysfs_root);
        return power_saved_restore(state_fd, sysfs_fd);
}

static int thaw_ledger(const Args *a) {
        g_autoptr(Ledger) ledger = NULL;
        g_autofree char *found = NULL;
        const char *root = a->cgroup_root;
        int r;

        if (!root) {
                _cleanup_close_ int proc_fd = root_open(a->proc_root);
                if (proc_fd < 0 || (r = cgroups_find_mount(proc_fd, &found)) < 0) {
                        log_info("No cgroup v2 mount: nothing to thaw");
                        return 0;
                }
                root = found;
        }
        _cleanup_close_ int cgroup_fd = root_open(root);
        if (cgroup_fd < 0)
                return log_error_errno(cgroup_fd, "Cannot open the cgroup root %s: %m", root);
        r = ledger_open(a->state_dir, &ledger);
        if (r < 0)
                return log_error_errno(r, "Cannot open the ledger in %s: %m", a->state_dir);
        r = ledger_thaw_all(ledger, cgroup_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to thaw from the ledger: %m");
        g_autofree char *msg = g_strdup_printf("Thawed %d cgroups from the ledger", r);
        g_autofree char *count = g_strdup_printf("FRIDGE_THAWED=%d", r);
        log_struct_event(LOG_INFO, FRIDGE_MESSAGE_LEDGER_THAW, msg, count, NULL);
        return 0;
}

/* --thaw-all: for ExecStopPost=, after a crash or a kill. The cgroups are
 * thawed whatever became of the kernel settings. */
static int thaw_all(const Args *a) {
        int restored = restore_kernel_settings(a);
        int r = thaw_ledger(a);
        return r < 0 ? r : restored < 0 ? restored : 0;
}

int main(int argc, char *argv[]) {
        Args args = { .bus_kind = "system", .sysfs_root = "/", .proc_root = "/proc",
                      .state_dir = "/run/fridge", .persistent_dir = "/var/lib/fridge" };
        int r = parse_args(argc, argv, &args);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        if (args.thaw_all)
                return thaw_all(&args) < 0 ? 1 : 0;

        Daemon d = {};
        r = daemon_setup(&d, &args);
        if (r >= 0)
                r = sd_event_loop(d.event);
        daemon_done(&d);
        if (r < 0)
                log_error_errno(r, "fridged failed: %m");
        /* > 0: sd-bus ended the loop as the connection went */
        return r != 0 ? 1 : 0;
}
