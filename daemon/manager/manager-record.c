/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: the record of the running cycle in the state directory, and
 * the report of a cycle an earlier fridged did not finish. */
#include "manager-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "power-saved.h"
#include "record.h"
#include "util.h"

/* ---- the cycle record: what a restarted fridged reports ---- */

static const char *record_phase_name(const Cycle *c) {
        return cycle_state_record_phase(c->state == CYCLE_STATE_ENDING ? c->ended_in : c->state);
}

static bool record_phase_late(const Cycle *c) {
        return cycle_state_phase(c->state == CYCLE_STATE_ENDING ? c->ended_in : c->state) > PHASE_KERNEL;
}

/* The /sys/power knobs as they were before the cycle set the first of
 * them: what every restore of the cycle puts back, and on disk for a
 * restart after a crash. A failed write costs only that restore: the cycle
 * goes on. */
void manager_knobs_save(Manager *m, Cycle *c) {
        if (!c->before)
                c->before = power_saved_read(m->sysfs_fd, c->settings->wake_after_sec > 0);
        if (m->state_fd < 0 || c->knobs_saved)
                return;
        int r = power_saved_write(m->state_fd, c->before);
        if (r < 0)
                log_warning_errno(r, "Failed to save the kernel settings in the state directory: %m");
        else
                c->knobs_saved = true;
}

/* The knobs may be off their record in the kernel phase (not a dry run's:
 * it writes none, and two fsyncs were a tenth of its cycle), and on the
 * logind driver's path from its pm_test at handed-over until they are put
 * back */
void manager_record_knobs(Manager *m, Cycle *c) {
        CycleState s = c->state == CYCLE_STATE_ENDING ? c->ended_in : c->state;
        if ((cycle_state_in_kernel(s) && s != CYCLE_STATE_SKIPPING_KERNEL) || c->knobs.pm_test_set) {
                manager_knobs_save(m, c);
                return;
        }
        if (!c->knobs_saved)
                return;
        int r = power_saved_remove(m->state_fd);
        if (r < 0)
                log_warning_errno(r, "Failed to remove the kernel settings from the state directory: %m");
        else
                c->knobs_saved = false;
}

static void manager_record_queue_update(Manager *m, const CycleRecord *rec);

/* A failed write costs only the report after a crash: the cycle goes on */
void manager_record_update(Manager *m) {
        Cycle *c = m->cycle;
        manager_record_knobs(m, c);
        const char *phase = record_phase_name(c);
        /* States of one phase (resuming after sleeping, ending where the
         * cycle was) say nothing new to a restart; nor does the thaw of a
         * cycle ending unannounced: the restart names where it was cut */
        if (m->persistent_fd < 0 || m->keep_record || (c->recorded_phase && strcmp(c->recorded_phase, phase) == 0))
                return;
        /* Each phase goes to the page cache only: the first flush, before
         * anything is frozen, takes the cycle's start to disk with the rest
         * (a power cut is then reported), and no fsync of ours waits on
         * the loop for a slow disk. Up to the kernel phase on the loop, so
         * that a crash report names the phase the bus last showed; the
         * thaw's off the loop, in order with the history: after a resume
         * the disk under /var/lib may wait for good behind a FUSE server
         * not yet thawed, and the thaw must not wait for it */
        bool first = c->recorded_phase == NULL;
        c->recorded_phase = phase;
        CycleRecord rec = { .id = c->id, .kind = (char *) sleep_kind_to_string(c->kind),
                            .phase = (char *) phase, .started_usec = c->started_usec, .pid = getpid(),
                            .boot_id = m->boot_id, .by_hook = c->by_hook, .starter_uid = c->owner,
                            .starter_pid = c->client.pid };
        if (!first && m->writes && record_phase_late(c)) {
                manager_record_queue_update(m, &rec);
                return;
        }
        int r = record_write(m->persistent_fd, &rec);
        if (r < 0)
                c->recorded_phase = NULL; /* the next state tries again */
        if (r < 0)
                log_warning_errno(r, "Failed to record cycle %" G_GUINT64_FORMAT " in the state directory: %m",
                                  c->id);
}

