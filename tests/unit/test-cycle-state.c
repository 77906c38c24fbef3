/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cycle state machine as a table: no loop, no bus, no kernel. */
#include <glib.h>

#include "cycle-state.h"

#define N_FACTS 8
#define N_COMBOS (1u << N_FACTS)

static CycleFacts facts_from_bits(unsigned bits) {
        return (CycleFacts) {
                .blocked = bits & 1, .logind_driver = bits & 2, .joined = bits & 4, .hook_driver = bits & 8,
                .dry_run = bits & 16, .retry = bits & 32, .timeout_continues = bits & 64,
                .writes_image = bits & 128,
        };
}

/* Every move cycle_state_next() makes is in the table, and every move in
 * the table is made by some event under some facts: no dead edge */
static void test_next_matches_table(void) {
        bool made[_CYCLE_STATE_MAX][_CYCLE_STATE_MAX] = {};
        for (int s = 0; s < _CYCLE_STATE_MAX; s++)
                for (int e = 0; e < _CYCLE_EVENT_MAX; e++)
                        for (unsigned b = 0; b < N_COMBOS; b++) {
                                CycleFacts f = facts_from_bits(b);
                                CycleState to = cycle_state_next((CycleState) s, (CycleEvent) e, &f);
                                if (to == _CYCLE_STATE_INVALID)
                                        continue;
                                if (!cycle_state_allowed((CycleState) s, to))
                                        g_error("%s --%s--> %s is not in the table", cycle_state_to_string(s),
                                                cycle_event_to_string(e), cycle_state_to_string(to));
                                made[s][to] = true;
                        }
        for (int s = 0; s < _CYCLE_STATE_MAX; s++)
                for (int t = 0; t < _CYCLE_STATE_MAX; t++)
                        if (cycle_state_allowed(s, t) && !made[s][t])
                                g_error("the table's %s -> %s is never taken", cycle_state_to_string(s),
                                        cycle_state_to_string(t));
}

/* From NEW every state can be reached, and from every state FINISHED */
static void test_reachable(void) {
        bool from_new[_CYCLE_STATE_MAX] = { [CYCLE_STATE_NEW] = true };
        bool to_end[_CYCLE_STATE_MAX] = { [CYCLE_STATE_FINISHED] = true };
        for (bool changed = true; changed;) {
                changed = false;
                for (int s = 0; s < _CYCLE_STATE_MAX; s++)
                        for (int t = 0; t < _CYCLE_STATE_MAX; t++) {
                                if (!cycle_state_allowed(s, t))
                                        continue;
                                if (from_new[s] && !from_new[t])
                                        changed = from_new[t] = true;
                                if (to_end[t] && !to_end[s])
                                        changed = to_end[s] = true;
                        }
        }
        for (int s = 0; s < _CYCLE_STATE_MAX; s++) {
                if (!from_new[s])
                        g_error("state %s cannot be reached", cycle_state_to_string(s));
                if (!to_end[s])
                        g_error("state %s cannot finish", cycle_state_to_string(s));
        }
        g_assert_false(cycle_state_allowed(CYCLE_STATE_FINISHED, CYCLE_STATE_NEW));
}

/* The happy paths, one a driver, as the manager walks them */
static void walk(CycleState from, const CycleFacts *f, const CycleState *expected, size_t n) {
        CycleState s = from;
        for (size_t i = 0; i < n; i++) {
                CycleState to = cycle_state_next(s, CYCLE_EVENT_DONE, f);
                g_assert_cmpstr(cycle_state_to_string(to), ==, cycle_state_to_string(expected[i]));
                s = to;
        }
        g_assert_cmpint(cycle_state_next(s, CYCLE_EVENT_DONE, f), ==, _CYCLE_STATE_INVALID);
}

