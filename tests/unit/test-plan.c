/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <glib.h>
#include <grp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"
#include "classify.h"
#include "plan.h"
#include "testdir.h"

#define INNER_REASON "has processes of its own in a mixed subtree; freezing it would freeze its children"

#define E CLASS_EARLY
#define L CLASS_LATE
#define N CLASS_NOFREEZE

/* plan_node_new() as an expression */
static PlanNode *node(const char *path, CgroupClass class, const char *reason, bool procs) {
        PlanNode *n = NULL;
        g_assert_cmpint(plan_node_new(path, class, reason, procs, &n), ==, 0);
        return n;
}

/* A child of parent at parent->path + "/" + name. */
static PlanNode *add(PlanNode *parent, const char *name, CgroupClass class, bool procs) {
        g_autofree char *path = g_strdup_printf("%s/%s", parent->path, name);
        return plan_node_add_child(parent, node(path, class, "default", procs));
}

static PlanNode *add_why(PlanNode *parent, const char *name, CgroupClass class, bool procs, const char *reason) {
        g_autofree char *path = g_strdup_printf("%s/%s", parent->path, name);
        return plan_node_add_child(parent, node(path, class, reason, procs));
}

static Plan *build1(PlanNode *root) {
        return plan_build(&root, 1);
}

static const PlanEntry *entry(const Plan *p, guint i) {
        g_assert_cmpuint(i, <, p->entries->len);
        return p->entries->pdata[i];
}

static void assert_entry(const Plan *p, guint i, const char *cgroup, CgroupClass class) {
        const PlanEntry *e = entry(p, i);
        g_assert_cmpstr(e->cgroup, ==, cgroup);
        g_assert_cmpstr(cgroup_class_to_string(e->class), ==, cgroup_class_to_string(class));
}

/* One expected plan entry; reason and unit NULL: not checked */
typedef struct Want {
        const char *cgroup;
        CgroupClass class;
        const char *reason;
        const char *unit;
} Want;

/* The plan is exactly `want`, in order; n_early, n_late < 0: not checked */
static void assert_plan(const Plan *p, int n_early, int n_late, const Want *want, size_t n) {
        g_assert_cmpuint(p->entries->len, ==, n);
        for (size_t i = 0; i < n; i++) {
                assert_entry(p, i, want[i].cgroup, want[i].class);
                if (want[i].reason)
                        g_assert_cmpstr(entry(p, i)->reason, ==, want[i].reason);
                if (want[i].unit)
                        g_assert_cmpstr(entry(p, i)->unit, ==, want[i].unit);
        }
        if (n_early >= 0)
                g_assert_cmpuint(p->n_early, ==, (unsigned) n_early);
        if (n_late >= 0)
                g_assert_cmpuint(p->n_late, ==, (unsigned) n_late);
}

#define ASSERT_PLAN(p, n_early, n_late, ...)                                          \
        G_STMT_START {                                                                 \
                const Want _want[] = { __VA_ARGS__ };                                  \
                assert_plan(p, n_early, n_late, _want, G_N_ELEMENTS(_want));           \
        } G_STMT_END

static unsigned count_class(const Plan *p, CgroupClass class) {
        unsigned n = 0;
        for (guint i = 0; i < p->entries->len; i++)
                n += entry(p, i)->class == class;
        return n;
}

static void test_class_strings(void) {
        g_assert_cmpstr(cgroup_class_to_string(CLASS_EARLY), ==, "early");
        g_assert_cmpstr(cgroup_class_to_string(CLASS_LATE), ==, "late");
        g_assert_cmpstr(cgroup_class_to_string(CLASS_NOFREEZE), ==, "nofreeze");
        g_assert_null(cgroup_class_to_string(_CLASS_MAX));
        g_assert_cmpint(cgroup_class_from_string("late"), ==, CLASS_LATE);
        g_assert_cmpint(cgroup_class_from_string("nofreeze"), ==, CLASS_NOFREEZE);
        g_assert_cmpint(cgroup_class_from_string("Late"), ==, _CLASS_INVALID);
        g_assert_cmpint(cgroup_class_from_string(""), ==, _CLASS_INVALID);
        g_assert_cmpint(cgroup_class_from_string(NULL), ==, _CLASS_INVALID);
}

static void test_uniform_root(void) {
        g_autoptr(PlanNode) root = node("user.slice", E, "default", false);
        PlanNode *u = add(root, "user-1000.slice", E, false);
        add(u, "session-1.scope", E, true);
        add(u, "app.service", E, true);

        g_autoptr(Plan) p = build1(root);
        ASSERT_PLAN(p, 1, 0, { "user.slice", E, "default", "user.slice" });
}

