/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GetCycleTimeline, and who may see a cycle */
#include "bus-internal.h"
#include "log.h"
#include "util.h"

/* As ListCycles shows cycles: to root, to the uid that started the cycle,
 * and to callers polkit allows io.fridge.history without asking (a
 * picture is no reason for a password prompt). 1: visible; 0: polkit's
 * answer is awaited, the call comes again; < 0 with `error` set. */
int bus_cycle_visible(Bus *b, sd_bus_message *msg, uid_t owner, sd_bus_error *error) {
        uid_t uid;
        pid_t pid;
        bus_caller_creds(msg, &uid, &pid);
        if (uid == 0 || (uid != (uid_t) -1 && uid == owner))
                return 1;
        const char *const actions[] = { POLKIT_ACTION_HISTORY, NULL };
        PolkitAnswer answer;
        int r = polkit_check_all(b->polkit, msg, actions, &answer, error);
        if (r <= 0)
                return r;
        if (answer == POLKIT_ANSWER_YES)
                return 1;
        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                 "only root, the user who started it and users allowed %s may see a cycle",
                                 POLKIT_ACTION_HISTORY);
}

static int append_info(sd_bus_message *reply, const Timeline *t) {
        return sd_bus_message_append(reply, "a{sv}", 11,
                                     "id", "t", t->id,
                                     "kind", "s", t->kind,
                                     "result", "s", t->result,
                                     "start-realtime-usec", "t", t->start_realtime,
                                     "end-usec", "t", t->end,
                                     "slept-usec", "t", t->slept_usec,
                                     "wake-reason", "s", t->wake_reason,
                                     "cgroups-dropped", "u", t->cgroups_dropped,
                                     "image-raw-bytes", "t", t->image_raw_bytes,
                                     "image-written-bytes", "t", t->image_written_bytes,
                                     "image-usec", "t", t->image_usec);
}

static int append_phases(sd_bus_message *reply, const Timeline *t) {
        int r = sd_bus_message_open_container(reply, 'a', "(stt)");
        for (guint i = 0; r >= 0 && i < t->phases->len; i++) {
                const TimelinePhase *p = &g_array_index(t->phases, TimelinePhase, i);
                r = sd_bus_message_append(reply, "(stt)", p->name, p->start, p->end);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int append_cgroups(sd_bus_message *reply, const Timeline *t) {
        int r = sd_bus_message_open_container(reply, 'a', "(ssttt)");
        for (guint i = 0; r >= 0 && i < t->cgroups->len; i++) {
                const TimelineCgroup *c = &g_array_index(t->cgroups, TimelineCgroup, i);
                r = sd_bus_message_append(reply, "(ssttt)", c->name, c->stage, c->freeze, c->frozen, c->thawed);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int append_flush(sd_bus_message *reply, const Timeline *t) {
        int r = sd_bus_message_open_container(reply, 'a', "(tt)");
        for (guint i = 0; r >= 0 && i < t->samples->len; i++) {
                const TimelineSample *s = &g_array_index(t->samples, TimelineSample, i);
                r = sd_bus_message_append(reply, "(tt)", s->at, s->kib);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

int bus_method_get_cycle_timeline(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        uint64_t id;
        uid_t owner;

        int r = sd_bus_message_read(msg, "t", &id);
        if (r < 0)
                return r;
        const Timeline *t = manager_timeline(b->manager, id, &owner);
        g_autoptr(Timeline) stored = t ? NULL : manager_timeline_load(b->manager, id, &owner);
        if (!t)
                t = stored;
        /* With polkit's answer the call is dispatched again, and looks again.
         * A cycle that does not exist is owned by nobody: a caller who may
         * not see others' cycles is refused as for one of theirs, so that
         * the answer does not tell which ids are someone else's. */
        r = bus_cycle_visible(b, msg, t ? owner : (uid_t) -1, error);
        if (r <= 0)
                return r < 0 ? r : 1;
        if (!t)
                return bus_error_setf(error, FRIDGE_ERROR_NO_SUCH_CYCLE,
                                      "cycle %" G_GUINT64_FORMAT " is neither running nor kept in the history", id);

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = append_info(reply, t);
        if (r >= 0)
                r = append_phases(reply, t);
        if (r >= 0)
                r = append_cgroups(reply, t);
        if (r >= 0)
                r = append_flush(reply, t);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