static void test_paths(void) {
        static const CycleState direct[] = {
                CYCLE_STATE_DELAYING,       CYCLE_STATE_PREPARING,      CYCLE_STATE_FLUSHING,
                CYCLE_STATE_FREEZING_EARLY, CYCLE_STATE_FLUSHING_AGAIN, CYCLE_STATE_FREEZING_LATE,
                CYCLE_STATE_SLEEPING,       CYCLE_STATE_RESUMING,       CYCLE_STATE_THAWING,
                CYCLE_STATE_FINISHED,
        };
        walk(CYCLE_STATE_NEW, &(CycleFacts) {}, direct, G_N_ELEMENTS(direct));

        static const CycleState dry[] = {
                CYCLE_STATE_DELAYING,       CYCLE_STATE_PREPARING,       CYCLE_STATE_FLUSHING,
                CYCLE_STATE_FREEZING_EARLY, CYCLE_STATE_FLUSHING_AGAIN,  CYCLE_STATE_FREEZING_LATE,
                CYCLE_STATE_SKIPPING_KERNEL, CYCLE_STATE_THAWING,        CYCLE_STATE_FINISHED,
        };
        walk(CYCLE_STATE_NEW, &(CycleFacts) { .dry_run = true }, dry, G_N_ELEMENTS(dry));

        static const CycleState hook[] = {
                CYCLE_STATE_DELAYING,       CYCLE_STATE_PREPARING,      CYCLE_STATE_FLUSHING,
                CYCLE_STATE_FREEZING_EARLY, CYCLE_STATE_FLUSHING_AGAIN, CYCLE_STATE_FREEZING_LATE,
                CYCLE_STATE_HOOK_SLEEPING,  CYCLE_STATE_RESUMING,       CYCLE_STATE_THAWING,
                CYCLE_STATE_FINISHED,
        };
        walk(CYCLE_STATE_NEW, &(CycleFacts) { .hook_driver = true }, hook, G_N_ELEMENTS(hook));

        /* logind: flushed, then handed over until the hook's pre joins */
        CycleFacts logind = { .logind_driver = true, .hook_driver = true };
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_FLUSHING, CYCLE_EVENT_DONE, &logind), ==,
                        CYCLE_STATE_HANDED_OVER);
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_HANDED_OVER, CYCLE_EVENT_DONE, &logind), ==,
                        _CYCLE_STATE_INVALID);
        logind.joined = true;
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_HANDED_OVER, CYCLE_EVENT_DONE, &logind), ==,
                        CYCLE_STATE_FREEZING_EARLY);
        /* a pre that came before the flush ended skips the hand-over */
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_FLUSHING, CYCLE_EVENT_DONE, &logind), ==,
                        CYCLE_STATE_FREEZING_EARLY);

        /* queue: waits while blocked, goes on once not */
        CycleFacts blocked = { .blocked = true };
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_NEW, CYCLE_EVENT_DONE, &blocked), ==, CYCLE_STATE_QUEUED);
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_QUEUED, CYCLE_EVENT_DONE, &blocked), ==,
                        _CYCLE_STATE_INVALID);
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_QUEUED, CYCLE_EVENT_DONE, &(CycleFacts) {}), ==,
                        CYCLE_STATE_DELAYING);

        /* a retry is a transition: thawed, waiting, preparing, freezing again */
        CycleFacts retry = { .retry = true };
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_SLEEPING, CYCLE_EVENT_FAILURE, &retry), ==,
                        CYCLE_STATE_RETRY_WAITING);
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_RETRY_WAITING, CYCLE_EVENT_TIMEOUT, &retry), ==,
                        CYCLE_STATE_RETRY_PREPARING);
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_RETRY_PREPARING, CYCLE_EVENT_DONE, &retry), ==,
                        CYCLE_STATE_FREEZING_EARLY);
}

/* Each state's cancel, timeout, failure, hook-post and crash edge, written
 * out (post: for a cycle on systemd's sleep path) */
typedef struct Edges {
        CycleState state;
        CycleState cancel, timeout, failure, post;
        const char *crash; /* what the record names for a restart's Interrupted report */
        const char *property;
        bool cancellable;
} Edges;

#define END CYCLE_STATE_ENDING
#define NONE _CYCLE_STATE_INVALID

static const Edges edges[] = {
        { CYCLE_STATE_NEW, END, NONE, END, END, "start", "running", true },
        { CYCLE_STATE_QUEUED, END, END, END, NONE, "queued", "queued", true },
        { CYCLE_STATE_DELAYING, END, CYCLE_STATE_PREPARING, END, END, "prepare", "running", true },
        { CYCLE_STATE_PREPARING, END, NONE, END, END, "prepare", "running", true },
        { CYCLE_STATE_FLUSHING, END, END, END, END, "flush", "running", true },
        { CYCLE_STATE_HANDED_OVER, END, END, END, END, "flush", "running", false },
        { CYCLE_STATE_FREEZING_EARLY, END, END, END, END, "freeze-early", "running", true },
        { CYCLE_STATE_FLUSHING_AGAIN, END, END, END, END, "flush-again", "running", true },
        { CYCLE_STATE_FREEZING_LATE, END, END, END, END, "freeze-late", "running", true },
        { CYCLE_STATE_SLEEPING, END, NONE, END, NONE, "kernel", "sleeping", false },
        /* the image write reports progress and Cancel reaches the writer */
        { CYCLE_STATE_WRITING_IMAGE, END, NONE, END, NONE, "kernel", "running", true },
        { CYCLE_STATE_HOOK_SLEEPING, END, END, END, CYCLE_STATE_RESUMING, "kernel", "sleeping", false },
        { CYCLE_STATE_SKIPPING_KERNEL, END, NONE, END, NONE, "kernel", "running", false },
        { CYCLE_STATE_RETRY_WAITING, END, CYCLE_STATE_RETRY_PREPARING, END, NONE, "retry", "running", true },
        { CYCLE_STATE_RETRY_PREPARING, END, NONE, END, NONE, "retry", "running", true },
        { CYCLE_STATE_RESUMING, END, NONE, END, NONE, "kernel", "running", false },
        { CYCLE_STATE_ENDING, NONE, NONE, NONE, NONE, "start", "thawing", false },
        { CYCLE_STATE_THAWING, NONE, NONE, NONE, NONE, "thaw", "thawing", false },
        { CYCLE_STATE_FINISHED, NONE, NONE, NONE, NONE, "start", "idle", false },
};

