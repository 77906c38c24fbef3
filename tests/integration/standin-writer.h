/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A stand-in for fridge-image-writer --serve: it listens on fridged's
 * socket (DIR/state/image-writer.sock) in a thread of the test and speaks
 * hibernate/writer-protocol.h as the real writer does, following a
 * script. Used where the real writer cannot run (it needs /dev/snapshot).
 * fridged's checks (writer-verdict.h) are answered "usable" on the way. */

#include <glib.h>
#include <stdbool.h>

#include "harness.h"

/* What the stand-in does once asked to hibernate */
typedef enum WriterScript {
        SCRIPT_WRITE,        /* progress 2 of 4 MiB, then (when let go) resumed */
        SCRIPT_WAIT_CANCEL,  /* progress 2 of 4 MiB, then cancelled once fridged says cancel */
        SCRIPT_LATE_CANCEL,  /* progress, fridged's cancel heard, then resumed all the same: it came
                              * after the freeze (fridged frozen with its Cancel unread, taken on
                              * the resume: the restored writer no longer reads) */
        SCRIPT_UNAVAILABLE,  /* unavailable: the kernel's writer goes on */
        SCRIPT_HANG_UP,      /* progress, then the connection closes with no result */
        SCRIPT_DEAF,         /* progress, fridged's cancel heard, then silence until fridged hangs up
                              * (a writer hung before its freeze) */
} WriterScript;

typedef struct StandinWriter {
        WriterScript script;
        int listen_fd;
        GThread *thread;
        GMutex lock;
        GCond cond;
        bool go;             /* SCRIPT_WRITE: finish the write */
        GString *heard;      /* every line fridged sent, '\n'-ended */
        bool hung_up;        /* fridged closed the connection first */
} StandinWriter;

/* Listens on fridged's socket before fridged looks */
StandinWriter *standin_writer_start(Harness *h, WriterScript script);
/* SCRIPT_WRITE: the write finishes (8 MiB raw, 2 MiB written, 0.5 s) */
void standin_writer_let_go(StandinWriter *w);
/* Every line fridged sent, '\n'-ended */
char *standin_writer_heard(StandinWriter *w);
/* Until the thread has ended (fridged hung up, or the script ran out) */
void standin_writer_join(StandinWriter *w);
void standin_writer_free(StandinWriter *w);
