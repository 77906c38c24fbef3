/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "fridge-error.h"

/* The registry of inhibitors, logind's pattern: each one is a pipe whose
 * read end fridged watches and whose write end the holder keeps. When the
 * holder closes it (or dies, which closes it) the read end hangs up and
 * the inhibitor ends. It knows nothing of D-Bus: the bus layer ends a
 * holder's inhibitors when its connection goes (inhibit_release_sender).
 * The manager decides what block and delay mean for a cycle. */

typedef enum InhibitMode {
        INHIBIT_BLOCK,  /* no cycle starts while held */
        INHIBIT_DELAY,  /* a cycle waits in prepare until released, bounded */
        _INHIBIT_MODE_MAX,
        _INHIBIT_MODE_INVALID = -1,
} InhibitMode;

/* Each costs fridged an fd, which a thaw may need: bounded per connection
 * (as HoldClass), per user ([Limits] InhibitorsPerUser=, this by default)
 * and in all; the last two count class holds too
 * (manager_check_lease_caps), and root is bounded only in all. */
#define INHIBITORS_PER_SENDER_MAX 16U
#define INHIBITORS_PER_USER_DEFAULT 64U
#define INHIBITORS_MAX 1024U
/* inhibit_describe() names this many holders, then counts the rest */
#define INHIBIT_DESCRIBE_MAX 3U

typedef struct Inhibitor {
        uint64_t id;
        InhibitMode mode;
        char *who;
        char *why;
        char *sender;   /* the holder's unique bus name, "" when none */
        uid_t uid;
        pid_t pid;
} Inhibitor;

typedef struct Inhibitors Inhibitors;

/* Called after an inhibitor has left the registry, whatever ended it; `i`
 * is valid only during the call. */
typedef void (*InhibitReleased)(const Inhibitor *i, void *userdata);

Inhibitors *inhibit_new(sd_event *e, InhibitReleased released, void *userdata);
Inhibitors *inhibit_free(Inhibitors *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Inhibitors, inhibit_free)

const char *inhibit_mode_to_string(InhibitMode m);
InhibitMode inhibit_mode_from_string(const char *s);

/* Adds an inhibitor like `tmpl` (its id is ignored); *ret_fd is the
 * holder's end of the pipe (the caller passes it on and closes its copy).
 * 0, a negative errno, or FRIDGE_ERROR_LIMITS_EXCEEDED when the sender
 * holds INHIBITORS_PER_SENDER_MAX already or INHIBITORS_MAX are held
 * (*ret_message says which). */
int inhibit_add(Inhibitors *r, const Inhibitor *tmpl, int *ret_fd, uint64_t *ret_id, char **ret_message);

/* Ends one inhibitor; false when there is none of that id. */
bool inhibit_release(Inhibitors *r, uint64_t id);
/* Ends every inhibitor of `sender` (its connection went away); the count. */
unsigned inhibit_release_sender(Inhibitors *r, const char *sender);

/* How many of `mode` are held with an id below `before` (0: any id); ids
 * grow, so `before` = inhibit_next_id() at some moment selects the ones
 * held then. */
unsigned inhibit_count(const Inhibitors *r, InhibitMode mode, uint64_t before);
unsigned inhibit_count_sender(const Inhibitors *r, const char *sender);
/* Those `uid` holds; (uid_t) -1: all of them */
unsigned inhibit_count_uid(const Inhibitors *r, uid_t uid);
uint64_t inhibit_next_id(const Inhibitors *r);

/* "who (why, pid N, uid U), …" for those inhibit_count() counts, oldest
 * first, the first INHIBIT_DESCRIBE_MAX and " and N more"; "" when none. */
char *inhibit_describe(const Inhibitors *r, InhibitMode mode, uint64_t before);

/* "N inhibitors: who1 (why1), who2, …" of `mode`, oldest first, at most
 * `max` bytes (>= 64): each who and why cut to INHIBIT_SUMMARY_WORD_MAX
 * characters, the holders past the bound counted (" and N more"); NULL
 * when none is held. */
#define INHIBIT_SUMMARY_WORD_MAX 40
char *inhibit_summary(const Inhibitors *r, InhibitMode mode, size_t max);

/* Every inhibitor, oldest first; borrowed, valid until the registry changes. */
GPtrArray *inhibit_list(const Inhibitors *r);
