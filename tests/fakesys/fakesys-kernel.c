/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fakesys's simulated kernel: what a write to each /sys/power file does
 * (sleeps, wakeup counts, the RTC alarm, TuxOnIce), and the control
 * commands that steer it. Everything here runs with fakesys.lock held.
 */
#include "fakesys.h"
#include "fuse-run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sysfile fakesys_files[N_FILES] = {
        [F_STATE] = { "power/state", K_STATE },
        [F_MEM_SLEEP] = { "power/mem_sleep", K_WORDS },
        [F_DISK] = { "power/disk", K_WORDS },
        [F_PM_TEST] = { "power/pm_test", K_WORDS },
        [F_WAKEUP_COUNT] = { "power/wakeup_count", K_WAKEUP_COUNT },
        [F_IMAGE_SIZE] = { "power/image_size", K_UINT, ULONG_MAX },
        [F_RESUME] = { "power/resume", K_RESUME },
        [F_FREEZE_TIMEOUT] = { "power/pm_freeze_timeout", K_UINT, UINT_MAX },
        [F_SYNC_ON_SUSPEND] = { "power/sync_on_suspend", K_BOOL },
        [F_WAKEALARM] = { "class/rtc/rtc0/wakealarm", K_WAKEALARM },
        [F_WAKEUP_IRQ] = { "power/pm_wakeup_irq", K_STAT, .mode = 0444 },
        [F_FAILED_DEV] = { "power/suspend_stats/last_failed_dev", K_STAT, .mode = 0444 },
        [F_FAILED_ERRNO] = { "power/suspend_stats/last_failed_errno", K_STAT, .mode = 0444 },
        [F_RTC_SOURCE_NAME] = { "class/wakeup/wakeup0/name", K_STAT, .mode = 0444 },
        [F_RTC_SOURCE_COUNT] = { "class/wakeup/wakeup0/event_count", K_STAT, .mode = 0444 },
        [F_TOI_DO_HIBERNATE] = { "power/tuxonice/do_hibernate", K_TOI_HIBERNATE, .mode = 0200 },
        [F_TOI_LAST_RESULT] = { "power/tuxonice/last_result", K_TOI_UL },
        [F_TOI_IMAGE_SIZE_LIMIT] = { "power/tuxonice/image_size_limit", K_TOI_LONG, .min = -2, .smax = INT_MAX },
        [F_TOI_ALGORITHM] = { "power/tuxonice/compression/algorithm", K_TOI_STRING },
        [F_TOI_COMPRESSION] = { "power/tuxonice/compression/enabled", K_TOI_LONG, .min = 0, .smax = 1 },
        [F_TOI_ENABLE_ESCAPE] = { "power/tuxonice/user_interface/enable_escape", K_TOI_BIT },
        [F_TOI_VERSION] = { "power/tuxonice/version", K_TOI_STRING, .mode = 0444 },
};

struct fakesys_state fakesys = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .sleep_ms = 100,
        .pm_test_delay_ms = 10,
};

/* ---- small helpers ---------------------------------------------------- */