static void test_slice_split(void) {
        g_autoptr(PlanNode) root = node("user.slice", E, "default", false);
        PlanNode *s = add(root, "s.slice", E, false);
        add(s, "c.service", E, true);
        add_why(s, "backup.service", L, true, "config /etc/fridge/classes.d/b.conf:2");
        add(s, "a.service", E, true);
        add(s, "b.service", E, true);

        g_autoptr(Plan) p = build1(root);
        ASSERT_PLAN(p, 3, 1,
                    { "user.slice/s.slice/a.service", E },
                    { "user.slice/s.slice/b.service", E },
                    { "user.slice/s.slice/c.service", E },
                    { "user.slice/s.slice/backup.service", L, "config /etc/fridge/classes.d/b.conf:2",
                      "backup.service" });
}

static void test_nested(void) {
        g_autoptr(PlanNode) root = node("user.slice", E, "default", false);
        PlanNode *u = add(root, "user-1000.slice", E, false);
        add(u, "session-1.scope", E, true);
        PlanNode *svc = add(u, "user@1000.service", E, false);
        add(svc, "init.scope", E, true);
        PlanNode *app = add(svc, "app.slice", E, false);
        add(app, "a.scope", E, true);
        add(app, "b.scope", E, true);
        add(app, "sshfs.scope", L, true);

        g_autoptr(Plan) p = build1(root);
        ASSERT_PLAN(p, 4, 1,
                    { "user.slice/user-1000.slice/session-1.scope", E },
                    { "user.slice/user-1000.slice/user@1000.service/app.slice/a.scope", E },
                    { "user.slice/user-1000.slice/user@1000.service/app.slice/b.scope", E },
                    { "user.slice/user-1000.slice/user@1000.service/init.scope", E },
                    { "user.slice/user-1000.slice/user@1000.service/app.slice/sshfs.scope", L });
}

static void test_inner_with_processes(void) {
        g_autoptr(PlanNode) root = node("user.slice", E, "default", false);
        PlanNode *s = add(root, "s.service", E, true);
        add(s, "worker-a", E, true);
        add(s, "worker-b", L, true);
        /* a uniform inner cgroup with processes is simply frozen at its top */
        PlanNode *t = add(root, "t.service", L, true);
        add(t, "sub", L, true);

        g_autoptr(Plan) p = build1(root);
        ASSERT_PLAN(p, -1, -1,
                    { "user.slice/s.service/worker-a", E, NULL, "" },
                    { "user.slice/s.service/worker-b", L },
                    { "user.slice/t.service", L, NULL, "t.service" },
                    { "user.slice/s.service", N,
                      "has processes of its own in a mixed subtree; freezing it would freeze its children" });
}

static void test_nofreeze_never_frozen(void) {
        g_autoptr(PlanNode) root = node("user.slice", E, "default", false);
        add_why(root, "logind-helper.service", N, true, "built-in");
        add(root, "b.service", E, true);
        add(root, "c.service", L, true);
        PlanNode *keep = add(root, "keep.slice", N, false);
        add_why(keep, "x.service", N, true, "config k.conf:2");
        add_why(keep, "y.service", N, false, "config k.conf:2");

        g_autoptr(Plan) p = build1(root);
        ASSERT_PLAN(p, -1, -1,
                    { "user.slice/b.service", E },
                    { "user.slice/c.service", L },
                    { "user.slice/keep.slice", N, "config k.conf:2" },
                    { "user.slice/logind-helper.service", N, "built-in" });
        for (guint i = 0; i < p->n_early + p->n_late; i++) {
                g_assert_false(g_str_has_prefix(entry(p, i)->cgroup, "user.slice/keep.slice"));
                g_assert_false(g_str_has_prefix(entry(p, i)->cgroup, "user.slice/logind-helper"));
        }
}

static void test_empty_inner_takes_no_side(void) {
        /* The empty inner cgroups' own classes must not count */
        g_autoptr(PlanNode) root = node("user.slice", L, "default", false);
        PlanNode *a = add(root, "a.slice", N, false);
        PlanNode *b = add(a, "b.slice", L, false);
        add(b, "x.service", E, true);
        add(a, "y.service", E, true);
        add(root, "z.service", E, false); /* an empty leaf counts */

        g_autoptr(Plan) p = build1(root);
        ASSERT_PLAN(p, -1, -1, { "user.slice", E, "default" });
}

