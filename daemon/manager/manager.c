/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "manager-internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cgroups.h"
#include "fileio.h"
#include "freezer.h"
#include "ledger.h"
#include "log.h"
#include "progress.h"
#include "util.h"
#include "writer-protocol.h"

/* Every string option the table has: a new one needs no line here */
void cycle_options_clear(CycleOptions *o) {
        for (size_t i = 0; i < sleep_options_count; i++)
                if (sleep_options[i].type == SLEEP_OPTION_STRING)
                        g_clear_pointer((char **) sleep_option_field(o, &sleep_options[i]), g_free);
}

/* What a state owns ends with it. An image writer is told to stop: it
 * reads that before it writes a page, or right after it froze user space */
static void cycle_stop_work(Cycle *c) {
        if (c->freezer)
                freezer_cancel_stage(c->freezer);
        if (c->power_request) {
                c->image = power_request_image_write(c->power_request); /* how far a stopped write got */
                (void) power_request_cancel(c->power_request);
        }
        worker_abandon(TAKE_PTR(c->worker));
        c->power_request = NULL;
        manager_cycle_work_done(c);
}

void manager_hook_waiter_complete(HookWaiter *w, uint64_t id, int r, FridgeError error, const char *message) {
        HookWaiter t = *w;
        *w = (HookWaiter) {};
        if (t.done)
                t.done(t.userdata, id, r, error, message);
}

static void cycle_free(Cycle *c) {
        if (!c)
                return;
        cycle_stop_work(c);
        c->pre_deadline = sd_event_source_disable_unref(c->pre_deadline);
        /* Only when the manager goes away mid-cycle: nobody is left waiting */
        manager_hook_waiter_complete(&c->pre, c->id, -ECANCELED, FRIDGE_ERROR_CANCELLED, "fridged is stopping");
        manager_hook_waiter_complete(&c->post, c->id, -ECANCELED, FRIDGE_ERROR_CANCELLED, "fridged is stopping");
        cycle_settings_free(c->settings);
        power_knobs_clear(&c->knobs);
        power_saved_free(c->before);
        g_free(c->knob_failure);
        g_strfreev(c->warnings);
        g_free(c->set_resume);
        g_free(c->wake_reason);
        g_free(c->retry_why);
        devices_wakeup_snapshot_free(c->wakeup_sources);
        plan_free(c->plan);
        g_free(c->client_cgroup);
        pidref_done(&c->client);
        timeline_free(c->timeline);
        g_free(c->progress_text);
        g_free(c->message);
        g_free(c);
}

void manager_notify(Manager *m, unsigned what) {
        if (m->ops && m->ops->changed)
                m->ops->changed(m->userdata, what);
}

/* Once per cycle: a sleep logind announced has had it already */
void manager_emit_sleep_imminent(Manager *m) {
        Cycle *c = m->cycle;
        if (c->imminent_sent)
                return;
        c->imminent_sent = true;
        if (m->ops && m->ops->sleep_imminent)
                m->ops->sleep_imminent(m->userdata, c->id, c->kind);
}

void manager_cycle_work_done(Cycle *c) {
        c->tick = sd_event_source_disable_unref(c->tick);
        c->timer = sd_event_source_disable_unref(c->timer);
}

void manager_schedule_step(Manager *m) {
        (void) sd_event_source_set_enabled(m->step, SD_EVENT_ONESHOT);
}

/* ProgressText and a cycle's message go out on D-Bus, whose strings must be
 * UTF-8: one stray byte from a name that was not escaped at its source
 * would make sd-bus drop the signal or fail GetAll for every client */
G_GNUC_PRINTF(1, 0) static char *utf8_vprintf(const char *fmt, va_list ap) {
        g_autofree char *text = g_strdup_vprintf(fmt, ap);
        return g_utf8_make_valid(text, -1);
}

void manager_set_progress(Manager *m, double fraction, const char *fmt, ...) {
        Cycle *c = m->cycle;
        va_list ap;
        va_start(ap, fmt);
        g_autofree char *text = utf8_vprintf(fmt, ap);
        va_end(ap);

        double p = progress_monotonic(c->progress, progress_overall(manager_cycle_phase(c), fraction));
        if (p == c->progress && g_strcmp0(text, c->progress_text) == 0)
                return;
        c->progress = p;
        g_free(c->progress_text);
        c->progress_text = g_steal_pointer(&text);
        manager_notify(m, MANAGER_CHANGED_PROGRESS);
}

