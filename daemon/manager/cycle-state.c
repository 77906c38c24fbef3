/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cycle-state.h"

#include <string.h>

#include "macro.h"

#define TO(s) (1u << (s))

/* One row a state: its name, the phase it belongs to, the State property,
 * whether Cancel works there, and every state it may move to. The unit
 * test checks that cycle_state_next() makes only these moves, makes each
 * of them, and that every state is reachable and can finish. */
typedef struct StateRow {
        const char *name;
        Phase phase;
        const char *property;
        bool cancellable;
        unsigned to;
} StateRow;

static const StateRow rows[_CYCLE_STATE_MAX] = {
        [CYCLE_STATE_NEW] = { "new", PHASE_NONE, "running", true,
                              TO(CYCLE_STATE_QUEUED) | TO(CYCLE_STATE_DELAYING) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_QUEUED] = { "queued", PHASE_NONE, "queued", true,
                                 TO(CYCLE_STATE_DELAYING) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_DELAYING] = { "delaying", PHASE_PREPARE, "running", true,
                                   TO(CYCLE_STATE_PREPARING) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_PREPARING] = { "preparing", PHASE_PREPARE, "running", true,
                                    TO(CYCLE_STATE_FLUSHING) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_FLUSHING] = { "flushing", PHASE_FLUSH, "running", true,
                                   TO(CYCLE_STATE_FREEZING_EARLY) | TO(CYCLE_STATE_HANDED_OVER) |
                                           TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_HANDED_OVER] = { "handed-over", PHASE_FLUSH, "running", false,
                                      TO(CYCLE_STATE_FREEZING_EARLY) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_FREEZING_EARLY] = { "freezing-early", PHASE_FREEZE_EARLY, "running", true,
                                         TO(CYCLE_STATE_FLUSHING_AGAIN) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_FLUSHING_AGAIN] = { "flushing-again", PHASE_FLUSH_AGAIN, "running", true,
                                         TO(CYCLE_STATE_FREEZING_LATE) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_FREEZING_LATE] = { "freezing-late", PHASE_FREEZE_LATE, "running", true,
                                        TO(CYCLE_STATE_SLEEPING) | TO(CYCLE_STATE_WRITING_IMAGE) |
                                                TO(CYCLE_STATE_HOOK_SLEEPING) | TO(CYCLE_STATE_SKIPPING_KERNEL) |
                                                TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_SLEEPING] = { "sleeping", PHASE_KERNEL, "sleeping", false,
                                   TO(CYCLE_STATE_RESUMING) | TO(CYCLE_STATE_RETRY_WAITING) |
                                           TO(CYCLE_STATE_ENDING) },
        /* awake until the writer freezes user space: "running", and
         * Cancel reaches the writer (see manager_cancel()) */
        [CYCLE_STATE_WRITING_IMAGE] = { "writing-image", PHASE_KERNEL, "running", true,
                                        TO(CYCLE_STATE_RESUMING) | TO(CYCLE_STATE_RETRY_WAITING) |
                                                TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_HOOK_SLEEPING] = { "hook-sleeping", PHASE_KERNEL, "sleeping", false,
                                        TO(CYCLE_STATE_RESUMING) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_SKIPPING_KERNEL] = { "skipping-kernel", PHASE_KERNEL, "running", false,
                                          TO(CYCLE_STATE_THAWING) | TO(CYCLE_STATE_ENDING) },
        /* The retry states count as flush for the overall progress: what
         * follows is the freeze again */
        [CYCLE_STATE_RETRY_WAITING] = { "retry-waiting", PHASE_FLUSH, "running", true,
                                        TO(CYCLE_STATE_RETRY_PREPARING) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_RETRY_PREPARING] = { "retry-preparing", PHASE_FLUSH, "running", true,
                                          TO(CYCLE_STATE_FREEZING_EARLY) | TO(CYCLE_STATE_ENDING) },
        [CYCLE_STATE_RESUMING] = { "resuming", PHASE_KERNEL, "running", false,
                                   TO(CYCLE_STATE_THAWING) | TO(CYCLE_STATE_ENDING) },
        /* the result is decided: to the outside it thaws already (no
         * point of no return to show, nothing left to cancel) */
        [CYCLE_STATE_ENDING] = { "ending", PHASE_NONE, "thawing", false, TO(CYCLE_STATE_THAWING) },
        [CYCLE_STATE_THAWING] = { "thawing", PHASE_THAW, "thawing", false, TO(CYCLE_STATE_FINISHED) },
        [CYCLE_STATE_FINISHED] = { "finished", PHASE_NONE, "idle", false, 0 },
};