static const struct { int num; const char *name; } errnos[] = {
        /* EAGAIN before EWOULDBLOCK: same number, the log says EAGAIN. */
        { EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EINTR, "EINTR" },
        { EIO, "EIO" }, { ENXIO, "ENXIO" }, { EAGAIN, "EAGAIN" },
        { ENOMEM, "ENOMEM" }, { EACCES, "EACCES" }, { EFAULT, "EFAULT" },
        { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
        { EINVAL, "EINVAL" }, { ENOSPC, "ENOSPC" }, { ENOSYS, "ENOSYS" },
        { ETIMEDOUT, "ETIMEDOUT" }, { EOPNOTSUPP, "EOPNOTSUPP" },
        { ECANCELED, "ECANCELED" }, { ENOTSUP, "ENOTSUP" },
};

static void errno_name(int e, char *buf, size_t len)
{
        for (size_t i = 0; i < G_N_ELEMENTS(errnos); i++)
                if (errnos[i].num == e) {
                        g_strlcpy(buf, errnos[i].name, len);
                        return;
                }
        snprintf(buf, len, "%d", e);
}

/* Strict decimal: digits only, no sign, no spaces (sysfs is stricter than
 * strtoul about what it accepts, and tests want garbage rejected). */
bool fakesys_parse_ull(const char *s, unsigned long long max, unsigned long long *out)
{
        char *end;

        if (!g_ascii_isdigit(*s))
                return false;
        errno = 0;
        *out = strtoull(s, &end, 10);
        return errno == 0 && *end == '\0' && *out <= max;
}

static int parse_errno(const char *s)
{
        unsigned long long n;

        for (size_t i = 0; i < G_N_ELEMENTS(errnos); i++)
                if (strcmp(errnos[i].name, s) == 0)
                        return errnos[i].num;
        /* 511 is the largest error the FUSE kernel side passes through. */
        return fakesys_parse_ull(s, 511, &n) && n > 0 ? (int)n : 0;
}

static int find_file(const char *rel)
{
        for (int i = 0; i < N_FILES; i++)
                if (fakesys_files[i].present && strcmp(fakesys_files[i].path, rel) == 0)
                        return i;
        return NODE_NONE;
}

/* A directory exists if some present file lies below it. */
static bool is_dir(const char *rel)
{
        size_t len = strlen(rel);

        for (int i = 0; i < N_FILES; i++)
                if (fakesys_files[i].present && strncmp(fakesys_files[i].path, rel, len) == 0 &&
                    fakesys_files[i].path[len] == '/')
                        return true;
        return false;
}

int fakesys_node_of(const char *path)
{
        if (strcmp(path, "/") == 0 || strcmp(path, "/sys") == 0)
                return NODE_DIR;
        if (strcmp(path, "/control") == 0)
                return NODE_CONTROL;
        if (strcmp(path, "/log") == 0)
                return NODE_LOG;
        if (strncmp(path, "/sys/", 5) != 0)
                return NODE_NONE;
        if (is_dir(path + 5))
                return NODE_DIR;
        return find_file(path + 5);
}

/* ---- simulated kernel (all called with fakesys.lock held) ----------- */

void fakesys_render_count(void)
{
        snprintf(fakesys_files[F_WAKEUP_COUNT].value, VALUE_MAX, "%u", fakesys.wakeup_count);
}

void fakesys_render_alarm(void)
{
        if (fakesys.alarm)
                snprintf(fakesys_files[F_WAKEALARM].value, VALUE_MAX, "%lld", fakesys.alarm);
        else
                fakesys_files[F_WAKEALARM].value[0] = '\0';
}

/* A fired RTC alarm disarms itself, as the hardware's does. */
void fakesys_expire_alarm(void)
{
        if (fakesys.alarm && fakesys.alarm <= (long long)time(NULL)) {
                fakesys.alarm = 0;
                fakesys_render_alarm();
        }
}

static void wakeup_event(void)
{
        fakesys.wakeup_count++;
        fakesys.wake_gen++;
        fakesys_render_count();
        pthread_cond_broadcast(&fakesys.cond);
}

static void log_line(const char *rel, const char *val, const char *result)
{
        g_string_append_printf(fakesys.log, "%s ", rel);
        /* One line per write, even if the value had inner newlines. */
        for (const char *p = val; *p; p++)
                if (*p == '\n')
                        g_string_append(fakesys.log, "\\n");
                else
                        g_string_append_c(fakesys.log, *p);
        g_string_append_printf(fakesys.log, " %s\n", result);
}

/* Waits ms (or until quitting); the mutex is released meanwhile. */
static void wait_ms(long ms)
{
        struct timespec dl = fuse_run_deadline_ms(ms);

        while (!fakesys.quitting && pthread_cond_timedwait(&fakesys.cond, &fakesys.lock, &dl) != ETIMEDOUT)
                ;
}

/* Copies word number n (0-based, brackets stripped) of list into buf. */
static bool nth_word(const char *list, int n, char *buf, size_t len, bool *bracketed)
{
        g_auto(GStrv) words = g_strsplit_set(list, " \t", -1);
        int k = 0;

        for (char **w = words; *w; w++) {
                if (**w == '\0')
                        continue;
                if (k++ != n)
                        continue;
                size_t l = strlen(*w);
                *bracketed = l >= 2 && (*w)[0] == '[' && (*w)[l - 1] == ']';
                g_strlcpy(buf, *w + (*bracketed ? 1 : 0), len);
                if (*bracketed && l - 2 < len)
                        buf[l - 2] = '\0';
                return true;
        }
        return false;
}

static bool word_offered(const char *list, const char *word)
{
        char w[VALUE_MAX];
        bool br;

        for (int i = 0; nth_word(list, i, w, sizeof(w), &br); i++)
                if (strcmp(w, word) == 0)
                        return true;
        return false;
}

/* The bracketed word of a list file, e.g. "none" of pm_test. */
static bool current_word(const struct sysfile *f, char *buf, size_t len)
{
        bool br;

        for (int i = 0; nth_word(f->value, i, buf, len, &br); i++)
                if (br)
                        return true;
        return false;
}

static int write_words(struct sysfile *f, const char *val)
{
        g_autoptr(GString) out = g_string_new(NULL);
        char w[VALUE_MAX];
        bool br;

        if (!word_offered(f->value, val))
                return EINVAL;
        /* Rebuild with the brackets moved to the chosen word. */
        for (int i = 0; nth_word(f->value, i, w, sizeof(w), &br); i++)
                g_string_append_printf(out, strcmp(w, val) == 0 ? "%s[%s]" : "%s%s",
                                       i ? " " : "", w);
        g_strlcpy(f->value, out->str, VALUE_MAX);
        return 0;
}

/* pm_wakeup_pending(): an event since the saved count aborts the sleep,
 * and, like the kernel, disables the check until the next save. */
static bool wakeup_pending(void)
{
        if (!fakesys.check_enabled || fakesys.wakeup_count == fakesys.saved_count)
                return false;
        fakesys.check_enabled = false;
        return true;
}

static const char *pm_test_level(char *buf, size_t len)
{
        if (!fakesys_files[F_PM_TEST].present || !current_word(&fakesys_files[F_PM_TEST], buf, len))
                return "none";
        return buf;
}

/* The RTC alarm ended the sleep: its wakeup source counts an event and
 * its interrupt (the CMOS RTC's IRQ 8 on a PC) is the one that woke us */
static void rtc_woke(void)
{
        unsigned long long n = 0;

        if (!fakesys_files[F_RTC_SOURCE_COUNT].present)
                return;
        (void)fakesys_parse_ull(fakesys_files[F_RTC_SOURCE_COUNT].value, ULLONG_MAX - 1, &n);
        snprintf(fakesys_files[F_RTC_SOURCE_COUNT].value, VALUE_MAX, "%llu", n + 1);
        g_strlcpy(fakesys_files[F_WAKEUP_IRQ].value, FAKESYS_RTC_IRQ, VALUE_MAX);
}

/* A real (simulated) sleep: ends at sleep-ms, at the RTC alarm, or at a
 * `wakeup` command; exactly one wakeup event is counted either way. */
static void simulated_sleep(const struct sysfile *f, const char *val)
{
        unsigned gen = fakesys.wake_gen;
        long ms = fakesys.sleep_ms;
        struct timespec dl;

        if (fakesys.alarm) {
                long long left = (fakesys.alarm - (long long)time(NULL)) * 1000;
                ms = MIN(ms, MAX(left, 0));
        }
        dl = fuse_run_deadline_ms(ms);
        /* pm_wakeup_clear(): a new sleep forgets the last wakeup IRQ */
        fakesys_files[F_WAKEUP_IRQ].value[0] = '\0';
        log_line(f->path, val, "sleeping");
        while (!fakesys.quitting && fakesys.wake_gen == gen &&
               pthread_cond_timedwait(&fakesys.cond, &fakesys.lock, &dl) != ETIMEDOUT)
                ;
        if (fakesys.wake_gen == gen && fakesys.alarm && fakesys.alarm <= (long long)time(NULL))
                rtc_woke();
        fakesys_expire_alarm();
        if (fakesys.wake_gen == gen)
                wakeup_event();
}

static int write_state(const char *val)
{
        char lvl[VALUE_MAX];
        const char *test;

        if (!word_offered(fakesys_files[F_STATE].value, val))
                return EINVAL;
        test = pm_test_level(lvl, sizeof(lvl));
        /* Kernel rule: s2idle cannot stop at the CPU or core test levels. */
        if (strcmp(val, "freeze") == 0 &&
            (strcmp(test, "processors") == 0 || strcmp(test, "core") == 0))
                return EAGAIN;
        /* system_transition_mutex is only try-locked by the kernel. (Only
         * reachable with libfuse >= 3.15, see fs_open.) */
        if (fakesys.in_transition)
                return EBUSY;
        if (fakesys.fail_count > 0) {
                fakesys.fail_count--;
                return fakesys.fail_errno;
        }
        if (wakeup_pending())
                return EBUSY;
        fakesys.in_transition = true;
        if (strcmp(test, "none") != 0)
                wait_ms(fakesys.pm_test_delay_ms);
        else
                simulated_sleep(&fakesys_files[F_STATE], val);
        fakesys.in_transition = false;
        return 0;
}

static int write_wakeup_count(const char *val)
{
        unsigned long long n;

        /* pm_save_wakeup_count(): a stale count disables the check. */
        fakesys.check_enabled = false;
        if (!fakesys_parse_ull(val, UINT_MAX, &n) || n != fakesys.wakeup_count)
                return EINVAL;
        fakesys.saved_count = (unsigned)n;
        fakesys.check_enabled = true;
        return 0;
}

static int write_uint(struct sysfile *f, const char *val)
{
        unsigned long long n;

        if (!fakesys_parse_ull(val, f->max, &n))
                return EINVAL;
        snprintf(f->value, VALUE_MAX, "%llu", n);
        return 0;
}

static int write_resume(struct sysfile *f, const char *val)
{
        unsigned long long maj, min;
        g_auto(GStrv) parts = g_strsplit(val, ":", -1);

        if (g_strv_length(parts) != 2 || !fakesys_parse_ull(parts[0], 4095, &maj) ||
            !fakesys_parse_ull(parts[1], 1048575, &min))
                return EINVAL;
        snprintf(f->value, VALUE_MAX, "%llu:%llu", maj, min);
        return 0;
}

static int write_bool(struct sysfile *f, const char *val)
{
        if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0)
                return EINVAL;
        g_strlcpy(f->value, val, VALUE_MAX);
        return 0;
}

