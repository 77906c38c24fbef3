/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "detect-cache.h"

#include <errno.h>
#include <glib.h>
#include <string.h>

typedef struct Entry {
        uint64_t starttime;
        uint64_t walk;          /* the last walk that looked it up or stored it */
        bool holds;
} Entry;

struct DetectCache {
        gatomicrefcount ref;
        GMutex lock;
        char *token;            /* the newest walk's; NULL before the first */
        uint64_t gen;           /* bumped whenever the token changes */
        uint64_t walk;          /* bumped by every walk */
        GHashTable *entries;    /* GINT_TO_POINTER(pid) → Entry* */
};

DetectCache *detect_cache_new(void) {
        DetectCache *c = g_new0(DetectCache, 1);
        g_atomic_ref_count_init(&c->ref);
        g_mutex_init(&c->lock);
        c->entries = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        return c;
}

DetectCache *detect_cache_ref(DetectCache *c) {
        if (c)
                g_atomic_ref_count_inc(&c->ref);
        return c;
}

DetectCache *detect_cache_unref(DetectCache *c) {
        if (!c || !g_atomic_ref_count_dec(&c->ref))
                return NULL;
        g_hash_table_unref(c->entries);
        g_free(c->token);
        g_mutex_clear(&c->lock);
        g_free(c);
        return NULL;
}

static gboolean entry_is_stale(gpointer key, gpointer value, gpointer userdata) {
        const Entry *e = value;
        return e->walk + 2 <= *(const uint64_t *) userdata;
}

uint64_t detect_cache_begin(DetectCache *c, const char *token) {
        g_mutex_lock(&c->lock);
        c->walk++;
        if (!c->token || strcmp(c->token, token) != 0) {
                g_hash_table_remove_all(c->entries);
                g_free(c->token);
                c->token = g_strdup(token);
                c->gen++;
        } else
                g_hash_table_foreach_remove(c->entries, entry_is_stale, &c->walk);
        uint64_t gen = c->gen;
        g_mutex_unlock(&c->lock);
        return gen;
}

int detect_cache_lookup(DetectCache *c, pid_t pid, uint64_t starttime) {
        g_mutex_lock(&c->lock);
        Entry *e = g_hash_table_lookup(c->entries, GINT_TO_POINTER(pid));
        int r = -ENOENT;
        if (e && e->starttime == starttime) {
                e->walk = c->walk;
                r = e->holds;
        }
        g_mutex_unlock(&c->lock);
        return r;
}

void detect_cache_store(DetectCache *c, uint64_t gen, pid_t pid, uint64_t starttime, bool holds) {
        g_mutex_lock(&c->lock);
        if (gen == c->gen) {
                Entry *e = g_new(Entry, 1);
                *e = (Entry) { .starttime = starttime, .walk = c->walk, .holds = holds };
                g_hash_table_replace(c->entries, GINT_TO_POINTER(pid), e);
        }
        g_mutex_unlock(&c->lock);
}

unsigned detect_cache_size(DetectCache *c) {
        g_mutex_lock(&c->lock);
        unsigned n = g_hash_table_size(c->entries);
        g_mutex_unlock(&c->lock);
        return n;
}