static const char *const event_names[_CYCLE_EVENT_MAX] = {
        [CYCLE_EVENT_DONE] = "done",
        [CYCLE_EVENT_CANCEL] = "cancel",
        [CYCLE_EVENT_TIMEOUT] = "timeout",
        [CYCLE_EVENT_FAILURE] = "failure",
        [CYCLE_EVENT_POST] = "post",
};

static bool state_valid(CycleState s) {
        return s >= 0 && s < _CYCLE_STATE_MAX;
}

const char *cycle_state_to_string(CycleState s) {
        return state_valid(s) ? rows[s].name : "";
}

CycleState cycle_state_from_string(const char *s) {
        for (int i = 0; s && i < _CYCLE_STATE_MAX; i++)
                if (strcmp(s, rows[i].name) == 0)
                        return (CycleState) i;
        return _CYCLE_STATE_INVALID;
}

const char *cycle_event_to_string(CycleEvent e) {
        return e >= 0 && e < _CYCLE_EVENT_MAX ? event_names[e] : "";
}

Phase cycle_state_phase(CycleState s) {
        return state_valid(s) ? rows[s].phase : PHASE_NONE;
}

const char *cycle_state_property(CycleState s) {
        return state_valid(s) ? rows[s].property : "idle";
}

const char *cycle_state_phase_name(CycleState s) {
        if (s == CYCLE_STATE_RETRY_WAITING || s == CYCLE_STATE_RETRY_PREPARING)
                return "retry";
        return phase_to_string(cycle_state_phase(s));
}

const char *cycle_state_record_phase(CycleState s) {
        if (s == CYCLE_STATE_QUEUED)
                return "queued";
        return cycle_state_phase(s) == PHASE_NONE ? "start" : cycle_state_phase_name(s);
}

bool cycle_state_cancellable(CycleState s) {
        return state_valid(s) && rows[s].cancellable;
}

bool cycle_state_in_kernel(CycleState s) {
        return cycle_state_phase(s) == PHASE_KERNEL;
}

bool cycle_state_allowed(CycleState from, CycleState to) {
        return state_valid(from) && state_valid(to) && (rows[from].to & TO(to));
}

static CycleState next_done(CycleState s, const CycleFacts *f) {
        switch (s) {
        case CYCLE_STATE_NEW:
                return f->blocked ? CYCLE_STATE_QUEUED : CYCLE_STATE_DELAYING;
        case CYCLE_STATE_QUEUED:
                return f->blocked ? _CYCLE_STATE_INVALID : CYCLE_STATE_DELAYING;
        case CYCLE_STATE_DELAYING:
                return CYCLE_STATE_PREPARING;
        case CYCLE_STATE_PREPARING:
                return CYCLE_STATE_FLUSHING;
        case CYCLE_STATE_FLUSHING:
                /* logind's sleep runs the hook, whose pre carries on from here */
                return f->logind_driver && !f->joined ? CYCLE_STATE_HANDED_OVER : CYCLE_STATE_FREEZING_EARLY;
        case CYCLE_STATE_HANDED_OVER:
                return f->joined ? CYCLE_STATE_FREEZING_EARLY : _CYCLE_STATE_INVALID;
        case CYCLE_STATE_FREEZING_EARLY:
                return CYCLE_STATE_FLUSHING_AGAIN;
        case CYCLE_STATE_FLUSHING_AGAIN:
                return CYCLE_STATE_FREEZING_LATE;
        case CYCLE_STATE_FREEZING_LATE:
                if (f->hook_driver)
                        return CYCLE_STATE_HOOK_SLEEPING;
                if (f->dry_run)
                        return CYCLE_STATE_SKIPPING_KERNEL;
                return f->writes_image ? CYCLE_STATE_WRITING_IMAGE : CYCLE_STATE_SLEEPING;
        case CYCLE_STATE_SLEEPING:
        case CYCLE_STATE_WRITING_IMAGE:
        case CYCLE_STATE_HOOK_SLEEPING:
                return CYCLE_STATE_RESUMING;
        case CYCLE_STATE_RETRY_WAITING:
                return CYCLE_STATE_RETRY_PREPARING;
        case CYCLE_STATE_RETRY_PREPARING:
                return CYCLE_STATE_FREEZING_EARLY;
        case CYCLE_STATE_SKIPPING_KERNEL:
        case CYCLE_STATE_RESUMING:
        case CYCLE_STATE_ENDING:
                return CYCLE_STATE_THAWING;
        case CYCLE_STATE_THAWING:
                return CYCLE_STATE_FINISHED;
        default:
                return _CYCLE_STATE_INVALID;
        }
}

