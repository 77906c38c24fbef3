/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "parse.h"
#include "util.h"

#define RECORD_FILE "cycle"
#define RECORD_TMP ".cycle.tmp"
#define NEXT_ID_FILE "next-cycle-id"
#define NEXT_ID_TMP ".next-cycle-id.tmp"
#define ANNOUNCED_FILE "announced-cycle-id"
#define ANNOUNCED_TMP ".announced-cycle-id.tmp"

/* The loop writes the record, the write queue's thread removes a
 * finished cycle's: a removal must not take a newer cycle's record
 * written between its read and its unlink */
static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;

CycleRecord *cycle_record_free(CycleRecord *r) {
        if (!r)
                return NULL;
        g_free(r->kind);
        g_free(r->phase);
        g_free(r->boot_id);
        g_free(r);
        return NULL;
}

static int record_write_locked(int dir_fd, const CycleRecord *r) {
        g_autofree char *text = g_strdup_printf("ID=%" PRIu64 "\nKIND=%s\nPHASE=%s\nSTARTED_USEC=%" PRIu64
                                                "\nPID=%d\nBOOT_ID=%s\nSTARTER=%s\nSTARTER_UID=%" PRId64
                                                "\nSTARTER_PID=%d\n", r->id, r->kind, r->phase,
                                                r->started_usec, (int) r->pid, r->boot_id ? r->boot_id : "",
                                                r->by_hook ? "hook" : "caller",
                                                r->starter_uid == (uid_t) -1 ? (int64_t) -1 : (int64_t) r->starter_uid,
                                                (int) r->starter_pid);
        return write_file_replace_at(dir_fd, RECORD_FILE, RECORD_TMP, text);
}

int record_write(int dir_fd, const CycleRecord *r) {
        pthread_mutex_lock(&record_lock);
        int ret = record_write_locked(dir_fd, r);
        pthread_mutex_unlock(&record_lock);
        return ret;
}

int record_update(int dir_fd, const CycleRecord *r) {
        g_autoptr(CycleRecord) now = NULL;
        pthread_mutex_lock(&record_lock);
        int ret = 0;
        /* a newer cycle's record is there: this one's cycle is over */
        if (record_read(dir_fd, &now) < 0 || !now || now->id <= r->id)
                ret = record_write_locked(dir_fd, r);
        pthread_mutex_unlock(&record_lock);
        return ret;
}

/* The value of KEY= in `text`, or NULL */
static const char *field(char **lines, const char *key) {
        size_t n = strlen(key);
        for (char **l = lines; *l; l++)
                if (strncmp(*l, key, n) == 0 && (*l)[n] == '=')
                        return *l + n + 1;
        return NULL;
}

static int parse_u64_field(char **lines, const char *key, uint64_t *ret) {
        const char *v = field(lines, key);
        return v ? parse_uint64(v, ret) : -EBADMSG;
}

/* Optional: a record of an older fridged has none of them */
static void read_starter(char **lines, CycleRecord *rec) {
        const char *boot = field(lines, "BOOT_ID"), *starter = field(lines, "STARTER");
        uint64_t uid, pid;
        rec->boot_id = boot && *boot ? g_strdup(boot) : NULL;
        rec->by_hook = g_strcmp0(starter, "hook") == 0;
        rec->starter_uid = parse_u64_field(lines, "STARTER_UID", &uid) >= 0 && uid < UINT32_MAX ? (uid_t) uid
                                                                                                : (uid_t) -1;
        rec->starter_pid = parse_u64_field(lines, "STARTER_PID", &pid) >= 0 && pid <= INT32_MAX ? (pid_t) pid : 0;
}

int record_read(int dir_fd, CycleRecord **ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at(dir_fd, RECORD_FILE, &text);
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r < 0)
                return r;

        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_autoptr(CycleRecord) rec = g_new0(CycleRecord, 1);
        uint64_t pid = 0;
        const char *kind = field(lines, "KIND"), *phase = field(lines, "PHASE");
        if (parse_u64_field(lines, "ID", &rec->id) < 0 || rec->id == 0 || !kind || !phase ||
            parse_u64_field(lines, "STARTED_USEC", &rec->started_usec) < 0 ||
            parse_u64_field(lines, "PID", &pid) < 0 || pid > INT32_MAX)
                return -EBADMSG;
        rec->kind = g_strdup(kind);
        rec->phase = g_strdup(phase);
        rec->pid = (pid_t) pid;
        read_starter(lines, rec);
        *ret = g_steal_pointer(&rec);
        return 0;
}

int record_remove(int dir_fd, uint64_t id) {
        g_autoptr(CycleRecord) rec = NULL;
        pthread_mutex_lock(&record_lock);
        int r = record_read(dir_fd, &rec);
        /* A record we cannot read is no newer cycle's: it goes */
        if (r == -EBADMSG || (r >= 0 && rec && rec->id == id))
                r = unlinkat(dir_fd, RECORD_FILE, 0) < 0 && errno != ENOENT ? -errno : 1;
        pthread_mutex_unlock(&record_lock);
        if (r <= 0)
                return r;
        return fsync(dir_fd) < 0 ? -errno : 0;
}

/* A file holding one id (never 0); `absent` when it is not there */
static int read_id_file(int dir_fd, const char *name, uint64_t absent, uint64_t *ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at(dir_fd, name, &text);
        if (r == -ENOENT) {
                *ret = absent;
                return 0;
        }
        if (r < 0)
                return r;
        uint64_t v;
        r = parse_uint64(strstrip_right(text), &v);
        if (r < 0 || v == 0)
                return -EBADMSG;
        *ret = v;
        return 0;
}

int record_read_next_id(int dir_fd, uint64_t *ret) {
        return read_id_file(dir_fd, NEXT_ID_FILE, 1, ret);
}

int record_write_next_id(int dir_fd, uint64_t next) {
        g_autofree char *text = g_strdup_printf("%" PRIu64 "\n", next);
        return write_file_atomic_at(dir_fd, NEXT_ID_FILE, NEXT_ID_TMP, text);
}

int record_read_announced(int state_fd, uint64_t *ret) {
        return read_id_file(state_fd, ANNOUNCED_FILE, 0, ret);
}

int record_write_announced(int state_fd, uint64_t id) {
        g_autofree char *text = g_strdup_printf("%" PRIu64 "\n", id);
        return write_file_replace_at(state_fd, ANNOUNCED_FILE, ANNOUNCED_TMP, text);
}
