/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bus-flood: an attacker's client for the hardening tests, run as another
 * user through setpriv. Makes COUNT calls of METHOD (HoldClass or Inhibit,
 * with fixed arguments) on each of CONNECTIONS connections, either all
 * sent before any answer is read (pipelined) or one after the other, and
 * prints how they ended, one "NAME N" line each ("ok" for a reply), then
 * "done". Keeps every connection and every fd it got until stdin closes,
 * except in "rounds": the first 8 calls of a connection one after the
 * other, the rest pipelined, and each connection (and what it got) closed
 * before the next one calls.
 *
 *   bus-flood ADDRESS METHOD COUNT CONNECTIONS pipelined|sequential|rounds
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "fridge-config.h"

#define MAX_NAMES 16

static const char *names[MAX_NAMES];
static unsigned counts[MAX_NAMES];

static void count(const char *name) {
        for (int i = 0; i < MAX_NAMES; i++)
                if (!names[i] || strcmp(names[i], name) == 0) {
                        names[i] = names[i] ? names[i] : strdup(name);
                        counts[i]++;
                        return;
                }
}

static int call(sd_bus *bus, const char *method, sd_bus_message **ret) {
        sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                               method);
        if (r >= 0)
                r = strcmp(method, "Inhibit") == 0 ? sd_bus_message_append(m, "sss", "flood", "attack", "block")
                                                   : sd_bus_message_append(m, "sss", "late", "flood", "attack");
        if (r < 0)
                return r;
        *ret = m;
        return 0;
}

/* The answer's name; a reply's fd is kept (dup'd: the message owns its own) */
static bool keep = true;
static int kept[64];            /* a round's fds ("rounds") */
static unsigned n_kept;

/* The round's fds go with its connection */
static void drop_kept(void) {
        for (unsigned i = 0; i < n_kept; i++)
                close(kept[i]);
        n_kept = 0;
}

static bool keep_fd(int fd) {
        int copy = dup(fd);
        if (copy < 0)
                return false;
        if (!keep && n_kept < 64)
                kept[n_kept++] = copy;
        return true;
}

static void tally(sd_bus_message *reply) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int fd;
        if (e) {
                count(e->name);
                return;
        }
        if (sd_bus_message_read(reply, "h", &fd) > 0 && keep_fd(fd))
                count("ok");
        else
                count("unreadable");
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        unsigned *left = userdata;
        tally(reply);
        (*left)--;
        return 0;
}

#define ROUND_SEQUENTIAL 8

static int flood(sd_bus *bus, const char *method, unsigned n, bool pipelined) {
        unsigned left = n;
        for (unsigned i = 0; i < n; i++) {
                sd_bus_message *m = NULL, *reply = NULL;
                int r = call(bus, method, &m);
                if (r >= 0 && pipelined && (keep || i >= ROUND_SEQUENTIAL))
                        r = sd_bus_call_async(bus, NULL, m, on_reply, &left, 120 * 1000000ULL);
                else if (r >= 0) {
                        sd_bus_error e = SD_BUS_ERROR_NULL;
                        r = sd_bus_call(bus, m, 120 * 1000000ULL, &e, &reply);
                        if (r < 0)
                                count(e.name ? e.name : "failed");
                        else
                                tally(reply);
                        sd_bus_error_free(&e);
                        sd_bus_message_unref(reply);
                        left--;
                }
                sd_bus_message_unref(m);
                if (r < 0 && pipelined && (keep || i >= ROUND_SEQUENTIAL))
                        return r;
        }
        while (left > 0) {
                int r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r == 0 && (r = sd_bus_wait(bus, UINT64_MAX)) < 0)
                        return r;
        }
        return 0;
}

int main(int argc, char **argv) {
        if (argc != 6) {
                fprintf(stderr, "usage: bus-flood ADDRESS METHOD COUNT CONNECTIONS pipelined|sequential|rounds\n");
                return 2;
        }
        unsigned n = (unsigned) atoi(argv[3]), conns = (unsigned) atoi(argv[4]);
        keep = strcmp(argv[5], "rounds") != 0;
        bool pipelined = !keep || strcmp(argv[5], "pipelined") == 0;
        sd_bus **buses = calloc(conns, sizeof(sd_bus *));
        for (unsigned c = 0; c < conns; c++) {
                int r = sd_bus_new(&buses[c]);
                if (r >= 0)
                        r = sd_bus_set_address(buses[c], argv[1]);
                if (r >= 0)
                        r = sd_bus_set_bus_client(buses[c], 1);
                if (r >= 0)
                        r = sd_bus_start(buses[c]);
                if (r >= 0)
                        r = flood(buses[c], argv[2], n, pipelined);
                if (r < 0) {
                        fprintf(stderr, "bus-flood: connection %u: %s\n", c, strerror(-r));
                        return 1;
                }
                if (!keep) {
                        buses[c] = sd_bus_flush_close_unref(buses[c]);
                        drop_kept();
                }
        }
        for (int i = 0; i < MAX_NAMES && names[i]; i++)
                printf("%s %u\n", names[i], counts[i]);
        printf("done\n");
        fflush(stdout);
        char c;
        while (read(0, &c, 1) > 0)
                ;
        for (unsigned k = 0; k < conns; k++)
                sd_bus_flush_close_unref(buses[k]);
        free(buses);
        for (int i = 0; i < MAX_NAMES; i++)
                free((char *) names[i]);
        return 0;
}