/* Only the states that own a timer have this event */
static CycleState next_timeout(CycleState s, const CycleFacts *f) {
        switch (s) {
        case CYCLE_STATE_DELAYING: /* late delay holders are named, and the cycle goes on */
                return CYCLE_STATE_PREPARING;
        case CYCLE_STATE_FLUSHING:
        case CYCLE_STATE_FLUSHING_AGAIN:
                return f->timeout_continues ? next_done(s, f) : CYCLE_STATE_ENDING;
        case CYCLE_STATE_QUEUED:
        case CYCLE_STATE_FREEZING_EARLY:
        case CYCLE_STATE_FREEZING_LATE:
        case CYCLE_STATE_HANDED_OVER:
        case CYCLE_STATE_HOOK_SLEEPING:
                return CYCLE_STATE_ENDING;
        case CYCLE_STATE_RETRY_WAITING: /* the backoff is over */
                return CYCLE_STATE_RETRY_PREPARING;
        default:
                return _CYCLE_STATE_INVALID;
        }
}

bool cycle_state_past_the_end(CycleState s) {
        return s == CYCLE_STATE_ENDING || s == CYCLE_STATE_THAWING || s == CYCLE_STATE_FINISHED;
}

/* The post resumes the cycle its pre froze. One that comes while that pre
 * still runs means systemd-sleep gave up on the pre and went on: the cycle
 * ends and thaws rather than freezing a machine that is already back. A
 * post nothing on systemd's sleep path waits for (a direct cycle, a logind
 * cycle no pre joined yet) changes nothing. */
static CycleState next_post(CycleState s, const CycleFacts *f) {
        if (!f->hook_driver || (f->logind_driver && !f->joined))
                return _CYCLE_STATE_INVALID;
        switch (s) {
        case CYCLE_STATE_HOOK_SLEEPING:
                return CYCLE_STATE_RESUMING;
        case CYCLE_STATE_NEW:
        case CYCLE_STATE_DELAYING:
        case CYCLE_STATE_PREPARING:
        case CYCLE_STATE_FLUSHING:
        case CYCLE_STATE_HANDED_OVER:
        case CYCLE_STATE_FREEZING_EARLY:
        case CYCLE_STATE_FLUSHING_AGAIN:
        case CYCLE_STATE_FREEZING_LATE:
                return CYCLE_STATE_ENDING;
        default:
                return _CYCLE_STATE_INVALID;
        }
}

CycleState cycle_state_next(CycleState s, CycleEvent e, const CycleFacts *f) {
        static const CycleFacts none = {};
        if (!state_valid(s))
                return _CYCLE_STATE_INVALID;
        if (!f)
                f = &none;
        switch (e) {
        case CYCLE_EVENT_DONE:
                return next_done(s, f);
        case CYCLE_EVENT_TIMEOUT:
                return next_timeout(s, f);
        case CYCLE_EVENT_FAILURE:
                /* A wakeup event or EBUSY: thaw, wait, and freeze again */
                if ((s == CYCLE_STATE_SLEEPING || s == CYCLE_STATE_WRITING_IMAGE) && f->retry)
                        return CYCLE_STATE_RETRY_WAITING;
                return cycle_state_past_the_end(s) ? _CYCLE_STATE_INVALID : CYCLE_STATE_ENDING;
        case CYCLE_EVENT_POST:
                return next_post(s, f);
        case CYCLE_EVENT_CANCEL:
                /* The manager answers TooLate where a caller may not
                 * cancel; SIGTERM ends the cycle from any state */
                return cycle_state_past_the_end(s) ? _CYCLE_STATE_INVALID : CYCLE_STATE_ENDING;
        default:
                return _CYCLE_STATE_INVALID;
        }
}
