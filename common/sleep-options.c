/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sleep-options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fridge-limits.h"
#include "macro.h"
#include "time-span.h"

/* The offset of `field`, which must be of type T: an option's type and the
 * field it lands in cannot disagree (a compile error, not a stray write). */
#define LANDS(field, T)                                                              \
        (offsetof(CycleOptions, field) +                                             \
         0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((CycleOptions *) 0)->field), T) ? 1 : -1]))

/* Help texts are marked for xgettext; fridgectl translates them as it
 * prints them, and fridged (which has no catalog) uses them as they are */
#ifndef N_
#define N_(s) s
#endif

#define BOOL(n, f, field, h) \
        { .name = n, .flag = f, .type = SLEEP_OPTION_BOOL, .offset = LANDS(field, bool), .help = h }
#define TIME(n, f, unit, field, lo, hi, fb, h)                                                          \
        { .name = n, .flag = f, .metavar = "TIME", .type = SLEEP_OPTION_UINT, .offset = LANDS(field, uint32_t), \
          .min = lo, .max = hi, .time_unit_ms = unit, .fallback = fb, .help = h }

static const char *const pm_test_levels[] = { "none", "core", "processors", "platform", "devices", "freezer", NULL };
static const char *const mem_sleep_modes[] = { "s2idle", "shallow", "deep", NULL };

const SleepOption sleep_options[] = {
        BOOL("dry-run", "dry-run", dry_run, N_("Run every phase, but do not write to the kernel")),
        { .name = "pm-test", .flag = "pm-test", .metavar = "LEVEL", .type = SLEEP_OPTION_STRING,
          .offset = LANDS(pm_test, char *), .words = pm_test_levels, .none_word = "none",
          .help = N_("Use the kernel's pm_test level") },
        { .name = "mem-sleep", .flag = "mem-sleep", .metavar = "MODE", .type = SLEEP_OPTION_STRING,
          .offset = LANDS(mem_sleep, char *), .words = mem_sleep_modes, .only_kind = "suspend",
          .fallback = "[Sleep] MemSleep",
          .help = N_("Suspend in this mode") },
        TIME("wake-after-sec", "wake-after", 1000, wake_after_sec, 1, WAKE_AFTER_MAX_SEC, NULL,
             N_("Wake up by the RTC after TIME (a bare number is seconds)")),
        TIME("flush-timeout-ms", "flush-timeout", 1, flush_timeout_ms, FLUSH_TIMEOUT_MIN_MS, FLUSH_TIMEOUT_MAX_MS,
             "[Flush] TimeoutMs", N_("Limit for writing back dirty data (a bare number is milliseconds)")),
        TIME("freeze-timeout-ms", "freeze-timeout", 1, freeze_timeout_ms, FREEZE_TIMEOUT_MIN_MS,
             FREEZE_TIMEOUT_MAX_MS, "[Freeze] TimeoutMs", N_("Limit for freezing services (a bare number is milliseconds)")),
        BOOL("queue", "queue", queue, N_("While an inhibitor blocks, wait for it (bounded) instead of failing with Inhibited")),
        { .name = "queue-timeout-ms", .flag = "queue-timeout", .metavar = "TIME", .type = SLEEP_OPTION_UINT,
          .offset = LANDS(queue_timeout_ms, uint32_t), .min = QUEUE_TIMEOUT_MIN_MS, .max = QUEUE_TIMEOUT_MAX_MS,
          .time_unit_ms = 1, .requires = "queue", .fallback = "30000", /* QUEUE_TIMEOUT_DEFAULT_MS, as a test checks */
          .help = N_("How long a queued cycle waits before it fails with Inhibited (a bare number is milliseconds)") },
        { .name = "ignore-inhibitors", .flag = "ignore-inhibitors", .short_flag = 'i', .type = SLEEP_OPTION_BOOL,
          .offset = LANDS(ignore_inhibitors, bool),
          .help = N_("Sleep although block inhibitors are held (root, or polkit's io.fridge.ignore-inhibitors)") },
};

const size_t sleep_options_count = ELEMENTSOF(sleep_options);
_Static_assert(ELEMENTSOF(sleep_options) <= 64, "Sleep marks the options it has read in a uint64_t");

