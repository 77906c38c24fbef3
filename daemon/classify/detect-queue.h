/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

#include "detect.h"
#include "plan.h"

/* The detection of data cleaners beside the walk: reading every process's
 * stat (and an fd table the cache does not know) is the dearer half of a
 * walk over many cgroups, and it depends on nothing the walk decides
 * afterwards (a detected class is never inherited). So the walk hands each
 * cgroup that falls through to detection to a second thread and goes on
 * reading cgroups; at its end it helps with what is left and applies the
 * findings. Without a thread (it could not be started) the walk's own
 * thread does all of it at the end: the same result, later. */

typedef struct DetectQueue DetectQueue;

/* `in` is copied; its private_reasons receive what both threads found,
 * but only at detect_queue_finish(): the walk may write them meanwhile */
DetectQueue *detect_queue_new(const DetectInput *in);

/* The processes of `node` (its cgroup.procs, taken) are to be looked at.
 * `node` must live until detect_queue_finish(); it is not touched before. */
void detect_queue_push(DetectQueue *q, PlanNode *node, char *procs);

/* Waits for every push to be looked at, helping; a node with a data
 * cleaner becomes CLASS_LATE with its reason, unless it was skipped
 * meanwhile (plan_node_skip()): its reason says why. Frees q. */
void detect_queue_finish(DetectQueue *q);