static void test_uniform_reasons(void) {
        /* different reasons, top empty: a summary */
        g_autoptr(PlanNode) r1 = node("r1.slice", E, "default", false);
        add_why(r1, "a.service", L, true, "config a.conf:2");
        add_why(r1, "b.service", L, true, "FUSE server sshfs (pid 5) of /mnt");
        g_autoptr(Plan) p1 = build1(r1);
        g_assert_cmpuint(p1->entries->len, ==, 1);
        g_assert_cmpstr(entry(p1, 0)->reason, ==, "2 cgroups, all late");

        /* different reasons, top counts: its own */
        g_autoptr(PlanNode) r2 = node("r2.service", L, "holds class late", true);
        add_why(r2, "a", L, true, "config a.conf:2");
        g_autoptr(Plan) p2 = build1(r2);
        g_assert_cmpuint(p2->entries->len, ==, 1);
        g_assert_cmpstr(entry(p2, 0)->reason, ==, "holds class late");

        /* a single leaf root is its own entry */
        g_autoptr(PlanNode) r3 = node("machine.slice", N, "built-in", false);
        g_autoptr(Plan) p3 = build1(r3);
        ASSERT_PLAN(p3, -1, -1, { "machine.slice", N });
        g_assert_cmpuint(p3->n_early + p3->n_late, ==, 0);
}

static void test_multiple_roots(void) {
        g_autoptr(PlanNode) user = node("user.slice", E, "default", false);
        add(user, "a.service", E, true);
        g_autoptr(PlanNode) machine = node("machine.slice", E, "default", false);
        add(machine, "vm1.scope", E, true);
        add(machine, "vm2.scope", L, true);
        PlanNode *roots[] = { user, machine };

        g_autoptr(Plan) p = plan_build(roots, G_N_ELEMENTS(roots));
        ASSERT_PLAN(p, -1, -1,
                    { "machine.slice/vm1.scope", E },
                    { "user.slice", E },
                    { "machine.slice/vm2.scope", L });

        g_autoptr(Plan) none = plan_build(NULL, 0);
        g_assert_cmpuint(none->entries->len, ==, 0);
}

static char *plan_text(const Plan *p) {
        GString *s = g_string_new(NULL);
        for (guint i = 0; i < p->entries->len; i++)
                g_string_append_printf(s, "%s %s %s\n", entry(p, i)->cgroup,
                                       cgroup_class_to_string(entry(p, i)->class), entry(p, i)->reason);
        return g_string_free(s, FALSE);
}

/* Any byte a name may hold: '/' sorts below all of them, even 0x01, and
 * bytes below '/' keep their order ("a\x01" < "a-" < "a." < "a\xff") */
static void test_path_order_odd_bytes(void) {
        g_autoptr(PlanNode) root = node("r", E, "default", false);
        add(root, "a\xff.service", E, true);
        add(root, "a.y.service", E, true);
        add(root, "a-x.service", E, true);
        add(root, "a\x01.service", E, true);
        PlanNode *a = add(root, "a", E, false);
        add(a, "b.service", E, true);
        add(a, "c.service", L, true);

        g_autoptr(Plan) p = build1(root);
        ASSERT_PLAN(p, -1, -1,
                    { "r/a/b.service", E },
                    { "r/a\x01.service", E },
                    { "r/a-x.service", E },
                    { "r/a.y.service", E },
                    { "r/a\xff.service", E },
                    { "r/a/c.service", L });
}

static void test_path_order(void) {
        g_autoptr(PlanNode) root = node("r", E, "default", false);
        add(root, "z.service", E, true);
        add(root, "a-x.service", E, true);
        PlanNode *a = add(root, "a", E, false);
        add(a, "b.service", E, true);
        add(root, "m.service", L, true);

        /* components compare first: "r/a/…" before "r/a-x…" */
        g_autoptr(Plan) p = build1(root);
        ASSERT_PLAN(p, -1, -1,
                    { "r/a", E },
                    { "r/a-x.service", E },
                    { "r/z.service", E },
                    { "r/m.service", L });

        g_autoptr(Plan) again = build1(root);
        g_autofree char *t1 = plan_text(p);
        g_autofree char *t2 = plan_text(again);
        g_assert_cmpstr(t1, ==, t2);
}

/* 100 slices × 100 services: a third all early, a third all late, a third
 * mixed (per ten services: eight early, one late, one nofreeze). */
static PlanNode *big_tree(void) {
        PlanNode *root = node("user.slice", E, "default", false);
        for (unsigned i = 0; i < 100; i++) {
                g_autofree char *name = g_strdup_printf("s%03u.slice", i);
                PlanNode *s = add(root, name, E, false);
                for (unsigned j = 0; j < 100; j++) {
                        g_autofree char *svc = g_strdup_printf("app%03u.service", j);
                        CgroupClass c = i % 3 == 0 ? E : i % 3 == 1 ? L : j % 10 == 0 ? L : j % 10 == 1 ? N : E;
                        add(s, svc, c, true);
                }
        }
        return root;
}

