/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fakesys: a simulated kernel /sys/power (and one RTC) for tests, so that
 * fridged can run a whole cycle with --sysfs-root pointing here instead of
 * at the host's real sysfs. See README.md for the tree and the semantics.
 */
#include "fuse-run.h"

#include <errno.h>
#include <getopt.h>
#include <glib.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* K_STAT: read-only statistics (0444), changed only by the simulated kernel
 * and control commands. */
enum kind {
        K_WORDS, K_STATE, K_WAKEUP_COUNT, K_UINT, K_RESUME, K_BOOL, K_WAKEALARM, K_STAT,
        K_TOI_HIBERNATE, K_TOI_LONG, K_TOI_UL, K_TOI_BIT, K_TOI_STRING,
};

enum {
        F_STATE, F_MEM_SLEEP, F_DISK, F_PM_TEST, F_WAKEUP_COUNT, F_IMAGE_SIZE,
        F_RESUME, F_FREEZE_TIMEOUT, F_SYNC_ON_SUSPEND, F_WAKEALARM,
        F_WAKEUP_IRQ, F_FAILED_DEV, F_FAILED_ERRNO,
        /* power/tuxonice, only with --tuxonice */
        F_TOI_DO_HIBERNATE, F_TOI_LAST_RESULT, F_TOI_IMAGE_SIZE_LIMIT, F_TOI_ALGORITHM,
        F_TOI_COMPRESSION, F_TOI_ENABLE_ESCAPE, F_TOI_VERSION, N_FILES
};
#define F_TOI_FIRST F_TOI_DO_HIBERNATE

/* Node ids kept in fuse_file_info.fh; sysfs files use their F_* index. */
enum { NODE_NONE = -1, NODE_CONTROL = 100, NODE_LOG, NODE_DIR };

#define VALUE_MAX 256

struct sysfile {
        const char *path;       /* relative to sys/ */
        enum kind kind;
        unsigned long long max; /* K_UINT upper bound */
        long long min, smax;    /* K_TOI_LONG bounds: TuxOnIce clamps to them */
        mode_t mode;            /* 0: 0644 */
        bool present;
        char value[VALUE_MAX];  /* what a read shows, without the "\n" */
        long delay_ms;          /* delay-write */
        bool held;              /* hold-write */
        bool wakeup_on_write;   /* one-shot wakeup-on-write */
};

static struct sysfile files[N_FILES] = {
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
        [F_TOI_DO_HIBERNATE] = { "power/tuxonice/do_hibernate", K_TOI_HIBERNATE, .mode = 0200 },
        [F_TOI_LAST_RESULT] = { "power/tuxonice/last_result", K_TOI_UL },
        [F_TOI_IMAGE_SIZE_LIMIT] = { "power/tuxonice/image_size_limit", K_TOI_LONG, .min = -2, .smax = INT_MAX },
        [F_TOI_ALGORITHM] = { "power/tuxonice/compression/algorithm", K_TOI_STRING },
        [F_TOI_COMPRESSION] = { "power/tuxonice/compression/enabled", K_TOI_LONG, .min = 0, .smax = 1 },
        [F_TOI_ENABLE_ESCAPE] = { "power/tuxonice/user_interface/enable_escape", K_TOI_BIT },
        [F_TOI_VERSION] = { "power/tuxonice/version", K_TOI_STRING, .mode = 0444 },
};

/* All simulated kernel state, under one mutex. Blocking happens only in
 * pthread_cond_(timed)wait on S.cond, which releases the mutex, so a
 * sleeping state write never blocks reads, other writes or control. */
static struct {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        GString *log;
        unsigned wakeup_count;
        bool check_enabled;     /* a wakeup_count write succeeded ... */
        unsigned saved_count;   /* ... with this count */
        unsigned wake_gen;      /* bumped by every wakeup event */
        long long alarm;        /* RTC alarm, epoch seconds; 0 = not armed */
        long sleep_ms;
        long pm_test_delay_ms;
        int fail_errno;
        long fail_count;
        unsigned long long toi_fail_result; /* toi-fail-result */
        long toi_fail_count;
        bool in_transition;     /* a state write is in progress */
        bool quitting;
        time_t started;
} S = {
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
static bool parse_ull(const char *s, unsigned long long max, unsigned long long *out)
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
        return parse_ull(s, 511, &n) && n > 0 ? (int)n : 0;
}

