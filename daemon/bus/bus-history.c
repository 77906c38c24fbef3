/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ListCycles: the history, newest first, as each caller may see it: root
 * and callers polkit allows io.fridge.history (asked without interaction:
 * a list is no reason for a password prompt) see every cycle, anyone else
 * the cycles they started. */
#include "bus-internal.h"
#include "history.h"
#include "util.h"

#define HISTORY_ENTRY_TYPE "a{sv}"

static int append_warnings(sd_bus_message *reply, char **warnings) {
        int r = sd_bus_message_open_container(reply, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", "warnings");
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_append_strv(reply, warnings);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* The image write's keys, from history.c's table */
static int append_image(sd_bus_message *reply, const HistoryCycle *c) {
        for (size_t i = 0; i < history_image_keys_count; i++) {
                const HistoryImageKey *k = &history_image_keys[i];
                const void *field = (const char *) c + k->offset;
                const char signature[2] = { k->type, 0 };
                int r = k->type == 's' ? sd_bus_message_append(reply, "{sv}", k->bus_key, signature,
                                                                strempty(*(char *const *) field))
                                       : sd_bus_message_append(reply, "{sv}", k->bus_key, signature,
                                                                *(const uint64_t *) field);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int append_entry(sd_bus_message *reply, const HistoryCycle *c) {
        int r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(
                reply, "{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}",
                "id", "t", c->id,
                "kind", "s", c->kind,
                "starter", "s", c->starter,
                "uid", "u", (uint32_t) c->uid,
                "pid", "u", (uint32_t) c->pid,
                "start-usec", "t", c->start_usec,
                "end-usec", "t", c->end_usec,
                "result", "s", c->result,
                "error", "s", c->error,
                "phase", "s", c->phase,
                "message", "s", c->message,
                "slept-usec", "t", c->slept_usec,
                "wake-source", "s", c->wake_source);
        if (r < 0)
                return r;
        r = append_warnings(reply, c->warnings);
        if (r >= 0)
                r = append_image(reply, c);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

int bus_method_list_cycles(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        uint32_t max;
        int r = sd_bus_message_read(msg, "u", &max);
        if (r < 0)
                return r;
        const char *const actions[] = { POLKIT_ACTION_HISTORY, NULL };
        PolkitAnswer answer;
        r = polkit_check_all(b->polkit, msg, actions, &answer, error);
        if (r <= 0)
                return r < 0 ? r : 1;
        bool all = answer == POLKIT_ANSWER_YES; /* a challenge is no: nobody is asked for a password */
        uid_t uid;
        pid_t pid;
        bus_caller_creds(msg, &uid, &pid);

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', HISTORY_ENTRY_TYPE);
        if (r < 0)
                return r;
        const History *h = manager_history(b->manager);
        uint32_t sent = 0;
        for (guint i = 0; i < history_count(h) && (max == 0 || sent < max); i++) {
                const HistoryCycle *c = history_get(h, i);
                if (!all && (uid == (uid_t) -1 || c->uid != uid))
                        continue;
                r = append_entry(reply, c);
                if (r < 0)
                        return r;
                sent++;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
