/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the FUSE detection found per process, kept between walks: whether
 * it held /dev/fuse, by pid and start time (field 22 of stat: a reused pid
 * is another process). Reading a process's fd table is the dearest part of
 * a walk, and a process comes to hold /dev/fuse only by a FUSE mount: the
 * kernel's connection gets a fusectl entry, the mount a line in the mount
 * table. So every walk starts with a token made of both, and a token
 * unlike the last forgets everything; a process not seen before is always
 * read. Thread-safe: GetPlan's build and a cycle's prepare may share it;
 * what a walk learnt is kept only while its token is still the newest. */

typedef struct DetectCache DetectCache;

DetectCache *detect_cache_new(void);
DetectCache *detect_cache_ref(DetectCache *c);
/* Returns NULL */
DetectCache *detect_cache_unref(DetectCache *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DetectCache, detect_cache_unref)

/* A walk starts: returns its generation, to store its findings under.
 * Entries no walk looked at in the last two are dropped (gone processes). */
uint64_t detect_cache_begin(DetectCache *c, const char *token);

/* 1: holds /dev/fuse, 0: does not, -ENOENT: not known */
int detect_cache_lookup(DetectCache *c, pid_t pid, uint64_t starttime);

/* Kept only when gen is still the newest generation */
void detect_cache_store(DetectCache *c, uint64_t gen, pid_t pid, uint64_t starttime, bool holds);

/* How many processes it knows (tests) */
unsigned detect_cache_size(DetectCache *c);
