/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <string.h>

#include "plan.h"

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

        gint64 start = g_get_monotonic_time();
        g_autoptr(Plan) p = build1(root);
        gint64 usec = g_get_monotonic_time() - start;
        g_test_message("plan_build of 10101 cgroups took %" G_GINT64_FORMAT " us", usec);

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
        /* generous even under sanitizers; an unsanitized build takes about 1 ms */
        g_assert_cmpint(usec, <, 200 * 1000);
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
        g_test_add_func("/plan/big-tree", test_big_tree);
        g_test_add_func("/plan/unit-of", test_unit_of);
        return g_test_run();
}