static int find_file(const char *rel)
{
        for (int i = 0; i < N_FILES; i++)
                if (files[i].present && strcmp(files[i].path, rel) == 0)
                        return i;
        return NODE_NONE;
}

/* A directory exists if some present file lies below it. */
static bool is_dir(const char *rel)
{
        size_t len = strlen(rel);

        for (int i = 0; i < N_FILES; i++)
                if (files[i].present && strncmp(files[i].path, rel, len) == 0 &&
                    files[i].path[len] == '/')
                        return true;
        return false;
}

static int node_of(const char *path)
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

/* ---- simulated kernel (all called with S.lock held) ------------------- */

static void render_count(void)
{
        snprintf(files[F_WAKEUP_COUNT].value, VALUE_MAX, "%u", S.wakeup_count);
}

static void render_alarm(void)
{
        if (S.alarm)
                snprintf(files[F_WAKEALARM].value, VALUE_MAX, "%lld", S.alarm);
        else
                files[F_WAKEALARM].value[0] = '\0';
}

/* A fired RTC alarm disarms itself, as the hardware's does. */
static void expire_alarm(void)
{
        if (S.alarm && S.alarm <= (long long)time(NULL)) {
                S.alarm = 0;
                render_alarm();
        }
}

static void wakeup_event(void)
{
        S.wakeup_count++;
        S.wake_gen++;
        render_count();
        pthread_cond_broadcast(&S.cond);
}

static void log_line(const char *rel, const char *val, const char *result)
{
        g_string_append_printf(S.log, "%s ", rel);
        /* One line per write, even if the value had inner newlines. */
        for (const char *p = val; *p; p++)
                if (*p == '\n')
                        g_string_append(S.log, "\\n");
                else
                        g_string_append_c(S.log, *p);
        g_string_append_printf(S.log, " %s\n", result);
}

/* Waits ms (or until quitting); the mutex is released meanwhile. */
static void wait_ms(long ms)
{
        struct timespec dl = fuse_run_deadline_ms(ms);

        while (!S.quitting && pthread_cond_timedwait(&S.cond, &S.lock, &dl) != ETIMEDOUT)
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
        if (!S.check_enabled || S.wakeup_count == S.saved_count)
                return false;
        S.check_enabled = false;
        return true;
}

static const char *pm_test_level(char *buf, size_t len)
{
        if (!files[F_PM_TEST].present || !current_word(&files[F_PM_TEST], buf, len))
                return "none";
        return buf;
}

/* A real (simulated) sleep: ends at sleep-ms, at the RTC alarm, or at a
 * `wakeup` command; exactly one wakeup event is counted either way. */
static void simulated_sleep(const struct sysfile *f, const char *val)
{
        unsigned gen = S.wake_gen;
        long ms = S.sleep_ms;
        struct timespec dl;

        if (S.alarm) {
                long long left = (S.alarm - (long long)time(NULL)) * 1000;
                ms = MIN(ms, MAX(left, 0));
        }
        dl = fuse_run_deadline_ms(ms);
        /* pm_wakeup_clear(): a new sleep forgets the last wakeup IRQ */
        files[F_WAKEUP_IRQ].value[0] = '\0';
        log_line(f->path, val, "sleeping");
        while (!S.quitting && S.wake_gen == gen &&
               pthread_cond_timedwait(&S.cond, &S.lock, &dl) != ETIMEDOUT)
                ;
        expire_alarm();
        if (S.wake_gen == gen)
                wakeup_event();
}

static int write_state(const char *val)
{
        char lvl[VALUE_MAX];
        const char *test;

        if (!word_offered(files[F_STATE].value, val))
                return EINVAL;
        test = pm_test_level(lvl, sizeof(lvl));
        /* Kernel rule: s2idle cannot stop at the CPU or core test levels. */
        if (strcmp(val, "freeze") == 0 &&
            (strcmp(test, "processors") == 0 || strcmp(test, "core") == 0))
                return EAGAIN;
        /* system_transition_mutex is only try-locked by the kernel. (Only
         * reachable with libfuse >= 3.15, see fs_open.) */
        if (S.in_transition)
                return EBUSY;
        if (S.fail_count > 0) {
                S.fail_count--;
                return S.fail_errno;
        }
        if (wakeup_pending())
                return EBUSY;
        S.in_transition = true;
        if (strcmp(test, "none") != 0)
                wait_ms(S.pm_test_delay_ms);
        else
                simulated_sleep(&files[F_STATE], val);
        S.in_transition = false;
        return 0;
}

