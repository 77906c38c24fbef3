/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "devices.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "parse.h"
#include "util.h"

#define WAKEUP_CLASS "sys/class/wakeup"

struct WakeupSnapshot {
        GHashTable *counts; /* source name → event count (guint64 boxed) */
};

void devices_wakeup_snapshot_free(WakeupSnapshot *s) {
        if (!s)
                return;
        g_hash_table_unref(s->counts);
        g_free(s);
}

static char *driver_of(int sysfs_fd, const char *entry) {
        g_autofree char *link = g_strdup_printf(WAKEUP_CLASS "/%s/device/driver", entry);
        char target[PATH_MAX];
        ssize_t n = readlinkat(sysfs_fd, link, target, sizeof(target) - 1);
        if (n <= 0)
                return NULL;
        target[n] = '\0';
        const char *slash = strrchr(target, '/');
        return g_strdup(slash ? slash + 1 : target);
}

static void read_source(int sysfs_fd, const char *entry, GHashTable *counts) {
        g_autofree char *name_path = g_strdup_printf(WAKEUP_CLASS "/%s/name", entry);
        g_autofree char *count_path = g_strdup_printf(WAKEUP_CLASS "/%s/event_count", entry);
        g_autofree char *name = NULL, *count_text = NULL;
        uint64_t count;

        if (read_file_at(sysfs_fd, count_path, &count_text) < 0 || parse_uint64(count_text, &count) < 0)
                return; /* went away, or not a wakeup source after all */
        if (read_file_at(sysfs_fd, name_path, &name) < 0 || !*strstrip_right(name)) {
                g_free(name);
                name = g_strdup(entry);
        }
        /* A source's name is often a bus address ("00:04"); its driver
         * ("rtc_cmos") tells a person what woke the machine */
        g_autofree char *driver = driver_of(sysfs_fd, entry);
        g_autofree char *label = driver ? g_strdup_printf("%s (%s)", name, driver) : g_strdup(name);
        g_hash_table_replace(counts, g_steal_pointer(&label), g_memdup2(&count, sizeof(count)));
}

WakeupSnapshot *devices_wakeup_snapshot(int sysfs_fd) {
        WakeupSnapshot *s = g_new0(WakeupSnapshot, 1);
        s->counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

        int fd = openat(sysfs_fd, WAKEUP_CLASS, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return s;
        }
        for (struct dirent *de; (de = readdir(d));)
                if (de->d_name[0] != '.')
                        read_source(sysfs_fd, de->d_name, s->counts);
        closedir(d);
        return s;
}

typedef struct Moved {
        const char *name;
        uint64_t by;
} Moved;

static gint compare_moved(gconstpointer a, gconstpointer b) {
        const Moved *x = a, *y = b;
        if (x->by != y->by)
                return x->by < y->by ? 1 : -1;
        return strcmp(x->name, y->name);
}

char *devices_wake_reason(const WakeupSnapshot *before, const WakeupSnapshot *after) {
        g_autoptr(GArray) moved = g_array_new(FALSE, FALSE, sizeof(Moved));
        GHashTableIter i;
        gpointer k, v;

        g_hash_table_iter_init(&i, after->counts);
        while (g_hash_table_iter_next(&i, &k, &v)) {
                const uint64_t *was = g_hash_table_lookup(before->counts, k);
                uint64_t now = *(const uint64_t *) v, then = was ? *was : 0;
                if (now > then)
                        g_array_append_val(moved, ((Moved) { .name = k, .by = now - then }));
        }
        if (moved->len == 0)
                return g_strdup("unknown");
        g_array_sort(moved, compare_moved);

        g_autoptr(GString) out = g_string_new(NULL);
        for (guint n = 0; n < moved->len; n++)
                g_string_append_printf(out, "%s%s", n ? ", " : "", g_array_index(moved, Moved, n).name);
        return g_string_free(g_steal_pointer(&out), FALSE);
}