/* drivers/rtc/sysfs.c wakealarm_store(): "+N" relative, "+=N" extends an
 * armed alarm, "N" absolute; arming over an armed alarm is EBUSY; a time
 * not in the future (e.g. "0") disarms. */
static int write_wakealarm(const char *val)
{
        long long now = (long long)time(NULL);
        bool adjust = false, push = false;
        unsigned long long n;
        long long alarm;

        if (*val == '+') {
                val++;
                push = *val == '=';
                adjust = !push;
                val += push;
        }
        if (!fakesys_parse_ull(val, LLONG_MAX / 2, &n))
                return EINVAL;
        alarm = (long long)n + (adjust ? now : 0);
        fakesys_expire_alarm();
        if (alarm > now || push) {
                if (fakesys.alarm && !push)
                        return EBUSY;
                if (!fakesys.alarm && push)
                        return EINVAL;
                fakesys.alarm = alarm + (push ? fakesys.alarm : 0);
        } else {
                fakesys.alarm = 0;
        }
        fakesys_render_alarm();
        return 0;
}

/* ---- TuxOnIce (kernel/power/tuxonice_sysfs.c toi_attr_store) -------- */

/* kstrtol/kstrtoul with base 0 (0x.. hex, 0.. octal), as TuxOnIce parses
 * numbers; a value out of range of the C type is ERANGE. */
