/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "classify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"
#include "detect.h"
#include "detect-queue.h"
#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "process-rules.h"
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

/* The system's own plumbing, at the places systemd puts it: without it
 * nothing could wake up or log. */
static const char *const builtin_exempt_system[] = {
        "init.scope",
        "system.slice/systemd-journald.service",
        "system.slice/systemd-logind.service",
        "system.slice/systemd-udevd.service",
        "system.slice/dbus.service",
        "system.slice/dbus-broker.service",
        NULL,
};

/* The session bus, by the unit names of its two daemons; a glob such as
 * dbus*.service would take in the services the bus activates
 * ("dbus-:1.2-org.example.App@0.service"), which must freeze. The
 * deliberate exception is the session's user interface: the vendor's
 * classes.d names GNOME's notification proxy by its transient unit
 * (dbus-:*-org.gnome.Shell.Notifications@*.service) and command line,
 * and fridge-agent holds whatever owns the session's notification names
 * as ui by that role (HoldRole), a hold that ranks above classes.d. */
static const char *const session_bus_units[] = { "dbus.service", "dbus-broker.service", NULL };

/* p is prefix, a UID, suffix, then more: returns the more (NULL when p is
 * not so), *ret_uid and *ret_len the UID's digits. */
static const char *skip_uid(const char *p, const char *prefix, const char *suffix, const char **ret_uid,
                            size_t *ret_len) {
        if (!g_str_has_prefix(p, prefix))
                return NULL;
        p += strlen(prefix);
        size_t n = strspn(p, "0123456789");
        if (n == 0 || !g_str_has_prefix(p + n, suffix))
                return NULL;
        *ret_uid = p;
        *ret_len = n;
        return p + n + strlen(suffix);
}

/* What follows "user.slice/user-UID.slice/user@UID.service/" (the same UID
 * twice), or NULL when path is not below a user's manager. */
static const char *below_user_manager(const char *path) {
        const char *uid = NULL, *uid2 = NULL;
        size_t n = 0, n2 = 0;
        const char *p = skip_uid(path, "user.slice/user-", ".slice/", &uid, &n);
        if (p)
                p = skip_uid(p, "user@", ".service/", &uid2, &n2);
        if (!p || n != n2 || memcmp(uid, uid2, n) != 0)
                return NULL;
        return p;
}

static bool is_slice_name(const char *name, size_t len) {
        static const char suffix[] = ".slice";
        size_t k = sizeof(suffix) - 1;
        return len > k && memcmp(name + len - k, suffix, k) == 0;
}

/* Below the user's manager: "init.scope" is the manager itself, and the
 * session bus sits in one of its slices ("session.slice/dbus.service"). */
static const char *user_exemption(const char *rest) {
        if (strcmp(rest, "init.scope") == 0)
                return "the user's manager";
        const char *base = strrchr(rest, '/');
        base = base ? base + 1 : rest;
        if (!g_strv_contains(session_bus_units, base))
                return NULL;
        /* only slices between the manager and the bus: not an app's own sub-cgroup */
        for (const char *p = rest; p < base;) {
                const char *slash = strchr(p, '/');
                if (!is_slice_name(p, (size_t) (slash - p)))
                        return NULL;
                p = slash + 1;
        }
        return "the session bus";
}

const char *classify_builtin_exemption(const char *path) {
        if (!path)
                return NULL;
        if (g_strv_contains(builtin_exempt_system, path))
                return path;
        const char *rest = below_user_manager(path);
        return rest ? user_exemption(rest) : NULL;
}

typedef struct Walk {
        const ClassifyInput *in;
        GPtrArray *mounts; /* for naming FUSE mounts; may be NULL */
        bool processes;    /* some rule is a Processes= one: each cgroup's processes are read */
        DetectQueue *queue; /* NULL when nothing is detected */
} Walk;

/* The classes.d rules of the cgroup itself: Units= and Cgroups= (which
 * descendants inherit), and Processes= on its own processes (which they do
 * not: a child cgroup does not hold the display server). The higher class
 * wins; on a tie the inherited kind, so descendants keep it. */
