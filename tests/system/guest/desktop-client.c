/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * desktop-client [--never-release]: what a desktop does around a sleep, on
 * the system bus: it holds a logind delay inhibitor and a fridge delay
 * inhibitor, and on PrepareForSleep(true) and fridge's SleepImminent it
 * "saves its state" for 300 ms and releases both (with --never-release it
 * keeps them). Each event is a line on stdout, stamped with
 * CLOCK_MONOTONIC milliseconds. Exits after PrepareForSleep(false), or
 * after 120 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

typedef struct Client {
        sd_event *event;
        int logind_fd, fridge_fd;
        bool never_release, prepare_seen, imminent_seen, release_armed;
} Client;

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void say(const char *what) {
        printf("%llu %s\n", (unsigned long long) now_ms(), what);
        fflush(stdout);
}

static int inhibit(sd_bus *bus, bool logind, int *ret_fd) {
        sd_bus_message *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int fd, r;
        if (logind)
                r = sd_bus_call_method(bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                                       "org.freedesktop.login1.Manager", "Inhibit", &e, &reply, "ssss", "sleep",
                                       "desktop-client", "saving the session", "delay");
        else
                r = sd_bus_call_method(bus, "io.fridge.Fridge1", "/io/fridge/Fridge1", "io.fridge.Fridge1",
                                       "Inhibit", &e, &reply, "sss", "desktop-client", "saving the session", "delay");
        if (r >= 0 && (r = sd_bus_message_read(reply, "h", &fd)) >= 0)
                *ret_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (r < 0)
                fprintf(stderr, "%s Inhibit: %s\n", logind ? "logind" : "fridge", e.message ? e.message : strerror(-r));
        sd_bus_message_unref(reply);
        sd_bus_error_free(&e);
        return r < 0 ? r : 0;
}

static int on_release(sd_event_source *s, uint64_t usec, void *userdata) {
        Client *c = userdata;
        close(c->logind_fd);
        close(c->fridge_fd);
        c->logind_fd = c->fridge_fd = -1;
        say("released both inhibitors");
        return 0;
}

/* 300 ms of "saving state" once both have been seen */
static void maybe_release(Client *c) {
        if (!c->prepare_seen || !c->imminent_seen || c->release_armed || c->never_release)
                return;
        c->release_armed = true;
        (void) sd_event_add_time_relative(c->event, NULL, CLOCK_MONOTONIC, 300 * 1000, 0, on_release, c);
}

static int on_prepare(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Client *c = userdata;
        int start = 0;
        if (sd_bus_message_read(m, "b", &start) < 0)
                return 0;
        say(start ? "PrepareForSleep(true)" : "PrepareForSleep(false)");
        if (!start)
                return sd_event_exit(c->event, 0);
        c->prepare_seen = true;
        maybe_release(c);
        return 0;
}

static int on_imminent(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Client *c = userdata;
        say("SleepImminent");
        c->imminent_seen = true;
        maybe_release(c);
        return 0;
}

int main(int argc, char **argv) {
        Client c = { .logind_fd = -1, .fridge_fd = -1, .never_release = argc > 1 && !strcmp(argv[1], "--never-release") };
        sd_bus *bus = NULL;
        int r = sd_event_default(&c.event);
        if (r >= 0)
                r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, "org.freedesktop.login1", "/org/freedesktop/login1",
                                        "org.freedesktop.login1.Manager", "PrepareForSleep", on_prepare, &c);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, "io.fridge.Fridge1", "/io/fridge/Fridge1", "io.fridge.Fridge1",
                                        "SleepImminent", on_imminent, &c);
        if (r >= 0)
                r = inhibit(bus, true, &c.logind_fd);
        if (r >= 0)
                r = inhibit(bus, false, &c.fridge_fd);
        if (r >= 0)
                r = sd_bus_attach_event(bus, c.event, 0);
        if (r >= 0)
                r = sd_event_add_time_relative(c.event, NULL, CLOCK_MONOTONIC, 120 * 1000000ULL, 0, NULL, NULL);
        if (r < 0) {
                fprintf(stderr, "desktop-client: %s\n", strerror(-r));
                return 1;
        }
        say("ready");
        r = sd_event_loop(c.event);
        sd_bus_flush_close_unref(bus);
        sd_event_unref(c.event);
        return r < 0 ? 1 : 0;
}
