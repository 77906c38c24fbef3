/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "plan.h"

#include <string.h>

static const char *const class_names[_CLASS_MAX] = {
        [CLASS_EARLY] = "early",
        [CLASS_LATE] = "late",
        [CLASS_NOFREEZE] = "nofreeze",
};

const char *cgroup_class_to_string(CgroupClass c) {
        if (c < 0 || c >= _CLASS_MAX)
                return NULL;
        return class_names[c];
}

CgroupClass cgroup_class_from_string(const char *s) {
        if (!s)
                return _CLASS_INVALID;
        for (int c = 0; c < _CLASS_MAX; c++)
                if (strcmp(s, class_names[c]) == 0)
                        return (CgroupClass) c;
        return _CLASS_INVALID;
}

int plan_node_new(const char *path, CgroupClass class, const char *reason, bool has_processes, PlanNode **ret) {
        PlanNode *n = g_new0(PlanNode, 1);
        n->path = g_strdup(path);
        n->class = class;
        n->reason = g_strdup(reason ? reason : "");
        n->has_processes = has_processes;
        n->children = plan_node_array_new();
        *ret = n;
        return 0;
}

PlanNode *plan_node_add_child(PlanNode *parent, PlanNode *child) {
        g_ptr_array_add(parent->children, child);
        return child;
}

PlanNode *plan_node_free(PlanNode *n) {
        if (!n)
                return NULL;
        g_free(n->path);
        g_free(n->reason);
        g_ptr_array_unref(n->children);
        g_free(n);
        return NULL;
}

/* GLib's containers take a destroy function that returns nothing */
static void plan_node_destroy(gpointer n) {
        plan_node_free(n);
}

GPtrArray *plan_node_array_new(void) {
        return g_ptr_array_new_with_free_func(plan_node_destroy);
}

static void plan_entry_free(PlanEntry *e) {
        if (!e)
                return;
        g_free(e->cgroup);
        g_free(e->unit);
        g_free(e->reason);
        g_free(e);
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        g_ptr_array_unref(p->entries);
        g_free(p);
        return NULL;
}

static const char *const unit_suffixes[] = {
        ".service", ".scope", ".slice", ".socket", ".mount", ".swap", ".target", ".timer", ".path",
};

const char *plan_unit_of(const char *cgroup_path) {
        if (!cgroup_path)
                return "";
        const char *slash = strrchr(cgroup_path, '/');
        const char *base = slash ? slash + 1 : cgroup_path;

        for (size_t i = 0; i < G_N_ELEMENTS(unit_suffixes); i++) {
                const char *s = unit_suffixes[i];
                /* ".service" alone names no unit: there must be a name before it */
                if (strlen(base) > strlen(s) && g_str_has_suffix(base, s))
                        return base;
        }
        return "";
}

/* What a subtree looks like from above, computed bottom-up once so that
 * deciding about a node never walks its subtree again. */
typedef struct Summary {
        unsigned mask;       /* bit per class of the cgroups that count */
        unsigned n_deciding; /* how many cgroups count */
        const char *reason;  /* their shared reason; REASON_MIXED when they differ */
} Summary;

static const char REASON_MIXED[] = "";

#define INNER_WITH_PROCESSES_REASON \
        "has processes of its own in a mixed subtree; freezing it would freeze its children"

typedef struct Builder {
        GPtrArray *by_class[_CLASS_MAX]; /* PlanEntry*, owning */
} Builder;

static bool node_counts(const PlanNode *n) {
        /* An empty inner cgroup takes no side: it only groups others */
        return n->has_processes || n->children->len == 0;
}

static CgroupClass node_class(const PlanNode *n) {
        /* Freezable is the default; an unset class must not become a bad shift */
        return n->class >= 0 && n->class < _CLASS_MAX ? n->class : CLASS_EARLY;
}

static bool mask_is_uniform(unsigned mask) {
        return mask != 0 && (mask & (mask - 1)) == 0;
}

static CgroupClass mask_class(unsigned mask) {
        return (CgroupClass) __builtin_ctz(mask);
}

static void summary_add(Summary *s, unsigned mask, unsigned n_deciding, const char *reason) {
        if (n_deciding == 0)
                return;
        if (s->n_deciding == 0)
                s->reason = reason;
        else if (s->reason == REASON_MIXED || reason == REASON_MIXED || strcmp(s->reason, reason) != 0)
                s->reason = REASON_MIXED;
        s->mask |= mask;
        s->n_deciding += n_deciding;
}

