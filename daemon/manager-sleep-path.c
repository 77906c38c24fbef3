/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: systemd's sleep path, the hook (Hook pre/post) and the logind driver. */
#include "manager-internal.h"

static uint64_t boottime_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static int on_hook_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        uint32_t ms = m->config->hook_timeout_ms;
        if (c->waiting_post) {
                c->waiting_post = false;
                manager_end_cycle_early(m, RESULT_FAILED, CYCLE_ERROR_INTERNAL,
                                "the sleep hook's post never came within %u ms of awake time; thawed without it", ms);
        } else
                manager_end_cycle_early(m, RESULT_FAILED, CYCLE_ERROR_INTERNAL,
                                "the sleep hook's pre never came within %u ms after logind was asked to sleep "
                                "(is fridge's system-sleep hook installed?)", ms);
        return 0;
}

/* CLOCK_MONOTONIC stands still while the machine sleeps: a long sleep does
 * not count, only the awake time a hook is overdue */
static int arm_hook_timeout(Manager *m) {
        Cycle *c = m->cycle;
        c->hook_timeout = sd_event_source_disable_unref(c->hook_timeout);
        return sd_event_add_time_relative(m->event, &c->hook_timeout, CLOCK_MONOTONIC,
                                          (uint64_t) m->config->hook_timeout_ms * USEC_PER_MSEC, 0, on_hook_timeout,
                                          m);
}

/* Frozen: systemd-sleep writes the state once the hook's pre returns */
void manager_enter_kernel_hook(Manager *m) {
        Cycle *c = m->cycle;
        devices_wakeup_snapshot_free(c->wakeup_sources);
        c->wakeup_sources = devices_wakeup_snapshot(m->sysfs_fd);
        c->pre_boottime = boottime_usec();
        c->pre_monotonic = manager_now_usec();
        int r = arm_hook_timeout(m);
        if (r < 0) {
                manager_end_cycle_early(m, RESULT_FAILED, CYCLE_ERROR_INTERNAL, "cannot arm the post hook bound: %s",
                                errno_text(r));
                return;
        }
        c->waiting_post = true;
        manager_set_progress(m, 0.0, "sleeping (systemd-sleep writes %s)", power_state_for_kind(c->kind));
        manager_notify(m, MANAGER_CHANGED_STATE);
        log_info("Cycle %" G_GUINT64_FORMAT ": frozen; systemd-sleep writes the state", c->id);
        manager_hook_waiter_complete(&c->pre, c->id, 0, CYCLE_ERROR_NONE, NULL);
}

static void hook_resumed(Manager *m) {
        Cycle *c = m->cycle;
        c->waiting_post = false;
        c->hook_timeout = sd_event_source_disable_unref(c->hook_timeout);
        g_autoptr(WakeupSnapshot) after = devices_wakeup_snapshot(m->sysfs_fd);
        g_autofree char *reason = devices_wake_reason(c->wakeup_sources, after);
        uint64_t boot = boottime_usec() - c->pre_boottime;
        c->resumed_usec = manager_now_usec();
        uint64_t mono = c->resumed_usec - c->pre_monotonic;
        /* Only CLOCK_BOOTTIME runs on while the machine sleeps */
        manager_report_resumed(m, boot > mono ? boot - mono : 0, reason);
}

int manager_hook_post(Manager *m, SleepKind kind, ManagerHookDone done, void *userdata, uint64_t *ret_id,
                      char **ret_message) {
        Cycle *c = m->cycle;
        if (!c || !c->waiting_post || c->ending) {
                *ret_message = g_strdup("no cycle is waiting for the sleep hook's post");
                return -ESRCH;
        }
        if (kind != c->kind)
                log_notice("The post hook says %s; cycle %" G_GUINT64_FORMAT " is %s", sleep_kind_to_string(kind),
                           c->id, sleep_kind_to_string(c->kind));
        c->post = (HookWaiter) { done, userdata };
        hook_resumed(m);
        *ret_id = c->id;
        return 0;
}

/* A logind-driven Sleep waits for the pre of the hook that logind's sleep
 * runs: that pre carries the same cycle on */
static int hook_join(Manager *m, SleepKind kind) {
        Cycle *c = m->cycle;
        if (!c || c->driver != CYCLE_DRIVER_LOGIND || c->joined || c->ending)
                return -EBUSY;
        if (kind != c->kind)
                log_notice("The pre hook says %s; cycle %" G_GUINT64_FORMAT " is %s", sleep_kind_to_string(kind),
                           c->id, sleep_kind_to_string(c->kind));
        c->joined = true;
        if (c->handed_over) {
                c->handed_over = false;
                c->hook_timeout = sd_event_source_disable_unref(c->hook_timeout);
                manager_schedule_step(m);
        }
        return 0;
}