static void test_big_tree(void) {
        g_autoptr(PlanNode) root = big_tree();
        /* its speed is tools/bench's (bench-freeze: plan_build), not a bound here */
        g_autoptr(Plan) p = build1(root);

        /* 34 uniform early slices + 33 mixed × 80; 33 late slices + 33 × 10 */
        g_assert_cmpuint(p->n_early, ==, 34 + 33 * 80);
        g_assert_cmpuint(p->n_late, ==, 33 + 33 * 10);
        g_assert_cmpuint(count_class(p, N), ==, 33 * 10);
        g_assert_cmpuint(p->entries->len, ==, p->n_early + p->n_late + 33 * 10);
        assert_entry(p, 0, "user.slice/s000.slice", E);
        assert_entry(p, 1, "user.slice/s002.slice/app002.service", E);
        assert_entry(p, p->n_early, "user.slice/s001.slice", L);
        assert_entry(p, p->n_early + 1, "user.slice/s002.slice/app000.service", L);
        for (guint i = 1; i < p->entries->len; i++)
                if (entry(p, i - 1)->class == entry(p, i)->class)
                        g_assert_cmpint(strcmp(entry(p, i - 1)->cgroup, entry(p, i)->cgroup), <, 0);
}

static void test_unit_of(void) {
        g_assert_cmpstr(plan_unit_of("user.slice/user-1000.slice/session-2.scope"), ==, "session-2.scope");
        g_assert_cmpstr(plan_unit_of("user.slice"), ==, "user.slice");
        g_assert_cmpstr(plan_unit_of("system.slice/foo.service"), ==, "foo.service");
        g_assert_cmpstr(plan_unit_of("system.slice/a.socket"), ==, "a.socket");
        g_assert_cmpstr(plan_unit_of("system.slice/-.mount"), ==, "-.mount");
        g_assert_cmpstr(plan_unit_of("system.slice/dev-sda2.swap"), ==, "dev-sda2.swap");
        g_assert_cmpstr(plan_unit_of("x/y.target"), ==, "y.target");
        g_assert_cmpstr(plan_unit_of("x/y.timer"), ==, "y.timer");
        g_assert_cmpstr(plan_unit_of("x/y.path"), ==, "y.path");
        g_assert_cmpstr(plan_unit_of("user.slice/user@1000.service/app.slice/worker"), ==, "");
        g_assert_cmpstr(plan_unit_of("x/y.service.d"), ==, "");
        g_assert_cmpstr(plan_unit_of("x/.service"), ==, "");
        g_assert_cmpstr(plan_unit_of("x.service/"), ==, "");
        g_assert_cmpstr(plan_unit_of(""), ==, "");
}

/* ---- the walk over a cgroup tree (a scratch directory stands in) ---- */

/* A scratch cgroup tree; each cgroup has a cgroup.procs with one pid */
typedef struct Tree {
        char *dir;
        int fd;
} Tree;

static void tree_init(Tree *t) {
        /* in memory when it can be: a tree of 10,000 on a busy disk takes minutes */
        bool shm = g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) && access("/dev/shm", W_OK) == 0;
        t->dir = shm ? g_mkdtemp(g_strdup("/dev/shm/fridge-walk-XXXXXX")) : g_dir_make_tmp("fridge-walk-XXXXXX", NULL);
        g_assert_nonnull(t->dir);
        g_assert_cmpint(chmod(t->dir, 0755), ==, 0); /* "nobody" walks it too */
        t->fd = testdir_open(t->dir, NULL);
}

static void tree_done(Tree *t) {
        close(t->fd);
        testdir_remove(t->dir);
        g_free(t->dir);
}

/* rel with a process, its parents without (unless they have one); plain
 * writes: g_file_set_contents() syncs, 10,000 times too slow */
static void tree_add(Tree *t, const char *rel) {
        g_autofree char *dir = g_build_filename(t->dir, rel, NULL);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        for (char *s = dir + strlen(t->dir); s; s = strchr(s + 1, '/')) {
                const char *end = strchr(s + 1, '/');
                bool leaf = !end;
                int len = (int) ((leaf ? dir + strlen(dir) : end) - dir);
                g_autofree char *procs = g_strdup_printf("%.*s/cgroup.procs", len, dir);
                int fd = open(procs, O_WRONLY | O_CREAT | O_CLOEXEC | (leaf ? O_TRUNC : O_EXCL), 0644);
                if (fd < 0) {
                        g_assert_cmpint(errno, ==, EEXIST);
                        continue;
                }
                if (leaf)
                        g_assert_cmpint(write(fd, "4242\n", 5), ==, 5);
                close(fd);
        }
}

static Plan *tree_plan(Tree *t, const char *root, GHashTable *exempt, void (*hook)(const char *, void *),
                       void *userdata) {
        char *roots[] = { (char *) root, NULL };
        ClassifyInput in = { .cgroup_fd = t->fd, .proc_fd = -1, .roots = roots, .exempt = exempt,
                             .after_read = hook, .after_read_userdata = userdata };
        g_autoptr(GPtrArray) trees = NULL;
        g_assert_cmpint(classify_tree(&in, &trees), ==, 0);
        return plan_build((PlanNode *const *) trees->pdata, trees->len);
}

