/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "history.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "util.h"

#define HISTORY_DIR "history"
#define HISTORY_SUFFIX ".cycle"

struct History {
        int dir_fd;             /* DIR/history */
        char *where;            /* its path, for the log */
        unsigned max_cycles;
        GPtrArray *cycles;      /* HistoryCycle*, oldest (smallest id) first */
};

HistoryCycle *history_cycle_free(HistoryCycle *c) {
        if (!c)
                return NULL;
        g_free(c->kind);
        g_free(c->starter);
        g_free(c->result);
        g_free(c->error);
        g_free(c->phase);
        g_free(c->message);
        g_free(c->wake_source);
        g_strfreev(c->warnings);
        g_free(c->image_writer);
        g_free(c);
        return NULL;
}

const HistoryImageKey history_image_keys[] = {
        { "ImageWriter",       "image-writer",        's', offsetof(HistoryCycle, image_writer) },
        { "ImageRawBytes",     "image-raw-bytes",     't', offsetof(HistoryCycle, image_raw_bytes) },
        { "ImageWrittenBytes", "image-written-bytes", 't', offsetof(HistoryCycle, image_written_bytes) },
        { "ImageUsec",         "image-usec",          't', offsetof(HistoryCycle, image_usec) },
        { "ImageDoneBytes",    "image-done-bytes",    't', offsetof(HistoryCycle, image_done_bytes) },
        { "ImageTotalBytes",   "image-total-bytes",   't', offsetof(HistoryCycle, image_total_bytes) },
};
const size_t history_image_keys_count = G_N_ELEMENTS(history_image_keys);

static void cycle_destroy(gpointer c) {
        history_cycle_free(c);
}

static void set_string(GKeyFile *kf, const char *key, const char *value) {
        g_key_file_set_string(kf, HISTORY_GROUP, key, value ? value : "");
}

void history_cycle_to_keyfile(const HistoryCycle *c, GKeyFile *kf) {
        g_key_file_remove_group(kf, HISTORY_GROUP, NULL);
        g_key_file_set_uint64(kf, HISTORY_GROUP, "Id", c->id);
        set_string(kf, "Kind", c->kind);
        set_string(kf, "Starter", c->starter);
        g_key_file_set_int64(kf, HISTORY_GROUP, "Uid", c->uid == (uid_t) -1 ? -1 : (gint64) c->uid);
        g_key_file_set_int64(kf, HISTORY_GROUP, "Pid", c->pid);
        g_key_file_set_uint64(kf, HISTORY_GROUP, "Start", c->start_usec);
        g_key_file_set_uint64(kf, HISTORY_GROUP, "End", c->end_usec);
        set_string(kf, "Result", c->result);
        set_string(kf, "Error", c->error);
        set_string(kf, "Phase", c->phase);
        set_string(kf, "Message", c->message);
        g_key_file_set_uint64(kf, HISTORY_GROUP, "SleptUsec", c->slept_usec);
        set_string(kf, "WakeSource", c->wake_source);
        if (c->warnings && *c->warnings)
                g_key_file_set_string_list(kf, HISTORY_GROUP, "Warnings", (const char *const *) c->warnings,
                                           g_strv_length(c->warnings));
        if (isempty(c->image_writer)) /* no image write: the keys stay out, as in an older file */
                return;
        for (size_t i = 0; i < history_image_keys_count; i++) {
                const HistoryImageKey *k = &history_image_keys[i];
                const void *field = (const char *) c + k->offset;
                if (k->type == 's')
                        set_string(kf, k->file_key, *(char *const *) field);
                else
                        g_key_file_set_uint64(kf, HISTORY_GROUP, k->file_key, *(const uint64_t *) field);
        }
}

/* A key of the group as a whole number in [min, max] */
static bool get_number(GKeyFile *kf, const char *key, gint64 min, guint64 max, guint64 *ret) {
        g_autofree char *text = g_key_file_get_value(kf, HISTORY_GROUP, key, NULL);
        if (!text)
                return false;
        if (min < 0 && strcmp(text, "-1") == 0) {
                *ret = (guint64) -1;
                return true;
        }
        return g_ascii_string_to_unsigned(text, 10, 0, max, ret, NULL);
}

