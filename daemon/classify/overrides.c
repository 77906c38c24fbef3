/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "overrides.h"

#include <errno.h>

#include "cgroups.h"
#include "classify.h"
#include "lease.h"
#include "log.h"

typedef struct ClassHold {
        Overrides *owner;
        uint64_t id;
        char *cgroup;
        CgroupClass class;
        char *reason;
        uid_t uid;              /* the holder's, for the per-user cap */
        Lease *lease;
} ClassHold;

struct Overrides {
        sd_event *event;
        OverridesReleased released;
        void *userdata;
        GHashTable *by_target;  /* unit or cgroup path → ClassChoice* (SetClass) */
        GHashTable *holds;      /* cgroup path → ClassChoice*, derived from hold_list */
        GHashTable *hold_list;  /* id → ClassHold* */
        uint64_t next_hold_id;
};

static void class_hold_free(ClassHold *h) {
        if (!h)
                return;
        lease_free(h->lease);
        g_free(h->cgroup);
        g_free(h->reason);
        g_free(h);
}

Overrides *overrides_new(sd_event *e, OverridesReleased released, void *userdata) {
        Overrides *o = g_new0(Overrides, 1);
        o->event = sd_event_ref(e);
        o->released = released;
        o->userdata = userdata;
        o->by_target = class_choice_table_new();
        o->holds = class_choice_table_new();
        o->hold_list = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, (GDestroyNotify) class_hold_free);
        return o;
}

Overrides *overrides_free(Overrides *o) {
        if (!o)
                return NULL;
        g_hash_table_unref(o->hold_list);
        g_hash_table_unref(o->holds);
        g_hash_table_unref(o->by_target);
        sd_event_unref(o->event);
        g_free(o);
        return NULL;
}

void overrides_set(Overrides *o, const char *target, CgroupClass class, const char *who) {
        if (class < 0) {
                g_hash_table_remove(o->by_target, target);
                log_info("%s removed the class override of %s", who, target);
                return;
        }
        g_autofree char *reason = g_strdup_printf("SetClass by %s", who);
        ClassChoice *c;
        (void) class_choice_new(class, reason, &c); /* cannot fail */
        g_hash_table_replace(o->by_target, g_strdup(target), c);
        log_info("%s set the class of %s to %s", who, target, cgroup_class_to_string(class));
}

static gint compare_hold_id(gconstpointer a, gconstpointer b) {
        const ClassHold *x = *(ClassHold *const *) a, *y = *(ClassHold *const *) b;
        return (x->id > y->id) - (x->id < y->id);
}

/* The classification reads one choice per cgroup: the newest hold wins */
static void rebuild_holds(Overrides *o) {
        g_autoptr(GPtrArray) sorted = g_ptr_array_new();
        GHashTableIter it;
        gpointer v;
        g_hash_table_iter_init(&it, o->hold_list);
        while (g_hash_table_iter_next(&it, NULL, &v))
                g_ptr_array_add(sorted, v);
        g_ptr_array_sort(sorted, compare_hold_id);
        g_hash_table_remove_all(o->holds);
        for (guint i = 0; i < sorted->len; i++) {
                const ClassHold *h = sorted->pdata[i];
                ClassChoice *c;
                (void) class_choice_new(h->class, h->reason, &c); /* cannot fail */
                g_hash_table_replace(o->holds, g_strdup(h->cgroup), c);
        }
}

bool overrides_release_hold(Overrides *o, uint64_t id) {
        ClassHold *h = g_hash_table_lookup(o->hold_list, &id);
        if (!h)
                return false;
        g_autofree char *shown = cgroups_escape(h->cgroup);
        log_info("Hold %" G_GUINT64_FORMAT " on %s (%s) released", id, shown, h->reason);
        g_hash_table_remove(o->hold_list, &id);
        rebuild_holds(o);
        return true;
}

static void on_lease_ended(void *userdata) {
        ClassHold *h = userdata;
        Overrides *o = h->owner;
        uint64_t id = h->id;
        if (overrides_release_hold(o, id) && o->released)
                o->released(id, o->userdata);
}

int overrides_add_hold(Overrides *o, const char *cgroup, CgroupClass class, uid_t uid, const char *who,
                       const char *why, int *ret_fd, uint64_t *ret_hold) {
        ClassHold *h = g_new0(ClassHold, 1);
        *h = (ClassHold) { .owner = o, .id = ++o->next_hold_id, .cgroup = g_strdup(cgroup), .class = class,
                           .reason = g_strdup_printf("held by %s: %s", who, why), .uid = uid };
        int fd;
        int r = lease_new(o->event, "class-hold", on_lease_ended, h, &h->lease, &fd);
        if (r < 0) {
                class_hold_free(h);
                return r;
        }

        g_hash_table_insert(o->hold_list, &h->id, h);
        rebuild_holds(o);
        log_info("Hold %" G_GUINT64_FORMAT ": %s keeps %s (%s)", h->id, h->cgroup, cgroup_class_to_string(class),
                 h->reason);
        *ret_fd = fd;
        *ret_hold = h->id;
        return 0;
}

unsigned overrides_count_holds(Overrides *o, uid_t uid) {
        GHashTableIter i;
        gpointer v;
        unsigned n = 0;
        g_hash_table_iter_init(&i, o->hold_list);
        while (g_hash_table_iter_next(&i, NULL, &v))
                n += uid == (uid_t) -1 || ((ClassHold *) v)->uid == uid;
        return n;
}

GHashTable *overrides_by_target(Overrides *o) {
        return o->by_target;
}

GHashTable *overrides_holds(Overrides *o) {
        return o->holds;
}
