/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: fridge's own inhibitors, and what their end means for a
 * queued cycle or one waiting for its delay holders. */
#include "manager-internal.h"

#include <string.h>

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
        manager_sync_logind_block(m);
        if (m->ops && m->ops->inhibitor_released)
                m->ops->inhibitor_released(m->userdata, i->sender);
}

/* What logind lists and a desktop may show: bounded */
#define LOGIND_BLOCK_WHY_PREFIX "fridge: "
#define LOGIND_BLOCK_WHY_MAX 512

/* fridge's block inhibitors stop fridge's cycles; logind's sleeps
 * (systemctl suspend, a desktop's suspend button, the lid) never ask
 * fridged, so one logind block inhibitor stands for them all. A cycle
 * fridge hands over to logind (the logind driver) has passed fridge's own
 * check already, or was allowed to ignore the blocks: from its start to
 * its end the mirror is let go, so that it never makes logind refuse
 * fridged's own SuspendWithFlags (logind from systemd 257 counts a block
 * inhibitor of the caller's own uid). The hook's cycles come after logind
 * decided: the mirror stays. */
void manager_sync_logind_block(Manager *m) {
        Cycle *c = m->cycle;
        bool own_logind_cycle = c && c->settings && c->settings->driver == CYCLE_DRIVER_LOGIND &&
                                c->state != CYCLE_STATE_NEW && c->state != CYCLE_STATE_QUEUED;
        g_autofree char *summary = own_logind_cycle ? NULL
                : inhibit_summary(m->inhibitors, INHIBIT_BLOCK, LOGIND_BLOCK_WHY_MAX - strlen(LOGIND_BLOCK_WHY_PREFIX));
        g_autofree char *why = summary ? g_strconcat(LOGIND_BLOCK_WHY_PREFIX, summary, NULL) : NULL;
        logind_set_block(m->logind, why);
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
        r = inhibit_add(m->inhibitors, tmpl, ret_fd, ret_id, ret_message);
        if (r == 0)
                manager_sync_logind_block(m);
        return r;
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