int manager_hook_pre(Manager *m, SleepKind kind, ManagerHookDone done, void *userdata, uint64_t *ret_id,
                     char **ret_message) {
        if (hook_join(m, kind) < 0) {
                int r = manager_check_idle(m, ret_message);
                if (r < 0)
                        return r;
                CycleOptions none = {};
                manager_cycle_start(m, kind, CYCLE_DRIVER_HOOK, &none);
                /* systemd decided to sleep: fridge's block inhibitors are not asked again */
                manager_schedule_step(m);
        }
        m->cycle->pre = (HookWaiter) { done, userdata };
        *ret_id = m->cycle->id;
        return 0;
}

static void on_logind_sleep_done(void *userdata, int r, const char *message) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        if (r >= 0 || !c || c->id != m->logind_cycle)
                return;
        c->handed_over = false;
        manager_end_cycle_early(m, RESULT_FAILED, CYCLE_ERROR_INTERNAL, "logind refused to sleep: %s",
                        message ? message : errno_text(r));
}

void manager_hand_over_to_logind(Manager *m) {
        Cycle *c = m->cycle;
        c->handed_over = true;
        m->logind_cycle = c->id;
        manager_set_progress(m, 1.0, "handing over to logind");
        int r = logind_sleep(m->logind, c->kind, on_logind_sleep_done, m);
        if (r >= 0)
                r = arm_hook_timeout(m);
        if (r < 0) {
                c->handed_over = false;
                manager_end_cycle_early(m, RESULT_FAILED, CYCLE_ERROR_INTERNAL, "cannot ask logind to sleep: %s",
                                errno_text(r));
                return;
        }
        log_info("Cycle %" G_GUINT64_FORMAT ": flushed; asked logind to %s", c->id, sleep_kind_to_string(c->kind));
}

void manager_set_logind(Manager *m, Logind *l) {
        m->logind = l;
}

/* Whoever asked logind, fridge's clients hear SleepImminent before its
 * delay lock goes; a sleep that came in without the hook ends the cycle */
void manager_on_prepare_for_sleep(void *manager, bool start) {
        Manager *m = manager;
        Cycle *c = m->cycle;
        if (start && c) {
                manager_emit_sleep_imminent(m);
                return;
        }
        if (start) {
                if (m->reserved_id == 0)
                        m->reserved_id = m->next_id++;
                log_info("logind prepares for sleep; the sleep hook runs it as cycle %" G_GUINT64_FORMAT,
                         m->reserved_id);
                if (m->ops && m->ops->sleep_imminent)
                        m->ops->sleep_imminent(m->userdata, m->reserved_id, _SLEEP_KIND_INVALID);
                return;
        }
        m->reserved_id = 0;
        if (c && c->waiting_post && !c->ending) {
                log_warning("logind reports the resume before the sleep hook's post came; thawing now");
                hook_resumed(m);
        } else if (c && c->handed_over && !c->ending) {
                c->handed_over = false;
                manager_end_cycle_early(m, RESULT_FAILED, CYCLE_ERROR_INTERNAL,
                                "the system slept without fridge's sleep hook (is it installed?); nothing was frozen");
        }
}

