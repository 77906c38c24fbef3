/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "devices.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libudev.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "parse.h"
#include "util.h"

#define POWER_WAKEUP_IRQ     "sys/power/pm_wakeup_irq"
#define POWER_FAILED_DEV     "sys/power/suspend_stats/last_failed_dev"
#define POWER_FAILED_ERRNO   "sys/power/suspend_stats/last_failed_errno"
#define WAKEUP_CLASS         "sys/class/wakeup"

typedef struct udev Udev;
typedef struct udev_enumerate UdevEnumerate;
typedef struct udev_device UdevDevice;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Udev, udev_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(UdevEnumerate, udev_enumerate_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(UdevDevice, udev_device_unref)

typedef struct WakeupSource {
        char *label;            /* "rtc0 on 00:04 (rtc_cmos)" */
        uint64_t count;         /* event_count */
} WakeupSource;

struct WakeupSnapshot {
        GHashTable *sources;    /* syspath → WakeupSource* */
        uint64_t irq;           /* pm_wakeup_irq; 0: none recorded */
        char *failed_dev;       /* suspend_stats/last_failed_dev; NULL: absent or empty */
        int failed_errno;       /* suspend_stats/last_failed_errno; 0: absent or none */
};

static void wakeup_source_free(WakeupSource *w) {
        g_free(w->label);
        g_free(w);
}

WakeupSnapshot *devices_wakeup_snapshot_free(WakeupSnapshot *s) {
        if (!s)
                return NULL;
        g_hash_table_unref(s->sources);
        g_free(s->failed_dev);
        g_free(s);
        return NULL;
}

/* A source's name is often its device's bus address ("00:04"), and a
 * class device's ("rtc0") says little more: the parent and its driver
 * ("rtc_cmos") tell a person what woke the machine. */
static char *source_label(struct udev_device *dev) {
        const char *name = udev_device_get_sysattr_value(dev, "name");
        if (!name || !*name)
                name = udev_device_get_sysname(dev);

        g_autoptr(GString) label = g_string_new(name);
        struct udev_device *parent = udev_device_get_parent(dev); /* borrowed */
        const char *pname = parent ? udev_device_get_sysname(parent) : NULL;
        const char *driver = parent ? udev_device_get_driver(parent) : NULL;
        if (pname && !g_str_equal(pname, name))
                g_string_append_printf(label, " on %s", pname);
        if (driver && *driver)
                g_string_append_printf(label, " (%s)", driver);
        return g_string_free(g_steal_pointer(&label), FALSE);
}

/* libudev resolves every path a component at a time: a snapshot of /sys's
 * wakeup sources through it costs about a thousand system calls (30 ms
 * of a cycle's awake time under emulation, and a cycle takes three). The
 * sources found, with their labels, are kept between snapshots, for /sys
 * (through libudev) and for a sysfs root of its own (the simulated
 * kernel's class directory) alike; each snapshot lists the class
 * directory and reads every source's name, event_count and the links its
 * label comes from, and any change there (a device came, went, took
 * another's wakeupN or its driver) has them all read again. Snapshots run
 * on workers and on the loop: one at a time. */
typedef struct CachedSource {
        char *key;              /* the snapshot's: the syspath, or sys/class/wakeup/ENTRY */
        char *dir;              /* its attributes' directory: the syspath, or ENTRY below the class */
        char *parent_link;      /* the link naming its parent (ENTRY/device); NULL: the syspath says it */
        char *driver_link;      /* the link naming the parent's driver; NULL: no parent */
        /* as read when cached: NULL for none */
        char *name, *parent, *driver;
        char *label;
} CachedSource;

typedef struct SourceCache {
        char **entries;         /* the class directory's listing it was built from */
        GPtrArray *sources;     /* CachedSource*; NULL: not built */
} SourceCache;

static GMutex cache_lock;
static SourceCache udev_cache, root_cache;

static void cached_source_free(CachedSource *c) {
        g_free(c->key);
        g_free(c->dir);
        g_free(c->parent_link);
        g_free(c->driver_link);
        g_free(c->name);
        g_free(c->parent);
        g_free(c->driver);
        g_free(c->label);
        g_free(c);
}

static gint compare_names(gconstpointer a, gconstpointer b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The class directory's entries (path below dir_fd), sorted; NULL without it */
static char **list_class(int dir_fd, const char *path) {
        DIR *d = opendir_at(dir_fd, path);
        if (!d)
                return NULL;
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        for (struct dirent *de; (de = readdir(d));)
                if (de->d_name[0] != '.')
                        g_ptr_array_add(names, g_strdup(de->d_name));
        closedir(d);
        g_ptr_array_sort(names, compare_names);
        g_ptr_array_add(names, NULL);
        return (char **) g_ptr_array_free(g_steal_pointer(&names), FALSE);
}

/* dir/attr below dir_fd, stripped; NULL: none. An absolute dir (a
 * syspath) is opened by its name, as libudev does (umockdev's testbed
 * stands in for /sys there). One read each: every prepare reads every
 * source's attributes, and sysfs makes each whole in one show(). */
static char *read_attr_at(int dir_fd, const char *dir, const char *attr) {
        g_autofree char *path = g_build_filename(dir, attr, NULL);
        char *text = NULL;
        if ((g_path_is_absolute(dir) ? read_path_single(path, &text) : read_file_at_single(dir_fd, path, &text)) < 0)
                return NULL;
        return g_strstrip(text);
}

/* Where link `path` (below dir_fd, or absolute) points; NULL: none */
static char *read_link_at(int dir_fd, const char *path) {
        if (!path)
                return NULL;
        if (g_path_is_absolute(path))
                return g_file_read_link(path, NULL);
        char target[PATH_MAX];
        ssize_t n = readlinkat(dir_fd, path, target, sizeof(target) - 1);
        return n > 0 ? g_strndup(target, (gsize) n) : NULL;
}

/* ---- /sys, through libudev ---- */

static void cache_udev_source(GPtrArray *out, Udev *udev, const char *syspath) {
        g_autoptr(UdevDevice) dev = udev_device_new_from_syspath(udev, syspath);
        uint64_t count;
        if (!dev)
                return; /* went away since the enumeration */
        const char *text = udev_device_get_sysattr_value(dev, "event_count");
        if (!text || parse_uint64(text, &count) < 0)
                return; /* not a wakeup source after all */
        CachedSource *c = g_new0(CachedSource, 1);
        c->key = g_strdup(syspath);
        c->dir = g_strdup(syspath);
        struct udev_device *parent = udev_device_get_parent(dev); /* borrowed */
        if (parent)
                c->driver_link = g_build_filename(udev_device_get_syspath(parent), "driver", NULL);
        c->name = read_attr_at(AT_FDCWD, syspath, "name");
        c->driver = read_link_at(AT_FDCWD, c->driver_link);
        c->label = source_label(dev);
        g_ptr_array_add(out, c);
}

static void build_udev(GPtrArray *out, int dir_fd, char **entries) {
        g_autoptr(Udev) udev = udev_new();
        g_autoptr(UdevEnumerate) e = udev ? udev_enumerate_new(udev) : NULL;
        struct udev_list_entry *item;
        /* No wakeup class (an old kernel, a container without it) is no
         * error: nothing can be named then */
        if (!e || udev_enumerate_add_match_subsystem(e, "wakeup") < 0 || udev_enumerate_scan_devices(e) < 0)
                return;
        udev_list_entry_foreach(item, udev_enumerate_get_list_entry(e))
                cache_udev_source(out, udev, udev_list_entry_get_name(item));
}

/* ---- a sysfs root of its own: the class directory's files and links ---- */

static char *basename_or_null(const char *path) {
        return path ? g_path_get_basename(path) : NULL;
}

/* As source_label(), from the links' targets */
static char *root_source_label(const CachedSource *c) {
        g_autofree char *pname = basename_or_null(c->parent);
        g_autofree char *dname = basename_or_null(c->driver);
        g_autoptr(GString) label = g_string_new(c->name);
        if (pname && !g_str_equal(pname, c->name))
                g_string_append_printf(label, " on %s", pname);
        if (dname)
                g_string_append_printf(label, " (%s)", dname);
        return g_string_free(g_steal_pointer(&label), FALSE);
}

static void build_root(GPtrArray *out, int class_fd, char **entries) {
        for (char **e = entries; e && *e; e++) {
                uint64_t count;
                g_autofree char *name = read_attr_at(class_fd, *e, "name");
                g_autofree char *count_text = read_attr_at(class_fd, *e, "event_count");
                if (!name || !*name || !count_text || parse_uint64(count_text, &count) < 0)
                        continue;
                CachedSource *c = g_new0(CachedSource, 1);
                c->key = g_strdup_printf(WAKEUP_CLASS "/%s", *e);
                c->dir = g_strdup(*e);
                c->parent_link = g_strdup_printf("%s/device", *e);
                c->driver_link = g_strdup_printf("%s/device/driver", *e);
                c->name = g_steal_pointer(&name);
                c->parent = read_link_at(class_fd, c->parent_link);
                c->driver = read_link_at(class_fd, c->driver_link);
                c->label = root_source_label(c);
                g_ptr_array_add(out, c);
        }
}

/* ---- both ---- */

typedef void (*CacheBuild)(GPtrArray *out, int dir_fd, char **entries);

static void cache_rebuild(SourceCache *cache, CacheBuild build, int dir_fd, char **entries) {
        g_strfreev(cache->entries);
        cache->entries = entries;
        g_clear_pointer(&cache->sources, g_ptr_array_unref);
        cache->sources = g_ptr_array_new_with_free_func((GDestroyNotify) cached_source_free);
        build(cache->sources, dir_fd, entries);
}

/* Every cached source as it is now, into `sources`; false (and nothing
 * added) when one is not what was cached: they must be read again */
static bool read_cached(const SourceCache *cache, int dir_fd, GHashTable *sources) {
        g_autoptr(GPtrArray) fresh = g_ptr_array_new_with_free_func((GDestroyNotify) wakeup_source_free);
        for (guint i = 0; i < cache->sources->len; i++) {
                const CachedSource *c = cache->sources->pdata[i];
                g_autofree char *count_text = read_attr_at(dir_fd, c->dir, "event_count");
                g_autofree char *name = read_attr_at(dir_fd, c->dir, "name");
                g_autofree char *parent = read_link_at(dir_fd, c->parent_link);
                g_autofree char *driver = read_link_at(dir_fd, c->driver_link);
                uint64_t count;
                if (!count_text || parse_uint64(count_text, &count) < 0 || g_strcmp0(name, c->name) != 0 ||
                    g_strcmp0(parent, c->parent) != 0 || g_strcmp0(driver, c->driver) != 0)
                        return false;
                WakeupSource *w = g_new0(WakeupSource, 1);
                w->label = g_strdup(c->label);
                w->count = count;
                g_ptr_array_add(fresh, w);
        }
        g_ptr_array_set_free_func(fresh, NULL); /* the table takes them */
        for (guint i = 0; i < fresh->len; i++)
                g_hash_table_replace(sources, g_strdup(((CachedSource *) cache->sources->pdata[i])->key),
                                     fresh->pdata[i]);
        return true;
}

static bool same_entries(char **a, char **b) {
        return (!a && !b) || (a && b && g_strv_equal((const char *const *) a, (const char *const *) b));
}

/* The sources of the class directory `path` below dir_fd, from the cache
 * when it is still what the directory holds */
static void cache_read(SourceCache *cache, CacheBuild build, int dir_fd, const char *path, GHashTable *sources) {
        g_mutex_lock(&cache_lock);
        char **entries = list_class(dir_fd, path);
        if (!cache->sources || !same_entries(entries, cache->entries))
                cache_rebuild(cache, build, dir_fd, g_steal_pointer(&entries));
        g_strfreev(entries);
        if (!read_cached(cache, dir_fd, sources)) {
                cache_rebuild(cache, build, dir_fd, list_class(dir_fd, path));
                if (!read_cached(cache, dir_fd, sources)) /* changing under us: as much as holds still */
                        g_clear_pointer(&cache->sources, g_ptr_array_unref);
        }
        g_mutex_unlock(&cache_lock);
}

static void read_sources(GHashTable *sources) {
        cache_read(&udev_cache, build_udev, AT_FDCWD, "/" WAKEUP_CLASS, sources);
}

/* libudev reads the wakeup class of /sys (or of umockdev's testbed); a
 * sysfs root elsewhere, the simulated kernel's, has a class of its own */
static void read_root_sources(int sysfs_fd, GHashTable *sources) {
        _cleanup_close_ int class_fd = open_dir_beneath(sysfs_fd, WAKEUP_CLASS);
        struct stat here, udev;
        if (class_fd < 0 || fstat(class_fd, &here) < 0 ||
            (stat("/" WAKEUP_CLASS, &udev) == 0 && here.st_dev == udev.st_dev && here.st_ino == udev.st_ino))
                return;
        cache_read(&root_cache, build_root, class_fd, ".", sources);
}

/* The text of a small sysfs file without its newline; NULL when it is
 * absent, unreadable (pm_wakeup_irq is ENODATA until an IRQ woke us) or
 * empty. */
static char *read_power_attr(int sysfs_fd, const char *path) {
        char *text = NULL;
        if (read_file_at_single(sysfs_fd, path, &text) < 0)
                return NULL;
        if (!*g_strstrip(text)) {
                g_free(text);
                return NULL;
        }
        return text;
}

static void read_power_stats(int sysfs_fd, WakeupSnapshot *s) {
        g_autofree char *irq = read_power_attr(sysfs_fd, POWER_WAKEUP_IRQ);
        g_autofree char *err = read_power_attr(sysfs_fd, POWER_FAILED_ERRNO);
        gint64 e;

        if (irq && parse_uint64(irq, &s->irq) < 0)
                s->irq = 0;
        s->failed_dev = read_power_attr(sysfs_fd, POWER_FAILED_DEV);
        if (err && g_ascii_string_to_signed(err, 10, -4095, 4095, &e, NULL))
                s->failed_errno = (int) e;
}

WakeupSnapshot *devices_wakeup_snapshot(int sysfs_fd) {
        WakeupSnapshot *s = g_new0(WakeupSnapshot, 1);
        s->sources = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify) wakeup_source_free);
        read_sources(s->sources);
        read_root_sources(sysfs_fd, s->sources);
        read_power_stats(sysfs_fd, s);
        return s;
}

