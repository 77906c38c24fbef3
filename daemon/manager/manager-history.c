/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: each cycle's entry in the history (history.c), built when
 * the cycle ends, and an interrupted one's at start-up. The manager builds
 * the key file; each module that keeps something of a cycle adds its own
 * group to it. */
#include "manager-internal.h"

#include <errno.h>

#include "history.h"
#include "log.h"

void manager_history_open(Manager *m, const char *persistent_dir) {
        int r = history_open(m->persistent_fd, persistent_dir, m->config->history_max_cycles, &m->history);
        if (r < 0) {
                log_warning_errno(r, "Cannot open the history in %s/history (%m); past cycles will not be kept",
                                  persistent_dir);
                return;
        }
        /* A lost next-cycle-id must not let a new cycle take a kept one's id */
        if (history_count(m->history) > 0 && history_get(m->history, 0)->id >= m->next_id)
                m->next_id = history_get(m->history, 0)->id + 1;
}

const History *manager_history(const Manager *m) {
        return m->history;
}

/* `kf` carries the groups of the modules beside [Cycle] */
static void history_store(Manager *m, const HistoryCycle *entry, GKeyFile *kf) {
        int r = history_add(m->history, entry, kf, m->writes);
        if (r < 0)
                log_warning_errno(r, "Cannot add cycle %" G_GUINT64_FORMAT " to the history: %m", entry->id);
}

static const char *failing_phase(const Cycle *c) {
        if (c->result == RESULT_DONE || c->result == RESULT_DRY_RUN)
                return "";
        if (c->ended_in >= 0)
                return cycle_state_phase_name(c->ended_in);
        return c->error == FRIDGE_ERROR_THAW_FAILED ? phase_to_string(PHASE_THAW) : "";
}

void manager_history_add_cycle(Manager *m, const Cycle *c) {
        if (!m->history)
                return;
        bool slept = c->wake_reason != NULL;
        HistoryCycle entry = {
                .id = c->id,
                .kind = (char *) sleep_kind_to_string(c->kind),
                .starter = (char *) (c->by_hook ? HISTORY_STARTER_HOOK : HISTORY_STARTER_CALLER),
                .uid = c->owner,
                .pid = c->client.pid,
                .start_usec = c->started_usec,
                .end_usec = g_get_real_time(),
                .result = (char *) cycle_result_to_string(c->result),
                .error = (char *) fridge_error_name(c->error),
                .phase = (char *) failing_phase(c),
                .message = c->message,
                .slept_usec = slept ? c->slept_usec : 0,
                .wake_source = slept ? c->wake_reason : (char *) "",
                .warnings = c->warnings,
                .image_writer = (char *) c->image.writer,
                .image_raw_bytes = c->image.raw_bytes,
                .image_written_bytes = c->image.written_bytes,
                .image_usec = c->image.usec,
                .image_done_bytes = c->image.done_bytes,
                .image_total_bytes = c->image.total_bytes,
        };
        g_autoptr(GKeyFile) kf = g_key_file_new();
        /* ---- the other groups of the cycle's file ----
         * The timeline's ([Timeline], [Phases], …), kept in memory by
         * manager_timeline_keep() just before; history.c writes [Cycle]
         * and keeps every other group as it is, and history_load() gives
         * the whole file back by cycle id (timeline_from_keyfile()). */
        uid_t owner;
        const Timeline *t = manager_timeline(m, c->id, &owner);
        if (t)
                timeline_to_keyfile(t, kf);
        history_store(m, &entry, kf);
}

void manager_history_add_interrupted(Manager *m, const CycleRecord *rec, const char *message) {
        /* Its only caller, manager_report_interrupted(), has already
         * left out a cycle the history holds */
        if (!m->history)
                return;
        HistoryCycle entry = {
                .id = rec->id,
                .kind = rec->kind,
                .starter = (char *) (rec->by_hook ? HISTORY_STARTER_HOOK : HISTORY_STARTER_CALLER),
                .uid = rec->by_hook ? 0 : rec->starter_uid,
                .pid = rec->starter_pid,
                .start_usec = rec->started_usec,
                .end_usec = 0, /* unknown: when fridged or the machine went down */
                .result = (char *) cycle_result_to_string(RESULT_FAILED),
                .error = (char *) fridge_error_name(FRIDGE_ERROR_INTERRUPTED),
                .phase = rec->phase,
                .message = (char *) message,
        };
        /* nothing but the record is left of it */
        g_autoptr(GKeyFile) kf = g_key_file_new();
        history_store(m, &entry, kf);
}