static int toi_parse(const char *val, bool is_signed, long long *out)
{
        char *end;

        if (*val == '\0' || g_ascii_isspace(*val) || (!is_signed && *val == '-'))
                return EINVAL;
        errno = 0;
        if (is_signed)
                *out = strtoll(val, &end, 0);
        else
                *out = (long long)strtoull(val, &end, 0);
        if (*end != '\0')
                return EINVAL;
        return errno == ERANGE ? ERANGE : 0;
}

/* SYSFS_LONG / SYSFS_INT: out-of-bounds values are clamped, not refused. */
static int write_toi_long(struct sysfile *f, const char *val)
{
        long long n;
        int err = toi_parse(val, true, &n);

        if (err)
                return err;
        snprintf(f->value, VALUE_MAX, "%lld", CLAMP(n, f->min, f->smax));
        return 0;
}

static int write_toi_ul(struct sysfile *f, const char *val)
{
        long long n;
        int err = toi_parse(val, false, &n);

        if (!err)
                snprintf(f->value, VALUE_MAX, "%llu", (unsigned long long)n);
        return err;
}

/* SYSFS_BIT: any non-zero number sets it. */
static int write_toi_bit(struct sysfile *f, const char *val)
{
        long long n;
        int err = toi_parse(val, false, &n);

        if (!err)
                g_strlcpy(f->value, n ? "1" : "0", VALUE_MAX);
        return err;
}