static int open_dir(const char *dir, const char *lost) {
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return log_warning_errno(-errno, "Cannot create %s (%m); %s", dir, lost);
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return log_warning_errno(-errno, "Cannot open %s (%m); %s", dir, lost);
        return fd;
}

/* This boot's id: a record of another boot is of a cycle the machine went
 * down in */
static char *read_boot_id(int proc_fd) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at(proc_fd, "sys/kernel/random/boot_id", &text);
        if (r < 0) {
                log_warning_errno(r, "Cannot read the boot id (%m); a power cut will read as a crash");
                return NULL;
        }
        return g_strdup(strstrip_right(text));
}

/* The interrupted cycle's id was taken: ids go on after it */
void manager_load_record(Manager *m, const char *state_dir, const char *persistent_dir) {
        m->state_fd = open_dir(state_dir, "kernel settings will not be put back after a crash");
        /* Before any new cycle can change them again */
        if (m->state_fd >= 0)
                (void) power_saved_restore(m->state_fd, m->sysfs_fd);
        int r = m->state_fd >= 0 ? record_read_announced(m->state_fd, &m->announced_id) : 0;
        if (r < 0)
                log_warning_errno(r, "Ignoring the unreadable announced-cycle-id in %s: %m", state_dir);
        m->boot_id = read_boot_id(m->proc_fd);
        m->persistent_fd = open_dir(persistent_dir, "interrupted cycles will not be reported");
        if (m->persistent_fd < 0)
                return;
        r = record_read_next_id(m->persistent_fd, &m->next_id);
        if (r < 0)
                log_warning_errno(r, "Cannot read %s/next-cycle-id (%m); cycle ids start at 1", persistent_dir);
        r = record_read(m->persistent_fd, &m->interrupted);
        if (r < 0)
                log_warning_errno(r, "Ignoring the unreadable cycle record in %s: %m", persistent_dir);
        if (m->interrupted && m->interrupted->id >= m->next_id)
                m->next_id = m->interrupted->id + 1;
        manager_history_open(m, persistent_dir);
}

static char *interrupted_message(const Manager *m, const CycleRecord *rec) {
        if (rec->boot_id && m->boot_id && !g_str_equal(rec->boot_id, m->boot_id))
                return g_strdup_printf("the machine went down during the cycle (phase %s, in an earlier boot)",
                                       rec->phase);
        return g_strdup_printf("fridged stopped during phase %s of the previous run (pid %d); %s", rec->phase,
                               (int) rec->pid,
                               m->startup_thaw_failed ? "some cgroups it froze could not be thawed yet (see the log)"
                                                      : "everything it froze was thawed");
}

void manager_report_interrupted(Manager *m) {
        g_autoptr(CycleRecord) rec = g_steal_pointer(&m->interrupted);
        if (!rec)
                return;
        /* The earlier fridged announced the cycle's end (and maybe stored it
         * in the history), and was stopped before the record's removal,
         * queued after it, came: the cycle was reported once, and its result
         * stays as it was */
        if (m->announced_id == rec->id || (m->history && history_has(m->history, rec->id))) {
                log_info("Cycle %" G_GUINT64_FORMAT " had finished before the previous run (pid %d) stopped; "
                         "only its record was left", rec->id, (int) rec->pid);
                manager_record_remove(m, rec->id);
                return;
        }
        g_autofree char *message = interrupted_message(m, rec);
        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " (%s) finished: failed: %s", rec->id,
                                               rec->kind, message);
        g_autofree char *phase_field = g_strdup_printf("FRIDGE_PHASE=%s", rec->phase);
        /* The entry is about the earlier run's cycle */
        uint64_t current = log_get_cycle();
        log_set_cycle(rec->id);
        log_struct_event(LOG_ERR, FRIDGE_MESSAGE_CYCLE_INTERRUPTED, msg, "FRIDGE_RESULT=failed", phase_field, NULL);
        log_set_cycle(current);

        m->last_id = rec->id;
        m->last_kind = sleep_kind_from_string(rec->kind);
        m->last_result = RESULT_FAILED;
        if (m->ops && m->ops->finished)
                m->ops->finished(m->userdata, rec->id, RESULT_FAILED, FRIDGE_ERROR_INTERRUPTED, message);
        manager_notify(m, MANAGER_CHANGED_STATE | MANAGER_CHANGED_LAST);
        manager_history_add_interrupted(m, rec, message);
        /* Removed only now: a crash before the report reports it next time */
        manager_record_remove(m, rec->id);
}