static int write_wakeup_count(const char *val)
{
        unsigned long long n;

        /* pm_save_wakeup_count(): a stale count disables the check. */
        S.check_enabled = false;
        if (!parse_ull(val, UINT_MAX, &n) || n != S.wakeup_count)
                return EINVAL;
        S.saved_count = (unsigned)n;
        S.check_enabled = true;
        return 0;
}

static int write_uint(struct sysfile *f, const char *val)
{
        unsigned long long n;

        if (!parse_ull(val, f->max, &n))
                return EINVAL;
        snprintf(f->value, VALUE_MAX, "%llu", n);
        return 0;
}

static int write_resume(struct sysfile *f, const char *val)
{
        unsigned long long maj, min;
        g_auto(GStrv) parts = g_strsplit(val, ":", -1);

        if (g_strv_length(parts) != 2 || !parse_ull(parts[0], 4095, &maj) ||
            !parse_ull(parts[1], 1048575, &min))
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
        if (!parse_ull(val, LLONG_MAX / 2, &n))
                return EINVAL;
        alarm = (long long)n + (adjust ? now : 0);
        expire_alarm();
        if (alarm > now || push) {
                if (S.alarm && !push)
                        return EBUSY;
                if (!S.alarm && push)
                        return EINVAL;
                S.alarm = alarm + (push ? S.alarm : 0);
        } else {
                S.alarm = 0;
        }
        render_alarm();
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

        if (S.in_transition)
                return EBUSY;
        if (S.toi_fail_count > 0) {
                S.toi_fail_count--;
                result = S.toi_fail_result;
        } else if (wakeup_pending()) {
                result = TOI_ABORTED_BIT | TOI_WAKEUP_EVENT_BIT;
        } else {
                S.in_transition = true;
                simulated_sleep(f, val);
                S.in_transition = false;
        }
        snprintf(files[F_TOI_LAST_RESULT].value, VALUE_MAX, "%llu", result);
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
static int sys_write(struct sysfile *f, const char *val)
{
        char res[32] = "ok";
        int err;

        pthread_mutex_lock(&S.lock);
        if (f->delay_ms > 0)
                wait_ms(f->delay_ms);
        while (f->held && !S.quitting)
                pthread_cond_wait(&S.cond, &S.lock);
        err = apply_write(f, val);
        if (f->wakeup_on_write) {
                f->wakeup_on_write = false;
                wakeup_event();
        }
        if (err)
                errno_name(err, res, sizeof(res));
        log_line(f->path, val, res);
        pthread_mutex_unlock(&S.lock);
        return err;
}

/* ---- control commands (called with S.lock held) ----------------------- */

static struct sysfile *arg_file(const char *rel)
{
        int i = find_file(rel);

        return i == NODE_NONE ? NULL : &files[i];
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
        if (f->kind == K_WAKEUP_COUNT && parse_ull(val, UINT_MAX, &n))
                S.wakeup_count = (unsigned)n;
        if (f->kind == K_WAKEALARM)
                S.alarm = parse_ull(val, LLONG_MAX / 2, &n) ? (long long)n : 0;
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
                 parse_ull(argv[2], LONG_MAX / 1000, &n))
                f->delay_ms = (long)n;
        else
                return EINVAL;
        return 0;
}

static int cmd_fail_state(char **argv, int argc)
{
        unsigned long long n = 1;
        int e = argc >= 2 ? parse_errno(argv[1]) : 0;

        if (e == 0 || argc > 3 || (argc == 3 && !parse_ull(argv[2], LONG_MAX, &n)))
                return EINVAL;
        S.fail_errno = e;
        S.fail_count = (long)n;
        return 0;
}

/* toi-fail-result MASK [COUNT]: the next COUNT do_hibernate writes give up
 * at once with last_result MASK (decimal or 0x hex). */
