/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the FUSE detection keeps from walk to walk (detect-cache.c) is
 * proven fresh: each test walks a fake /proc and cgroup tree, changes the
 * world, walks again and checks the second walk noticed. The first test
 * also shows the cache in effect (a known process's fd table unread while
 * nothing changed), without which the others would prove nothing. The
 * last walks many cgroups, whose detection runs beside the walk on a
 * thread of its own (detect-queue.c), and checks every finding arrived. */
#include <errno.h>
#include <glib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "classify.h"
#include "detect-cache.h"
#include "detect.h"
#include "detect-queue.h"
#include "testdir.h"

static const char base_mounts[] = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
static const char fuse_mounts[] = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
                                  "80 22 0:50 / /mnt/remote rw - fuse.sshfs me@host:/srv rw\n";

typedef struct Fixture {
        char *base;
        int proc_fd, cgroup_fd;
        DetectCache *cache;
        const char *fuse_connections; /* NULL: no fusectl */
} Fixture;

static void put(const Fixture *f, const char *rel, const char *text) {
        testdir_put(f->base, rel, text);
}

static void put_link(const Fixture *f, const char *rel, const char *target) {
        g_autofree char *p = g_build_filename(f->base, rel, NULL);
        g_autofree char *dir = g_path_get_dirname(p);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        (void) unlink(p);
        g_assert_cmpint(symlink(target, p), ==, 0);
}

/* pid as comm in state `state`, started at `start` (field 22) */
static void put_process(const Fixture *f, int pid, const char *comm, char state, unsigned start) {
        g_autofree char *rel = g_strdup_printf("proc/%d/stat", pid);
        g_autofree char *text = g_strdup_printf("%d (%s) %c 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %u "
                                                "9000 200\n", pid, comm, state, pid, pid, start);
        put(f, rel, text);
        g_autofree char *comm_rel = g_strdup_printf("proc/%d/comm", pid);
        g_autofree char *comm_text = g_strdup_printf("%s\n", comm);
        put(f, comm_rel, comm_text);
        g_autofree char *sc = g_strdup_printf("proc/%d/syscall", pid);
        put(f, sc, "-1 0x7ffc3a1b2c30 0x7f0e4d5c6b7a\n");
        g_autofree char *fd0 = g_strdup_printf("proc/%d/fd/0", pid);
        put_link(f, fd0, "/dev/null");
}

static void give_dev_fuse(const Fixture *f, int pid) {
        g_autofree char *fd3 = g_strdup_printf("proc/%d/fd/3", pid);
        put_link(f, fd3, "/dev/fuse");
}

static void set_up(Fixture *f, gconstpointer data) {
        f->base = g_dir_make_tmp("test-detect-cache-XXXXXX", NULL);
        g_assert_nonnull(f->base);
        put(f, "proc/self/mountinfo", base_mounts);
        put_process(f, 200, "sh", 'S', 5000);
        put(f, "cg/app.slice/cgroup.procs", "");
        put(f, "cg/app.slice/x.service/cgroup.procs", "200\n");
        f->proc_fd = testdir_open(f->base, "proc");
        f->cgroup_fd = testdir_open(f->base, "cg");
        f->cache = detect_cache_new();
        f->fuse_connections = "40\n";
}

static void tear_down(Fixture *f, gconstpointer data) {
        close(f->proc_fd);
        close(f->cgroup_fd);
        detect_cache_unref(f->cache);
        testdir_remove(f->base);
        g_free(f->base);
}

/* One walk of app.slice, as a cycle's prepare makes it: x.service's class
 * and reason */
static CgroupClass walk(Fixture *f, char **ret_reason) {
        char *roots[] = { (char *) "app.slice", NULL };
        ClassifyInput in = { .cgroup_fd = f->cgroup_fd, .proc_fd = f->proc_fd, .roots = roots, .detect = true,
                             .cache = f->cache, .fuse_connections = f->fuse_connections };
        g_autoptr(GPtrArray) trees = NULL;
        g_assert_cmpint(classify_tree(&in, &trees), ==, 0);
        g_assert_cmpuint(trees->len, ==, 1);
        const PlanNode *slice = trees->pdata[0];
        g_assert_cmpuint(slice->children->len, ==, 1);
        const PlanNode *x = slice->children->pdata[0];
        g_assert_cmpstr(x->path, ==, "app.slice/x.service");
        *ret_reason = g_strdup(x->reason);
        return x->class;
}

static void assert_walk(Fixture *f, CgroupClass want, const char *reason_part) {
        g_autofree char *reason = NULL;
        CgroupClass got = walk(f, &reason);
        g_test_message("x.service: %s (%s)", cgroup_class_to_string(got), reason);
        g_assert_cmpstr(cgroup_class_to_string(got), ==, cgroup_class_to_string(want));
        g_assert_nonnull(strstr(reason, reason_part));
}

/* The process execs a FUSE server, which mounts: the same pid and start
 * time, a new line in the mount table */