static const PlanEntry *find_entry(const Plan *p, const char *cgroup) {
        for (guint i = 0; i < p->entries->len; i++)
                if (strcmp(entry(p, i)->cgroup, cgroup) == 0)
                        return entry(p, i);
        return NULL;
}

/* Whether an entry to freeze is cgroup or one of its ancestors */
static bool frozen_by_plan(const Plan *p, const char *cgroup) {
        for (guint i = 0; i < p->entries->len; i++) {
                const PlanEntry *e = entry(p, i);
                size_t n = strlen(e->cgroup);
                if ((e->class == E || e->class == L) && !e->skipped && strncmp(cgroup, e->cgroup, n) == 0 &&
                    (cgroup[n] == '\0' || cgroup[n] == '/'))
                        return true;
        }
        return false;
}

static void test_walk_deep(void) {
        Tree t;
        tree_init(&t);
        g_autoptr(GString) path = g_string_new("r");
        for (int i = 0; i < 200; i++) {
                g_string_append(path, "/d");
                tree_add(&t, path->str);
        }
        g_autofree char *sibling = g_strdup_printf("%.*s/e.service", (int) path->len - 2, path->str);
        tree_add(&t, sibling);
        /* the deepest is the one exemption: every ancestor is split, 200 levels down */
        g_autoptr(GHashTable) exempt = g_hash_table_new(g_str_hash, g_str_equal);
        g_hash_table_insert(exempt, path->str, (char *) "test exemption");
        g_autoptr(Plan) p = tree_plan(&t, "r", exempt, NULL, NULL);

        g_assert_cmpuint(p->n_skipped, ==, 0);
        const PlanEntry *deepest = find_entry(p, path->str);
        g_assert_nonnull(deepest);
        g_assert_cmpint(deepest->class, ==, N);
        g_assert_false(frozen_by_plan(p, path->str));
        /* its ancestors have processes of their own in a mixed subtree: nofreeze;
         * the sibling at the bottom is frozen alone */
        g_assert_true(frozen_by_plan(p, sibling));
        g_assert_cmpuint(p->n_early, ==, 1);
        assert_entry(p, 0, sibling, E);
        assert_entry(p, 1, "r/d", N);
        g_assert_cmpstr(entry(p, 1)->reason, ==, INNER_REASON);
        g_assert_cmpuint(p->entries->len, ==, 1 + 199 + 1);

        tree_done(&t);
}

/* plan_build and plan_node_free over a chain no recursion would survive */
static void test_plan_very_deep(void) {
        g_autoptr(PlanNode) root = node("r", E, "default", false);
        PlanNode *n = root;
        for (int i = 0; i < 200000; i++)
                n = plan_node_add_child(n, node("r/x", E, "default", i == 199999));
        g_autoptr(Plan) p = build1(root);
        ASSERT_PLAN(p, 1, 0, { "r", E, "default" });
}

static void test_walk_wide(void) {
        Tree t;
        tree_init(&t);
        for (int i = 0; i < 10000; i++) {
                g_autofree char *c = g_strdup_printf("r/c%05d.service", i);
                tree_add(&t, c);
        }
        g_autoptr(GHashTable) exempt = g_hash_table_new(g_str_hash, g_str_equal);
        g_hash_table_insert(exempt, (char *) "r/c04321.service", (char *) "test exemption");
        g_autoptr(Plan) p = tree_plan(&t, "r", exempt, NULL, NULL);

        g_assert_cmpuint(p->n_early, ==, 9999);
        g_assert_cmpuint(p->entries->len, ==, 10000);
        assert_entry(p, 0, "r/c00000.service", E);
        assert_entry(p, 9999, "r/c04321.service", N);
        tree_done(&t);
}

/* A name of any bytes is walked and planned by its class; GetPlan and the
 * log show it escaped */
static void test_walk_not_utf8(void) {
        Tree t;
        tree_init(&t);
        tree_add(&t, "r/bad\xff\xfe.service");
        tree_add(&t, "r/\xc3\xa9t\xc3\xa9.service"); /* "été", UTF-8: as it is */
        tree_add(&t, "r/keep.service");
        g_autoptr(GHashTable) exempt = g_hash_table_new(g_str_hash, g_str_equal);
        g_hash_table_insert(exempt, (char *) "r/keep.service", (char *) "test exemption");
        g_autoptr(Plan) p = tree_plan(&t, "r", exempt, NULL, NULL);

        const PlanEntry *bad = find_entry(p, "r/bad\xff\xfe.service");
        g_assert_nonnull(bad);
        g_assert_cmpint(bad->class, ==, E);
        g_autofree char *shown = cgroups_escape(bad->cgroup);
        g_assert_cmpstr(shown, ==, "r/bad\\xff\\xfe.service");
        g_assert_true(g_utf8_validate(shown, -1, NULL));
        g_autofree char *ete = cgroups_escape("r/\xc3\xa9t\xc3\xa9.service");
        g_assert_cmpstr(ete, ==, "r/\xc3\xa9t\xc3\xa9.service");
        g_autofree char *ctl = cgroups_escape("a\x1b[1mb\xc3");
        g_assert_cmpstr(ctl, ==, "a\\x1b[1mb\\xc3");
        tree_done(&t);
}