void manager_shutdown(Manager *m) {
        Cycle *c = m->cycle;
        if (!c)
                return;
        if (c->phase < PHASE_KERNEL || c->ending)
                manager_end_cycle_early(m, RESULT_ABORTED, CYCLE_ERROR_CANCELLED, "fridged is stopping");
        else {
                if (c->power_request)
                        power_restore_after_abort(m->sysfs_fd, c->power_request);
                manager_end_cycle_early(m, RESULT_FAILED, CYCLE_ERROR_INTERNAL,
                                "fridged was stopped during the kernel phase");
        }
        /* The loop is about to end: thaw and report now rather than from it */
        if (m->cycle->phase != PHASE_THAW)
                manager_enter_phase(m, PHASE_THAW);
        (void) sd_event_source_set_enabled(m->step, SD_EVENT_OFF);
        manager_cycle_finish(m);
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

void manager_exempt_pid(Manager *m, pid_t pid, const char *reason) {
        g_hash_table_replace(m->exempt_pids, GINT_TO_POINTER((int) pid), g_strdup(reason));
}

void manager_set_client_pid(Manager *m, pid_t pid) {
        g_clear_pointer(&m->next_client_cgroup, g_free);
        if (pid > 0 && cgroups_of_pid(m->proc_fd, pid, &m->next_client_cgroup) < 0)
                log_debug("Cannot tell the cgroup of the client pid %d", (int) pid);
}

const char *manager_cgroup_root(const Manager *m) {
        return m->cgroup_fd >= 0 ? m->cgroup_root : NULL;
}

static bool unit_name_is_valid(const char *s) {
        static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\@";
        return *s && strlen(s) <= 255 && strspn(s, ok) == strlen(s) && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int manager_set_class(Manager *m, const char *target, const char *class_name, const char *who) {
        if (strchr(target, '/')) {
                if (m->cgroup_fd < 0)
                        return -EOPNOTSUPP;
                int r = cgroups_check_path(m->cgroup_fd, target, m->config->freeze_roots);
                if (r < 0)
                        return r;
        } else if (!unit_name_is_valid(target))
                return -EINVAL;

        CgroupClass c = class_name ? cgroup_class_from_string(class_name) : _CLASS_INVALID;
        if (class_name && c < 0)
                return -EINVAL;
        overrides_set(m->overrides, target, c, who);
        return 0;
}

static void on_hold_released(uint64_t id, void *userdata) {
        Manager *m = userdata;
        if (m->ops && m->ops->hold_released)
                m->ops->hold_released(m->userdata, id);
}

void manager_release_hold(Manager *m, uint64_t id) {
        if (overrides_release_hold(m->overrides, id))
                on_hold_released(id, m);
}

int manager_add_hold(Manager *m, pid_t pid, CgroupClass class, const char *who, const char *why,
                     int *ret_fd, uint64_t *ret_hold) {
        g_autofree char *cgroup = NULL;

        if (m->cgroup_fd < 0)
                return -EOPNOTSUPP;
        if (pid <= 0 || cgroups_of_pid(m->proc_fd, pid, &cgroup) < 0)
                return -ESRCH;
        if (!cgroups_in_roots(cgroup, m->config->freeze_roots))
                return -EPERM;
        return overrides_add_hold(m->overrides, cgroup, class, who, why, ret_fd, ret_hold);
}

/* A queued cycle starts once the last block goes; a delay wait ends once
 * the last delay holder it waits for goes */
static void on_inhibitor_released(const Inhibitor *i, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;

        if (c && c->queued && !manager_cycle_blocked(m)) {
                log_info("Cycle %" G_GUINT64_FORMAT ": the last block inhibitor is gone; starting", c->id);
                c->queued = false;
                manager_notify(m, MANAGER_CHANGED_STATE);
                manager_schedule_step(m);
        }
        if (c && c->delay_waiting && inhibit_count(m->inhibitors, INHIBIT_DELAY, c->delay_before) == 0) {
                log_info("Cycle %" G_GUINT64_FORMAT ": delay inhibitors released after %.1f ms", c->id,
                         (double) (manager_now_usec() - c->delay_start) / USEC_PER_MSEC);
                manager_delay_done(m);
        }
        if (m->ops && m->ops->inhibitor_released)
                m->ops->inhibitor_released(m->userdata, i->sender);
}

int manager_inhibit(Manager *m, const Inhibitor *tmpl, int *ret_fd, uint64_t *ret_id) {
        return inhibit_add(m->inhibitors, tmpl, ret_fd, ret_id);
}

void manager_release_inhibitor(Manager *m, uint64_t id) {
        (void) inhibit_release(m->inhibitors, id);
}

void manager_release_inhibitors_of(Manager *m, const char *sender) {
        unsigned n = inhibit_release_sender(m->inhibitors, sender);
        if (n > 0)
                log_info("%s left the bus; its %u inhibitor%s ended", sender, n, n == 1 ? "" : "s");
}

unsigned manager_inhibitors_of(const Manager *m, const char *sender) {
        return inhibit_count_sender(m->inhibitors, sender);
}

GPtrArray *manager_list_inhibitors(const Manager *m) {
        return inhibit_list(m->inhibitors);
}

static void manager_load_rules(Manager *m, const char *const *dirs) {
        unsigned problems = 0;
        if (!dirs || class_rules_load(dirs, &m->rules, &problems) < 0)
                m->rules = class_rules_new();
        if (problems > 0)
                log_warning("%u classes.d files were skipped; see above", problems);
}

int manager_new(const ManagerParams *p, Manager **ret) {
        g_autoptr(Manager) m = g_new0(Manager, 1);
        m->sysfs_fd = m->proc_fd = m->cgroup_fd = m->state_fd = -1;
        m->exempt_pids = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        manager_exempt_pid(m, getpid(), "fridged itself");
        m->event = sd_event_ref(p->event);
        m->overrides = overrides_new(m->event, on_hold_released, m);
        m->inhibitors = inhibit_new(m->event, on_inhibitor_released, m);
        m->config = p->config;
        m->next_id = 1;
        m->last_kind = _SLEEP_KIND_INVALID;

        m->sysfs_fd = root_open(p->sysfs_root);
        if (m->sysfs_fd < 0)
                return log_error_errno(m->sysfs_fd, "Failed to open the sysfs root %s: %m", p->sysfs_root);
        m->proc_fd = root_open(p->proc_root);
        if (m->proc_fd < 0)
                return log_error_errno(m->proc_fd, "Failed to open the proc root %s: %m", p->proc_root);

        manager_load_rules(m, p->class_dirs);
        manager_setup_freezing(m, p);
        manager_load_record(m, p->state_dir);

        int r = sd_event_add_defer(m->event, &m->step, manager_on_step, m);
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
        manager_cycle_free(m->cycle);
        if (m->freezer)
                freezer_thaw_all(m->freezer); /* a last guard: nothing stays frozen */
        freezer_free(m->freezer);
        ledger_free(m->ledger);
        class_rules_free(m->rules);
        g_clear_pointer(&m->exempt_pids, g_hash_table_unref);
        g_clear_pointer(&m->overrides, overrides_free);
        g_clear_pointer(&m->inhibitors, inhibit_free);
        g_free(m->next_client_cgroup);
        g_free(m->cgroup_root);
        sd_event_source_disable_unref(m->step);
        sd_event_source_disable_unref(m->thaw_retry);
        if (m->cgroup_fd >= 0)
                close(m->cgroup_fd);
        if (m->sysfs_fd >= 0)
                close(m->sysfs_fd);
        if (m->proc_fd >= 0)
                close(m->proc_fd);
        if (m->state_fd >= 0)
                close(m->state_fd);
        cycle_record_free(m->interrupted);
        config_free(m->config);
        g_free(m->last_wake_reason);
        for (int k = 0; k < _SLEEP_KIND_MAX; k++)
                g_free(m->can_reason[k]);
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
        const Cycle *c = m->cycle;
        if (!c)
                return "idle";
        if (c->queued)
                return "queued";
        if (c->phase == PHASE_THAW)
                return "thawing";
        if (c->phase == PHASE_KERNEL && (c->power_request || c->waiting_post))
                return "sleeping";
        return "running";
}

uint64_t manager_cycle_id(const Manager *m) {
        return m->cycle ? m->cycle->id : m->last_id;
}

const char *manager_kind(const Manager *m) {
        return sleep_kind_to_string(m->cycle ? m->cycle->kind : m->last_kind);
}

const char *manager_phase(const Manager *m) {
        if (m->cycle && m->cycle->retry_waiting)
                return "retry";
        return m->cycle ? phase_to_string(m->cycle->phase) : "";
}

double manager_progress(const Manager *m) {
        return m->cycle ? m->cycle->progress : 0.0;
}

const char *manager_progress_text(const Manager *m) {
        return m->cycle && m->cycle->progress_text ? m->cycle->progress_text : "";
}

const char *manager_last_result(const Manager *m) {
        return cycle_result_to_string(m->last_result);
}

const char *manager_last_wake_reason(const Manager *m) {
        return m->last_wake_reason ? m->last_wake_reason : "";
}

const char *manager_can(Manager *m, SleepKind kind, const char **ret_reason) {
        g_autoptr(PowerCaps) caps = NULL;
        if (power_caps_read(m->sysfs_fd, &caps) < 0) {
                *ret_reason = "/sys/power/state is missing, unreadable or malformed";
                return "na";
        }
        /* power_can's reasons are static strings: they outlive caps */
        const char *answer = power_can(caps, kind, m->config->hibernate_mode, ret_reason);
        if (strcmp(answer, "yes") != 0 || !manager_kind_writes_image(m, kind, false))
                return answer;
        g_autoptr(HibernateTarget) t = hibernate_check(m->sysfs_fd, m->proc_fd, m->config->resume_device);
        if (!t->reason)
                return answer;
        g_free(m->can_reason[kind]);
        m->can_reason[kind] = g_steal_pointer(&t->reason);
        *ret_reason = m->can_reason[kind];
        return "no";
}

char **manager_supported_kinds(Manager *m) {
        g_autoptr(GPtrArray) kinds = g_ptr_array_new();
        for (int k = 0; k < _SLEEP_KIND_MAX; k++) {
                const char *reason;
                if (strcmp(manager_can(m, (SleepKind) k, &reason), "na") != 0)
                        g_ptr_array_add(kinds, g_strdup(sleep_kind_to_string((SleepKind) k)));
        }
        g_ptr_array_add(kinds, NULL);
        return (char **) g_ptr_array_free(g_steal_pointer(&kinds), FALSE);
}