/* ---- the state machine ---- */

Phase manager_cycle_phase(const Cycle *c) {
        return cycle_state_phase(c->state == CYCLE_STATE_ENDING ? c->ended_in : c->state);
}

static const char *cycle_phase_name(const Cycle *c) {
        return cycle_state_phase_name(c->state == CYCLE_STATE_ENDING ? c->ended_in : c->state);
}

bool manager_cycle_blocked(const Manager *m) {
        return inhibit_count(m->inhibitors, INHIBIT_BLOCK, 0) > 0;
}

CycleFacts manager_cycle_facts(const Manager *m) {
        const Cycle *c = m->cycle;
        const CycleSettings *s = c->settings;
        return (CycleFacts) {
                .blocked = s->queue && !s->ignore_inhibitors && manager_cycle_blocked(m),
                .logind_driver = s->driver == CYCLE_DRIVER_LOGIND,
                .joined = c->joined,
                .hook_driver = s->driver != CYCLE_DRIVER_DIRECT,
                .dry_run = s->dry_run && !s->pm_test,
                .writes_image = c->writes_image,
                .retry = c->retry_why != NULL,
                .timeout_continues = s->flush_on_timeout == FLUSH_ON_TIMEOUT_CONTINUE,
        };
}

void manager_transition(Manager *m, CycleState to) {
        Cycle *c = m->cycle;
        CycleState from = c->state;

        /* A move the table lacks is a bug: better a restart, which thaws
         * from the ledger, than a cycle in a state nobody planned */
        if (!cycle_state_allowed(from, to)) {
                log_error("Cycle %" G_GUINT64_FORMAT ": no transition from %s to %s", c->id,
                          cycle_state_to_string(from), cycle_state_to_string(to));
                g_assert_not_reached();
        }
        cycle_stop_work(c);
        /* The knobs were for systemd-sleep's state write: it is over, or
         * will not be the cycle's (the logind driver sets pm_test early) */
        if (from == CYCLE_STATE_HOOK_SLEEPING || (to == CYCLE_STATE_ENDING && !manager_pm_keep_take(m, c, from)))
                power_knobs_restore(m->sysfs_fd, &c->knobs, c->before);
        /* The step is the old state's completion; the new one schedules its own */
        (void) sd_event_source_set_enabled(m->step, SD_EVENT_OFF);
        c->state = to;
        manager_timeline_transition(m, to);

        Phase phase = cycle_state_phase(to);
        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT ": %s -> %s%s%s%s", c->id,
                                               cycle_state_to_string(from), cycle_state_to_string(to),
                                               phase != PHASE_NONE ? " (phase " : "", phase_to_string(phase),
                                               phase != PHASE_NONE ? ")" : "");
        g_autofree char *state_field = g_strdup_printf("FRIDGE_STATE=%s", cycle_state_to_string(to));
        g_autofree char *from_field = g_strdup_printf("FRIDGE_PREVIOUS_STATE=%s", cycle_state_to_string(from));
        log_struct_event(LOG_DEBUG, FRIDGE_MESSAGE_CYCLE_STATE, msg, state_field, from_field, NULL);
        manager_sync_logind_block(m);
        if (to != CYCLE_STATE_FINISHED) {
                manager_record_update(m);
                manager_notify(m, MANAGER_CHANGED_STATE);
                /* Whoever heard of the move may have moved the cycle on (a
                 * Cancel from the callback): the newer state has run */
                if (m->cycle != c || c->state != to)
                        return;
        }
        manager_enter_state(m, to);
}

void manager_cycle_event(Manager *m, CycleEvent e) {
        Cycle *c = m->cycle;
        if (!c)
                return;
        CycleFacts f = manager_cycle_facts(m);
        CycleState to = cycle_state_next(c->state, e, &f);
        if (to != _CYCLE_STATE_INVALID)
                manager_transition(m, to);
}

