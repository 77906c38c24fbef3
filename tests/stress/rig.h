/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stress tests' rig: the integration harness with slowfs, N scratch
 * cgroups (one process each) under a scratch freeze root, and a way to hold
 * a cycle inside any phase deterministically, so that a kill, a cancel or a
 * SIGTERM lands inside that phase:
 *   prepare       a delay inhibitor the rig holds
 *   flush         dirty data on slowfs, its writeback held
 *   freeze-early  a process in blocker.service stuck in a held fakesys
 *                 write (a FUSE request the freezer cannot interrupt)
 *   flush-again   as flush, with flush-timeout-ms so the first flush gives
 *                 up (OnTimeout=continue) and the second one waits
 *   freeze-late   as freeze-early with blocker.service set to late
 *   kernel        a long simulated sleep (fakesys sleep-ms), or with
 *                 RIG_PM_TEST the state write held after pm_test and the
 *                 RTC alarm were set
 * rig_release() undoes whatever the rig holds. Everything is thawed and
 * removed by scratch_free() and harness_free(), also on a failed assertion.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"
#include "scratch.h"

typedef struct Rig {
        Harness *h;
        Scratch *s;
        GPtrArray *cgroups;     /* the N scratch cgroups (borrowed from s) */
        const char *blocker;    /* blocker.service */
        int inhibit_fd;         /* prepare: our delay inhibitor */
        int dirty_fd;           /* flush: a file on slowfs with dirty pages */
        unsigned dirty_n;
        pid_t blocker_pid;      /* freeze-*: stuck in a held fakesys write */
        bool state_held;        /* kernel with RIG_PM_TEST */
        bool sleeping;          /* kernel: a long simulated sleep */
} Rig;

/* Sleep with pm-test devices and wake-after-sec; in the kernel phase the
 * state write is held after pm_test and the RTC alarm were set */
#define RIG_PM_TEST 1u
/* With RIG_PM_TEST: mem-sleep s2idle as well (fakesys's default is deep) */
#define RIG_MEM_SLEEP 2u

/* NULL (and a g_test_skip) when the machine cannot run it. extra_config is
 * appended to fridge.conf. */
Rig *rig_new(unsigned n_cgroups, const char *extra_config);
void rig_free(Rig *r);

/* Starts a cycle and returns its id once fridged is inside `phase` (one of
 * the phases above); fails the test if it cannot get there. */
uint64_t rig_start_held(Rig *r, const char *phase, unsigned flags);
/* Lets go of every hold (fridged may be dead or alive). */
void rig_release(Rig *r);
/* How many of the N scratch cgroups (and the blocker) are frozen now. */
unsigned rig_count_frozen(Rig *r);
/* Waits for CycleFinished of `cycle`; its result, error and message (g_free). */
void rig_finished(Rig *r, uint64_t cycle, int timeout_ms, char **ret_result, char **ret_error, char **ret_message);
/* A whole cycle that must end "done": fridged works after what happened. */
uint64_t rig_full_cycle(Rig *r);