static bool get_string(GKeyFile *kf, const char *key, char **ret) {
        *ret = g_key_file_get_string(kf, HISTORY_GROUP, key, NULL);
        return *ret != NULL;
}

/* Optional, each of them (older files have none); one that is there must parse */
static bool get_image_keys(GKeyFile *kf, HistoryCycle *c) {
        for (size_t i = 0; i < history_image_keys_count; i++) {
                const HistoryImageKey *k = &history_image_keys[i];
                void *field = (char *) c + k->offset;
                if (!g_key_file_has_key(kf, HISTORY_GROUP, k->file_key, NULL))
                        continue;
                if (k->type == 's' ? !get_string(kf, k->file_key, (char **) field)
                                   : !get_number(kf, k->file_key, 0, UINT64_MAX, (guint64 *) field))
                        return false;
        }
        return true;
}

int history_cycle_from_keyfile(GKeyFile *kf, HistoryCycle **ret) {
        g_autoptr(HistoryCycle) c = g_new0(HistoryCycle, 1);
        guint64 uid, pid;
        if (!get_number(kf, "Id", 0, UINT64_MAX, &c->id) || c->id == 0 ||
            !get_number(kf, "Uid", -1, UINT32_MAX - 1, &uid) || !get_number(kf, "Pid", 0, INT32_MAX, &pid) ||
            !get_number(kf, "Start", 0, UINT64_MAX, &c->start_usec) ||
            !get_number(kf, "End", 0, UINT64_MAX, &c->end_usec) ||
            !get_number(kf, "SleptUsec", 0, UINT64_MAX, &c->slept_usec) || !get_string(kf, "Kind", &c->kind) ||
            !get_string(kf, "Starter", &c->starter) || !get_string(kf, "Result", &c->result) ||
            !get_string(kf, "Error", &c->error) || !get_string(kf, "Phase", &c->phase) ||
            !get_string(kf, "Message", &c->message) || !get_string(kf, "WakeSource", &c->wake_source))
                return -EBADMSG;
        if (!g_str_equal(c->starter, HISTORY_STARTER_HOOK) && !g_str_equal(c->starter, HISTORY_STARTER_CALLER))
                return -EBADMSG;
        c->uid = uid == (guint64) -1 ? (uid_t) -1 : (uid_t) uid;
        c->pid = (pid_t) pid;
        c->warnings = g_key_file_get_string_list(kf, HISTORY_GROUP, "Warnings", NULL, NULL); /* optional */
        if (!get_image_keys(kf, c))
                return -EBADMSG;
        if (!c->image_writer)
                c->image_writer = g_strdup("");
        *ret = g_steal_pointer(&c);
        return 0;
}

/* "ID.cycle" with ID a positive decimal: what the store writes */
static bool parse_file_name(const char *name, uint64_t *ret) {
        const char *dot = g_str_has_suffix(name, HISTORY_SUFFIX) ? strrchr(name, '.') : NULL;
        if (!dot || dot == name || !g_ascii_isdigit(name[0]))
                return false;
        g_autofree char *digits = g_strndup(name, dot - name);
        return g_ascii_string_to_unsigned(digits, 10, 1, UINT64_MAX, ret, NULL);
}

static char *file_name(uint64_t id) {
        return g_strdup_printf("%" PRIu64 HISTORY_SUFFIX, id);
}

static int compare_ids(gconstpointer a, gconstpointer b) {
        const HistoryCycle *x = *(HistoryCycle *const *) a, *y = *(HistoryCycle *const *) b;
        return x->id < y->id ? -1 : x->id > y->id;
}

static void load_file(History *h, const char *name) {
        uint64_t id;
        if (!parse_file_name(name, &id)) {
                log_warning("Skipping %s/%s: not a cycle of fridge's history (ID.cycle)", h->where, name);
                return;
        }
        _cleanup_free_ char *text = NULL;
        int r = read_file_at(h->dir_fd, name, &text);
        g_autoptr(GKeyFile) kf = g_key_file_new();
        g_autoptr(GError) e = NULL;
        if (r < 0) {
                log_warning_errno(r, "Skipping %s/%s: cannot read it: %m", h->where, name);
                return;
        }
        if (!g_key_file_load_from_data(kf, text, (gsize) -1, G_KEY_FILE_NONE, &e)) {
                log_warning("Skipping %s/%s: not a key file: %s", h->where, name, e->message);
                return;
        }
        HistoryCycle *c = NULL;
        if (history_cycle_from_keyfile(kf, &c) < 0 || c->id != id) {
                history_cycle_free(c);
                log_warning("Skipping %s/%s: its [" HISTORY_GROUP "] group is missing, incomplete or names "
                            "another cycle", h->where, name);
                return;
        }
        g_ptr_array_add(h->cycles, c);
}