static int on_step(sd_event_source *s, void *userdata) {
        manager_cycle_event(userdata, CYCLE_EVENT_DONE);
        return 0;
}

/* Decides the cycle's result now and heads for thaw. The first decision wins. */
void manager_end_cycle_early(Manager *m, CycleResult result, FridgeError error, const char *fmt, ...) {
        Cycle *c = m->cycle;
        if (!c || cycle_state_past_the_end(c->state))
                return;

        va_list ap;
        va_start(ap, fmt);
        c->message = utf8_vprintf(fmt, ap);
        va_end(ap);
        c->ended_in = c->state;
        c->result = result;
        c->error = error;
        Phase phase = manager_cycle_phase(c);
        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " %s %s%s: %s", c->id,
                                               cycle_result_to_string(result),
                                               phase == PHASE_NONE ? "before it started" : "in phase ",
                                               phase_to_string(phase), c->message);
        if (result == RESULT_FAILED) {
                g_autofree char *phase_field = g_strdup_printf("FRIDGE_PHASE=%s", phase_to_string(phase));
                log_struct_event(LOG_WARNING, FRIDGE_MESSAGE_PHASE_FAILED, msg, phase_field, NULL);
        } else
                log_info("%s", msg);
        manager_transition(m, CYCLE_STATE_ENDING);
}

/* ---- finishing ---- */

void manager_cycle_finish(Manager *m) {
        Cycle *c = TAKE_PTR(m->cycle);

        if (c->result == RESULT_NONE)
                c->result = c->settings->dry_run ? RESULT_DRY_RUN : RESULT_DONE;
        if (!c->message)
                c->message = g_strdup(c->result == RESULT_DRY_RUN ? "all phases ran; nothing was written to the kernel"
                                                                   : "slept and resumed");

        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " (%s) finished: %s: %s", c->id,
                                               sleep_kind_to_string(c->kind), cycle_result_to_string(c->result),
                                               c->message);
        g_autofree char *result_field = g_strdup_printf("FRIDGE_RESULT=%s", cycle_result_to_string(c->result));
        log_struct_event(c->result == RESULT_FAILED ? LOG_ERR : LOG_INFO, FRIDGE_MESSAGE_CYCLE_FINISH, msg,
                         result_field, NULL);

        m->last_id = c->id;
        m->last_kind = c->kind;
        m->last_result = c->result;
        manager_timeline_keep(m, c);
        manager_record_announced(m, c);
        if (m->ops && m->ops->finished)
                m->ops->finished(m->userdata, c->id, c->result, c->error, c->message);
        /* Only once CycleFinished is out (the bus flushes it): a crash in
         * between reports the cycle again after the restart rather than never */
        manager_record_knobs(m, c); /* FINISHED: the kernel phase's saved settings go */
        if (!m->keep_record) {
                manager_history_add_cycle(m, c); /* before the record goes: a crash between reports it again */
                manager_record_remove(m, c->id);
        }
        /* A pre still waiting never reached the kernel phase; a post learns how it ended */
        FridgeError error = c->error != FRIDGE_ERROR_NONE ? c->error : FRIDGE_ERROR_INTERNAL;
        manager_hook_waiter_complete(&c->pre, c->id, -ECANCELED, error, c->message);
        bool thawed = c->post_thaws && c->error != FRIDGE_ERROR_THAW_FAILED;
        manager_hook_waiter_complete(&c->post, c->id, c->result == RESULT_DONE || thawed ? 0 : -EIO, error,
                                     c->message);
        cycle_free(c);
        log_set_cycle(0);
        manager_sync_logind_block(m);
        manager_notify(m, MANAGER_CHANGED_STATE | MANAGER_CHANGED_PROGRESS | MANAGER_CHANGED_LAST);
}


/* ---- the API ---- */

/* The new running cycle; it starts from the loop. Its settings are
 * resolved here, once: `opts` is consumed. */