typedef struct Moved {
        const char *label;
        uint64_t by;
} Moved;

static gint compare_moved(gconstpointer a, gconstpointer b) {
        const Moved *x = a, *y = b;
        if (x->by != y->by)
                return x->by < y->by ? 1 : -1;
        return strcmp(x->label, y->label);
}

/* A source that appeared since `before` counts from zero; one whose
 * syspath now carries another source (wakeupN reused) as well. */
static uint64_t count_before(const WakeupSnapshot *before, const char *syspath, const WakeupSource *now) {
        const WakeupSource *was = g_hash_table_lookup(before->sources, syspath);
        return was && g_str_equal(was->label, now->label) ? was->count : 0;
}

static void append_moved_sources(GString *out, const WakeupSnapshot *before, const WakeupSnapshot *after) {
        g_autoptr(GArray) moved = g_array_new(FALSE, FALSE, sizeof(Moved));
        GHashTableIter i;
        gpointer k, v;

        g_hash_table_iter_init(&i, after->sources);
        while (g_hash_table_iter_next(&i, &k, &v)) {
                const WakeupSource *now = v;
                uint64_t then = count_before(before, k, now);
                if (now->count > then)
                        g_array_append_val(moved, ((Moved) { .label = now->label, .by = now->count - then }));
        }
        if (moved->len == 0) {
                g_string_append(out, "unknown");
                return;
        }
        g_array_sort(moved, compare_moved);
        for (guint n = 0; n < moved->len; n++)
                g_string_append_printf(out, "%s%s", n ? ", " : "", g_array_index(moved, Moved, n).label);
}