static int cmd_toi_fail_result(char **argv, int argc)
{
        unsigned long long n = 1;
        long long mask;

        if (argc < 2 || argc > 3 || toi_parse(argv[1], false, &mask) != 0 || mask == 0 ||
            (argc == 3 && !parse_ull(argv[2], LONG_MAX, &n)))
                return EINVAL;
        S.toi_fail_result = (unsigned long long)mask;
        S.toi_fail_count = (long)n;
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
        if (argc == 2 && strcmp(argv[0], "sleep-ms") == 0 && parse_ull(argv[1], LONG_MAX / 1000, &n))
                S.sleep_ms = (long)n;
        else if (argc == 2 && strcmp(argv[0], "pm-test-delay-ms") == 0 &&
                 parse_ull(argv[1], LONG_MAX / 1000, &n))
                S.pm_test_delay_ms = (long)n;
        else if (argc == 1 && strcmp(argv[0], "wakeup") == 0)
                wakeup_event();
        else if (argc == 2 && strcmp(argv[0], "wakeup-irq") == 0 && parse_ull(argv[1], UINT_MAX, &n) && n > 0) {
                snprintf(files[F_WAKEUP_IRQ].value, VALUE_MAX, "%llu", n);
                wakeup_event();
        } else if (argc == 1 && strcmp(argv[0], "clear-log") == 0)
                g_string_truncate(S.log, 0);
        else if (strcmp(argv[0], "fail-state") == 0)
                return cmd_fail_state(argv, argc);
        else if (strcmp(argv[0], "toi-fail-result") == 0)
                return cmd_toi_fail_result(argv, argc);
        else
                return cmd_file_arg(argv[0], argv, argc);
        return 0;
}

/* Several commands per write, one a line; stops at the first bad one. */
static int control_write(const char *text)
{
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        int err = 0;

        pthread_mutex_lock(&S.lock);
        for (char **l = lines; *l && !err; l++) {
                g_strstrip(*l);
                if (**l)
                        err = run_command(*l);
        }
        /* Held writers and sleepers re-check their conditions. */
        pthread_cond_broadcast(&S.cond);
        pthread_mutex_unlock(&S.lock);
        return err;
}

/* ---- FUSE operations -------------------------------------------------- */

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        cfg->direct_io = 1;
        /* Reads must always reach us: contents change behind the kernel. */
        cfg->attr_timeout = 0;
        cfg->entry_timeout = 0;
        cfg->negative_timeout = 0;
        return NULL;
}

static mode_t mode_of(int node)
{
        if (node == NODE_CONTROL)
                return S_IFREG | 0200;
        if (node == NODE_LOG)
                return S_IFREG | 0444;
        if (node == NODE_DIR)
                return S_IFDIR | 0755;
        return S_IFREG | (files[node].mode ? files[node].mode : 0644);
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
        int node = node_of(path);

        if (node == NODE_NONE)
                return -ENOENT;
        memset(st, 0, sizeof(*st));
        st->st_mode = mode_of(node);
        st->st_nlink = node == NODE_DIR ? 2 : 1;
        st->st_size = 4096;
        st->st_uid = getuid();
        st->st_gid = getgid();
        st->st_atime = st->st_mtime = st->st_ctime = S.started;
        return 0;
}

