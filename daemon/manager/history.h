/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "write-queue.h"

/* The history of past cycles: PERSISTENT_DIR/history/ID.cycle, one
 * GKeyFile a cycle, written atomically when the cycle ends (and for an
 * interrupted one at start-up) off the loop, on the write queue, at most MaxCycles of them, the oldest
 * removed first. This file owns the [Cycle] group; other modules add
 * groups of their own to the same key file before it is stored (the
 * manager builds it: manager-history.c). */

#define HISTORY_GROUP "Cycle"
#define HISTORY_STARTER_HOOK "hook"     /* the sleep hook (systemd-sleep) started it */
#define HISTORY_STARTER_CALLER "caller" /* a D-Bus caller of Sleep */

typedef struct HistoryCycle {
        uint64_t id;
        char *kind;             /* suspend, hibernate, hybrid-sleep */
        char *starter;          /* HISTORY_STARTER_* */
        uid_t uid;              /* the starter's; root for the hook; (uid_t) -1: unknown */
        pid_t pid;              /* the starter's; 0: unknown */
        uint64_t start_usec;    /* CLOCK_REALTIME */
        uint64_t end_usec;      /* CLOCK_REALTIME; 0: unknown (the machine went down) */
        char *result;           /* done, dry-run, aborted, failed */
        char *error;            /* the D-Bus error name; "" when done */
        char *phase;            /* the phase it failed or was cancelled in; "" */
        char *message;
        uint64_t slept_usec;    /* time asleep; 0 when it did not sleep */
        char *wake_source;      /* LastWakeReason's format; "" when it did not sleep */
        char **warnings;        /* what fridge could not do, though the cycle went on; NULL: none */
        /* A hibernation's image write (the power backend's PowerImageWrite) */
        char *image_writer;     /* "fridge", "kernel"; NULL or "": none told (a file of an older fridged) */
        uint64_t image_raw_bytes, image_written_bytes, image_usec; /* 0: not reported */
        uint64_t image_done_bytes, image_total_bytes;              /* the write's last progress */
} HistoryCycle;

/* The image write's keys, optional in the key file and sent by ListCycles
 * whatever the file had: each once here, for the file and the bus */
typedef struct HistoryImageKey {
        const char *file_key;   /* in [Cycle]: "ImageRawBytes" */
        const char *bus_key;    /* in ListCycles' dictionary: "image-raw-bytes" */
        char type;              /* 's' (char *) or 't' (uint64_t) */
        size_t offset;          /* in HistoryCycle */
} HistoryImageKey;

extern const HistoryImageKey history_image_keys[];
extern const size_t history_image_keys_count;

HistoryCycle *history_cycle_free(HistoryCycle *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HistoryCycle, history_cycle_free)

/* The [Cycle] group of `kf` (replaced if there) */
void history_cycle_to_keyfile(const HistoryCycle *c, GKeyFile *kf);
/* -EBADMSG naming nothing: the caller names the file */
int history_cycle_from_keyfile(GKeyFile *kf, HistoryCycle **ret);

typedef struct History History;

/* Opens (creating) DIR_FD/history and reads what is there; a malformed
 * or foreign file is skipped with a warning naming it. `where` is for
 * the log. */
int history_open(int dir_fd, const char *where, unsigned max_cycles, History **ret);
History *history_free(History *h);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(History, history_free)

/* Stores cycle `c`: its [Cycle] group is written into `kf`, which may
 * carry other groups, and the file replaces any of that id; then the
 * oldest beyond the bound go. The list in memory has it at once; the
 * file and the prune go through `q`, in order (NULL: done here). Until
 * the disk caught up, history_load() may not find it yet. */
int history_add(History *h, const HistoryCycle *c, GKeyFile *kf, WriteQueue *q);
/* A reload's [History] MaxCycles */
void history_set_max_cycles(History *h, unsigned max_cycles);
/* The whole stored file of cycle `id` ([Cycle] and every other group):
 * -ENOENT when it is not kept, -EBADMSG when it is not a key file */
int history_load(const History *h, uint64_t id, GKeyFile **ret);
/* Whether the history keeps cycle `id` */
bool history_has(const History *h, uint64_t id);
/* The cycles kept, newest first (borrowed; valid until the next add) */
guint history_count(const History *h);
const HistoryCycle *history_get(const History *h, guint newest_first_index);