static int load_all(History *h) {
        int fd = dup(h->dir_fd);
        if (fd < 0)
                return -errno;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.') /* ".", "..", and a write cut short */
                        load_file(h, de->d_name);
        closedir(d);
        g_ptr_array_sort(h->cycles, compare_ids);
        return 0;
}

/* The index of the oldest cycle of the uid with the most cycles kept (the
 * oldest of all on a tie, and always with one user): a user who starts
 * cycle after cycle pushes out their own, not the system's or another
 * user's */
static guint prune_victim(const History *h) {
        g_autoptr(GHashTable) counts = g_hash_table_new(g_direct_hash, g_direct_equal);
        guint best = 0, best_count = 0;
        for (guint i = 0; i < h->cycles->len; i++) {
                const HistoryCycle *c = g_ptr_array_index(h->cycles, i);
                gpointer key = GUINT_TO_POINTER(c->uid);
                guint n = GPOINTER_TO_UINT(g_hash_table_lookup(counts, key)) + 1;
                g_hash_table_insert(counts, key, GUINT_TO_POINTER(n));
        }
        for (guint i = 0; i < h->cycles->len; i++) {
                const HistoryCycle *c = g_ptr_array_index(h->cycles, i);
                guint n = GPOINTER_TO_UINT(g_hash_table_lookup(counts, GUINT_TO_POINTER(c->uid)));
                if (n > best_count) {
                        best = i;
                        best_count = n;
                }
        }
        return best;
}

/* Cycles go from memory first; their file names are returned for the
 * caller to remove. A file that will not go is forgotten all the same (it
 * is read again, and removed, at the next start). */
static GPtrArray *prune(History *h) {
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        while (h->cycles->len > h->max_cycles) {
                guint i = prune_victim(h);
                const HistoryCycle *old = g_ptr_array_index(h->cycles, i);
                g_ptr_array_add(names, file_name(old->id));
                g_ptr_array_remove_index(h->cycles, i);
        }
        return names;
}