Cycle *manager_cycle_start(Manager *m, SleepKind kind, CycleDriver driver, CycleOptions *opts) {
        Cycle *c = g_new0(Cycle, 1);
        /* A sleep logind announced before its hook ran keeps the id it was announced with */
        c->imminent_sent = driver == CYCLE_DRIVER_HOOK && m->reserved_id != 0;
        c->id = c->imminent_sent ? TAKE_ID(m->reserved_id) : m->next_id++;
        c->kind = kind;
        c->state = CYCLE_STATE_NEW;
        c->ended_in = _CYCLE_STATE_INVALID;
        c->started_usec = g_get_real_time();
        c->freezer = m->freezer;
        c->client_cgroup = g_steal_pointer(&m->next_client_cgroup);
        c->client = m->next_client;
        m->next_client = PIDREF_NULL;
        c->by_hook = driver == CYCLE_DRIVER_HOOK;
        (void) cycle_settings_new(m->config, opts, driver, kind == SLEEP_SUSPEND, &c->settings);
        if (driver == CYCLE_DRIVER_HOOK)
                manager_pm_keep_adopt(m, c);
        else
                manager_pm_keep_release(m, "another cycle starts");
        cycle_options_clear(opts);
        m->cycle = c;
        manager_timeline_start(m, c);
        log_set_cycle(c->id);

        const char *driver_name = cycle_driver_to_string(driver);
        g_autofree char *settings = cycle_settings_describe(c->settings);
        g_autofree char *msg = g_strdup_printf("Cycle %" G_GUINT64_FORMAT " started: %s%s (driver %s); settings: %s",
                                               c->id, sleep_kind_to_string(kind),
                                               c->settings->dry_run ? " (dry run)" : "", driver_name, settings);
        g_autofree char *kind_field = g_strdup_printf("FRIDGE_KIND=%s", sleep_kind_to_string(kind));
        g_autofree char *driver_field = g_strdup_printf("FRIDGE_DRIVER=%s", driver_name);
        g_autofree char *settings_field = g_strdup_printf("FRIDGE_SETTINGS=%s", settings);
        g_autofree char *state_field = g_strdup_printf("FRIDGE_STATE=%s", cycle_state_to_string(c->state));
        log_struct_event(LOG_INFO, FRIDGE_MESSAGE_CYCLE_START, msg, kind_field, driver_field, settings_field,
                         state_field, NULL);
        if (g_str_equal(manager_freeze_filesystems(m), "yes"))
                log_info("Cycle %" G_GUINT64_FORMAT ": the kernel freezes file systems too (/sys/power/freeze_filesystems "
                         "is 1): after fridge's stages, before the devices; fridge's flushes still come first",
                         c->id);
        manager_note_image_device(m, c);
        manager_record_next_id(m);
        return c;
}

int manager_check_idle(Manager *m, char **ret_message) {
        if (!m->cycle)
                return 0;
        *ret_message = g_strdup_printf("cycle %" G_GUINT64_FORMAT " is %s", m->cycle->id,
                                       m->cycle->state == CYCLE_STATE_QUEUED ? "queued" : "running");
        return FRIDGE_ERROR_BUSY;
}

int manager_start(Manager *m, SleepKind kind, CycleOptions *opts, uint64_t *ret_id, char **ret_message) {
        g_autofree char *set_resume = NULL;
        CycleDriver driver;
        int r = manager_check_idle(m, ret_message);
        if (r != 0)
                return r;
        /* What the running kernel, or systemd's sleep.conf, rules out is refused before anything starts */
        r = manager_check_sleep_allowed(m, kind, ret_message);
        if (r != 0)
                return r;
        PowerContext ctx = manager_power_context(m, m->config);
        PowerCycle pc = manager_power_cycle(kind, opts);
        r = power_backend_check(&ctx, &pc, &set_resume, ret_message);
        if (r != 0)
                return r;
        r = manager_pick_driver(m, opts, &driver, ret_message);
        if (r == 0 && driver == CYCLE_DRIVER_LOGIND)
                r = manager_check_systemd_sleep(m, kind, opts, ret_message);
        if (r != 0)
                return r;
        if (!opts->queue && !opts->ignore_inhibitors && manager_cycle_blocked(m)) {
                g_autofree char *who = inhibit_describe(m->inhibitors, INHIBIT_BLOCK, 0);
                *ret_message = g_strdup_printf("blocked by: %s", who);
                return FRIDGE_ERROR_INHIBITED;
        }

        /* Who writes the image is known now; the cycle's way there depends on it */
        bool writes_image = driver == CYCLE_DRIVER_DIRECT &&
                            power_backend_writes_image(power_backend_select(&ctx, kind, pc.pm_test != NULL));
        Cycle *c = manager_cycle_start(m, kind, driver, opts);
        c->set_resume = g_steal_pointer(&set_resume);
        c->writes_image = writes_image;
        *ret_id = c->id;
        /* Queued at once, so State reads "queued" as soon as Sleep returns */
        if (manager_cycle_facts(m).blocked)
                manager_transition(m, CYCLE_STATE_QUEUED);
        else {
                manager_schedule_step(m);
                manager_record_update(m);
        }
        return 0;
}

