/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "detect-queue.h"

#include "log.h"

typedef struct Item {
        PlanNode *node;
        char *procs;
        char *reason;   /* set when a data cleaner was found */
} Item;

struct DetectQueue {
        DetectInput in;                 /* the walk's, but for private_reasons */
        GHashTable *walk_reasons;       /* the walk's private_reasons, filled at the end */
        GAsyncQueue *todo;              /* Item*; the thread ends at `stop` */
        GPtrArray *items;               /* Item*, owned: every push, for the findings */
        GThread *thread;                /* NULL until the first push, or when none could start */
        bool no_thread;
        uint64_t log_cycle;             /* the walk's thread's, for the other's log lines */
};

static Item stop; /* the thread's end, pushed last */

DetectQueue *detect_queue_new(const DetectInput *in) {
        DetectQueue *q = g_new0(DetectQueue, 1);
        q->in = *in;
        q->walk_reasons = in->private_reasons;
        /* each thread its own, merged at the end: a hash table is not shared */
        q->in.private_reasons = in->private_reasons ? detect_private_reasons_new() : NULL;
        q->todo = g_async_queue_new();
        q->items = g_ptr_array_new();
        q->log_cycle = log_get_cycle();
        return q;
}

static void item_detect(const DetectInput *in, Item *it) {
        (void) detect_procs(in, it->procs, &it->reason);
        g_clear_pointer(&it->procs, g_free);
}

static gpointer detect_thread(gpointer data) {
        DetectQueue *q = data;
        log_set_thread_cycle(q->log_cycle);
        for (Item *it; (it = g_async_queue_pop(q->todo)) != &stop;)
                item_detect(&q->in, it);
        return NULL;
}

void detect_queue_push(DetectQueue *q, PlanNode *node, char *procs) {
        Item *it = g_new0(Item, 1);
        *it = (Item) { .node = node, .procs = procs };
        g_ptr_array_add(q->items, it);
        if (!q->thread && !q->no_thread) {
                g_autoptr(GError) error = NULL;
                q->thread = g_thread_try_new("fridged-detect", detect_thread, q, &error);
                if (!q->thread) {
                        log_debug("Cannot start a detection thread (%s); the walk detects at its end",
                                  error->message);
                        q->no_thread = true;
                }
        }
        g_async_queue_push(q->todo, it);
}

/* What the thread found about who may read a reason, into the walk's */
static void merge_reasons(GHashTable *into, GHashTable *from) {
        GHashTableIter iter;
        gpointer key, value;
        g_hash_table_iter_init(&iter, from);
        while (g_hash_table_iter_next(&iter, &key, &value)) {
                g_hash_table_iter_steal(&iter);
                g_hash_table_replace(into, key, value);
        }
}

void detect_queue_finish(DetectQueue *q) {
        /* the walk's thread helps with what the other has not taken */
        DetectInput mine = q->in;
        mine.private_reasons = q->walk_reasons;
        for (Item *it; (it = g_async_queue_try_pop(q->todo));)
                item_detect(&mine, it);
        if (q->thread) {
                g_async_queue_push(q->todo, &stop);
                g_thread_join(q->thread);
        }
        if (q->in.private_reasons) {
                merge_reasons(q->walk_reasons, q->in.private_reasons);
                g_hash_table_unref(q->in.private_reasons);
        }
        for (guint i = 0; i < q->items->len; i++) {
                Item *it = q->items->pdata[i];
                /* a cgroup that could not be read whole stays skipped, saying why */
                if (it->reason && !it->node->skipped) {
                        it->node->class = CLASS_LATE;
                        g_free(it->node->reason);
                        it->node->reason = g_steal_pointer(&it->reason);
                }
                g_free(it->reason);
                g_free(it);
        }
        g_ptr_array_unref(q->items);
        g_async_queue_unref(q->todo);
        g_free(q);
}
