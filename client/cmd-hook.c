/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hook pre|post KIND: what fridge's system-sleep hook runs around
 * systemd-sleep's state write. One Hook call, bounded by the hook's budget
 * (fridge-limits.h): fridged gives up on the pre before this call does,
 * and this call before our own deadline ends us. hook budget: the budget,
 * for people and tests. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "fridge-limits.h"
#include "json.h"
#include "report.h"

#define USEC_PER_MSEC 1000ULL

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

/* HookBudgetMs, asked within HOOK_QUERY_MS: a fridged that cannot answer
 * a property that fast will not freeze in time either */
static int read_budget(sd_bus *bus, uint32_t *ret) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *call = NULL, *reply = NULL;
        int r = sd_bus_message_new_method_call(bus, &call, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                               "org.freedesktop.DBus.Properties", "Get");
        if (r >= 0)
                r = sd_bus_message_append(call, "ss", FRIDGE_INTERFACE, "HookBudgetMs");
        if (r >= 0)
                r = sd_bus_call(bus, call, HOOK_QUERY_MS * USEC_PER_MSEC, &e, &reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "v", "u", ret);
        if (r >= 0 && (*ret < HOOK_TIMEOUT_MIN_MS || *ret > HOOK_TIMEOUT_MAX_MS))
                r = -ERANGE;
        return r < 0 ? r : 0;
}

/* ---- the deadline ----
 * systemd-sleep waits for its hooks, and a hook that hangs holds up the
 * sleep. `hook pre|post` ends itself at its limit (the budget less the
 * question and a slack, from our start), wherever it is stuck, the bus's
 * connection included: armed before connecting with FRIDGE_HOOK_TIMEOUT's
 * budget or the default, narrowed once fridged says its own. So the hook
 * starts no process: not timeout(1), nor one to ask for the budget, nor
 * a systemctl; each costs every sleep. */
static uint64_t hook_start;
static uint32_t hook_env_budget; /* FRIDGE_HOOK_TIMEOUT's, or 0 */
static char deadline_msg[256];
static size_t deadline_len;
static char sleep_hook_line[512]; /* as the sleep hook, its own word on the deadline; then 0 */

static void on_deadline(int sig) {
        (void) !write(STDERR_FILENO, deadline_msg, deadline_len);
        if (!*sleep_hook_line)
                _exit(EXIT_CODE_FAILED);
        (void) !write(STDERR_FILENO, sleep_hook_line, strlen(sleep_hook_line));
        _exit(EXIT_CODE_DONE);
}

void cmd_hook_as_sleep_hook(const char *line) {
        snprintf(sleep_hook_line, sizeof(sleep_hook_line), "%s", line);
}

void cmd_hook_deadline_disarm(void) {
        (void) setitimer(ITIMER_REAL, &(struct itimerval) {}, NULL);
}

static void arm_deadline(const Args *a, uint32_t budget, unsigned query_ms) {
        unsigned limit = hook_deadline_ms(budget, query_ms);
        uint64_t spent = now_usec() - hook_start, left = (uint64_t) limit * USEC_PER_MSEC;
        left = spent < left ? left - spent : 1;
        sigset_t alrm, old;
        sigemptyset(&alrm);
        sigaddset(&alrm, SIGALRM);
        sigprocmask(SIG_BLOCK, &alrm, &old); /* the message and the timer change together */
        int n = snprintf(deadline_msg, sizeof(deadline_msg),
                         "fridgectl: hook %s %s did not finish within %u.%03u s (the hook's budget: %u ms); "
                         "stopped\n", a->hook_when, a->hook_kind, limit / 1000, limit % 1000, budget);
        deadline_len = n < 0 ? 0 : (size_t) n < sizeof(deadline_msg) ? (size_t) n : sizeof(deadline_msg) - 1;
        struct itimerval it = { .it_value = { .tv_sec = left / 1000000, .tv_usec = left % 1000000 } };
        (void) setitimer(ITIMER_REAL, &it, NULL);
        sigprocmask(SIG_SETMASK, &old, NULL);
}

/* FRIDGE_HOOK_TIMEOUT: the budget in seconds, set by whoever runs the
 * hook (tests, an administrator's drop-in): fridged is not asked */