int manager_cancel(Manager *m, uint64_t id, const char *why, char **ret_message) {
        Cycle *c = m->cycle;
        if (!c || (id != 0 && id != c->id)) {
                *ret_message = id == 0 ? g_strdup("no cycle is running")
                                       : g_strdup_printf("cycle %" G_GUINT64_FORMAT " is not running", id);
                return FRIDGE_ERROR_NO_SUCH_CYCLE;
        }
        /* Already ending early: the cancel is as good as done */
        if (c->state == CYCLE_STATE_ENDING || (c->state == CYCLE_STATE_THAWING && c->ended_in >= 0))
                return 0;
        /* A kernel phase that cannot stop (the writer fell back to the
         * kernel's state write) is past the point of no return */
        int r = cycle_state_cancellable(c->state) && c->power_request ? power_request_cancel(c->power_request) : 0;
        if (!cycle_state_cancellable(c->state) || r == -EINPROGRESS) {
                *ret_message = g_strdup("the cycle is past the point of no return");
                return FRIDGE_ERROR_TOO_LATE;
        }
        if (r == 0)
                manager_end_cycle_early(m, RESULT_ABORTED, FRIDGE_ERROR_CANCELLED, "%s", why);
        else if (c->cancel_wait_ticks == 0) /* the image writer was asked to stop: its answer ends the cycle */
                c->cancel_wait_ticks = 1;
        return 0;
}

void manager_shutdown(Manager *m, bool unannounced) {
        Cycle *c = m->cycle;
        if (!c)
                return;
        m->keep_record = unannounced;
        if (!cycle_state_in_kernel(c->state))
                manager_end_cycle_early(m, RESULT_ABORTED, FRIDGE_ERROR_CANCELLED, "fridged is stopping");
        else {
                if (c->power_request)
                        power_request_restore_after_abort(c->power_request);
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL,
                                "fridged was stopped during the kernel phase");
        }
        /* The loop is about to end: thaw and report now rather than from it */
        if (c->state == CYCLE_STATE_ENDING)
                manager_transition(m, CYCLE_STATE_THAWING);
        manager_transition(m, CYCLE_STATE_FINISHED);
}

/* Without a cgroup v2 mount or a ledger fridged still sleeps, but freezes
 * nothing: a freeze it could not undo after a crash is worse than none. */
static void manager_setup_freezing(Manager *m, const ManagerParams *p) {
        int r;
        if (p->cgroup_root)
                m->cgroup_root = g_strdup(p->cgroup_root);
        else if ((r = cgroups_find_mount(m->proc_fd, &m->cgroup_root)) < 0) {
                log_warning_errno(r, "No cgroup v2 mount found (%m); nothing will be frozen");
                return;
        }
        m->cgroup_fd = root_open(m->cgroup_root);
        if (m->cgroup_fd < 0) {
                log_warning_errno(m->cgroup_fd, "Cannot open the cgroup root %s (%m); nothing will be frozen",
                                  m->cgroup_root);
                g_clear_pointer(&m->cgroup_root, g_free);
                return;
        }
        r = ledger_open(p->state_dir, &m->ledger);
        if (r < 0) {
                log_error_errno(r, "Cannot open the ledger in %s (%m); nothing will be frozen", p->state_dir);
                return;
        }
        r = ledger_thaw_all(m->ledger, m->cgroup_fd);
        m->startup_thaw_failed = r < 0;
        if (r > 0) {
                g_autofree char *msg = g_strdup_printf("Thawed %d cgroups that an earlier fridged left frozen", r);
                g_autofree char *count = g_strdup_printf("FRIDGE_THAWED=%d", r);
                log_struct_event(LOG_NOTICE, FRIDGE_MESSAGE_LEDGER_THAW, msg, count, NULL);
        }
        r = freezer_new(m->event, m->cgroup_fd, m->proc_fd, m->ledger, &m->freezer);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the freezer (%m); nothing will be frozen");
                return;
        }

}

