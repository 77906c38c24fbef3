/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util.h"

#include <string.h>

static gint compare_strings(gconstpointer a, gconstpointer b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

GPtrArray *hash_table_sorted_keys(GHashTable *t) {
        GPtrArray *keys = g_ptr_array_sized_new(g_hash_table_size(t));
        GHashTableIter it;
        gpointer k;
        g_hash_table_iter_init(&it, t);
        while (g_hash_table_iter_next(&it, &k, NULL))
                g_ptr_array_add(keys, k);
        g_ptr_array_sort(keys, compare_strings);
        return keys;
}