static void remove_files(int dir_fd, const char *where, GPtrArray *names) {
        for (guint i = 0; i < names->len; i++) {
                const char *name = g_ptr_array_index(names, i);
                if (unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
                        log_warning_errno(-errno, "Cannot remove %s/%s from the history: %m", where, name);
        }
        if (names->len > 0)
                (void) fsync(dir_fd);
}

int history_open(int dir_fd, const char *where, unsigned max_cycles, History **ret) {
        if (mkdirat(dir_fd, HISTORY_DIR, 0700) < 0 && errno != EEXIST)
                return -errno;
        g_autoptr(History) h = g_new0(History, 1);
        h->cycles = g_ptr_array_new_with_free_func(cycle_destroy);
        h->max_cycles = max_cycles;
        h->where = g_build_filename(where, HISTORY_DIR, NULL);
        h->dir_fd = openat(dir_fd, HISTORY_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (h->dir_fd < 0)
                return -errno;
        int r = load_all(h);
        if (r < 0)
                return r;
        g_autoptr(GPtrArray) old = prune(h); /* MaxCycles= may have been lowered */
        remove_files(h->dir_fd, h->where, old);
        *ret = g_steal_pointer(&h);
        return 0;
}

History *history_free(History *h) {
        if (!h)
                return NULL;
        if (h->dir_fd >= 0)
                close(h->dir_fd);
        g_ptr_array_unref(h->cycles);
        g_free(h->where);
        g_free(h);
        return NULL;
}

static HistoryCycle *cycle_copy(const HistoryCycle *c) {
        HistoryCycle *n = g_memdup2(c, sizeof(*c));
        n->kind = g_strdup(c->kind ? c->kind : "");
        n->starter = g_strdup(c->starter ? c->starter : HISTORY_STARTER_CALLER);
        n->result = g_strdup(c->result ? c->result : "");
        n->error = g_strdup(c->error ? c->error : "");
        n->phase = g_strdup(c->phase ? c->phase : "");
        n->message = g_strdup(c->message ? c->message : "");
        n->wake_source = g_strdup(c->wake_source ? c->wake_source : "");
        n->warnings = g_strdupv(c->warnings);
        n->image_writer = g_strdup(c->image_writer ? c->image_writer : "");
        return n;
}

void history_set_max_cycles(History *h, unsigned max_cycles) {
        h->max_cycles = max_cycles; /* the oldest beyond it go with the next cycle's entry */
}

/* One cycle's file and the prune after it, done on the write queue with
 * a directory fd of its own: the History may be gone by then */
typedef struct HistoryWrite {
        int dir_fd;
        char *where, *name, *tmp, *text;
        GPtrArray *pruned;
} HistoryWrite;

static void history_write_free(void *p) {
        HistoryWrite *w = p;
        if (w->dir_fd >= 0)
                close(w->dir_fd);
        g_free(w->where);
        g_free(w->name);
        g_free(w->tmp);
        g_free(w->text);
        g_ptr_array_unref(w->pruned);
        g_free(w);
}

static void history_write_run(void *p) {
        HistoryWrite *w = p;
        int r = write_file_atomic_at(w->dir_fd, w->name, w->tmp, w->text);
        if (r < 0)
                log_warning_errno(r, "Cannot write %s/%s to the history: %m", w->where, w->name);
        remove_files(w->dir_fd, w->where, w->pruned);
}

int history_add(History *h, const HistoryCycle *c, GKeyFile *kf, WriteQueue *q) {
        history_cycle_to_keyfile(c, kf);
        HistoryWrite *w = g_new0(HistoryWrite, 1);
        w->dir_fd = fcntl(h->dir_fd, F_DUPFD_CLOEXEC, 3);
        if (w->dir_fd < 0) {
                int r = -errno;
                g_free(w);
                return r;
        }
        w->text = g_key_file_to_data(kf, NULL, NULL);
        w->name = file_name(c->id);
        w->tmp = g_strconcat(".", w->name, ".tmp", NULL);
        w->where = g_strdup(h->where);
        for (guint i = 0; i < h->cycles->len; i++)
                if (((HistoryCycle *) g_ptr_array_index(h->cycles, i))->id == c->id) {
                        g_ptr_array_remove_index(h->cycles, i);
                        break;
                }
        g_ptr_array_add(h->cycles, cycle_copy(c));
        g_ptr_array_sort(h->cycles, compare_ids);
        w->pruned = prune(h);
        if (!q) {
                history_write_run(w);
                history_write_free(w);
                return 0;
        }
        g_autofree char *what = g_strdup_printf("%s/%s (and the prune after it)", h->where, w->name);
        write_queue_push(q, what, history_write_run, w, history_write_free);
        return 0;
}

bool history_has(const History *h, uint64_t id) {
        for (guint i = 0; i < h->cycles->len; i++)
                if (((const HistoryCycle *) g_ptr_array_index(h->cycles, i))->id == id)
                        return true;
        return false;
}

int history_load(const History *h, uint64_t id, GKeyFile **ret) {
        /* What memory holds is what is kept: the disk follows it on the
         * write queue, and a pruned file may still be there for a moment */
        if (!history_has(h, id))
                return -ENOENT;
        g_autofree char *name = file_name(id);
        _cleanup_free_ char *text = NULL;
        int r = read_file_at(h->dir_fd, name, &text);
        if (r < 0)
                return r;
        g_autoptr(GKeyFile) kf = g_key_file_new();
        if (!g_key_file_load_from_data(kf, text, (gsize) -1, G_KEY_FILE_NONE, NULL))
                return -EBADMSG;
        *ret = g_steal_pointer(&kf);
        return 0;
}

guint history_count(const History *h) {
        return h ? h->cycles->len : 0;
}

const HistoryCycle *history_get(const History *h, guint newest_first_index) {
        g_assert(newest_first_index < h->cycles->len);
        return g_ptr_array_index(h->cycles, h->cycles->len - 1 - newest_first_index);
}