static void add_child(GPtrArray *names, const char *rel_below)
{
        g_autofree char *name = g_strndup(rel_below, strcspn(rel_below, "/"));

        for (guint i = 0; i < names->len; i++)
                if (strcmp(names->pdata[i], name) == 0)
                        return;
        g_ptr_array_add(names, g_steal_pointer(&name));
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        const char *rel;
        size_t len;

        if (node_of(path) != NODE_DIR)
                return -ENOTDIR;
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        if (strcmp(path, "/") == 0) {
                fill(buf, "control", NULL, 0, 0);
                fill(buf, "log", NULL, 0, 0);
                fill(buf, "sys", NULL, 0, 0);
                return 0;
        }
        rel = strcmp(path, "/sys") == 0 ? "" : path + 5;
        len = strlen(rel);
        for (int i = 0; i < N_FILES; i++) {
                if (!files[i].present)
                        continue;
                if (len == 0)
                        add_child(names, files[i].path);
                else if (strncmp(files[i].path, rel, len) == 0 && files[i].path[len] == '/')
                        add_child(names, files[i].path + len + 1);
        }
        for (guint i = 0; i < names->len; i++)
                fill(buf, names->pdata[i], NULL, 0, 0);
        return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
        int node = node_of(path);
        int acc = fi->flags & O_ACCMODE;
        mode_t mode;

        if (node == NODE_NONE)
                return -ENOENT;
        if (node == NODE_DIR)
                return -EISDIR;
        mode = mode_of(node);
        /* Like kernfs: no store method = no write open, even for root. */
        if ((acc != O_RDONLY && !(mode & 0222)) || (acc != O_WRONLY && !(mode & 0444)))
                return -EACCES;
        fi->fh = (uint64_t)node;
        fi->direct_io = 1;
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 15)
        /* Without it the FUSE kernel module serialises writes to one inode,
         * so a second state write would wait instead of getting EBUSY. */
        fi->parallel_direct_writes = 1;
#endif
        return 0;
}

/* `echo > file` truncates first; sysfs ignores that, so do we. */
static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
        int node = node_of(path);

        if (node == NODE_NONE)
                return -ENOENT;
        return node == NODE_DIR ? -EISDIR : 0;
}

static int copy_out(const char *src, size_t srclen, char *buf, size_t size, off_t off)
{
        if (off < 0 || (size_t)off >= srclen)
                return 0;
        size = MIN(size, srclen - (size_t)off);
        memcpy(buf, src + off, size);
        return (int)size;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
        int node = (int)fi->fh;
        g_autofree char *text = NULL;
        int r;

        pthread_mutex_lock(&S.lock);
        if (node == NODE_LOG) {
                r = copy_out(S.log->str, S.log->len, buf, size, off);
                pthread_mutex_unlock(&S.lock);
                return r;
        }
        if (node < 0 || node >= N_FILES) {
                pthread_mutex_unlock(&S.lock);
                return -EACCES;
        }
        if (node == F_WAKEALARM)
                expire_alarm();
        /* The kernel's pm_wakeup_irq_show() when no IRQ woke the machine */
        if (node == F_WAKEUP_IRQ && !files[node].value[0]) {
                pthread_mutex_unlock(&S.lock);
                return -ENODATA;
        }
        text = files[node].value[0] ? g_strconcat(files[node].value, "\n", NULL) : g_strdup("");
        pthread_mutex_unlock(&S.lock);
        return copy_out(text, strlen(text), buf, size, off);
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
        int node = (int)fi->fh;
        g_autofree char *val = g_strndup(buf, size);
        size_t len = strlen(val);
        int err;

        /* sysfs store methods see the trailing newline of `echo` and drop it. */
        if (len > 0 && val[len - 1] == '\n')
                val[len - 1] = '\0';
        if (node == NODE_CONTROL)
                err = control_write(val);
        else if (node >= 0 && node < N_FILES)
                err = sys_write(&files[node], val);
        else
                err = EACCES;
        return err ? -err : (int)size;
}

static const struct fuse_operations fs_ops = {
        .init = fs_init,
        .getattr = fs_getattr,
        .readdir = fs_readdir,
        .open = fs_open,
        .truncate = fs_truncate,
        .read = fs_read,
        .write = fs_write,
};

static void on_quit(void)
{
        pthread_mutex_lock(&S.lock);
        S.quitting = true;
        pthread_cond_broadcast(&S.cond);
        pthread_mutex_unlock(&S.lock);
}

/* ---- options ---------------------------------------------------------- */

static void set_value(int i, const char *v)
{
        g_strlcpy(files[i].value, v, VALUE_MAX);
}

