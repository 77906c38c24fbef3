/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: systemd's sleep path, the hook (Hook pre/post) and the logind
 * driver: the states HANDED_OVER and HOOK_SLEEPING. */
#include "manager-internal.h"

#include "fridge-limits.h"
#include "log.h"
#include "power.h"
#include "power-saved.h"
#include "time-util.h"
#include "util.h"

static int on_hook_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        uint32_t ms = c->settings->hook_timeout_ms;
        if (c->state == CYCLE_STATE_HOOK_SLEEPING) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_HOOK_ABANDONED,
                                "the sleep hook's post never came within %u ms of awake time; thawed without it", ms);
        } else
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL,
                                "the sleep hook's pre never came within %u ms after logind was asked to sleep "
                                "(is fridge's system-sleep hook installed?)", ms);
        return 0;
}

/* CLOCK_MONOTONIC stands still while the machine sleeps: a long sleep does
 * not count, only the awake time a hook is overdue */
static int arm_hook_timeout(Manager *m) {
        Cycle *c = m->cycle;
        return sd_event_add_time_relative(m->event, &c->timer, CLOCK_MONOTONIC,
                                          (uint64_t) c->settings->hook_timeout_ms * USEC_PER_MSEC, 0,
                                          on_hook_timeout, m);
}

/* The pre's share of the hook's budget ran out: the hook (fridgectl) and
 * systemd-sleep are about to give up on it, and the machine sleeps anyway.
 * Better awake services than a freeze nobody will undo. */
static int on_pre_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        uint32_t budget = c->settings->hook_timeout_ms;
        c->pre_deadline = sd_event_source_disable_unref(c->pre_deadline);
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_HOOK_ABANDONED,
                                "the sleep hook's pre did not finish within %u ms (its share of the %u ms hook "
                                "budget, [Sleep] HookTimeoutMs); thawed, and the machine sleeps without the freeze",
                                hook_pre_wait_ms(budget), budget);
        return 0;
}

/* Not the state's timer: it runs across every state until frozen */
static int arm_pre_deadline(Manager *m) {
        Cycle *c = m->cycle;
        if (c->pre_deadline)
                return 0;
        return sd_event_add_time_relative(m->event, &c->pre_deadline, CLOCK_MONOTONIC,
                                          (uint64_t) hook_pre_wait_ms(c->settings->hook_timeout_ms) * USEC_PER_MSEC,
                                          0, on_pre_deadline, m);
}

/* The cycle's kernel knobs, for the state write systemd-sleep makes once
 * the pre returns: after its own mode writes, which come before the hooks.
 * systemd-sleep sleeps whatever the hook answers, so a knob the kernel
 * refuses does not end the cycle: it sleeps frozen with the knobs that
 * held, and fails with the refusal once resumed. */
static void set_knobs(Manager *m) {
        Cycle *c = m->cycle;
        const CycleSettings *s = c->settings;
        power_knobs_clear(&c->knobs); /* what is set stays set: the logind driver's pm_test */
        c->knobs.mem_sleep = g_strdup(s->mem_sleep);
        c->knobs.pm_test = g_strdup(s->pm_test);
        c->knobs.wake_after_sec = s->wake_after_sec;
        manager_knobs_save(m, c);
        PowerStep step;
        int r = power_knobs_set(m->sysfs_fd, &c->knobs, &step);
        if (r == 0)
                return;
        const char *what = step == POWER_STEP_MEM_SLEEP ? s->mem_sleep : step == POWER_STEP_PM_TEST ? s->pm_test : "";
        g_autofree char *refused = power_refused_message(power_step_to_string(step), what, r);
        c->knob_failure = g_strdup_printf("%s; systemd-sleep slept without it", refused);
        log_warning("Cycle %" G_GUINT64_FORMAT ": %s", c->id, c->knob_failure);
}

/* Frozen: systemd-sleep writes the state once the hook's pre returns */
void manager_enter_hook_sleeping(Manager *m) {
        Cycle *c = m->cycle;
        c->pre_deadline = sd_event_source_disable_unref(c->pre_deadline);
        set_knobs(m);
        devices_wakeup_snapshot_free(c->wakeup_sources);
        c->wakeup_sources = devices_wakeup_snapshot(m->sysfs_fd);
        c->pre_boottime = now(CLOCK_BOOTTIME);
        c->pre_monotonic = now(CLOCK_MONOTONIC);
        int r = arm_hook_timeout(m);
        if (r < 0) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot arm the post hook bound: %s",
                                errno_text(r));
                return;
        }
        manager_set_progress(m, 0.0, "sleeping (systemd-sleep writes %s)", power_state_for_kind(c->kind));
        log_info("Cycle %" G_GUINT64_FORMAT ": frozen; systemd-sleep writes the state", c->id);
        manager_hook_waiter_complete(&c->pre, c->id, 0, FRIDGE_ERROR_NONE, NULL);
}

