/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "classify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detect.h"
#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "util.h"

int class_choice_new(CgroupClass class, const char *reason, ClassChoice **ret) {
        ClassChoice *c = g_new0(ClassChoice, 1);
        c->class = class;
        c->reason = g_strdup(reason);
        *ret = c;
        return 0;
}

ClassChoice *class_choice_free(ClassChoice *c) {
        if (!c)
                return NULL;
        g_free(c->reason);
        g_free(c);
        return NULL;
}

/* GLib's containers take a destroy function that returns nothing */
static void class_choice_destroy(gpointer c) {
        class_choice_free(c);
}

GHashTable *class_choice_table_new(void) {
        return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, class_choice_destroy);
}

GHashTable *classify_copy_choices(GHashTable *t) {
        GHashTable *copy = class_choice_table_new();
        if (!t)
                return copy;
        GHashTableIter i;
        gpointer k, v;
        g_hash_table_iter_init(&i, t);
        while (g_hash_table_iter_next(&i, &k, &v)) {
                const ClassChoice *c = v;
                ClassChoice *dup;
                (void) class_choice_new(c->class, c->reason, &dup); /* cannot fail */
                g_hash_table_insert(copy, g_strdup(k), dup);
        }
        return copy;
}

static const char *const builtin_exempt[] = {
        "init.scope",
        "systemd-journald.service",
        "systemd-logind.service",
        "systemd-udevd.service",
        "dbus.service",
        "dbus-broker.service",
        "fridged.service",
        NULL,
};

bool classify_is_builtin_exempt(const char *unit) {
        return unit && g_strv_contains(builtin_exempt, unit);
}

typedef struct Walk {
        const ClassifyInput *in;
        GPtrArray *mounts; /* for naming FUSE mounts; may be NULL */
        int error;         /* the first error that makes the tree untrustworthy */
} Walk;

static bool has_processes(int cgroup_fd, const char *path) {
        g_autofree char *p = g_strdup_printf("%s/cgroup.procs", path);
        g_autofree char *text = NULL;
        if (read_file_at(cgroup_fd, p, &text) < 0)
                return false;
        return text[strspn(text, " \n")] != '\0';
}

/* The decision for one cgroup; `inherited` is the nearest ancestor's
 * configured or overridden class, if any. Returns the class and sets
 * *reason; *ret_inherit tells whether descendants inherit it. */
static CgroupClass decide(Walk *w, const char *path, const ClassChoice *inherited, char **reason, bool *ret_inherit,
                          bool *ret_runtime) {
        const ClassifyInput *in = w->in;
        const char *unit = plan_unit_of(path);
        const ClassChoice *c;
        const char *why;

        *ret_inherit = false;
        *ret_runtime = false;
        if (in->exempt && (why = g_hash_table_lookup(in->exempt, path))) {
                *reason = g_strdup(why);
                return CLASS_NOFREEZE;
        }
        if (classify_is_builtin_exempt(unit)) {
                *reason = g_strdup_printf("built-in exemption: %s", unit);
                return CLASS_NOFREEZE;
        }
        if (in->holds && (c = g_hash_table_lookup(in->holds, path))) {
                *reason = g_strdup(c->reason);
                return c->class;
        }
        if (in->overrides && ((c = g_hash_table_lookup(in->overrides, path)) ||
                              (*unit && (c = g_hash_table_lookup(in->overrides, unit))))) {
                *reason = g_strdup(c->reason);
                *ret_inherit = true;
                *ret_runtime = true;
                return c->class;
        }
        /* A runtime override of an ancestor outranks the rules of files */
        if (inherited && inherited->runtime) {
                *reason = g_strdup(inherited->reason);
                *ret_inherit = true;
                *ret_runtime = true;
                return inherited->class;
        }
        CgroupClass class;
        const char *source;
        if (in->rules && class_rules_match(in->rules, path, unit, &class, &source)) {
                *reason = g_strdup_printf("config %s", source);
                *ret_inherit = true;
                return class;
        }
        if (inherited) {
                *reason = g_strdup(inherited->reason);
                return inherited->class;
        }
        if (in->detect && w->mounts && detect_cgroup(in->cgroup_fd, in->proc_fd, path, w->mounts, in->private_reasons,
                                                   reason) > 0)
                return CLASS_LATE;
        *reason = g_strdup("default");
        return CLASS_EARLY;
}

static PlanNode *walk(Walk *w, const char *path, const ClassChoice *inherited, unsigned depth);

static void walk_children(Walk *w, PlanNode *node, const ClassChoice *inherit, unsigned depth) {
        _cleanup_close_ int fd = openat(w->in->cgroup_fd, node->path,
                                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return; /* the cgroup went away meanwhile */
        /* Any other failure would make this a leaf, and a leaf is frozen
         * whole, exempt children and all: better no plan than that one */
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (w->error == 0)
                        w->error = log_warning_errno(-errno, "Cannot list the cgroup %s: %m", node->path);
                return;
        }
        fd = -1;
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        for (struct dirent *de; (de = readdir(d));)
                if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        g_ptr_array_add(names, g_strdup(de->d_name));
        closedir(d);

        for (guint i = 0; i < names->len; i++) {
                g_autofree char *child = g_strdup_printf("%s/%s", node->path, (char *) names->pdata[i]);
                PlanNode *n = walk(w, child, inherit, depth + 1);
                if (n)
                        plan_node_add_child(node, n);
        }
}

static PlanNode *walk(Walk *w, const char *path, const ClassChoice *inherited, unsigned depth) {
        if (depth > 64) {
                /* deeper than cgroup.max.depth ever sensibly is: refuse, do not truncate */
                if (w->error == 0)
                        w->error = log_warning_errno(-ELOOP, "Cgroup tree deeper than 64 levels at %s", path);
                return NULL;
        }

        g_autofree char *reason = NULL;
        bool inherit, runtime;
        CgroupClass class = decide(w, path, inherited, &reason, &inherit, &runtime);
        PlanNode *node;
        (void) plan_node_new(path, class, reason, has_processes(w->in->cgroup_fd, path), &node); /* cannot fail */

        ClassChoice self = { .class = class, .reason = reason, .runtime = runtime };
        walk_children(w, node, inherit ? &self : inherited, depth);
        return node;
}

/* Without them no FUSE server is named by its mount: said, not silent */
static GPtrArray *read_mounts(int proc_fd) {
        g_autofree char *text = NULL;
        GPtrArray *mounts = NULL;
        int r = read_file_at_max(proc_fd, "self/mountinfo", READ_FILE_UNBOUNDED, &text);
        if (r >= 0)
                r = parse_mountinfo(text, &mounts);
        if (r < 0) {
                log_warning_errno(r, "Cannot read the mount table (%m); FUSE servers are detected without "
                                  "their mounts");
                return NULL;
        }
        return mounts;
}

int classify_tree(const ClassifyInput *in, GPtrArray **ret_roots) {
        g_autoptr(GPtrArray) roots = plan_node_array_new();
        g_autoptr(GPtrArray) mounts = in->detect ? read_mounts(in->proc_fd) : NULL;
        Walk w = { .in = in, .mounts = mounts };

        for (char **r = in->roots; r && *r; r++) {
                struct stat st;
                if (fstatat(in->cgroup_fd, *r, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
                        log_debug("Freeze root %s does not exist; skipped", *r);
                        continue;
                }
                PlanNode *n = walk(&w, *r, NULL, 0);
                if (n)
                        g_ptr_array_add(roots, n);
        }
        if (w.error < 0)
                return w.error;
        *ret_roots = g_steal_pointer(&roots);
        return 0;
}