static void init_files(void)
{
        for (int i = 0; i < N_FILES; i++)
                files[i].present = i < F_TOI_FIRST;
        set_value(F_STATE, "freeze mem disk");
        set_value(F_MEM_SLEEP, "s2idle [deep]");
        set_value(F_DISK, "[platform] shutdown reboot suspend test_resume");
        set_value(F_PM_TEST, "[none] core processors platform devices freezer");
        set_value(F_IMAGE_SIZE, "838860800");
        set_value(F_RESUME, "0:0");
        set_value(F_FREEZE_TIMEOUT, "20000");
        set_value(F_SYNC_ON_SUSPEND, "1");
        set_value(F_FAILED_ERRNO, "0");
        /* TuxOnIce 3.3's defaults */
        set_value(F_TOI_LAST_RESULT, "0");
        set_value(F_TOI_IMAGE_SIZE_LIMIT, "0");
        set_value(F_TOI_ALGORITHM, "lzo");
        set_value(F_TOI_COMPRESSION, "0");
        set_value(F_TOI_ENABLE_ESCAPE, "0");
        set_value(F_TOI_VERSION, "3.3");
        render_count();
        render_alarm();
}

static void usage(FILE *out, const char *argv0)
{
        fprintf(out,
                "Usage: %s [options] MOUNTPOINT\n"
                "  --states=WORDS      (default \"freeze mem disk\")\n"
                "  --mem-sleep=WORDS   (default \"s2idle [deep]\")\n"
                "  --disk=WORDS        (default \"[platform] shutdown reboot suspend test_resume\")\n"
                "  --pm-test=WORDS     (default \"[none] core processors platform devices freezer\")\n"
                "  --sleep-ms=N        simulated sleep length (default 100)\n"
                "  --tuxonice          also a TuxOnIce power/tuxonice tree\n"
                "  --no-pm-test --no-mem-sleep --no-rtc --no-wakeup-count --allow-other\n",
                argv0);
}

static bool parse_options(int argc, char **argv, bool *allow_other)
{
        enum { O_STATES = 256, O_MEM, O_DISK, O_PMTEST, O_SLEEP, O_NOPM, O_NOMEM, O_NORTC, O_NOWC, O_ALLOW, O_HELP, O_TOI };
        static const struct option opts[] = {
                { "states", required_argument, NULL, O_STATES },
                { "mem-sleep", required_argument, NULL, O_MEM },
                { "disk", required_argument, NULL, O_DISK },
                { "pm-test", required_argument, NULL, O_PMTEST },
                { "sleep-ms", required_argument, NULL, O_SLEEP },
                { "no-pm-test", no_argument, NULL, O_NOPM },
                { "no-mem-sleep", no_argument, NULL, O_NOMEM },
                { "no-rtc", no_argument, NULL, O_NORTC },
                { "no-wakeup-count", no_argument, NULL, O_NOWC },
                { "allow-other", no_argument, NULL, O_ALLOW },
                { "tuxonice", no_argument, NULL, O_TOI },
                { "help", no_argument, NULL, O_HELP },
                {}
        };
        unsigned long long n;
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case O_STATES: set_value(F_STATE, optarg); break;
                case O_MEM: set_value(F_MEM_SLEEP, optarg); break;
                case O_DISK: set_value(F_DISK, optarg); break;
                case O_PMTEST: set_value(F_PM_TEST, optarg); break;
                case O_SLEEP:
                        if (!parse_ull(optarg, LONG_MAX / 1000, &n))
                                return false;
                        S.sleep_ms = (long)n;
                        break;
                case O_NOPM: files[F_PM_TEST].present = false; break;
                case O_NOMEM: files[F_MEM_SLEEP].present = false; break;
                case O_NORTC: files[F_WAKEALARM].present = false; break;
                case O_NOWC: files[F_WAKEUP_COUNT].present = false; break;
                case O_ALLOW: *allow_other = true; break;
                case O_TOI:
                        for (int i = F_TOI_FIRST; i < N_FILES; i++)
                                files[i].present = true;
                        break;
                case O_HELP: usage(stdout, argv[0]); exit(0);
                default: return false;
                }
        }
        return optind == argc - 1;
}

int main(int argc, char **argv)
{
        bool allow_other = false;
        int r;

        fuse_run_cond_init(&S.cond);
        S.log = g_string_new(NULL);
        S.started = time(NULL);
        init_files();
        if (!parse_options(argc, argv, &allow_other)) {
                usage(stderr, argv[0]);
                return 2;
        }
        r = fuse_run(argv[0], argv[optind], allow_other, "fakesys", &fs_ops, on_quit);
        g_string_free(S.log, TRUE);
        return r;
}
