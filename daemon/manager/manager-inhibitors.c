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
        if (c && c->state == CYCLE_STATE_DELAYING && c->timer &&
            inhibit_count(m->inhibitors, INHIBIT_DELAY, c->delay_before) == 0) {
                log_info("Cycle %" G_GUINT64_FORMAT ": delay inhibitors released after %.1f ms", c->id,
                         (double) (now(CLOCK_MONOTONIC) - c->delay_start) / USEC_PER_MSEC);
                manager_cycle_work_done(c);
                manager_schedule_step(m);
        }
        if (m->ops && m->ops->inhibitor_released)
                m->ops->inhibitor_released(m->userdata, i->sender);
}

int manager_inhibit(Manager *m, const Inhibitor *tmpl, int *ret_fd, uint64_t *ret_id, char **ret_message) {
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

GPtrArray *manager_list_inhibitors(const Manager *m) {
        return inhibit_list(m->inhibitors);
}