/* SYSFS_STRING of compression/algorithm: up to 31 bytes are kept, the
 * rest is cut off, nothing is checked until the algorithm is used. */
static int write_toi_string(struct sysfile *f, const char *val)
{
        g_strlcpy(f->value, val, MIN((size_t)32, (size_t)VALUE_MAX));
        return 0;
}

#define TOI_ABORTED_BIT 1ULL          /* TOI_ABORTED */
#define TOI_WAKEUP_EVENT_BIT (1ULL << 29) /* TOI_WAKEUP_EVENT */

/* do_hibernate: the write returns after resume, or at once when TuxOnIce
 * gives up; either way it succeeds, and last_result (cleared when the
 * cycle starts, as toi_init does) tells which. */
static int write_do_hibernate(struct sysfile *f, const char *val)
{
        unsigned long long result = 0;

        if (fakesys.in_transition)
                return EBUSY;
        if (fakesys.toi_fail_count > 0) {
                fakesys.toi_fail_count--;
                result = fakesys.toi_fail_result;
        } else if (wakeup_pending()) {
                result = TOI_ABORTED_BIT | TOI_WAKEUP_EVENT_BIT;
        } else {
                fakesys.in_transition = true;
                simulated_sleep(f, val);
                fakesys.in_transition = false;
        }
        snprintf(fakesys_files[F_TOI_LAST_RESULT].value, VALUE_MAX, "%llu", result);
        return 0;
}

static int apply_write(struct sysfile *f, const char *val)
{
        switch (f->kind) {
        case K_WORDS: return write_words(f, val);
        case K_STATE: return write_state(val);
        case K_WAKEUP_COUNT: return write_wakeup_count(val);
        case K_UINT: return write_uint(f, val);
        case K_RESUME: return write_resume(f, val);
        case K_BOOL: return write_bool(f, val);
        case K_WAKEALARM: return write_wakealarm(val);
        case K_STAT: return EACCES; /* fs_open refuses the write first */
        case K_TOI_HIBERNATE: return write_do_hibernate(f, val);
        case K_TOI_LONG: return write_toi_long(f, val);
        case K_TOI_UL: return write_toi_ul(f, val);
        case K_TOI_BIT: return write_toi_bit(f, val);
        case K_TOI_STRING: return write_toi_string(f, val);
        }
        return EINVAL;
}

/* One write to a sys/ file: injected delay/hold, the kernel rule, the
 * one-shot wakeup injection, then exactly one log line. */
int fakesys_sys_write(struct sysfile *f, const char *val)
{
        char res[32] = "ok";
        int err;

        pthread_mutex_lock(&fakesys.lock);
        if (f->delay_ms > 0)
                wait_ms(f->delay_ms);
        while (f->held && !fakesys.quitting)
                pthread_cond_wait(&fakesys.cond, &fakesys.lock);
        err = apply_write(f, val);
        if (f->wakeup_on_write) {
                f->wakeup_on_write = false;
                wakeup_event();
        }
        if (err)
                errno_name(err, res, sizeof(res));
        log_line(f->path, val, res);
        pthread_mutex_unlock(&fakesys.lock);
        return err;
}

/* ---- control commands (called with fakesys.lock held) ----------------------- */

static struct sysfile *arg_file(const char *rel)
{
        int i = find_file(rel);

        return i == NODE_NONE ? NULL : &fakesys_files[i];
}

/* `set FILE VALUE`: raw contents, no kernel rule, no log line. */
static int cmd_set(const char *rest)
{
        const char *sp = strchr(rest, ' ');
        g_autofree char *rel = g_strndup(rest, sp ? (size_t)(sp - rest) : strlen(rest));
        const char *val = sp ? sp + 1 : "";
        struct sysfile *f = arg_file(rel);
        unsigned long long n;

        if (!f || strlen(val) >= VALUE_MAX)
                return EINVAL;
        g_strlcpy(f->value, val, VALUE_MAX);
        /* Keep the structured state in step when the raw value parses. */
        if (f->kind == K_WAKEUP_COUNT && fakesys_parse_ull(val, UINT_MAX, &n))
                fakesys.wakeup_count = (unsigned)n;
        if (f->kind == K_WAKEALARM)
                fakesys.alarm = fakesys_parse_ull(val, LLONG_MAX / 2, &n) ? (long long)n : 0;
        return 0;
}