static void hook_resumed(Manager *m) {
        Cycle *c = m->cycle;
        g_autoptr(WakeupSnapshot) after = devices_wakeup_snapshot(m->sysfs_fd);
        c->wake_reason = devices_wake_reason(c->wakeup_sources, after);
        uint64_t boot = now(CLOCK_BOOTTIME);
        c->resumed_usec = now(CLOCK_MONOTONIC);
        /* systemd-sleep's write lies between the pre and the post */
        c->slept_usec = power_slept_usec(c->pre_boottime, c->pre_monotonic, boot, c->resumed_usec);
        manager_report_resumed(m);
        if (m->cycle == c && c->knob_failure)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_KERNEL, "%s", c->knob_failure);
}

int manager_hook_post(Manager *m, SleepKind kind, ManagerHookDone done, void *userdata, uint64_t *ret_id,
                      char **ret_message) {
        Cycle *c = m->cycle;
        CycleFacts f = c ? manager_cycle_facts(m) : (CycleFacts) {};
        /* A kept level was for the state write this post comes after */
        manager_pm_keep_release(m, "the sleep hook's post came");
        CycleState to = c && !c->post.done ? cycle_state_next(c->state, CYCLE_EVENT_POST, &f) : _CYCLE_STATE_INVALID;
        if (to == _CYCLE_STATE_INVALID) {
                *ret_message = g_strdup("no cycle is waiting for the sleep hook's post");
                return FRIDGE_ERROR_NO_SUCH_CYCLE;
        }
        if (kind != c->kind)
                log_notice("The post hook says %s; cycle %" G_GUINT64_FORMAT " is %s", sleep_kind_to_string(kind),
                           c->id, sleep_kind_to_string(c->kind));
        c->post = (HookWaiter) { done, userdata };
        *ret_id = c->id;
        if (to == CYCLE_STATE_RESUMING) {
                hook_resumed(m);
                return 0;
        }
        /* systemd-sleep gave up on the pre and slept (or did not): the post
         * is answered once everything is thawed */
        c->post_thaws = true;
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_HOOK_ABANDONED,
                                "the sleep hook's post came while its pre was still running (in %s); thawed",
                                cycle_state_to_string(c->state));
        return 0;
}

void manager_hook_caller_gone(Manager *m, uint64_t cycle, const char *who) {
        Cycle *c = m->cycle;
        /* Once frozen the pre has answered and its caller may go: the post,
         * or the budget, ends the cycle then */
        if (!c || c->id != cycle || !c->pre.done)
                return;
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_HOOK_ABANDONED,
                                "the caller of the sleep hook's pre (%s) left before it finished; thawed", who);
}

uint32_t manager_hook_budget_ms(const Manager *m) {
        return m->config->hook_timeout_ms;
}

/* A logind-driven Sleep waits for the pre of the hook that logind's sleep
 * runs: that pre carries the same cycle on */
static bool hook_join(Manager *m, SleepKind kind) {
        Cycle *c = m->cycle;
        if (!c || c->settings->driver != CYCLE_DRIVER_LOGIND || c->joined ||
            cycle_state_past_the_end(c->state))
                return false;
        if (kind != c->kind)
                log_notice("The pre hook says %s; cycle %" G_GUINT64_FORMAT " is %s", sleep_kind_to_string(kind),
                           c->id, sleep_kind_to_string(c->kind));
        c->joined = true;
        /* Cancellable changes: systemd-sleep sleeps now whatever Cancel does */
        manager_notify(m, MANAGER_CHANGED_STATE);
        if (c->state == CYCLE_STATE_HANDED_OVER) {
                manager_cycle_work_done(c); /* the pre came: its bound is moot */
                manager_schedule_step(m);
        }
        return true;
}

int manager_hook_pre(Manager *m, SleepKind kind, ManagerHookDone done, void *userdata, uint64_t *ret_id,
                     char **ret_message) {
        if (!hook_join(m, kind)) {
                int r = manager_check_idle(m, ret_message);
                if (r != 0)
                        return r;
                CycleOptions none = {};
                manager_cycle_start(m, kind, CYCLE_DRIVER_HOOK, &none);
                /* systemd decided to sleep (logind asked its own inhibitors):
                 * fridge's block inhibitors cannot stop it, but their holders
                 * learn from the journal why their block did not hold */
                g_autofree char *held = manager_block_holders(m);
                if (*held)
                        log_notice("Cycle %" G_GUINT64_FORMAT ": systemd-sleep is already sleeping; fridge's "
                                   "block inhibitors do not stop it (held by %s)", m->cycle->id, held);
                manager_schedule_step(m);
        }
        m->cycle->pre = (HookWaiter) { done, userdata };
        *ret_id = m->cycle->id;
        manager_check_sleep_frozen(m);
        int r = arm_pre_deadline(m);
        if (r < 0)
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot bound the sleep hook's pre: %s",
                                        errno_text(r));
        return 0;
}

static void on_logind_sleep_done(void *userdata, int r, const char *message) {
        Manager *m = userdata;
        Cycle *c = m->cycle;
        if (r >= 0 || !c || c->id != m->logind_cycle)
                return;
        m->logind_cycle = 0; /* nothing will sleep: its pm_test goes back at the end */
        manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "logind refused to sleep: %s",
                        message ? message : errno_text(r));
}