static bool env_budget(uint32_t *ret) {
        const char *v = getenv("FRIDGE_HOOK_TIMEOUT");
        if (!v || !*v)
                return false;
        char *end;
        errno = 0;
        unsigned long s = strtoul(v, &end, 10);
        /* the range HookBudgetMs has: below it, the layers inside the budget would not fit */
        if (errno || *end || s < HOOK_TIMEOUT_MIN_MS / 1000 || s > HOOK_TIMEOUT_MAX_MS / 1000) {
                fprintf(stderr, "fridgectl: FRIDGE_HOOK_TIMEOUT=%s is not a number of seconds from %u to %u; "
                        "ignored\n", v, HOOK_TIMEOUT_MIN_MS / 1000, HOOK_TIMEOUT_MAX_MS / 1000);
                return false;
        }
        *ret = (uint32_t) s * 1000;
        return true;
}

void cmd_hook_arm(const Args *a) {
        if (!a->hook_kind)
                return; /* hook budget: a question, no sleep waits for it */
        hook_start = now_usec();
        struct sigaction sa = { .sa_handler = on_deadline };
        (void) sigaction(SIGALRM, &sa, NULL);
        if (env_budget(&hook_env_budget))
                arm_deadline(a, hook_env_budget, 0);
        else
                arm_deadline(a, HOOK_TIMEOUT_DEFAULT_MS, HOOK_QUERY_MS);
}

static int print_budget(const Args *a, sd_bus *bus) {
        uint32_t budget;
        int r = read_budget(bus, &budget);
        if (r < 0)
                return report_errno(a, "cannot read the sleep hook's budget (HookBudgetMs)", r);
        if (!a->json)
                printf("%u\n", budget);
        else {
                JsonOut out;
                JsonObject j;
                json_object_begin(&j, json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY));
                json_object_add_u64(&j, "budget-ms", budget);
                json_object_add_u64(&j, "call-timeout-ms", hook_call_timeout_ms(budget));
                json_object_add_u64(&j, "fridged-wait-ms", hook_pre_wait_ms(budget));
                json_object_end(&j);
                json_out_end(&out);
        }
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}

static void print_done(const Args *a, uint64_t cycle) {
        JsonOut out;
        JsonObject j;
        bool pre = strcmp(a->hook_when, "pre") == 0;

        if (a->quiet)
                return;
        if (!a->json) {
                printf("cycle %llu %s\n", (unsigned long long) cycle,
                       pre ? "frozen: systemd-sleep may sleep" : "resumed and thawed");
                return;
        }
        json_object_begin(&j, json_out_begin(&out, stdout, a->json_format == JSON_FORMAT_PRETTY));
        json_object_add_string(&j, "event", pre ? "hook-pre-done" : "hook-post-done");
        json_object_add_u64(&j, "cycle", cycle);
        json_object_end(&j);
        json_out_end(&out);
}

int cmd_hook(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *call = NULL, *reply = NULL;
        uint64_t cycle;
        char what[64];

        if (strcmp(a->hook_when, "budget") == 0)
                return print_budget(a, bus);

        /* The call's share of the budget counts from our start: the
         * connection and the question for the budget come out of it */
        uint32_t budget = hook_env_budget;
        if (!budget) {
                if (read_budget(bus, &budget) >= 0)
                        arm_deadline(a, budget, HOOK_QUERY_MS);
                else
                        budget = HOOK_TIMEOUT_DEFAULT_MS; /* as armed */
        }
        uint64_t timeout = (uint64_t) hook_call_timeout_ms(budget) * USEC_PER_MSEC;
        uint64_t spent = now_usec() - hook_start;
        timeout = spent < timeout ? timeout - spent : 1;

        int r = sd_bus_message_new_method_call(bus, &call, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE,
                                               "Hook");
        if (r >= 0)
                r = sd_bus_message_append(call, "ss", a->hook_when, a->hook_kind);
        if (r < 0)
                return report_errno(a, "cannot build the Hook call", r);
        snprintf(what, sizeof(what), "hook %s %s", a->hook_when, a->hook_kind);
        r = sd_bus_call(bus, call, timeout, &e, &reply);
        /* answered: what is left is ours to say, however slowly */
        cmd_hook_deadline_disarm();
        if (r < 0)
                return report_call_error(a, what, &e);
        r = sd_bus_message_read(reply, "t", &cycle);
        if (r < 0)
                return report_errno(a, what, r);
        print_done(a, cycle);
        return fflush(stdout) == 0 ? EXIT_CODE_DONE : EXIT_CODE_FAILED;
}