static void remove_b(const char *path, void *userdata) {
        Tree *t = userdata;
        if (strcmp(path, "r") != 0)
                return;
        g_autofree char *b = g_build_filename(t->dir, "r/b.service", NULL);
        testdir_remove(b);
}

/* A cgroup gone between its parent's listing and its own reading: the
 * plan says so, and does not freeze its parent whole */
static void test_walk_vanished(void) {
        Tree t;
        tree_init(&t);
        tree_add(&t, "r/a.service");
        tree_add(&t, "r/b.service");
        g_autoptr(Plan) p = tree_plan(&t, "r", NULL, remove_b, &t);

        ASSERT_PLAN(p, 1, 0, { "r/a.service", E, "default" }, { "r/b.service", N, "vanished during the walk; skipped" });
        g_assert_cmpuint(p->n_skipped, ==, 1);
        g_assert_true(entry(p, 1)->skipped);
        g_assert_cmpstr(plan_entry_class_name(entry(p, 1)), ==, "skipped");
        g_assert_false(frozen_by_plan(p, "r/b.service"));
        tree_done(&t);
}

static void tree_write(Tree *t, const char *rel, const char *text) {
        g_autofree char *p = g_build_filename(t->dir, rel, NULL);
        g_assert_true(g_file_set_contents(p, text, -1, NULL));
}

static const PlanNode *node_find(const PlanNode *n, const char *path) {
        if (g_str_equal(n->path, path))
                return n;
        for (guint i = 0; n->children && i < n->children->len; i++) {
                const PlanNode *found = node_find(n->children->pdata[i], path);
                if (found)
                        return found;
        }
        return NULL;
}

/* Whether the walk saw processes in `path` (the only root is "a.slice") */
static bool walk_sees_processes(Tree *t, const char *path) {
        char *roots[] = { (char *) "a.slice", NULL };
        ClassifyInput in = { .cgroup_fd = t->fd, .proc_fd = -1, .roots = roots };
        g_autoptr(GPtrArray) trees = NULL;
        g_assert_cmpint(classify_tree(&in, &trees), ==, 0);
        g_assert_cmpuint(trees->len, ==, 1);
        const PlanNode *n = node_find(trees->pdata[0], path);
        g_assert_nonnull(n);
        g_assert_false(n->skipped);
        return n->has_processes;
}

/* Below a cgroup whose cgroup.events says "populated 0" no cgroup.procs is
 * read (this tree's procs files say otherwise, so reading shows); the next
 * walk after it changes reads them again. */
static void test_walk_skips_unpopulated(void) {
        Tree t;
        tree_init(&t);
        tree_add(&t, "a.slice/b.slice/x.service");
        tree_add(&t, "a.slice/y.service");
        tree_write(&t, "a.slice/b.slice/cgroup.events", "populated 0\nfrozen 0\n");
        tree_write(&t, "a.slice/y.service/cgroup.events", "populated 1\nfrozen 0\n");
        g_assert_false(walk_sees_processes(&t, "a.slice/b.slice/x.service"));
        g_assert_true(walk_sees_processes(&t, "a.slice/y.service"));

        tree_write(&t, "a.slice/b.slice/cgroup.events", "populated 1\nfrozen 0\n");
        g_assert_true(walk_sees_processes(&t, "a.slice/b.slice/x.service"));
        tree_done(&t);
}

#define USER_MANAGER "user.slice/user-1000.slice/user@1000.service"

/* What the subprocess walks: the user's manager cannot be read (mode 000),
 * its init.scope, exempt, is inside */
static void make_unreadable_tree(Tree *t) {
        tree_add(t, "user.slice/user-1000.slice/session-2.scope");
        tree_add(t, USER_MANAGER "/init.scope");
        tree_add(t, USER_MANAGER "/app.slice/a.service");
        g_autofree char *m = g_build_filename(t->dir, USER_MANAGER, NULL);
        g_assert_cmpint(chmod(m, 0), ==, 0);
}

