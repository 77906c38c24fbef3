/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "inhibit.h"

#include <errno.h>
#include <string.h>

#include "lease.h"
#include "log.h"
#include "util.h"

typedef struct Entry {
        Inhibitor pub;
        Inhibitors *owner;
        Lease *lease;
} Entry;

struct Inhibitors {
        sd_event *event;
        InhibitReleased released;
        void *userdata;
        GHashTable *by_id; /* id → Entry* */
        uint64_t next_id;
};

static const char *const mode_names[_INHIBIT_MODE_MAX] = {
        [INHIBIT_BLOCK] = "block",
        [INHIBIT_DELAY] = "delay",
};

const char *inhibit_mode_to_string(InhibitMode m) {
        return m >= 0 && m < _INHIBIT_MODE_MAX ? mode_names[m] : "";
}

InhibitMode inhibit_mode_from_string(const char *s) {
        for (int m = 0; m < _INHIBIT_MODE_MAX; m++)
                if (s && strcmp(s, mode_names[m]) == 0)
                        return (InhibitMode) m;
        return _INHIBIT_MODE_INVALID;
}

static void entry_free(Entry *e) {
        if (!e)
                return;
        lease_free(e->lease);
        g_free(e->pub.who);
        g_free(e->pub.why);
        g_free(e->pub.sender);
        g_free(e);
}

Inhibitors *inhibit_new(sd_event *e, InhibitReleased released, void *userdata) {
        Inhibitors *r = g_new0(Inhibitors, 1);
        r->event = e ? sd_event_ref(e) : NULL;
        r->released = released;
        r->userdata = userdata;
        r->by_id = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, (GDestroyNotify) entry_free);
        r->next_id = 1;
        return r;
}

Inhibitors *inhibit_free(Inhibitors *r) {
        if (!r)
                return NULL;
        g_hash_table_unref(r->by_id);
        sd_event_unref(r->event);
        g_free(r);
        return NULL;
}

bool inhibit_release(Inhibitors *r, uint64_t id) {
        Entry *e = g_hash_table_lookup(r->by_id, &id);
        if (!e)
                return false;
        g_hash_table_steal(r->by_id, &id);
        log_info("Inhibitor %" G_GUINT64_FORMAT " (%s) by %s released", id, inhibit_mode_to_string(e->pub.mode),
                 e->pub.who);
        /* Out of the table first: the callback sees the registry without it */
        if (r->released)
                r->released(&e->pub, r->userdata);
        entry_free(e);
        return true;
}

static void on_lease_ended(void *userdata) {
        Entry *e = userdata;
        inhibit_release(e->owner, e->pub.id);
}

unsigned inhibit_count_sender(const Inhibitors *r, const char *sender) {
        GHashTableIter i;
        gpointer v;
        unsigned n = 0;
        g_hash_table_iter_init(&i, r->by_id);
        while (g_hash_table_iter_next(&i, NULL, &v))
                n += g_strcmp0(((Entry *) v)->pub.sender, sender) == 0;
        return n;
}

unsigned inhibit_count_uid(const Inhibitors *r, uid_t uid) {
        GHashTableIter i;
        gpointer v;
        unsigned n = 0;
        g_hash_table_iter_init(&i, r->by_id);
        while (g_hash_table_iter_next(&i, NULL, &v))
                n += uid == (uid_t) -1 || ((Entry *) v)->pub.uid == uid;
        return n;
}

int inhibit_add(Inhibitors *r, const Inhibitor *tmpl, int *ret_fd, uint64_t *ret_id, char **ret_message) {
        if (g_hash_table_size(r->by_id) >= INHIBITORS_MAX) {
                *ret_message = g_strdup_printf("fridged already keeps %u inhibitors", INHIBITORS_MAX);
                return FRIDGE_ERROR_LIMITS_EXCEEDED;
        }
        if (inhibit_count_sender(r, tmpl->sender) >= INHIBITORS_PER_SENDER_MAX) {
                *ret_message = g_strdup_printf("this connection already holds %u inhibitors",
                                               INHIBITORS_PER_SENDER_MAX);
                return FRIDGE_ERROR_LIMITS_EXCEEDED;
        }

        Entry *e = g_new0(Entry, 1);
        e->owner = r;
        e->pub = (Inhibitor) { .id = r->next_id, .mode = tmpl->mode, .who = g_strdup(tmpl->who),
                               .why = g_strdup(tmpl->why ? tmpl->why : ""),
                               .sender = g_strdup(tmpl->sender ? tmpl->sender : ""),
                               .uid = tmpl->uid, .pid = tmpl->pid };
        int fd;
        int k = lease_new(r->event, "inhibitor", on_lease_ended, e, &e->lease, &fd);
        if (k < 0) {
                entry_free(e);
                return k;
        }
        r->next_id++;
        g_hash_table_insert(r->by_id, &e->pub.id, e);
        log_info("Inhibitor %" G_GUINT64_FORMAT " (%s) taken by %s (%s, pid %d, uid %u)", e->pub.id,
                 inhibit_mode_to_string(e->pub.mode), e->pub.who, e->pub.why, (int) e->pub.pid,
                 (unsigned) e->pub.uid);
        *ret_fd = fd;
        *ret_id = e->pub.id;
        return 0;
}