static bool decide_by_rules(Walk *w, const char *path, const char *unit, bool empty, CgroupClass *ret_class,
                            char **reason, bool *ret_inherit) {
        const ClassifyInput *in = w->in;
        CgroupClass class = _CLASS_INVALID, pclass = _CLASS_INVALID;
        const char *source = NULL;
        g_autofree char *preason = NULL;
        bool by_name = in->rules && class_rules_match(in->rules, path, unit, &class, &source);
        bool by_process = w->processes && !empty && process_rules_match_cgroup(in->rules, in->cgroup_fd, in->proc_fd, path,
                                                                     in->private_reasons, &pclass, &preason) > 0;
        if (by_process && (!by_name || pclass > class)) {
                *reason = g_steal_pointer(&preason);
                *ret_class = pclass;
                return true;
        }
        if (!by_name)
                return false;
        *reason = g_strdup_printf("config %s", source);
        *ret_class = class;
        *ret_inherit = true;
        return true;
}

/* The decision for one cgroup; `inherited` is the nearest ancestor's
 * configured or overridden class, if any; `empty` when it holds no process
 * (nothing to match or detect). Returns the class and sets *reason;
 * *ret_inherit tells whether descendants inherit it; *ret_detect that it
 * is early only if detection finds no data cleaner among its processes. */
static CgroupClass decide(Walk *w, const char *path, const ClassChoice *inherited, bool empty, char **reason,
                          bool *ret_inherit, bool *ret_runtime, bool *ret_detect) {
        const ClassifyInput *in = w->in;
        const char *unit = plan_unit_of(path);
        const ClassChoice *c;
        const char *why;

        *ret_inherit = false;
        *ret_runtime = false;
        *ret_detect = false;
        if (in->exempt && (why = g_hash_table_lookup(in->exempt, path))) {
                *reason = g_strdup(why);
                return CLASS_NOFREEZE;
        }
        if (in->ui && (why = g_hash_table_lookup(in->ui, path))) {
                *reason = g_strdup(why);
                return CLASS_UI;
        }
        if ((why = classify_builtin_exemption(path))) {
                *reason = g_strdup_printf("built-in exemption: %s", why);
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
        if (decide_by_rules(w, path, unit, empty, &class, reason, ret_inherit))
                return class;
        if (inherited) {
                *reason = g_strdup(inherited->reason);
                return inherited->class;
        }
        *ret_detect = w->queue && !empty;
        *reason = g_strdup("default");
        return CLASS_EARLY;
}

/* One cgroup of the walk: its node (owned by its parent, or the root's
 * caller), what its children inherit, and the children left to visit.
 * Frames are on a stack of the walk's own: no depth exhausts anything. */
typedef struct Frame {
        PlanNode *node;
        char *reason;                  /* as decided: a skipped node's own reason says why it is skipped */
        ClassChoice self;              /* its reason is `reason`, borrowed */
        const ClassChoice *inherit;    /* what the children inherit: &self, or an ancestor's */
        GPtrArray *names;              /* the children's names; NULL when none could be listed */
        guint next;
        bool unpopulated;              /* cgroup.events said no process is in it or below */
} Frame;

static void frame_free(Frame *f) {
        if (f->names)
                g_ptr_array_unref(f->names);
        g_free(f->reason);
        g_free(f);
}

/* Why a cgroup is skipped, for the plan's entry */
static char *skip_reason(int r, const char *what) {
        if (r == -ENOENT || r == -ENODEV)
                return g_strdup("vanished during the walk; skipped");
        return g_strdup_printf("cannot %s (%s); skipped", what, errno_text(r));
}

/* Closes fd */
static int list_children(int fd, GPtrArray **ret) {
        DIR *d = fdopendir(fd);
        if (!d) {
                int r = -errno;
                close(fd);
                return r;
        }
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        errno = 0;
        for (struct dirent *de; (de = readdir(d)); errno = 0)
                if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        g_ptr_array_add(names, g_strdup(de->d_name));
        int r = -errno;
        closedir(d);
        if (r < 0)
                return r;
        *ret = g_steal_pointer(&names);
        return 0;
}

/* "populated 0": no process in the cgroup nor below it, so no cgroup.procs
 * of that subtree needs reading. Unknown (no such file) counts as populated. */
static bool events_say_unpopulated(int dir_fd) {
        g_autofree char *text = NULL;
        if (read_file_at_single(dir_fd, "cgroup.events", &text) < 0)
                return false;
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++)
                if (g_str_equal(strstrip_right(*l), "populated 0"))
                        return true;
        return false;
}