/* pm_test goes in before logind is asked (systemd-sleep never touches it):
 * a level the kernel refuses stops the cycle before anything sleeps, where
 * from the pre systemd-sleep would go on and sleep for real */
static int set_pm_test(Manager *m) {
        Cycle *c = m->cycle;
        const char *level = c->settings->pm_test;
        PowerStep step;
        if (!level)
                return 0;
        c->knobs.pm_test = g_strdup(level);
        manager_knobs_save(m, c);
        int r = power_knobs_set(m->sysfs_fd, &c->knobs, &step);
        if (r < 0) {
                g_autofree char *refused = power_refused_message(power_step_to_string(step), level, r);
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_KERNEL, "%s; logind was not asked", refused);
        }
        return r;
}

void manager_enter_handed_over(Manager *m) {
        Cycle *c = m->cycle;
        if (set_pm_test(m) < 0)
                return;
        m->logind_cycle = c->id;
        manager_set_progress(m, 1.0, "handing over to logind");
        int r = logind_sleep(m->logind, c->kind, c->settings->ignore_inhibitors, on_logind_sleep_done, m);
        if (r >= 0)
                r = arm_hook_timeout(m);
        if (r < 0) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL, "cannot ask logind to sleep: %s",
                                errno_text(r));
                return;
        }
        log_info("Cycle %" G_GUINT64_FORMAT ": flushed; asked logind to %s", c->id, sleep_kind_to_string(c->kind));
}

/* ---- a pm_test level that outlives its cycle (PmTestKeep) ---- */

static int on_pm_keep_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        manager_pm_keep_release(m, "no sleep hook's post came within the hook budget");
        return 0;
}

bool manager_pm_keep_take(Manager *m, Cycle *c, CycleState from) {
        if (c->id != m->logind_cycle || !c->knobs.pm_test_set || from == CYCLE_STATE_HOOK_SLEEPING)
                return false;
        manager_pm_keep_release(m, "another cycle keeps its own");
        PmTestKeep *k = &m->pm_keep;
        k->cycle = c->id;
        k->knobs = c->knobs;
        c->knobs = (PowerKnobs) {};
        k->before = TAKE_PTR(c->before);
        k->saved = c->knobs_saved;
        c->knobs_saved = false;
        /* CLOCK_MONOTONIC: a sleep in between does not count against it */
        int r = sd_event_add_time_relative(m->event, &k->timer, CLOCK_MONOTONIC,
                                           (uint64_t) c->settings->hook_timeout_ms * USEC_PER_MSEC, 0,
                                           on_pm_keep_timeout, m);
        if (r < 0) {
                log_warning_errno(r, "Cannot bound how long pm_test stays set (%m); putting it back now");
                manager_pm_keep_release(m, "it cannot be bounded");
                return true;
        }
        log_notice("Cycle %" G_GUINT64_FORMAT ": logind was asked to sleep, and systemd-sleep writes the state "
                   "whatever fridge's hook answers: /sys/power/pm_test stays %s until that sleep is over",
                   c->id, k->knobs.pm_test);
        return true;
}

void manager_pm_keep_release(Manager *m, const char *why) {
        PmTestKeep *k = &m->pm_keep;
        if (k->cycle == 0)
                return;
        log_info("Putting /sys/power/pm_test back, kept set after cycle %" G_GUINT64_FORMAT ": %s", k->cycle, why);
        power_knobs_restore(m->sysfs_fd, &k->knobs, k->before);
        int r = k->saved && m->state_fd >= 0 ? power_saved_remove(m->state_fd) : 0;
        if (r < 0)
                log_warning_errno(r, "Failed to remove the kernel settings from the state directory: %m");
        power_knobs_clear(&k->knobs);
        power_saved_free(k->before);
        sd_event_source_disable_unref(k->timer);
        *k = (PmTestKeep) {};
}

/* The cycle puts the level back after the state write, as its own */
void manager_pm_keep_adopt(Manager *m, Cycle *c) {
        PmTestKeep *k = &m->pm_keep;
        if (k->cycle == 0)
                return;
        log_info("Cycle %" G_GUINT64_FORMAT " is the sleep cycle %" G_GUINT64_FORMAT " asked logind for; pm_test "
                 "stays %s for it", c->id, k->cycle, k->knobs.pm_test);
        c->knobs = k->knobs;
        c->before = TAKE_PTR(k->before);
        c->knobs_saved = k->saved;
        /* Its own end before the state write keeps the level again */
        m->logind_cycle = c->id;
        sd_event_source_disable_unref(k->timer);
        *k = (PmTestKeep) {};
}

void manager_set_logind(Manager *m, Logind *l) {
        logind_set_block(m->logind, NULL);
        m->logind = l;
        manager_sync_logind_block(m);
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
        if (c && c->state == CYCLE_STATE_HOOK_SLEEPING) {
                log_warning("logind reports the resume before the sleep hook's post came; thawing now");
                hook_resumed(m);
        } else if (c && c->state == CYCLE_STATE_HANDED_OVER) {
                manager_end_cycle_early(m, RESULT_FAILED, FRIDGE_ERROR_INTERNAL,
                                "the system slept without fridge's sleep hook (is it installed?); nothing was frozen");
        }
}
