/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The running cycle's timeline (timeline.c), fed from the one transition,
 * the freezer, the flush tick and the resume; and the last few finished
 * ones, kept in memory for GetCycleTimeline until the history keeps them
 * on disk. */
#include "manager-internal.h"

#include "history.h"

#include "cgroups.h"
#include "flush.h"
#include "time-util.h"

typedef struct KeptTimeline {
        Timeline *timeline;
        uid_t owner;
} KeptTimeline;

static void kept_timeline_free(KeptTimeline *k) {
        timeline_free(k->timeline);
        g_free(k);
}

void manager_set_client_uid(Manager *m, uid_t uid) {
        m->next_client_uid = uid;
}

static void on_cgroup_event(const char *cgroup, FreezerEvent ev, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        if (!c || !c->timeline)
                return;
        static const TimelineCgroupEvent events[] = {
                [FREEZER_EVENT_FREEZE] = TIMELINE_FREEZE,
                [FREEZER_EVENT_FROZEN] = TIMELINE_FROZEN,
                [FREEZER_EVENT_THAWED] = TIMELINE_THAWED,
        };
        /* D-Bus and the history file carry text: the name as logs show it */
        g_autofree char *shown = cgroups_escape(cgroup);
        const char *stage = manager_cycle_phase(c) == PHASE_FREEZE_LATE ? "late" : "early";
        timeline_cgroup(c->timeline, shown, stage, events[ev], now(CLOCK_MONOTONIC));
}

void manager_timeline_start(Manager *m, Cycle *c) {
        c->owner = m->next_client_uid;
        m->next_client_uid = (uid_t) -1;
        (void) timeline_new(c->id, sleep_kind_to_string(c->kind), c->started_usec, now(CLOCK_MONOTONIC),
                            &c->timeline);
        if (m->freezer)
                freezer_set_observer(m->freezer, on_cgroup_event, m);
}

/* A phase runs from the first state that has it to the first that has
 * another, by the names the Phase property shows (a retry's wait is
 * "retry"); a queued cycle's wait is a bar of its own */
void manager_timeline_transition(Manager *m, CycleState to) {
        const char *name = to == CYCLE_STATE_QUEUED ? "queued" : cycle_state_phase_name(to);
        timeline_phase(m->cycle->timeline, *name ? name : NULL, now(CLOCK_MONOTONIC));
}

void manager_timeline_flush_sample(Manager *m, uint64_t kib) {
        timeline_flush_sample(m->cycle->timeline, kib, now(CLOCK_MONOTONIC));
}

/* The flush's last word: what was left dirty when it returned */
void manager_timeline_flush_end(Manager *m) {
        uint64_t kib;
        if (flush_read_dirty(m->proc_fd, &kib) >= 0)
                manager_timeline_flush_sample(m, kib);
}

/* The finished cycle's timeline joins the kept ones, the oldest going */
void manager_timeline_keep(Manager *m, Cycle *c) {
        timeline_image(c->timeline, c->image.raw_bytes, c->image.written_bytes, c->image.usec);
        timeline_finish(c->timeline, cycle_result_to_string(c->result), now(CLOCK_MONOTONIC));
        if (!m->timelines)
                m->timelines = g_queue_new();
        KeptTimeline *k = g_new0(KeptTimeline, 1);
        k->timeline = g_steal_pointer(&c->timeline);
        k->owner = c->owner;
        g_queue_push_tail(m->timelines, k);
        while (g_queue_get_length(m->timelines) > MANAGER_TIMELINES_KEPT)
                kept_timeline_free(g_queue_pop_head(m->timelines));
}

void manager_timelines_free(Manager *m) {
        if (m->freezer)
                freezer_set_observer(m->freezer, NULL, NULL);
        if (m->timelines)
                g_queue_free_full(g_steal_pointer(&m->timelines), (GDestroyNotify) kept_timeline_free);
}

const Timeline *manager_timeline(const Manager *m, uint64_t id, uid_t *ret_owner) {
        if (m->cycle && m->cycle->id == id && m->cycle->timeline) {
                *ret_owner = m->cycle->owner;
                return m->cycle->timeline;
        }
        for (GList *l = m->timelines ? m->timelines->head : NULL; l; l = l->next) {
                KeptTimeline *k = l->data;
                if (k->timeline->id == id) {
                        *ret_owner = k->owner;
                        return k->timeline;
                }
        }
        return NULL;
}

/* Older cycles', from the history's file: read on the loop as the
 * history's own writes are (a few KiB below /var/lib) */
Timeline *manager_timeline_load(const Manager *m, uint64_t id, uid_t *ret_owner) {
        g_autoptr(GKeyFile) kf = NULL;
        g_autoptr(HistoryCycle) hc = NULL;
        Timeline *t = NULL;
        if (!m->history || history_load(m->history, id, &kf) < 0 || history_cycle_from_keyfile(kf, &hc) < 0)
                return NULL;
        /* An interrupted cycle's file has no timeline ([Timeline] is timeline.c's) */
        if (!g_key_file_has_group(kf, "Timeline") || timeline_from_keyfile(kf, &t) < 0)
                return NULL;
        *ret_owner = hc->uid;
        return t;
}