const SleepOption *sleep_option_by_name(const char *name) {
        for (size_t i = 0; i < sleep_options_count; i++)
                if (strcmp(sleep_options[i].name, name) == 0)
                        return &sleep_options[i];
        return NULL;
}

const SleepOption *sleep_option_by_short_flag(char c) {
        for (size_t i = 0; i < sleep_options_count; i++)
                if (c && sleep_options[i].short_flag == c)
                        return &sleep_options[i];
        return NULL;
}

const SleepOption *sleep_option_by_flag(const char *flag, size_t len) {
        for (size_t i = 0; i < sleep_options_count; i++)
                if (strlen(sleep_options[i].flag) == len && strncmp(sleep_options[i].flag, flag, len) == 0)
                        return &sleep_options[i];
        return NULL;
}

void *sleep_option_field(CycleOptions *o, const SleepOption *s) {
        return (char *) o + s->offset;
}

const void *sleep_option_field_const(const CycleOptions *o, const SleepOption *s) {
        return (const char *) o + s->offset;
}

bool sleep_option_is_set(const CycleOptions *o, const SleepOption *s) {
        const void *f = sleep_option_field_const(o, s);
        switch (s->type) {
        case SLEEP_OPTION_BOOL:   return *(const bool *) f;
        case SLEEP_OPTION_STRING: return *(char *const *) f != NULL;
        case SLEEP_OPTION_UINT:   return *(const uint32_t *) f != 0;
        }
        return false;
}

int sleep_option_check_uint(const SleepOption *s, uint32_t v, char *err, size_t err_size) {
        if (v >= s->min && v <= s->max)
                return 0;
        snprintf(err, err_size, "is %u; it must be from %u to %u", v, s->min, s->max);
        return -EINVAL;
}

int sleep_option_parse_uint(const SleepOption *s, const char *text, uint32_t *ret, char *err, size_t err_size) {
        int r;
        if (s->time_unit_ms > 0)
                r = time_span_parse_u32(text, s->time_unit_ms * USEC_PER_MSEC, ret);
        else {
                uint64_t usec; /* a count: the parser's digits, without units */
                r = strspn(text, "0123456789") == strlen(text) ? time_span_parse(text, 1, &usec) : -EINVAL;
                if (r == 0 && usec > UINT32_MAX)
                        r = -ERANGE;
                if (r == 0)
                        *ret = (uint32_t) usec;
        }
        if (r == -ERANGE) {
                snprintf(err, err_size, "is \"%s\", which is too large; it must be at most %u%s", text, s->max,
                         s->time_unit_ms == 1000 ? "s" : s->time_unit_ms == 1 ? "ms" : "");
                return -EINVAL;
        }
        if (r < 0) {
                snprintf(err, err_size, "is \"%s\"; it must be %s", text,
                         s->time_unit_ms == 1000 ? "a number of seconds, or " TIME_SPAN_FORMS
                         : s->time_unit_ms == 1  ? "a number of milliseconds, or " TIME_SPAN_FORMS
                                                 : "a non-negative whole number");
                return -EINVAL;
        }
        return sleep_option_check_uint(s, *ret, err, err_size);
}

char *sleep_option_words(const SleepOption *s, const char *sep, char *buf, size_t size) {
        size_t n = 0;
        buf[0] = 0;
        for (const char *const *w = s->words; w && *w && n < size; w++)
                n += (size_t) snprintf(buf + n, size - n, "%s%s", w == s->words ? "" : sep, *w);
        return buf;
}

int sleep_option_check_word(const SleepOption *s, const char *v, char *err, size_t err_size) {
        char list[256];
        for (const char *const *w = s->words; w && *w; w++)
                if (strcmp(*w, v) == 0)
                        return 0;
        snprintf(err, err_size, "is '%s'; it must be one of %s", v, sleep_option_words(s, ", ", list, sizeof(list)));
        return -EINVAL;
}

const SleepOption *sleep_options_misapplied(const CycleOptions *o, const char *kind, bool *ret_kind) {
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                if (!sleep_option_is_set(o, s))
                        continue;
                if (s->only_kind && strcmp(s->only_kind, kind) != 0) {
                        *ret_kind = true;
                        return s;
                }
                const SleepOption *needed = s->requires ? sleep_option_by_name(s->requires) : NULL;
                if (needed && !sleep_option_is_set(o, needed)) {
                        *ret_kind = false;
                        return s;
                }
        }
        return NULL;
}