/* suspend_stats keep the last failure for good: it is news only when the
 * kernel recorded it during this sleep */
static void append_failure(GString *out, const WakeupSnapshot *before, const WakeupSnapshot *after) {
        if (!after->failed_dev && after->failed_errno == 0)
                return;
        if (g_strcmp0(before->failed_dev, after->failed_dev) == 0 && before->failed_errno == after->failed_errno)
                return;
        if (!after->failed_dev)
                g_string_append_printf(out, "; last failure: errno %d", after->failed_errno);
        else if (after->failed_errno == 0)
                g_string_append_printf(out, "; last failed device: %s", after->failed_dev);
        else
                g_string_append_printf(out, "; last failed device: %s (errno %d)", after->failed_dev,
                                       after->failed_errno);
}

char *devices_wake_reason(const WakeupSnapshot *before, const WakeupSnapshot *after) {
        g_autoptr(GString) out = g_string_new(NULL);

        append_moved_sources(out, before, after);
        if (after->irq > 0)
                g_string_append_printf(out, "; irq %" PRIu64, after->irq);
        append_failure(out, before, after);
        /* Device and source names are sysfs's bytes; the reason goes on
         * D-Bus (Resumed, ListCycles), where one bad string fails the call */
        return g_utf8_make_valid(out->str, (gssize) out->len);
}