static int cmd_file_arg(const char *cmd, char **argv, int argc)
{
        struct sysfile *f = argc >= 2 ? arg_file(argv[1]) : NULL;
        unsigned long long n;

        if (!f)
                return EINVAL;
        if (strcmp(cmd, "wakeup-on-write") == 0 && argc == 2)
                f->wakeup_on_write = true;
        else if (strcmp(cmd, "hold-write") == 0 && argc == 2)
                f->held = true;
        else if (strcmp(cmd, "release-write") == 0 && argc == 2)
                f->held = false;
        else if (strcmp(cmd, "delay-write") == 0 && argc == 3 &&
                 fakesys_parse_ull(argv[2], LONG_MAX / 1000, &n))
                f->delay_ms = (long)n;
        else
                return EINVAL;
        return 0;
}

static int cmd_fail_state(char **argv, int argc)
{
        unsigned long long n = 1;
        int e = argc >= 2 ? parse_errno(argv[1]) : 0;

        if (e == 0 || argc > 3 || (argc == 3 && !fakesys_parse_ull(argv[2], LONG_MAX, &n)))
                return EINVAL;
        fakesys.fail_errno = e;
        fakesys.fail_count = (long)n;
        return 0;
}

/* toi-fail-result MASK [COUNT]: the next COUNT do_hibernate writes give up
 * at once with last_result MASK (decimal or 0x hex). */
static int cmd_toi_fail_result(char **argv, int argc)
{
        unsigned long long n = 1;
        long long mask;

        if (argc < 2 || argc > 3 || toi_parse(argv[1], false, &mask) != 0 || mask == 0 ||
            (argc == 3 && !fakesys_parse_ull(argv[2], LONG_MAX, &n)))
                return EINVAL;
        fakesys.toi_fail_result = (unsigned long long)mask;
        fakesys.toi_fail_count = (long)n;
        return 0;
}

static int run_command(const char *line)
{
        g_auto(GStrv) argv = NULL;
        unsigned long long n;
        int argc;

        if (g_str_has_prefix(line, "set "))
                return cmd_set(line + 4);
        argv = g_strsplit_set(line, " \t", -1);
        argc = (int)g_strv_length(argv);
        if (argc == 2 && strcmp(argv[0], "sleep-ms") == 0 && fakesys_parse_ull(argv[1], LONG_MAX / 1000, &n))
                fakesys.sleep_ms = (long)n;
        else if (argc == 2 && strcmp(argv[0], "pm-test-delay-ms") == 0 &&
                 fakesys_parse_ull(argv[1], LONG_MAX / 1000, &n))
                fakesys.pm_test_delay_ms = (long)n;
        else if (argc == 1 && strcmp(argv[0], "wakeup") == 0)
                wakeup_event();
        else if (argc == 2 && strcmp(argv[0], "wakeup-irq") == 0 && fakesys_parse_ull(argv[1], UINT_MAX, &n) && n > 0) {
                snprintf(fakesys_files[F_WAKEUP_IRQ].value, VALUE_MAX, "%llu", n);
                wakeup_event();
        } else if (argc == 1 && strcmp(argv[0], "clear-log") == 0)
                g_string_truncate(fakesys.log, 0);
        else if (strcmp(argv[0], "fail-state") == 0)
                return cmd_fail_state(argv, argc);
        else if (strcmp(argv[0], "toi-fail-result") == 0)
                return cmd_toi_fail_result(argv, argc);
        else
                return cmd_file_arg(argv[0], argv, argc);
        return 0;
}

/* Several commands per write, one a line; stops at the first bad one. */
int fakesys_control_write(const char *text)
{
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        int err = 0;

        pthread_mutex_lock(&fakesys.lock);
        for (char **l = lines; *l && !err; l++) {
                g_strstrip(*l);
                if (**l)
                        err = run_command(*l);
        }
        /* Held writers and sleepers re-check their conditions. */
        pthread_cond_broadcast(&fakesys.cond);
        pthread_mutex_unlock(&fakesys.lock);
        return err;
}