/* root reads anything: be one who cannot */
static void become_nobody(void) {
        if (geteuid() != 0)
                return;
        g_assert_cmpint(setgroups(0, NULL), ==, 0);
        g_assert_cmpint(setresgid(65534, 65534, 65534), ==, 0);
        g_assert_cmpint(setresuid(65534, 65534, 65534), ==, 0);
        (void) prctl(PR_SET_DUMPABLE, 1); /* the sanitizers read /proc/self */
}

static void walk_unreadable_as_nobody(void) {
        become_nobody();
        Tree t = { .dir = g_strdup(g_getenv("FRIDGE_TEST_TREE")) };
        t.fd = testdir_open(t.dir, NULL);
        g_autoptr(Plan) p = tree_plan(&t, "user.slice", NULL, NULL, NULL);

        const PlanEntry *m = find_entry(p, USER_MANAGER);
        g_assert_nonnull(m);
        g_assert_true(m->skipped);
        g_assert_nonnull(strstr(m->reason, "Permission denied"));
        /* nothing above it is frozen whole; its readable sibling is frozen alone */
        g_assert_false(frozen_by_plan(p, USER_MANAGER "/init.scope"));
        g_assert_false(frozen_by_plan(p, USER_MANAGER "/app.slice/a.service"));
        g_assert_true(frozen_by_plan(p, "user.slice/user-1000.slice/session-2.scope"));
        ASSERT_PLAN(p, 1, 0, { "user.slice/user-1000.slice/session-2.scope", E },
                    { USER_MANAGER, N, NULL });
        close(t.fd);
        g_free(t.dir);
}

/* The test's subprocess half (which walks as nobody) on a tree `make`
 * makes; the directories `locked` get their mode back before it goes */
static void trap_walk_as_nobody(void (*make)(Tree *), const char *const *locked) {
        Tree t;
        tree_init(&t);
        make(&t);
        g_setenv("FRIDGE_TEST_TREE", t.dir, TRUE);
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
        for (; *locked; locked++) {
                g_autofree char *d = g_build_filename(t.dir, *locked, NULL);
                g_assert_cmpint(chmod(d, 0755), ==, 0);
        }
        tree_done(&t);
        g_test_trap_assert_passed();
}

static void test_walk_unreadable(void) {
        static const char *const locked[] = { USER_MANAGER, NULL };
        if (g_test_subprocess())
                walk_unreadable_as_nobody();
        else
                trap_walk_as_nobody(make_unreadable_tree, locked);
}

static const char *const unlisted[] = { "a.slice/leaf.service", "a.slice/b.slice", NULL };

/* What the subprocess walks: a leaf and a cgroup with a child, both of
 * mode 0111, which lets a path through but not a listing */
static void make_unlisted_tree(Tree *t) {
        tree_add(t, "a.slice/leaf.service");
        tree_add(t, "a.slice/b.slice/c.service");
        for (const char *const *u = unlisted; *u; u++) {
                g_autofree char *d = g_build_filename(t->dir, *u, NULL);
                g_assert_cmpint(chmod(d, 0111), ==, 0);
        }
}

static void walk_unlisted_as_nobody(void) {
        become_nobody();
        Tree t = { .dir = g_strdup(g_getenv("FRIDGE_TEST_TREE")) };
        t.fd = testdir_open(t.dir, NULL);
        g_autoptr(Plan) p = tree_plan(&t, "a.slice", NULL, NULL, NULL);
        /* its link count says it has no child: not opened, its cgroup.procs read by path */
        const PlanEntry *leaf = find_entry(p, "a.slice/leaf.service");
        g_assert_nonnull(leaf);
        g_assert_false(leaf->skipped);
        g_assert_cmpstr(leaf->reason, ==, "default");
        g_assert_true(frozen_by_plan(p, "a.slice/leaf.service"));
        /* one with a child must be listed, and cannot be: its children are unknown */
        const PlanEntry *b = find_entry(p, "a.slice/b.slice");
        g_assert_nonnull(b);
        g_assert_true(b->skipped);
        g_assert_nonnull(strstr(b->reason, "Permission denied"));
        g_assert_false(frozen_by_plan(p, "a.slice/b.slice/c.service"));
        close(t.fd);
        g_free(t.dir);
}

/* A leaf cgroup is read without listing it (the dearest read of a walk):
 * shown where listing is refused and reading by path is not */
static void test_walk_leaf_unlisted(void) {
        if (g_test_subprocess())
                walk_unlisted_as_nobody();
        else
                trap_walk_as_nobody(make_unlisted_tree, unlisted);
}