/* What reading one cgroup found */
typedef struct CgroupRead {
        int r;                 /* <0: it could not be read (`what` says which step failed) */
        const char *what;
        bool unpopulated;
        bool has_processes;
        char *procs;           /* its cgroup.procs, NULL when not read */
        GPtrArray *names;
} CgroupRead;

/* A directory's link count is 2 and one per subdirectory on cgroupfs
 * (kernfs), as on tmpfs and ext4; 1 where a filesystem does not count
 * (btrfs). Exactly 2 says there is no child cgroup: most cgroups are
 * leaves, and listing one (every controller's file) is the dearest read
 * of a walk. 0 when it is one, else -errno (-ELOOP for a symlink). */
static int stat_cgroup(Walk *w, const char *path, bool *ret_leaf) {
        struct stat st;
        if (fstatat(w->in->cgroup_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
        *ret_leaf = st.st_nlink == 2;
        return 0;
}

/* cgroup.procs and the child directories, then cgroup.events only when
 * it can tell what they do not: whether a cgroup with children but no
 * process of its own has any below. Below a cgroup whose events said
 * "populated 0" no cgroup.procs nor cgroup.events is read. A leaf is not
 * opened: its cgroup.procs is read by path. */
static CgroupRead cgroup_read(Walk *w, const char *path, bool parent_unpopulated) {
        CgroupRead c = { .what = "read its cgroup.procs", .unpopulated = parent_unpopulated };
        bool leaf = false;
        if (!c.unpopulated) {
                g_autofree char *procs = g_strdup_printf("%s/cgroup.procs", path);
                c.r = read_file_at(w->in->cgroup_fd, procs, &c.procs);
                if (c.r < 0)
                        return c;
                c.has_processes = c.procs[strspn(c.procs, " \n")] != '\0';
        }
        /* after its processes: a child made and filled between the two is listed */
        c.what = "open it";
        c.r = stat_cgroup(w, path, &leaf);
        if (c.r < 0)
                return c;
        if (leaf) {
                c.names = g_ptr_array_new_with_free_func(g_free);
                c.unpopulated = c.unpopulated || !c.has_processes;
                return c;
        }
        int fd = openat(w->in->cgroup_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                c.r = -errno;
                return c;
        }
        int events_fd = c.unpopulated || c.has_processes ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
        c.what = "list its children";
        c.r = list_children(fd, &c.names); /* closes fd */
        /* a leaf's procs said it all; one with children is unpopulated only if its events say so */
        if (c.r >= 0 && events_fd >= 0)
                c.unpopulated = c.names->len == 0 || events_say_unpopulated(events_fd);
        if (events_fd >= 0)
                close(events_fd);
        return c;
}

/* A cgroup that cannot be read is skipped: one whose children are unknown
 * is never frozen whole (an exempt one could be among them), nor are its
 * ancestors. */
static Frame *frame_new(Walk *w, const char *path, const Frame *parent) {
        Frame *f = g_new0(Frame, 1);
        const ClassChoice *inherited = parent ? parent->inherit : NULL;
        CgroupRead c = cgroup_read(w, path, parent && parent->unpopulated);
        bool inherit, runtime, detect;
        CgroupClass class = decide(w, path, inherited, c.r >= 0 && !c.has_processes, &f->reason, &inherit, &runtime,
                                   &detect);

        (void) plan_node_new(path, class, f->reason, c.has_processes, &f->node); /* cannot fail */
        if (detect && c.r >= 0 && c.procs) /* the cgroup.procs the walk read, not read again */
                detect_queue_push(w->queue, f->node, g_steal_pointer(&c.procs));
        g_free(c.procs);
        f->names = c.names;
        f->unpopulated = c.r >= 0 && c.unpopulated;
        if (c.r < 0) {
                g_autofree char *why = skip_reason(c.r, c.what);
                g_autofree char *shown = cgroups_escape(path);
                plan_node_skip(f->node, why);
                /* a transient scope ending meanwhile is ordinary; a cgroup we cannot read is not */
                log_internal(c.r == -ENOENT || c.r == -ENODEV ? LOG_INFO : LOG_WARNING, 0, "Cgroup %s: %s", shown,
                             why);
        }
        if (w->in->after_read)
                w->in->after_read(path, w->in->after_read_userdata);
        f->self = (ClassChoice) { .class = class, .reason = f->reason, .runtime = runtime };
        f->inherit = inherit ? &f->self : inherited;
        return f;
}

/* Depth first, children in directory order, with an explicit stack. */
static PlanNode *walk(Walk *w, const char *root) {
        g_autoptr(GPtrArray) stack = g_ptr_array_new_with_free_func((GDestroyNotify) frame_free);
        g_ptr_array_add(stack, frame_new(w, root, NULL));
        PlanNode *top = ((Frame *) stack->pdata[0])->node;

        while (stack->len > 0) {
                Frame *f = stack->pdata[stack->len - 1];
                if (!f->names || f->next >= f->names->len) {
                        g_ptr_array_set_size(stack, stack->len - 1);
                        continue;
                }
                const char *name = f->names->pdata[f->next++];
                g_autofree char *child = g_strdup_printf("%s/%s", f->node->path, name);
                Frame *c = frame_new(w, child, f);
                plan_node_add_child(f->node, c->node);
                g_ptr_array_add(stack, c);
        }
        return top;
}

/* Without them no FUSE server is named by its mount: said, not silent.
 * *ret_text: the table as read, NULL when it could not be. */
static GPtrArray *read_mounts(int proc_fd, char **ret_text) {
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
        *ret_text = g_steal_pointer(&text);
        return mounts;
}

/* The cache's token: a FUSE mount anywhere adds a fusectl entry, one in
 * fridged's namespace a line to its mount table (fusectl may be missing) */
static uint64_t cache_begin(const ClassifyInput *in, const char *mount_table) {
        if (!in->cache)
                return 0;
        g_autofree char *token = g_strdup_printf("fusectl:\n%s\nmountinfo:\n%s", in->fuse_connections ?: "unknown",
                                                 mount_table ?: "unknown");
        return detect_cache_begin(in->cache, token);
}

int classify_tree(const ClassifyInput *in, GPtrArray **ret_roots) {
        g_autoptr(GPtrArray) roots = plan_node_array_new();
        g_autofree char *mount_table = NULL;
        g_autoptr(GPtrArray) mounts = in->detect ? read_mounts(in->proc_fd, &mount_table) : NULL;
        Walk w = { .in = in, .mounts = mounts, .processes = class_rules_have_processes(in->rules) };
        DetectInput detect = {
                .proc_fd = in->proc_fd, .mounts = mounts, .fuse = !in->no_fuse, .private_reasons = in->private_reasons,
                .cache = in->cache, .gen = cache_begin(in, mount_table),
        };
        if (in->detect && mounts)
                w.queue = detect_queue_new(&detect);

        /* A cgroup that vanishes or cannot be read is a skipped entry of
         * the plan, never a failure of it */

        for (char **r = in->roots; r && *r; r++) {
                struct stat st;
                if (fstatat(in->cgroup_fd, *r, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
                        log_debug("Freeze root %s does not exist; skipped", *r);
                        continue;
                }
                g_ptr_array_add(roots, walk(&w, *r));
        }
        if (w.queue)
                detect_queue_finish(w.queue);
        *ret_roots = g_steal_pointer(&roots);
        return 0;
}
