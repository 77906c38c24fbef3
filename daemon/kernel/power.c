/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "power.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "devices.h"
#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "time-util.h"
#include "tuxonice.h"
#include "util.h"

PowerCaps *power_caps_free(PowerCaps *c) {
        if (!c)
                return NULL;
        g_strfreev(c->states);
        g_strfreev(c->mem_sleep);
        g_free(c->mem_sleep_current);
        g_strfreev(c->disk);
        g_free(c->disk_current);
        g_strfreev(c->pm_test);
        g_free(c->problem);
        g_free(c);
        return NULL;
}

static void note_problem(PowerCaps *c, const char *path, int r) {
        if (r == -ENOENT)
                return; /* an absent file is a feature the kernel lacks, not a fault */
        g_autofree char *msg = g_strdup_printf("%s is unreadable or malformed (%s)", path, errno_text(r));
        log_warning("%s", msg);
        if (!c->problem)
                c->problem = g_steal_pointer(&msg);
}

/* An optional word-list file; absent or malformed leaves *words NULL. */
static void read_words(int fd, PowerCaps *c, const char *path, char ***words, char **current) {
        g_autofree char *text = NULL;
        int r = read_file_at_single(fd, path, &text);
        if (r >= 0)
                r = parse_word_list(text, words, current);
        if (r < 0)
                note_problem(c, path, r);
}

const char *power_freeze_filesystems(int sysfs_fd) {
        g_autofree char *text = NULL;
        if (read_file_at_single(sysfs_fd, POWER_FREEZE_FS, &text) < 0)
                return "";
        g_strstrip(text);
        return g_str_equal(text, "0") ? "no" : "yes";
}

int power_caps_read(int fd, PowerCaps **ret) {
        g_autoptr(PowerCaps) c = g_new0(PowerCaps, 1);
        g_autofree char *text = NULL;

        int r = read_file_at_single(fd, POWER_STATE, &text);
        if (r < 0)
                return r;
        r = parse_word_list(text, &c->states, NULL);
        if (r < 0)
                return r;

        read_words(fd, c, POWER_MEM_SLEEP, &c->mem_sleep, &c->mem_sleep_current);
        read_words(fd, c, POWER_DISK, &c->disk, &c->disk_current);
        read_words(fd, c, POWER_PM_TEST, &c->pm_test, NULL);
        c->has_rtc = faccessat(fd, POWER_RTC_ALARM, W_OK, 0) >= 0;
        c->has_tuxonice = tuxonice_present(fd);

        *ret = g_steal_pointer(&c);
        return 0;
}

static bool has(char **list, const char *word) {
        return list && g_strv_contains((const char *const *) list, word);
}

const char *power_state_for_kind(SleepKind kind) {
        return kind == SLEEP_SUSPEND ? "mem" : "disk";
}

PowerAnswer power_can(const PowerCaps *c, SleepKind kind, const char *disk_mode, const char **ret_reason) {
        const char *state = power_state_for_kind(kind);
        const char *reason = "";
        PowerAnswer answer = POWER_ANSWER_YES;

        if (!has(c->states, state)) {
                reason = kind == SLEEP_SUSPEND ? "the kernel does not offer mem in /" POWER_STATE
                                               : "the kernel does not offer disk in /" POWER_STATE;
                answer = POWER_ANSWER_NA;
        } else if (kind != SLEEP_SUSPEND && !c->disk) {
                reason = "the kernel has no usable /" POWER_DISK;
                answer = POWER_ANSWER_NA;
        } else if (kind == SLEEP_HYBRID && !has(c->disk, "suspend")) {
                reason = "the kernel does not offer the suspend mode in /" POWER_DISK;
                answer = POWER_ANSWER_NA;
        } else if (kind == SLEEP_HIBERNATE && disk_mode && !has(c->disk, disk_mode)) {
                reason = "the configured HibernateMode is not offered in /" POWER_DISK;
                answer = POWER_ANSWER_NO;
        }
        if (ret_reason)
                *ret_reason = reason;
        return answer;
}