static void test_new_fuse_mount(Fixture *f, gconstpointer data) {
        assert_walk(f, CLASS_EARLY, "default");
        g_assert_cmpuint(detect_cache_size(f->cache), ==, 1);
        /* nothing says the world changed: the cache answers, the fd table is unread */
        give_dev_fuse(f, 200);
        assert_walk(f, CLASS_EARLY, "default");
        /* the mount appears: the next walk reads the fd table again */
        put(f, "proc/self/mountinfo", fuse_mounts);
        put(f, "proc/200/comm", "sshfs\n");
        assert_walk(f, CLASS_LATE, "FUSE server sshfs (pid 200) of /mnt/remote");
        /* and keeps finding it while it holds it */
        assert_walk(f, CLASS_LATE, "FUSE server sshfs (pid 200)");
}

/* A FUSE mount in another mount namespace: fridged's mount table stays,
 * fusectl gets a connection */
static void test_new_fuse_connection(Fixture *f, gconstpointer data) {
        assert_walk(f, CLASS_EARLY, "default");
        give_dev_fuse(f, 200);
        f->fuse_connections = "40\n41\n";
        assert_walk(f, CLASS_LATE, "FUSE server sh (pid 200)");
}

/* The process enters fsync and waits (state D): never taken from the cache */
static void test_enters_sync(Fixture *f, gconstpointer data) {
        assert_walk(f, CLASS_EARLY, "default");
        put_process(f, 200, "tar", 'D', 5000);
        g_autofree char *fsync_text = g_strdup_printf("%ld 0x3 0x0 0x0 0x0 0x0 0x0 0x7ffd2000 0x7f9a1000\n",
                                                      (long) SYS_fsync);
        put(f, "proc/200/syscall", fsync_text);
        assert_walk(f, CLASS_LATE, "syncing: pid 200 (tar) in fsync");
        /* and leaves it */
        put_process(f, 200, "tar", 'S', 5000);
        assert_walk(f, CLASS_EARLY, "default");
}

/* A new process in the cgroup, and a pid reused by another process (a new
 * start time): neither is known, both are read */
static void test_new_process(Fixture *f, gconstpointer data) {
        assert_walk(f, CLASS_EARLY, "default");
        put_process(f, 201, "fused", 'S', 6000);
        give_dev_fuse(f, 201);
        put(f, "cg/app.slice/x.service/cgroup.procs", "200\n201\n");
        assert_walk(f, CLASS_LATE, "FUSE server fused (pid 201)");

        put(f, "cg/app.slice/x.service/cgroup.procs", "200\n");
        assert_walk(f, CLASS_EARLY, "default");
        put_process(f, 200, "fused", 'S', 7000); /* 200 exited; its pid went to a FUSE server */
        give_dev_fuse(f, 200);
        assert_walk(f, CLASS_LATE, "FUSE server fused (pid 200)");
}

/* A walk whose token was overtaken (a concurrent walk saw a newer world)
 * keeps nothing: what it read may predate the change */
static void test_overtaken_walk(void) {
        g_autoptr(DetectCache) c = detect_cache_new();
        uint64_t old = detect_cache_begin(c, "before");
        uint64_t now = detect_cache_begin(c, "after");
        g_assert_cmpuint(old, !=, now);
        detect_cache_store(c, old, 200, 5000, false);
        g_assert_cmpint(detect_cache_lookup(c, 200, 5000), ==, -ENOENT);
        detect_cache_store(c, now, 200, 5000, true);
        g_assert_cmpint(detect_cache_lookup(c, 200, 5000), ==, 1);
        g_assert_cmpint(detect_cache_lookup(c, 200, 5001), ==, -ENOENT);
        /* the same token: kept */
        g_assert_cmpuint(detect_cache_begin(c, "after"), ==, now);
        g_assert_cmpint(detect_cache_lookup(c, 200, 5000), ==, 1);
        /* two walks without a look at it: a gone process, dropped */
        (void) detect_cache_begin(c, "after");
        (void) detect_cache_begin(c, "after");
        g_assert_cmpuint(detect_cache_size(c), ==, 0);
}

#define MANY 300

static const PlanNode *child_named(const PlanNode *n, const char *path) {
        for (guint i = 0; i < n->children->len; i++)
                if (g_str_equal(((PlanNode *) n->children->pdata[i])->path, path))
                        return n->children->pdata[i];
        return NULL;
}

/* MANY cgroups of one process each; three of them data cleaners, the
 * first, one in the middle and the last: each found, with its reason and
 * who may read it, and no other */
