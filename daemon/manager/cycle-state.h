/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A cycle's life as one state machine. Pure: no loop, no bus, no kernel.
 * The manager asks cycle_state_next() where an event leads, and every
 * change of state goes through manager_transition(), which checks the
 * move against cycle_state_allowed(). The State and Phase properties, the
 * cycle record's phase and whether Cancel still works are all read from
 * the state, never from flags beside it. */

#include <stdbool.h>

#include "cycle.h"

typedef enum CycleState {
        CYCLE_STATE_NEW,             /* made by Sleep or the hook's pre; runs from the loop */
        CYCLE_STATE_QUEUED,          /* waiting for fridge's block inhibitors to go */
        CYCLE_STATE_DELAYING,        /* SleepImminent sent; waiting for delay inhibitors */
        CYCLE_STATE_PREPARING,       /* the plan, and the wakeup_count read on a worker */
        CYCLE_STATE_FLUSHING,
        CYCLE_STATE_HANDED_OVER,     /* logind driver: logind was asked to sleep; its hook's pre comes next */
        CYCLE_STATE_FREEZING_EARLY,
        CYCLE_STATE_FLUSHING_AGAIN,
        CYCLE_STATE_FREEZING_LATE,
        CYCLE_STATE_SLEEPING,        /* fridged's worker writes the state */
        CYCLE_STATE_WRITING_IMAGE,   /* fridge-image-writer writes the image: progress, and Cancel until it
                                      * freezes user space */
        CYCLE_STATE_HOOK_SLEEPING,   /* frozen; systemd-sleep writes the state, the hook's post comes next */
        CYCLE_STATE_SKIPPING_KERNEL, /* a dry run: nothing is written to the kernel */
        CYCLE_STATE_RETRY_WAITING,   /* thawed after a transient kernel failure, waiting out the backoff */
        CYCLE_STATE_RETRY_PREPARING, /* a new wakeup_count read before freezing again */
        CYCLE_STATE_RESUMING,        /* the machine is back; Resumed goes out */
        CYCLE_STATE_ENDING,          /* the result was decided early; the work stopped, thaw next */
        CYCLE_STATE_THAWING,
        CYCLE_STATE_FINISHED,        /* CycleFinished went out; the cycle is gone */
        _CYCLE_STATE_MAX,
        _CYCLE_STATE_INVALID = -1,
} CycleState;

typedef enum CycleEvent {
        CYCLE_EVENT_DONE,     /* the state's work is finished */
        CYCLE_EVENT_CANCEL,   /* Cancel, or SIGTERM */
        CYCLE_EVENT_TIMEOUT,  /* the state's own timer fired */
        CYCLE_EVENT_FAILURE,  /* the state's work failed */
        CYCLE_EVENT_POST,     /* the sleep hook's post came */
        _CYCLE_EVENT_MAX,
} CycleEvent;

/* What the next state depends on besides the state and the event */
typedef struct CycleFacts {
        bool blocked;           /* a block inhibitor is held and the cycle may queue */
        bool logind_driver;     /* logind sleeps the machine; the hook's pre carries the cycle on */
        bool joined;            /* that pre has come */
        bool hook_driver;       /* systemd-sleep writes the state (hook or logind driver) */
        bool dry_run;           /* without pm_test: nothing is written */
        bool writes_image;      /* the kernel phase's backend reports progress and takes Cancel */
        bool retry;             /* the kernel failure may pass; an attempt is left */
        bool timeout_continues; /* a flush timeout goes on ([Flush] OnTimeout=continue) */
} CycleFacts;

const char *cycle_state_to_string(CycleState s);
CycleState cycle_state_from_string(const char *s);
const char *cycle_event_to_string(CycleEvent e);

/* The design's phase a state belongs to (the Phase property); ENDING has
 * none of its own: it keeps the phase it ended in. */
Phase cycle_state_phase(CycleState s);
/* "queued", "running", "sleeping" or "thawing": the State property */
const char *cycle_state_property(CycleState s);
/* The Phase property's text: "retry" for the retry states, else the phase's */
const char *cycle_state_phase_name(CycleState s);
/* Cancel ends the cycle here; past the point of no return it answers TooLate */
bool cycle_state_cancellable(CycleState s);
/* The states where the machine is, or may be, asleep: SIGTERM there is "failed" */
bool cycle_state_in_kernel(CycleState s);

/* What the cycle record says for a crash in `s`: the phase a restarted
 * fridged names in its Interrupted report ("start", "queued", "retry", or
 * the phase) */
const char *cycle_state_record_phase(CycleState s);

/* ending, thawing or finished: the result is decided, nothing ends it again */
bool cycle_state_past_the_end(CycleState s);

/* Whether the table has the move from → to */
bool cycle_state_allowed(CycleState from, CycleState to);

/* Where `e` leads from `s`; _CYCLE_STATE_INVALID: the event changes nothing
 * there (a queued cycle still blocked, an event the state does not have). */
CycleState cycle_state_next(CycleState s, CycleEvent e, const CycleFacts *f);