int power_check_read_caps(int sysfs_fd, PowerCaps **ret_caps, char **ret_message) {
        int r = power_caps_read(sysfs_fd, ret_caps);
        if (r < 0) {
                *ret_message = r == -EBADMSG ? g_strdup("/" POWER_STATE " is malformed: not a list of words")
                                             : g_strdup_printf("cannot read /" POWER_STATE ": %s", errno_text(r));
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        return 0;
}

static int check_word(const PowerCaps *caps, char **offered, const char *word, const char *file,
                      char **ret_message) {
        if (has(offered, word))
                return 0;
        /* absent and malformed are different troubles for whoever reads this */
        if (!offered && caps->problem && strstr(caps->problem, file))
                *ret_message = g_strdup_printf("cannot use %s in /%s: %s", word, file, caps->problem);
        else
                *ret_message = offered ? g_strdup_printf("the kernel does not offer %s in /%s", word, file)
                                       : g_strdup_printf("the kernel has no /%s", file);
        return FRIDGE_ERROR_NOT_SUPPORTED;
}

int power_check_options(const PowerCaps *caps, const Config *config, const PowerCycle *cycle, char **ret_message) {
        int r;
        if (cycle->mem_sleep &&
            (r = check_word(caps, caps->mem_sleep, cycle->mem_sleep, POWER_MEM_SLEEP, ret_message)) != 0)
                return r;
        if (cycle->kind == SLEEP_SUSPEND && !cycle->mem_sleep && config->mem_sleep &&
            !has(caps->mem_sleep, config->mem_sleep)) {
                *ret_message = g_strdup_printf("the configured MemSleep=%s is not offered in /" POWER_MEM_SLEEP,
                                               config->mem_sleep);
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        if (cycle->pm_test && (r = check_word(caps, caps->pm_test, cycle->pm_test, POWER_PM_TEST, ret_message)) != 0)
                return r;
        if (cycle->wake_after_sec > 0 && !caps->has_rtc) {
                *ret_message = g_strdup("no RTC wake alarm (class/rtc/rtc0/wakealarm) to wake the machine with");
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        return 0;
}

int power_sysfs_request_init(PowerSysfsRequest *r, int sysfs_fd, PowerCycle *cycle) {
        r->sysfs_fd = fcntl(sysfs_fd, F_DUPFD_CLOEXEC, 3);
        if (r->sysfs_fd < 0)
                return -errno;
        r->state = g_strdup(power_state_for_kind(cycle->kind));
        r->base.entry_file = POWER_STATE;
        r->base.entry_value = r->state;
        r->pm_test = g_strdup(cycle->pm_test);
        r->resume = g_strdup(cycle->set_resume);
        r->wake_after_sec = cycle->wake_after_sec;
        r->write_wakeup_count = cycle->have_wakeup_count;
        r->wakeup_count = cycle->wakeup_count;
        r->count_sources = g_steal_pointer(&cycle->count_sources);
        r->before = cycle->before ? power_saved_copy(cycle->before)
                                  : power_saved_read(sysfs_fd, cycle->wake_after_sec > 0);
        return 0;
}

void power_sysfs_request_clear(PowerSysfsRequest *r) {
        if (r->sysfs_fd >= 0)
                close(r->sysfs_fd);
        r->sysfs_fd = -1;
        g_clear_pointer(&r->state, g_free);
        g_clear_pointer(&r->mem_sleep, g_free);
        g_clear_pointer(&r->disk_mode, g_free);
        g_clear_pointer(&r->pm_test, g_free);
        g_clear_pointer(&r->resume, g_free);
        g_clear_pointer(&r->before, power_saved_free);
        g_clear_pointer(&r->base.wake_reason, g_free);
        g_clear_pointer(&r->count_sources, devices_wakeup_snapshot_free);
        g_clear_pointer(&r->sources_before, devices_wakeup_snapshot_free);
}

void power_sysfs_restore_after_abort(const PowerRequest *base) {
        const PowerSysfsRequest *r = (const PowerSysfsRequest *) base;
        power_saved_put_back(r->sysfs_fd, r->before, r->wake_after_sec > 0);
}

char *power_refused_message(const char *action, const char *what, int error) {
        what = what ? what : "";
        return g_strdup_printf("the kernel refused to %s%s%s: %s", action, *what ? " " : "", what,
                               errno_text(error));
}

CycleResult power_sysfs_describe_failure(const PowerSysfsRequest *r, FridgeError *ret_error, char **ret_message) {
        if (r->failed_step == POWER_STEP_WAKEUP_COUNT) {
                *ret_error = FRIDGE_ERROR_WAKEUP_EVENT;
                if (r->base.wake_reason && !g_str_equal(r->base.wake_reason, "unknown"))
                        *ret_message = g_strdup_printf("a wakeup event from %s arrived during the cycle; not sleeping",
                                                       r->base.wake_reason);
                else
                        *ret_message = g_strdup_printf("a wakeup event arrived during the cycle (wakeup_count %u is "
                                                       "stale); not sleeping", r->wakeup_count);
                return RESULT_ABORTED;
        }
        const char *what = r->failed_step == POWER_STEP_STATE ? r->state
                         : r->failed_step == POWER_STEP_MEM_SLEEP ? r->mem_sleep
                         : r->failed_step == POWER_STEP_DISK ? r->disk_mode
                         : r->failed_step == POWER_STEP_RESUME ? r->resume
                         : r->failed_step == POWER_STEP_PM_TEST ? r->pm_test : "";
        *ret_error = FRIDGE_ERROR_KERNEL;
        *ret_message = power_refused_message(power_step_to_string(r->failed_step), what, r->error);
        return RESULT_FAILED;
}

const char *power_sysfs_transient(const PowerRequest *base) {
        const PowerSysfsRequest *r = (const PowerSysfsRequest *) base;
        if (r->failed_step == POWER_STEP_WAKEUP_COUNT)
                return "a wakeup event arrived";
        if (r->failed_step == POWER_STEP_STATE && r->error == -EBUSY)
                return "the kernel was busy (EBUSY)";
        return NULL;
}

char *power_sysfs_summary(const PowerSysfsRequest *r, const char *via) {
        return g_strdup_printf("%s%s%s%s", r->state, via ? via : "", r->pm_test ? ", pm_test " : "",
                               r->pm_test ? r->pm_test : "");
}

int power_read_wakeup_count(int sysfs_fd, uint32_t *ret) {
        return read_parsed_at(sysfs_fd, POWER_WAKEUP_COUNT, parse_uint32, ret);
}

const char *power_step_to_string(PowerStep s) {
        static const char *const names[] = {
                [POWER_STEP_NONE] = "",
                [POWER_STEP_MEM_SLEEP] = "select the mem_sleep mode",
                [POWER_STEP_RESUME] = "set the resume device",
                [POWER_STEP_DISK] = "select the disk mode",
                [POWER_STEP_PM_TEST] = "set pm_test",
                [POWER_STEP_RTC] = "arm the RTC wake alarm",
                [POWER_STEP_WAKEUP_COUNT] = "write wakeup_count",
                [POWER_STEP_STATE] = "write the sleep state",
                [POWER_STEP_BACKEND] = "",
        };
        return s < ELEMENTSOF(names) ? names[s] : "";
}

static int step(PowerSysfsRequest *r, PowerStep s, const char *path, const char *value) {
        int e = write_file_at(r->sysfs_fd, path, value);
        if (e < 0) {
                r->failed_step = s;
                r->error = e;
        }
        return e;
}

int power_sysfs_write_state(PowerSysfsRequest *r) {
        return step(r, POWER_STEP_STATE, POWER_STATE, r->state);
}

static int arm_alarm(int fd, uint32_t sec) {
        char buf[32];
        snprintf(buf, sizeof(buf), "+%u", sec);
        return write_file_at(fd, POWER_RTC_ALARM, buf);
}

/* Every knob is tried, whatever failed before: the state write comes all
 * the same, and the more of the cycle it has the better */
int power_knobs_set(int sysfs_fd, PowerKnobs *k, PowerStep *ret_step) {
        int first = 0, e;
        *ret_step = POWER_STEP_NONE;
        if (k->mem_sleep && (e = write_file_at(sysfs_fd, POWER_MEM_SLEEP, k->mem_sleep)) < 0 && first == 0)
                first = e, *ret_step = POWER_STEP_MEM_SLEEP;
        if (k->pm_test) {
                if ((e = write_file_at(sysfs_fd, POWER_PM_TEST, k->pm_test)) >= 0)
                        k->pm_test_set = true;
                else if (first == 0)
                        first = e, *ret_step = POWER_STEP_PM_TEST;
        }
        if (k->wake_after_sec > 0 && !k->alarm_set) {
                if ((e = arm_alarm(sysfs_fd, k->wake_after_sec)) >= 0)
                        k->alarm_set = true;
                else if (first == 0)
                        first = e, *ret_step = POWER_STEP_RTC;
        }
        return first;
}

void power_knobs_restore(int sysfs_fd, PowerKnobs *k, const PowerSaved *before) {
        power_saved_put_back(sysfs_fd, before, k->alarm_set);
        k->pm_test_set = k->alarm_set = false;
}

void power_knobs_clear(PowerKnobs *k) {
        g_clear_pointer(&k->mem_sleep, g_free);
        g_clear_pointer(&k->pm_test, g_free);
}

/* The part before the point of no return; each step's failure stops it */
static int power_prepare_kernel(PowerSysfsRequest *r, PowerSysfsHook before, bool *alarm_set) {
        char buf[32];

        if (before) {
                int e = before(r);
                if (e < 0) {
                        r->failed_step = POWER_STEP_BACKEND;
                        r->error = e;
                        return e;
                }
        }
        if (r->mem_sleep && step(r, POWER_STEP_MEM_SLEEP, POWER_MEM_SLEEP, r->mem_sleep) < 0)
                return r->error;
        if (r->resume) {
                /* Writing it also makes the kernel look for an image there
                 * now; the swap is in use, so it finds none and goes on */
                log_info("Setting the resume device to %s for this hibernation", r->resume);
                if (step(r, POWER_STEP_RESUME, POWER_RESUME, r->resume) < 0)
                        return r->error;
        }
        if (r->disk_mode && step(r, POWER_STEP_DISK, POWER_DISK, r->disk_mode) < 0)
                return r->error;
        if (r->pm_test && step(r, POWER_STEP_PM_TEST, POWER_PM_TEST, r->pm_test) < 0)
                return r->error;
        if (r->wake_after_sec > 0) {
                int e = arm_alarm(r->sysfs_fd, r->wake_after_sec);
                if (e < 0) {
                        r->failed_step = POWER_STEP_RTC;
                        r->error = e;
                        return e;
                }
                *alarm_set = true;
        }
        if (r->write_wakeup_count) {
                snprintf(buf, sizeof(buf), "%u", r->wakeup_count);
                if (step(r, POWER_STEP_WAKEUP_COUNT, POWER_WAKEUP_COUNT, buf) < 0) {
                        if (r->count_sources) {
                                g_autoptr(WakeupSnapshot) now = devices_wakeup_snapshot(r->sysfs_fd);
                                r->base.wake_reason = devices_wake_reason(r->count_sources, now);
                        }
                        return r->error;
                }
        }
        return 0;
}

uint64_t power_slept_usec(uint64_t boot0, uint64_t mono0, uint64_t boot1, uint64_t mono1) {
        uint64_t db = boot1 > boot0 ? boot1 - boot0 : 0, dm = mono1 > mono0 ? mono1 - mono0 : 0;
        return db > dm + POWER_SUSPEND_COUNTED_USEC ? db - dm : dm;
}

int power_sysfs_enter(PowerSysfsRequest *r, PowerSysfsHook before, PowerSysfsHook write) {
        bool alarm_set = false;

        int e = power_prepare_kernel(r, before, &alarm_set);
        if (e >= 0) {
                g_autoptr(WakeupSnapshot) snap0 = devices_wakeup_snapshot(r->sysfs_fd);
                uint64_t boot0 = now(CLOCK_BOOTTIME), mono0 = now(CLOCK_MONOTONIC);
                r->entered_usec = now(CLOCK_REALTIME);
                if (write) {
                        e = write(r);
                        if (e < 0 && r->failed_step == POWER_STEP_NONE) {
                                r->failed_step = POWER_STEP_BACKEND;
                                r->error = e;
                        }
                } else
                        e = step(r, POWER_STEP_STATE, POWER_STATE, r->state);
                uint64_t boot1 = now(CLOCK_BOOTTIME), mono1 = now(CLOCK_MONOTONIC);
                r->base.returned_usec = mono1;
                r->base.slept_usec = power_slept_usec(boot0, mono0, boot1, mono1);
                if (e >= 0) { /* resumed: the rest waits for the thaw */
                        r->sources_before = g_steal_pointer(&snap0);
                        r->alarm_set = alarm_set;
                        return 0;
                }
        }

        /* Leave the kernel as we found it, whatever happened above */
        power_saved_put_back(r->sysfs_fd, r->before, alarm_set);
        return e;
}

int power_sysfs_finish(PowerRequest *base) {
        PowerSysfsRequest *r = (PowerSysfsRequest *) base;
        /* only a write that returned at resume was woken by something */
        g_autoptr(WakeupSnapshot) after = devices_wakeup_snapshot(r->sysfs_fd);
        r->base.wake_reason = devices_wake_reason(r->sources_before, after);
        power_saved_put_back(r->sysfs_fd, r->before, r->alarm_set);
        return 0;
}