static void test_many_cgroups(Fixture *f, gconstpointer data) {
        g_autofree char *fsync_text = g_strdup_printf("%ld 0x3 0x0 0x0 0x0 0x0 0x0 0x7ffd2000 0x7f9a1000\n",
                                                      (long) SYS_fsync);
        put(f, "proc/self/mountinfo", fuse_mounts);
        for (int i = 0; i < MANY; i++) {
                int pid = 1000 + i;
                bool syncs = i == 0 || i == MANY - 1;
                put_process(f, pid, syncs ? "tar" : i == MANY / 2 ? "sshfs" : "sleep", syncs ? 'D' : 'S', 100);
                if (syncs) {
                        g_autofree char *sc = g_strdup_printf("proc/%d/syscall", pid);
                        put(f, sc, fsync_text);
                }
                g_autofree char *procs = g_strdup_printf("cg/many.slice/s%03d.service/cgroup.procs", i);
                g_autofree char *text = g_strdup_printf("%d\n", pid);
                put(f, procs, text);
        }
        give_dev_fuse(f, 1000 + MANY / 2);
        put(f, "cg/many.slice/cgroup.procs", "");

        char *roots[] = { (char *) "many.slice", NULL };
        g_autoptr(GHashTable) private_reasons = detect_private_reasons_new();
        ClassifyInput in = { .cgroup_fd = f->cgroup_fd, .proc_fd = f->proc_fd, .roots = roots, .detect = true,
                             .cache = f->cache, .fuse_connections = f->fuse_connections,
                             .private_reasons = private_reasons };
        g_autoptr(GPtrArray) trees = NULL;
        g_assert_cmpint(classify_tree(&in, &trees), ==, 0);
        const PlanNode *slice = trees->pdata[0];
        g_assert_cmpuint(slice->children->len, ==, MANY);
        for (int i = 0; i < MANY; i++) {
                g_autofree char *path = g_strdup_printf("many.slice/s%03d.service", i);
                const PlanNode *n = child_named(slice, path);
                g_assert_nonnull(n);
                g_autofree char *want = i == 0 || i == MANY - 1
                        ? g_strdup_printf("syncing: pid %d (tar) in fsync", 1000 + i)
                        : i == MANY / 2 ? g_strdup_printf("FUSE server sshfs (pid %d) of /mnt/remote", 1000 + i)
                                        : g_strdup("default");
                g_assert_cmpstr(n->reason, ==, want);
                g_assert_cmpint(n->class, ==, g_str_equal(want, "default") ? CLASS_EARLY : CLASS_LATE);
                /* the owner of the process reads it whole, another user not */
                if (g_str_equal(want, "default"))
                        continue;
                g_assert_cmpstr(detect_reason_for(private_reasons, n->reason, getuid()), ==, want);
                const char *other = detect_reason_for(private_reasons, n->reason, getuid() + 1);
                g_autofree char *pid = g_strdup_printf("%d", 1000 + i);
                g_assert_cmpstr(other, !=, want);
                g_assert_null(strstr(other, pid));
        }
        g_assert_cmpuint(g_hash_table_size(private_reasons), ==, 3);
}

/* A cgroup skipped after its processes were handed over (its children
 * could not be listed) stays skipped with its reason: detection never
 * outranks what the walk could not read */
static void test_queue_keeps_skip(Fixture *f, gconstpointer data) {
        put_process(f, 200, "tar", 'D', 5000);
        g_autofree char *fsync_text = g_strdup_printf("%ld 0x3 0x0 0x0 0x0 0x0 0x0 0x7ffd2000 0x7f9a1000\n",
                                                      (long) SYS_fsync);
        put(f, "proc/200/syscall", fsync_text);
        DetectInput in = { .proc_fd = f->proc_fd, .fuse = true };
        PlanNode *skipped = NULL, *kept = NULL;
        g_assert_cmpint(plan_node_new("app.slice/x.service", CLASS_EARLY, "default", true, &skipped), ==, 0);
        g_assert_cmpint(plan_node_new("app.slice/y.service", CLASS_EARLY, "default", true, &kept), ==, 0);
        DetectQueue *q = detect_queue_new(&in);
        detect_queue_push(q, skipped, g_strdup("200\n"));
        detect_queue_push(q, kept, g_strdup("200\n"));
        plan_node_skip(skipped, "cannot list its children (Permission denied); skipped");
        detect_queue_finish(q);
        g_assert_true(skipped->skipped);
        g_assert_cmpstr(skipped->reason, ==, "cannot list its children (Permission denied); skipped");
        g_assert_cmpint(kept->class, ==, CLASS_LATE);
        g_assert_cmpstr(kept->reason, ==, "syncing: pid 200 (tar) in fsync");
        plan_node_free(skipped);
        plan_node_free(kept);
}

#define ADD(path, fn) g_test_add(path, Fixture, NULL, set_up, fn, tear_down)

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        ADD("/detect-cache/new-fuse-mount", test_new_fuse_mount);
        ADD("/detect-cache/new-fuse-connection", test_new_fuse_connection);
        ADD("/detect-cache/enters-sync", test_enters_sync);
        ADD("/detect-cache/new-process", test_new_process);
        g_test_add_func("/detect-cache/overtaken-walk", test_overtaken_walk);
        ADD("/detect-cache/many-cgroups", test_many_cgroups);
        ADD("/detect-cache/queue-keeps-skip", test_queue_keeps_skip);
        return g_test_run();
}