static gint compare_id(gconstpointer a, gconstpointer b) {
        const Inhibitor *x = *(Inhibitor *const *) a, *y = *(Inhibitor *const *) b;
        return (x->id > y->id) - (x->id < y->id);
}

GPtrArray *inhibit_list(const Inhibitors *r) {
        GPtrArray *out = g_ptr_array_new();
        GHashTableIter i;
        gpointer v;
        g_hash_table_iter_init(&i, r->by_id);
        while (g_hash_table_iter_next(&i, NULL, &v))
                g_ptr_array_add(out, &((Entry *) v)->pub);
        g_ptr_array_sort(out, compare_id);
        return out;
}

unsigned inhibit_release_sender(Inhibitors *r, const char *sender) {
        g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        g_autoptr(GPtrArray) all = inhibit_list(r);
        for (guint i = 0; i < all->len; i++) {
                const Inhibitor *in = all->pdata[i];
                if (g_strcmp0(in->sender, sender) == 0)
                        g_array_append_val(ids, in->id);
        }
        /* By id: a callback may change the table under a list of pointers */
        unsigned n = 0;
        for (guint i = 0; i < ids->len; i++)
                n += inhibit_release(r, g_array_index(ids, uint64_t, i));
        return n;
}

static bool selected(const Inhibitor *in, InhibitMode mode, uint64_t before) {
        return in->mode == mode && (before == 0 || in->id < before);
}

unsigned inhibit_count(const Inhibitors *r, InhibitMode mode, uint64_t before) {
        GHashTableIter i;
        gpointer v;
        unsigned n = 0;
        g_hash_table_iter_init(&i, r->by_id);
        while (g_hash_table_iter_next(&i, NULL, &v))
                n += selected(&((Entry *) v)->pub, mode, before);
        return n;
}

uint64_t inhibit_next_id(const Inhibitors *r) {
        return r->next_id;
}

/* The first INHIBIT_DESCRIBE_MAX, then a count: a reply and a journal line
 * stay short however many are held */
char *inhibit_describe(const Inhibitors *r, InhibitMode mode, uint64_t before) {
        g_autoptr(GPtrArray) all = inhibit_list(r);
        GString *s = g_string_new(NULL);
        unsigned shown = 0, more = 0;
        for (guint i = 0; i < all->len; i++) {
                const Inhibitor *in = all->pdata[i];
                if (!selected(in, mode, before))
                        continue;
                if (shown == INHIBIT_DESCRIBE_MAX) {
                        more++;
                        continue;
                }
                g_string_append_printf(s, "%s%s (%s%spid %d, uid %u)", shown ? ", " : "", in->who, in->why,
                                       *in->why ? ", " : "", (int) in->pid, (unsigned) in->uid);
                shown++;
        }
        if (more > 0)
                g_string_append_printf(s, " and %u more", more);
        return g_string_free(s, FALSE);
}

/* `s` cut to `max` characters (UTF-8: D-Bus strings are), "…" marking a cut */
static void append_cut(GString *out, const char *s, glong max) {
        if (g_utf8_strlen(s, -1) <= max) {
                g_string_append(out, s);
                return;
        }
        g_autofree char *head = g_utf8_substring(s, 0, max - 1);
        g_string_append(out, head);
        g_string_append(out, "…");
}

/* Each holder's who and why are cut short, and the holders that would pass
 * `max` bytes are counted instead: logind lists it, and a desktop shows it */
char *inhibit_summary(const Inhibitors *r, InhibitMode mode, size_t max) {
        g_autoptr(GPtrArray) all = inhibit_list(r);
        unsigned n = inhibit_count(r, mode, 0), shown = 0;
        if (n == 0)
                return NULL;
        GString *s = g_string_new(NULL);
        g_string_printf(s, "%u inhibitor%s: ", n, n == 1 ? "" : "s");
        /* room for " and N more" */
        size_t room = max > 24 ? max - 24 : 0;
        for (guint i = 0; i < all->len; i++) {
                const Inhibitor *in = all->pdata[i];
                if (!selected(in, mode, 0))
                        continue;
                g_autoptr(GString) one = g_string_new(shown ? ", " : "");
                append_cut(one, in->who, INHIBIT_SUMMARY_WORD_MAX);
                if (*in->why) {
                        g_string_append(one, " (");
                        append_cut(one, in->why, INHIBIT_SUMMARY_WORD_MAX);
                        g_string_append_c(one, ')');
                }
                if (s->len + one->len > room)
                        break;
                g_string_append(s, one->str);
                shown++;
        }
        if (shown < n)
                g_string_append_printf(s, "%s%u more", shown ? " and " : "", n - shown);
        return g_string_free(s, FALSE);
}