uint32_t manager_pending_authorizations_per_user(const Manager *m) {
        return m->config->pending_authorizations_per_user;
}

uint32_t manager_freeze_timeout_ms(const Manager *m) {
        return m->config->freeze_timeout_ms;
}

const char *manager_cgroup_root(const Manager *m) {
        return m->cgroup_fd >= 0 ? m->cgroup_root : NULL;
}

int manager_new(const ManagerParams *p, Manager **ret) {
        g_autoptr(Manager) m = g_new0(Manager, 1);
        m->sysfs_fd = m->proc_fd = m->cgroup_fd = m->state_fd = m->persistent_fd = -1;
        m->next_client_uid = (uid_t) -1;
        m->exempt_pids = manager_exempt_pids_new();
        m->next_client = PIDREF_NULL;
        m->event = sd_event_ref(p->event);
        m->overrides = overrides_new(m->event, manager_on_hold_released, m);
        m->inhibitors = inhibit_new(m->event, manager_on_inhibitor_released, m);
        m->config = p->config;
        m->power_backends = p->power_backends;
        m->image_writer_socket = p->state_dir ? g_build_filename(p->state_dir, WRITER_SOCKET_NAME, NULL) : NULL;
        m->writer_verdict = writer_verdict_new(m->event, m->image_writer_socket, WRITER_VERDICT_TTL_USEC);
        if (m->config->hibernate_writer == HIBERNATE_WRITER_FRIDGE)
                (void) writer_verdict_refusal(m->writer_verdict); /* asked now: answered by the first status */
        m->sleep_conf_root = g_strdup(p->sleep_conf_root ? p->sleep_conf_root : "/");
        m->next_id = 1;
        m->last_kind = _SLEEP_KIND_INVALID;
        m->plan_waiters = g_array_new(FALSE, FALSE, sizeof(PlanWaiter));
        m->plan_next = g_array_new(FALSE, FALSE, sizeof(PlanWaiter));

        m->sysfs_fd = root_open(p->sysfs_root);
        if (m->sysfs_fd < 0)
                return log_error_errno(m->sysfs_fd, "Failed to open the sysfs root %s: %m", p->sysfs_root);
        m->proc_fd = root_open(p->proc_root);
        if (m->proc_fd < 0)
                return log_error_errno(m->proc_fd, "Failed to open the proc root %s: %m", p->proc_root);
        manager_exempt_pid(m, getpid(), "fridged itself");

        m->class_dirs = g_strdupv((char **) p->class_dirs);
        manager_load_rules(m);
        manager_setup_freezing(m, p);
        int r;
        r = write_queue_new(&m->writes);
        if (r < 0)
                log_warning_errno(r, "Cannot start the write queue (%m); the history is written on the loop");
        manager_load_record(m, p->state_dir, p->persistent_dir ? p->persistent_dir : p->state_dir);

        r = sd_event_add_defer(m->event, &m->step, on_step, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add the phase step source: %m");
        (void) sd_event_source_set_enabled(m->step, SD_EVENT_OFF);
        (void) sd_event_source_set_description(m->step, "manager-step");

        *ret = g_steal_pointer(&m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        manager_timelines_free(m); /* first: the last thaw below must not reach a freed cycle */
        cycle_free(m->cycle);
        if (m->cycle)
                log_set_cycle(0);
        manager_pm_keep_release(m, "fridged is stopping");
        manager_plan_stop(m);
        if (m->freezer)
                freezer_thaw_all(m->freezer); /* a last guard: nothing stays frozen */
        freezer_free(m->freezer);
        /* Bounded: a stuck disk must not keep fridged from stopping */
        unsigned lost = write_queue_drain_free(m->writes, MANAGER_WRITES_DRAIN_USEC);
        if (lost > 0)
                log_warning("%u writes to the persistent directory were not done before stopping; "
                            "a restart finds what is on disk", lost);
        ledger_free(m->ledger);
        class_rules_free(m->rules);
        g_strfreev(m->class_dirs);
        g_clear_pointer(&m->exempt_pids, g_hash_table_unref);
        g_clear_pointer(&m->overrides, overrides_free);
        g_clear_pointer(&m->inhibitors, inhibit_free);
        g_free(m->next_client_cgroup);
        pidref_done(&m->next_client);
        g_free(m->cgroup_root);
        sd_event_source_disable_unref(m->step);
        sd_event_source_disable_unref(m->thaw_retry);
        if (m->cgroup_fd >= 0)
                close(m->cgroup_fd);
        g_free(m->sleep_conf_root);
        g_free(m->image_writer_socket);
        writer_verdict_free(m->writer_verdict);
        if (m->sysfs_fd >= 0)
                close(m->sysfs_fd);
        if (m->proc_fd >= 0)
                close(m->proc_fd);
        if (m->state_fd >= 0)
                close(m->state_fd);
        if (m->persistent_fd >= 0)
                close(m->persistent_fd);
        history_free(m->history);
        hibernate_cache_clear(&m->hibernate);
        g_free(m->boot_id);
        cycle_record_free(m->interrupted);
        config_free(m->config);
        g_free(m->last_wake_reason);
        for (int k = 0; k < _SLEEP_KIND_MAX; k++)
                g_free(m->can_reason[k]);
        systemd_sleep_conf_free(m->can_sleep_conf);
        power_caps_free(m->can_caps);
        sd_event_unref(m->event);
        g_free(m);
        return NULL;
}

void manager_set_ops(Manager *m, const ManagerOps *ops, void *userdata) {
        m->ops = ops;
        m->userdata = userdata;
}

bool manager_is_busy(const Manager *m) {
        return m->cycle != NULL;
}

const char *manager_state(const Manager *m) {
        return m->cycle ? cycle_state_property(m->cycle->state) : "idle";
}

const char *manager_cycle_state(const Manager *m) {
        return m->cycle ? cycle_state_to_string(m->cycle->state) : "";
}

char **manager_cycle_settings(const Manager *m) {
        return m->cycle ? cycle_settings_strv(m->cycle->settings) : g_new0(char *, 1);
}

uint64_t manager_cycle_id(const Manager *m) {
        return m->cycle ? m->cycle->id : m->last_id;
}

const char *manager_kind(const Manager *m) {
        return sleep_kind_to_string(m->cycle ? m->cycle->kind : m->last_kind);
}

const char *manager_phase(const Manager *m) {
        return m->cycle ? cycle_phase_name(m->cycle) : "";
}

double manager_progress(const Manager *m) {
        return m->cycle ? m->cycle->progress : 0.0;
}

const char *manager_progress_text(const Manager *m) {
        return m->cycle && m->cycle->progress_text ? m->cycle->progress_text : "";
}

/* The hook's cycle cannot stop systemd-sleep, which sleeps whatever the
 * pre answers; a Sleep through logind, from the moment logind was asked */
bool manager_cancellable(const Manager *m) {
        const Cycle *c = m->cycle;
        if (!c || !cycle_state_cancellable(c->state))
                return false;
        switch (c->settings->driver) {
        case CYCLE_DRIVER_DIRECT: return true;
        case CYCLE_DRIVER_LOGIND: return !c->joined;
        default:                  return false;
        }
}

const char *manager_started_by(const Manager *m) {
        if (!m->cycle)
                return "";
        return m->cycle->settings->driver == CYCLE_DRIVER_HOOK ? "hook" : "bus";
}

const char *manager_last_result(const Manager *m) {
        return cycle_result_to_string(m->last_result);
}

const char *manager_freeze_filesystems(const Manager *m) {
        return power_freeze_filesystems(m->sysfs_fd);
}

const char *manager_last_wake_reason(const Manager *m) {
        return m->last_wake_reason ? m->last_wake_reason : "";
}
