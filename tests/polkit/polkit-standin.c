/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * polkit-standin: answers org.freedesktop.PolicyKit1.Authority's
 * CheckAuthorization on a private test bus from a table, for the tests of
 * fridged's authorization where the real polkitd cannot run (it reads its
 * actions from the host's /usr/share/polkit-1 and wants the system bus).
 *
 *   polkit-standin --bus-address=ADDRESS --table=FILE [--log=FILE] [--hold=FILE]
 *
 * FILE: one rule a line, "ACTION UID ANSWER" with ANSWER yes, no or
 * challenge (authentication required); "*" matches any action or uid;
 * the first matching line wins; no match is "no". The subject must be a
 * system-bus-name (what fridged sends); its uid comes from the bus. Each
 * question is appended to the log as "ACTION UID ANSWER FLAGS".
 * While the --hold FILE exists, answers are held (polkit slow, or waiting
 * for an agent): they go out in order once it is removed.
 * Prints READY on stdout once it owns the name.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "standin.h"

static char **rules;
static const char *log_path, *hold_path;

typedef struct Held {
        sd_bus_message *call;
        bool yes, challenge;
} Held;

static Held *held;
static size_t n_held;
static sd_event_source *hold_timer;

static int reply(sd_bus_message *m, bool yes, bool challenge) {
        return sd_bus_reply_method_return(m, "(bba{ss})", yes, challenge, 0);
}

static int on_hold_check(sd_event_source *s, uint64_t usec, void *userdata) {
        if (access(hold_path, F_OK) == 0) {
                int r = sd_event_source_set_time_relative(s, 10000);
                return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        for (size_t i = 0; i < n_held; i++) {
                (void) reply(held[i].call, held[i].yes, held[i].challenge);
                sd_bus_message_unref(held[i].call);
        }
        free(held);
        held = NULL;
        n_held = 0;
        hold_timer = sd_event_source_disable_unref(hold_timer);
        return 0;
}

/* Keeps the call to answer once the hold file is gone */
static int hold(sd_bus_message *m, bool yes, bool challenge) {
        Held *grown = realloc(held, (n_held + 1) * sizeof(Held));
        if (!grown)
                return -ENOMEM;
        held = grown;
        held[n_held++] = (Held) { sd_bus_message_ref(m), yes, challenge };
        int r = 0;
        if (!hold_timer)
                r = sd_event_add_time_relative(sd_bus_get_event(sd_bus_message_get_bus(m)), &hold_timer,
                                               CLOCK_MONOTONIC, 10000, 0, on_hold_check, NULL);
        return r < 0 ? r : 1;   /* answered later */
}

static const char *answer_for(const char *action, uid_t uid) {
        char uid_text[32];
        snprintf(uid_text, sizeof uid_text, "%u", (unsigned) uid);
        for (char **l = rules; l && *l; l++) {
                char a[256], u[32], ans[32];
                if (sscanf(*l, "%255s %31s %31s", a, u, ans) != 3)
                        continue;
                if ((strcmp(a, "*") == 0 || strcmp(a, action) == 0) && (strcmp(u, "*") == 0 || strcmp(u, uid_text) == 0))
                        return strcmp(ans, "yes") == 0 ? "yes" : strcmp(ans, "challenge") == 0 ? "challenge" : "no";
        }
        return "no";
}

/* ("system-bus-name", {"name": <s>}) → the name */
static int read_subject(sd_bus_message *m, const char **ret_name) {
        const char *kind, *key;
        int r = sd_bus_message_enter_container(m, 'r', "sa{sv}");
        if (r < 0 || (r = sd_bus_message_read(m, "s", &kind)) < 0)
                return r;
        if (strcmp(kind, "system-bus-name") != 0)
                return -EPROTO;
        *ret_name = NULL;
        if ((r = sd_bus_message_enter_container(m, 'a', "{sv}")) < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                if ((r = sd_bus_message_read(m, "s", &key)) < 0)
                        return r;
                if (strcmp(key, "name") == 0)
                        r = sd_bus_message_read(m, "v", "s", ret_name);
                else
                        r = sd_bus_message_skip(m, "v");
                if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                        return r;
        }
        if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? r : (*ret_name ? 0 : -EPROTO);
}

static int method_check(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *name, *action, *cancel;
        uint32_t flags;
        uid_t uid;
        sd_bus_creds *creds = NULL;

        int r = read_subject(m, &name);
        if (r < 0)
                return sd_bus_error_set(error, "org.freedesktop.PolicyKit1.Error.Failed", "bad subject");
        if ((r = sd_bus_message_read(m, "s", &action)) < 0 || (r = sd_bus_message_skip(m, "a{ss}")) < 0 ||
            (r = sd_bus_message_read(m, "us", &flags, &cancel)) < 0)
                return r;
        r = sd_bus_get_name_creds(sd_bus_message_get_bus(m), name, SD_BUS_CREDS_EUID, &creds);
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, &uid);
        sd_bus_creds_unref(creds);
        if (r < 0)
                return sd_bus_error_set(error, "org.freedesktop.PolicyKit1.Error.Failed", "unknown subject");

        const char *answer = answer_for(action, uid);
        FILE *f = log_path ? fopen(log_path, "a") : NULL;
        if (f) {
                fprintf(f, "%s %u %s %u\n", action, (unsigned) uid, answer, flags);
                fclose(f);
        }
        bool yes = strcmp(answer, "yes") == 0, challenge = strcmp(answer, "challenge") == 0;
        if (hold_path && access(hold_path, F_OK) == 0)
                return hold(m, yes, challenge);
        return reply(m, yes, challenge);
}

static const sd_bus_vtable authority_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})", method_check,
                      SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

static char **read_rules(const char *path) {
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char **out = calloc(1, sizeof(char *));
        size_t n = 0;
        char *line = NULL;
        size_t cap = 0;
        while (out && getline(&line, &cap, f) > 0) {
                char **grown = realloc(out, (n + 2) * sizeof(char *));
                if (!grown)
                        break;
                out = grown;
                out[n++] = strdup(line);
                out[n] = NULL;
        }
        free(line);
        fclose(f);
        return out;
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "bus-address", required_argument, NULL, 'a' },
                { "table", required_argument, NULL, 't' },
                { "log", required_argument, NULL, 'l' },
                { "hold", required_argument, NULL, 'H' },
                {}
        };
        const char *address = NULL, *table = NULL;
        int c;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0)
                switch (c) {
                case 'a': address = optarg; break;
                case 't': table = optarg; break;
                case 'l': log_path = optarg; break;
                case 'H': hold_path = optarg; break;
                default: return 2;
                }
        if (!address || !table || !(rules = read_rules(table))) {
                fprintf(stderr, "usage: polkit-standin --bus-address=ADDRESS --table=FILE [--log=FILE] [--hold=FILE]\n");
                return 2;
        }

        return standin_serve("polkit-standin", address, "org.freedesktop.PolicyKit1",
                             "/org/freedesktop/PolicyKit1/Authority", "org.freedesktop.PolicyKit1.Authority",
                             authority_vtable, NULL);
}
