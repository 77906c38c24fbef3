/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "plan.h"

#include <string.h>

static const char *const class_names[_CLASS_MAX] = {
        [CLASS_EARLY] = "early",
        [CLASS_LATE] = "late",
        [CLASS_NOFREEZE] = "nofreeze",
        [CLASS_UI] = "ui",
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

void plan_node_skip(PlanNode *n, const char *why) {
        n->skipped = true;
        g_free(n->reason);
        n->reason = g_strdup(why);
}

/* Children are moved to a work list before their parent goes, so a chain
 * of any depth is freed in a loop, not a recursion. */
PlanNode *plan_node_free(PlanNode *n) {
        if (!n)
                return NULL;
        g_autoptr(GPtrArray) todo = g_ptr_array_new();
        g_ptr_array_add(todo, n);
        while (todo->len > 0) {
                PlanNode *x = g_ptr_array_steal_index_fast(todo, todo->len - 1);
                g_ptr_array_set_free_func(x->children, NULL);
                g_ptr_array_extend_and_steal(todo, x->children);
                g_free(x->path);
                g_free(x->reason);
                g_free(x);
        }
        return NULL;
}

/* GLib's containers take a destroy function that returns nothing */
static void plan_node_destroy(gpointer n) {
        plan_node_free(n);
}

GPtrArray *plan_node_array_new(void) {
        return g_ptr_array_new_with_free_func(plan_node_destroy);
}

/* One block holds an entry and its strings (see emit_to()) */
static void plan_entry_free(PlanEntry *e) {
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

/* The mask bit of a skipped cgroup: never uniform, so no ancestor of one
 * is frozen whole. */
#define SKIPPED_BIT (1u << _CLASS_MAX)
/* The builder's bucket of skipped entries, after the classes' */
#define BUCKET_SKIPPED _CLASS_MAX

#define INNER_WITH_PROCESSES_REASON \
        "has processes of its own in a mixed subtree; freezing it would freeze its children"

typedef struct Builder {
        GPtrArray *by_class[_CLASS_MAX + 1]; /* PlanEntry*, owning; the last holds the skipped */
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
        return mask != 0 && !(mask & SKIPPED_BIT) && (mask & (mask - 1)) == 0;
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

static void emit_to(Builder *b, int bucket, const PlanNode *n, CgroupClass class, const char *reason) {
        /* One allocation for the entry, its path and its reason (a plan of
         * 100,000 cgroups made four each), the unit a part of the path */
        size_t path_len = strlen(n->path) + 1, reason_len = strlen(reason) + 1;
        PlanEntry *e = g_malloc0(sizeof(PlanEntry) + path_len + reason_len);
        e->cgroup = memcpy((char *) (e + 1), n->path, path_len);
        e->reason = memcpy(e->cgroup + path_len, reason, reason_len);
        const char *unit = plan_unit_of(e->cgroup);
        e->unit = *unit ? (char *) unit : e->cgroup + path_len - 1; /* "": the path's end */
        e->class = class;
        e->skipped = bucket == BUCKET_SKIPPED;
        g_ptr_array_add(b->by_class[bucket], e);
}

static void emit(Builder *b, const PlanNode *n, CgroupClass class, const char *reason) {
        emit_to(b, class, n, class, reason);
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

/* One node of the post-order walk: its summary so far and its children's */
typedef struct Frame {
        const PlanNode *n;
        guint next;      /* the next child to visit */
        Summary s;
        Summary *child;  /* one per child, filled as each finishes */
} Frame;

/* All of n's children are summarized: completes n's summary and, when its
 * subtree is mixed, emits its parts. A uniform subtree emits nothing
 * itself: its parent (or the root loop) writes it as one entry, since only
 * the parent knows whether it is the top. */
static Summary frame_finish(Builder *b, Frame *f) {
        const PlanNode *n = f->n;

        if (n->skipped)
                summary_add(&f->s, SKIPPED_BIT, 1, n->reason);
        else if (node_counts(n))
                summary_add(&f->s, 1u << node_class(n), 1, n->reason);
        if (f->s.mask == 0 || mask_is_uniform(f->s.mask))
                return f->s;

        /* Mixed: each uniform child is frozen at its top; mixed children have
         * already emitted their own parts. */
        for (guint i = 0; i < n->children->len; i++)
                if (mask_is_uniform(f->child[i].mask))
                        emit_uniform(b, n->children->pdata[i], &f->child[i]);

        if (n->skipped)
                emit_to(b, BUCKET_SKIPPED, n, CLASS_NOFREEZE, n->reason);
        else if (n->has_processes && node_class(n) == CLASS_UI)
                emit(b, n, CLASS_UI, n->reason);
        else if (n->has_processes)
                /* One that is nofreeze anyway keeps the reason it was given */
                emit(b, n, CLASS_NOFREEZE,
                     node_class(n) == CLASS_NOFREEZE ? n->reason : INNER_WITH_PROCESSES_REASON);
        return f->s;
}

/* A stack that grows by doubling: the frames of one path from the root */
typedef struct Stack {
        Frame *frames;
        size_t len, cap;
} Stack;

static void frame_push(Stack *st, const PlanNode *n) {
        if (st->len == st->cap) {
                st->cap = st->cap ? st->cap * 2 : 64;
                st->frames = g_renew(Frame, st->frames, st->cap);
        }
        guint k = n->children->len;
        /* a leaf, most of a tree, needs no summaries of children */
        st->frames[st->len++] = (Frame) { .n = n, .child = k ? g_new(Summary, k) : NULL };
}

/* Post-order over n's subtree with a stack of its own: a chain of any
 * depth costs heap, not the thread's stack. */
static Summary build_subtree(Builder *b, const PlanNode *root) {
        Stack st = { 0 };
        Summary done = { 0 };

        frame_push(&st, root);
        while (st.len > 0) {
                Frame *f = &st.frames[st.len - 1];
                if (f->next < f->n->children->len) {
                        frame_push(&st, f->n->children->pdata[f->next++]);
                        continue;
                }
                done = frame_finish(b, f);
                g_free(f->child);
                if (--st.len > 0) {
                        Frame *parent = &st.frames[st.len - 1];
                        parent->child[parent->next - 1] = done;
                        summary_add(&parent->s, done.mask, done.n_deciding, done.reason);
                }
        }
        g_free(st.frames);
        return done;
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

const char *plan_entry_class_name(const PlanEntry *e) {
        return e->skipped ? "skipped" : cgroup_class_to_string(e->class);
}

Plan *plan_build(PlanNode *const *roots, size_t n_roots) {
        Builder b = { 0 };
        for (int c = 0; c <= BUCKET_SKIPPED; c++)
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
        p->n_ui = b.by_class[CLASS_UI]->len;
        p->n_skipped = b.by_class[BUCKET_SKIPPED]->len;
        for (int c = 0; c <= BUCKET_SKIPPED; c++) {
                g_ptr_array_sort(b.by_class[c], entry_compare);
                /* The entries move to the plan: the per-class array must not free them */
                for (guint k = 0; k < b.by_class[c]->len; k++)
                        g_ptr_array_add(p->entries, b.by_class[c]->pdata[k]);
                g_ptr_array_set_free_func(b.by_class[c], NULL);
                g_ptr_array_unref(b.by_class[c]);
        }
        return p;
}