static void emit(Builder *b, const PlanNode *n, CgroupClass class, const char *reason) {
        PlanEntry *e = g_new0(PlanEntry, 1);
        e->cgroup = g_strdup(n->path);
        e->unit = g_strdup(plan_unit_of(n->path));
        e->class = class;
        e->reason = g_strdup(reason);
        g_ptr_array_add(b->by_class[class], e);
}

/* A uniform subtree becomes one entry at its top. */
static void emit_uniform(Builder *b, const PlanNode *n, const Summary *s) {
        CgroupClass class = mask_class(s->mask);

        if (s->reason != REASON_MIXED)
                emit(b, n, class, s->reason);
        else if (node_counts(n))
                emit(b, n, class, n->reason);
        else {
                g_autofree char *why = g_strdup_printf("%u cgroups, all %s", s->n_deciding,
                                                       cgroup_class_to_string(class));
                emit(b, n, class, why);
        }
}

/* Post-order: summarizes n's subtree and, when it is mixed, emits its parts.
 * A uniform subtree emits nothing itself: its parent (or the root loop)
 * writes it as one entry, since only the parent knows whether it is the top. */
static Summary build_subtree(Builder *b, const PlanNode *n) {
        guint n_children = n->children->len;
        g_autofree Summary *child = g_new0(Summary, n_children ? n_children : 1);
        Summary s = { 0 };

        for (guint i = 0; i < n_children; i++) {
                child[i] = build_subtree(b, n->children->pdata[i]);
                summary_add(&s, child[i].mask, child[i].n_deciding, child[i].reason);
        }
        if (node_counts(n))
                summary_add(&s, 1u << node_class(n), 1, n->reason);

        if (s.mask == 0 || mask_is_uniform(s.mask))
                return s;

        /* Mixed: each uniform child is frozen at its top; mixed children have
         * already emitted their own parts. */
        for (guint i = 0; i < n_children; i++)
                if (mask_is_uniform(child[i].mask))
                        emit_uniform(b, n->children->pdata[i], &child[i]);

        if (n->has_processes)
                /* One that is nofreeze anyway keeps the reason it was given */
                emit(b, n, CLASS_NOFREEZE,
                     node_class(n) == CLASS_NOFREEZE ? n->reason : INNER_WITH_PROCESSES_REASON);
        return s;
}

/* Path order by components: a parent sorts before its children, and
 * "a/b" before "a-x" whatever the bytes of '/' and '-' are. */
static int path_compare(const char *a, const char *b) {
        for (;; a++, b++) {
                unsigned char ca = (unsigned char) *a, cb = (unsigned char) *b;
                if (ca == cb) {
                        if (ca == '\0')
                                return 0;
                        continue;
                }
                if (ca == '/' || cb == '/')
                        return ca == '\0' ? -1 : cb == '\0' ? 1 : ca == '/' ? -1 : 1;
                return ca < cb ? -1 : 1;
        }
}

static int entry_compare(gconstpointer a, gconstpointer b) {
        const PlanEntry *x = *(const PlanEntry *const *) a, *y = *(const PlanEntry *const *) b;
        return path_compare(x->cgroup, y->cgroup);
}

Plan *plan_build(PlanNode *const *roots, size_t n_roots) {
        Builder b = { 0 };
        for (int c = 0; c < _CLASS_MAX; c++)
                b.by_class[c] = g_ptr_array_new_with_free_func((GDestroyNotify) plan_entry_free);

        for (size_t i = 0; i < n_roots; i++) {
                if (!roots[i])
                        continue;
                Summary s = build_subtree(&b, roots[i]);
                if (mask_is_uniform(s.mask))
                        emit_uniform(&b, roots[i], &s);
        }

        Plan *p = g_new0(Plan, 1);
        p->entries = g_ptr_array_new_with_free_func((GDestroyNotify) plan_entry_free);
        p->n_early = b.by_class[CLASS_EARLY]->len;
        p->n_late = b.by_class[CLASS_LATE]->len;
        for (int c = 0; c < _CLASS_MAX; c++) {
                g_ptr_array_sort(b.by_class[c], entry_compare);
                /* The entries move to the plan: the per-class array must not free them */
                for (guint k = 0; k < b.by_class[c]->len; k++)
                        g_ptr_array_add(p->entries, b.by_class[c]->pdata[k]);
                g_ptr_array_set_free_func(b.by_class[c], NULL);
                g_ptr_array_unref(b.by_class[c]);
        }
        return p;
}