/* ---- the writes nothing waits for, on the write queue ---- */

typedef struct RecordWrite {
        int dir_fd;             /* a dup: the manager may be gone when it runs */
        uint64_t id;            /* the record's cycle, or the next id */
        CycleRecord *rec;       /* a phase's update; NULL otherwise */
} RecordWrite;

static void record_write_free(void *p) {
        RecordWrite *w = p;
        close(w->dir_fd);
        cycle_record_free(w->rec);
        g_free(w);
}

static void record_update_run(void *p) {
        RecordWrite *w = p;
        int r = record_update(w->dir_fd, w->rec);
        if (r < 0)
                log_warning_errno(r, "Failed to record cycle %" G_GUINT64_FORMAT " in the state directory: %m",
                                  w->id);
}

static void record_remove_run(void *p) {
        RecordWrite *w = p;
        int r = record_remove(w->dir_fd, w->id);
        if (r < 0)
                log_warning_errno(r, "Failed to remove the record of cycle %" G_GUINT64_FORMAT ": %m", w->id);
}

static void record_next_id_run(void *p) {
        RecordWrite *w = p;
        int r = record_write_next_id(w->dir_fd, w->id);
        if (r < 0)
                log_warning_errno(r, "Failed to save the next cycle id: %m");
}

static void record_queue(Manager *m, const char *what, WriteQueueFunc fn, uint64_t id, CycleRecord *rec) {
        if (m->persistent_fd < 0)
                return;
        int fd = fcntl(m->persistent_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) {
                log_warning_errno(-errno, "Cannot write %s to the persistent directory: %m", what);
                cycle_record_free(rec);
                return;
        }
        RecordWrite *w = g_new(RecordWrite, 1);
        *w = (RecordWrite) { .dir_fd = fd, .id = id, .rec = rec };
        if (m->writes) {
                write_queue_push(m->writes, what, fn, w, record_write_free);
                return;
        }
        fn(w); /* no queue: on the loop, as before it */
        record_write_free(w);
}

/* On the loop, in the state directory (tmpfs, which no stuck disk holds
 * up): the history and the record's removal after it may wait on the
 * write queue for a slow disk, and a kill meanwhile must not make the
 * restart announce the cycle a second time. Not for a cycle ending
 * unannounced (fridged stopping): the restart reports that one. */
void manager_record_announced(Manager *m, const Cycle *c) {
        if (m->state_fd < 0 || m->keep_record)
                return;
        int r = record_write_announced(m->state_fd, c->id);
        if (r < 0)
                log_warning_errno(r, "Failed to note cycle %" G_GUINT64_FORMAT "'s end in the state directory (%m); "
                                  "a crash before its history is written reports it twice", c->id);
}

void manager_record_remove(Manager *m, uint64_t id) {
        g_autofree char *what = g_strdup_printf("the removal of cycle %" G_GUINT64_FORMAT "'s record", id);
        record_queue(m, what, record_remove_run, id, NULL);
}

static void manager_record_queue_update(Manager *m, const CycleRecord *rec) {
        CycleRecord *copy = g_memdup2(rec, sizeof(*rec));
        copy->kind = g_strdup(rec->kind);
        copy->phase = g_strdup(rec->phase);
        copy->boot_id = g_strdup(rec->boot_id);
        g_autofree char *what = g_strdup_printf("cycle %" G_GUINT64_FORMAT "'s record (phase %s)", rec->id,
                                                rec->phase);
        record_queue(m, what, record_update_run, rec->id, copy);
}

/* A lost one costs nothing: the record and the history carry the ids too */
void manager_record_next_id(Manager *m) {
        record_queue(m, "next-cycle-id", record_next_id_run, m->next_id, NULL);
}

