/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: fridge's own inhibitors, and what their end means for a
 * queued cycle or one waiting for its delay holders. */
#include "manager-internal.h"

#include "log.h"
#include "time-util.h"
#include "util.h"

/* A queued cycle starts once the last block goes; a delay wait ends once
 * the last delay holder it waits for goes */
void manager_on_inhibitor_released(const Inhibitor *i, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;

        if (c && c->state == CYCLE_STATE_QUEUED && !manager_cycle_blocked(m)) {
                log_info("Cycle %" G_GUINT64_FORMAT ": the last block inhibitor is gone; starting", c->id);
                manager_schedule_step(m);
        }
        bool delaying = c && c->state == CYCLE_STATE_DELAYING && c->timer;
        if (delaying && inhibit_count(m->inhibitors, INHIBIT_DELAY, c->delay_before) > 0)
                manager_delay_progress(m);
        else if (delaying) {
                log_info("Cycle %" G_GUINT64_FORMAT ": delay inhibitors released after %.1f ms", c->id,
                         (double) (now(CLOCK_MONOTONIC) - c->delay_start) / USEC_PER_MSEC);
                manager_cycle_work_done(c);
                manager_schedule_step(m);
        }
        if (m->ops && m->ops->inhibitor_released)
                m->ops->inhibitor_released(m->userdata, i->sender);
}

/* Inhibitors and class holds share the caps: each keeps an fd open here,
 * and one user filling the table would lock everyone else out */
int manager_check_lease_caps(const Manager *m, uid_t uid, char **ret_message) {
        unsigned all = inhibit_count_uid(m->inhibitors, (uid_t) -1) + overrides_count_holds(m->overrides, (uid_t) -1);
        if (all >= INHIBITORS_MAX) {
                *ret_message = g_strdup_printf("fridged already keeps %u inhibitors and class holds", all);
                return FRIDGE_ERROR_LIMITS_EXCEEDED;
        }
        if (uid == 0)
                return 0;
        unsigned mine = inhibit_count_uid(m->inhibitors, uid) + overrides_count_holds(m->overrides, uid);
        if (uid == (uid_t) -1 || mine >= m->config->inhibitors_per_user) {
                *ret_message = g_strdup_printf("uid %d already holds %u inhibitors and class holds, the most a "
                                               "user may", uid == (uid_t) -1 ? -1 : (int) uid, mine);
                return FRIDGE_ERROR_LIMITS_EXCEEDED;
        }
        return 0;
}

int manager_inhibit(Manager *m, const Inhibitor *tmpl, int *ret_fd, uint64_t *ret_id, char **ret_message) {
        int r = manager_check_lease_caps(m, tmpl->uid, ret_message);
        if (r != 0)
                return r;
        return inhibit_add(m->inhibitors, tmpl, ret_fd, ret_id, ret_message);
}

void manager_release_inhibitor(Manager *m, uint64_t id) {
        (void) inhibit_release(m->inhibitors, id);
}

void manager_release_inhibitors_of(Manager *m, const char *sender) {
        unsigned n = inhibit_release_sender(m->inhibitors, sender);
        if (n > 0)
                log_info("%s left the bus; its %u inhibitor%s ended", sender, n, n == 1 ? "" : "s");
}

unsigned manager_inhibitors_of(const Manager *m, const char *sender) {
        return inhibit_count_sender(m->inhibitors, sender);
}

char *manager_block_holders(const Manager *m) {
        return inhibit_describe(m->inhibitors, INHIBIT_BLOCK, 0);
}

GPtrArray *manager_list_inhibitors(const Manager *m) {
        return inhibit_list(m->inhibitors);
}