static void test_edges(void) {
        const CycleFacts hook = { .hook_driver = true };
        g_assert_cmpuint(G_N_ELEMENTS(edges), ==, _CYCLE_STATE_MAX);
        for (size_t i = 0; i < G_N_ELEMENTS(edges); i++) {
                const Edges *x = &edges[i];
                const char *name = cycle_state_to_string(x->state);
                g_test_message("state %s", name);
                g_assert_cmpint(cycle_state_next(x->state, CYCLE_EVENT_CANCEL, NULL), ==, x->cancel);
                g_assert_cmpint(cycle_state_next(x->state, CYCLE_EVENT_TIMEOUT, NULL), ==, x->timeout);
                g_assert_cmpint(cycle_state_next(x->state, CYCLE_EVENT_FAILURE, NULL), ==, x->failure);
                g_assert_cmpint(cycle_state_next(x->state, CYCLE_EVENT_POST, &hook), ==, x->post);
                g_assert_cmpstr(cycle_state_record_phase(x->state), ==, x->crash);
                g_assert_cmpstr(cycle_state_property(x->state), ==, x->property);
                g_assert_cmpint(cycle_state_cancellable(x->state), ==, x->cancellable);
                g_assert_cmpint(cycle_state_from_string(name), ==, x->state);
        }
        /* a flush timeout goes on where the configuration says so */
        CycleFacts go_on = { .timeout_continues = true };
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_FLUSHING, CYCLE_EVENT_TIMEOUT, &go_on), ==,
                        CYCLE_STATE_FREEZING_EARLY);
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_FLUSHING_AGAIN, CYCLE_EVENT_TIMEOUT, &go_on), ==,
                        CYCLE_STATE_FREEZING_LATE);
        /* the retry state is not the flush, whatever weight its progress has */
        g_assert_cmpstr(cycle_state_phase_name(CYCLE_STATE_RETRY_WAITING), ==, "retry");
        g_assert_cmpstr(cycle_state_phase_name(CYCLE_STATE_FLUSHING), ==, "flush");
        g_assert_true(cycle_state_in_kernel(CYCLE_STATE_SLEEPING));
        g_assert_false(cycle_state_in_kernel(CYCLE_STATE_HANDED_OVER));
        g_assert_true(cycle_state_in_kernel(CYCLE_STATE_WRITING_IMAGE));
        /* only a backend that writes the image itself goes through the write */
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_FREEZING_LATE, CYCLE_EVENT_DONE, &(CycleFacts) {}), ==,
                        CYCLE_STATE_SLEEPING);
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_FREEZING_LATE, CYCLE_EVENT_DONE,
                                         &(CycleFacts) { .writes_image = true }),
                        ==, CYCLE_STATE_WRITING_IMAGE);
        g_assert_cmpint(cycle_state_from_string("no-such-state"), ==, _CYCLE_STATE_INVALID);
}

/* A post is the hook's: a direct cycle has none, a logind cycle only once
 * the pre joined it; one that comes while that pre runs ends the cycle */
static void test_post(void) {
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_FREEZING_LATE, CYCLE_EVENT_POST, &(CycleFacts) {}), ==,
                        _CYCLE_STATE_INVALID);
        CycleFacts logind = { .logind_driver = true, .hook_driver = true };
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_HANDED_OVER, CYCLE_EVENT_POST, &logind), ==,
                        _CYCLE_STATE_INVALID);
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_FLUSHING, CYCLE_EVENT_POST, &logind), ==,
                        _CYCLE_STATE_INVALID);
        logind.joined = true;
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_HANDED_OVER, CYCLE_EVENT_POST, &logind), ==,
                        CYCLE_STATE_ENDING);
        g_assert_cmpint(cycle_state_next(CYCLE_STATE_HOOK_SLEEPING, CYCLE_EVENT_POST, &logind), ==,
                        CYCLE_STATE_RESUMING);
        g_assert_cmpstr(cycle_event_to_string(CYCLE_EVENT_POST), ==, "post");
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/cycle-state/next-matches-table", test_next_matches_table);
        g_test_add_func("/cycle-state/reachable", test_reachable);
        g_test_add_func("/cycle-state/paths", test_paths);
        g_test_add_func("/cycle-state/edges", test_edges);
        g_test_add_func("/cycle-state/post", test_post);
        return g_test_run();
}