static void test_builtin_exemptions(void) {
        static const char *const anchored[] = {
                "init.scope",
                "system.slice/dbus.service",
                "system.slice/dbus-broker.service",
                "system.slice/systemd-journald.service",
                USER_MANAGER "/init.scope",
                USER_MANAGER "/session.slice/dbus.service",
                USER_MANAGER "/session.slice/dbus-broker.service",
                USER_MANAGER "/app.slice/dbus.service",
                "user.slice/user-0.slice/user@0.service/init.scope",
        };
        for (size_t i = 0; i < G_N_ELEMENTS(anchored); i++)
                g_assert_nonnull(classify_builtin_exemption(anchored[i]));
        static const char *const impostors[] = {
                "user.slice/fridged.service",
                "system.slice/fridged.service",
                "user.slice/x/init.scope",
                "system.slice/init.scope",
                "user.slice/dbus.service",
                "user.slice/user-1000.slice/dbus.service",
                "user.slice/user-1000.slice/user@1001.service/init.scope",
                "user.slice/user-1000.slice/user@1000.service/app.slice/init.scope",
                "user.slice/user-.slice/user@.service/init.scope",
                USER_MANAGER "/app.slice/foo.service/dbus.service",
                USER_MANAGER "/app.slice/dbus-:1.2-org.example.App@0.service",
                "x/user.slice/user-1000.slice/user@1000.service/init.scope",
                "system.slice/dbus.service/x",
        };
        for (size_t i = 0; i < G_N_ELEMENTS(impostors); i++)
                g_assert_null(classify_builtin_exemption(impostors[i]));
}

/* Named like fridged, a bus or a manager, but not where they are: frozen */
static void test_walk_impostors(void) {
        Tree t;
        tree_init(&t);
        tree_add(&t, "user.slice/fridged.service");
        tree_add(&t, "user.slice/dbus.service");
        tree_add(&t, "user.slice/x/init.scope");
        tree_add(&t, USER_MANAGER "/init.scope");
        tree_add(&t, USER_MANAGER "/session.slice/dbus.service");
        tree_add(&t, USER_MANAGER "/session.slice/pipewire.service");
        tree_add(&t, USER_MANAGER "/app.slice/a.service");
        g_autoptr(Plan) p = tree_plan(&t, "user.slice", NULL, NULL, NULL);

        g_assert_true(frozen_by_plan(p, USER_MANAGER "/session.slice/pipewire.service"));
        g_assert_true(frozen_by_plan(p, "user.slice/fridged.service"));
        g_assert_true(frozen_by_plan(p, "user.slice/dbus.service"));
        g_assert_true(frozen_by_plan(p, "user.slice/x/init.scope"));
        g_assert_true(frozen_by_plan(p, USER_MANAGER "/app.slice/a.service"));
        g_assert_false(frozen_by_plan(p, USER_MANAGER "/init.scope"));
        g_assert_false(frozen_by_plan(p, USER_MANAGER "/session.slice/dbus.service"));
        g_assert_cmpstr(find_entry(p, USER_MANAGER "/init.scope")->reason, ==,
                        "built-in exemption: the user's manager");
        g_assert_cmpstr(find_entry(p, USER_MANAGER "/session.slice/dbus.service")->reason, ==,
                        "built-in exemption: the session bus");
        tree_done(&t);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/plan/class-strings", test_class_strings);
        g_test_add_func("/plan/uniform-root", test_uniform_root);
        g_test_add_func("/plan/slice-split", test_slice_split);
        g_test_add_func("/plan/nested", test_nested);
        g_test_add_func("/plan/inner-with-processes", test_inner_with_processes);
        g_test_add_func("/plan/nofreeze-never-frozen", test_nofreeze_never_frozen);
        g_test_add_func("/plan/empty-inner", test_empty_inner_takes_no_side);
        g_test_add_func("/plan/uniform-reasons", test_uniform_reasons);
        g_test_add_func("/plan/multiple-roots", test_multiple_roots);
        g_test_add_func("/plan/path-order", test_path_order);
        g_test_add_func("/plan/path-order-odd-bytes", test_path_order_odd_bytes);
        g_test_add_func("/plan/big-tree", test_big_tree);
        g_test_add_func("/plan/unit-of", test_unit_of);
        g_test_add_func("/plan/very-deep", test_plan_very_deep);
        g_test_add_func("/plan/walk-deep", test_walk_deep);
        g_test_add_func("/plan/walk-wide", test_walk_wide);
        g_test_add_func("/plan/walk-not-utf8", test_walk_not_utf8);
        g_test_add_func("/plan/walk-vanished", test_walk_vanished);
        g_test_add_func("/plan/walk-skips-unpopulated", test_walk_skips_unpopulated);
        g_test_add_func("/plan/walk-unreadable", test_walk_unreadable);
        g_test_add_func("/plan/walk-leaf-unlisted", test_walk_leaf_unlisted);
        g_test_add_func("/plan/builtin-exemptions", test_builtin_exemptions);
        g_test_add_func("/plan/walk-impostors", test_walk_impostors);
        return g_test_run();
}
