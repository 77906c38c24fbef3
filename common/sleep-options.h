/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The options of the Sleep method (its a{sv}), declared once for fridged
 * and fridgectl: fridged reads them off the bus by this table
 * (daemon/bus/bus-options.c), fridgectl parses its flags, prints --help
 * and builds the a{sv} from it, and the unit tests hold the man page and
 * the D-Bus contract to it. Plain C and libc: fridgectl has no GLib.
 *
 * Adding an option: a field in CycleOptions, one line in sleep_options[]
 * (sleep-options.c), and its use in the manager. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the options land: what one Sleep call asked for. In fridged the
 * strings are owned (cycle_options_clear frees them); in fridgectl they are
 * borrowed from argv. A uint option's 0 means "not given": every uint
 * option's range starts above 0. */
typedef struct CycleOptions {
        bool dry_run;
        char *pm_test;            /* NULL: none */
        char *mem_sleep;          /* NULL: configured, else the kernel's */
        uint32_t wake_after_sec;  /* 0: none */
        uint32_t flush_timeout_ms;  /* 0: configured */
        uint32_t freeze_timeout_ms; /* 0: configured */
        bool queue;                 /* wait while a block inhibitor is held */
        uint32_t queue_timeout_ms;  /* 0: QUEUE_TIMEOUT_DEFAULT_MS */
        bool ignore_inhibitors;     /* sleep although fridge's block inhibitors are held */
} CycleOptions;

/* The D-Bus type of the value, which also says how it is parsed and where
 * it may land (bool, char *, uint32_t) */
typedef enum SleepOptionType {
        SLEEP_OPTION_BOOL = 'b',
        SLEEP_OPTION_STRING = 's', /* one of `words` */
        SLEEP_OPTION_UINT = 'u',   /* from `min` to `max` */
} SleepOptionType;

typedef struct SleepOption {
        const char *name;          /* the key in the a{sv} */
        const char *flag;          /* fridgectl's --FLAG */
        char short_flag;           /* fridgectl's -F too; 0: none */
        const char *metavar;       /* --FLAG=METAVAR; NULL for a boolean (no value) */
        SleepOptionType type;
        size_t offset;             /* of its field in CycleOptions */
        uint32_t min, max;         /* uint */
        uint32_t time_unit_ms;     /* uint: a time span (time-span.h) in this unit, a bare number too; 0: a count */
        const char *const *words;  /* string: the values it takes, NULL-terminated */
        const char *none_word;     /* string: the word that leaves the field NULL */
        const char *only_kind;     /* it applies to this kind of sleep only; NULL: to all */
        const char *requires;      /* it applies only with this boolean option true */
        const char *fallback;      /* what stands when it is not given; NULL: nothing */
        const char *help;          /* one sentence for --help and the docs */
} SleepOption;

extern const SleepOption sleep_options[];
extern const size_t sleep_options_count;

const SleepOption *sleep_option_by_name(const char *name);
/* `len` bytes of `flag` name it (fridgectl's --FLAG=VALUE) */
const SleepOption *sleep_option_by_flag(const char *flag, size_t len);
/* -C names it (fridgectl's short flag); NULL: none does */
const SleepOption *sleep_option_by_short_flag(char c);

/* Its field in `o`; the type says what it points to */
void *sleep_option_field(CycleOptions *o, const SleepOption *s);
const void *sleep_option_field_const(const CycleOptions *o, const SleepOption *s);

/* Given in `o`: a boolean true, a string set, a uint not 0 */
bool sleep_option_is_set(const CycleOptions *o, const SleepOption *s);

/* 0 when `v` is a value the option takes; else -EINVAL, and `err` says
 * "is V; it must be ...", for the caller to put the option's name before */
int sleep_option_check_uint(const SleepOption *s, uint32_t v, char *err, size_t err_size);
/* A uint option's text: a whole number, or for a time option a time span
 * ("30s", "1min 30s"; a bare number in its unit), in range; else -EINVAL
 * and `err` as above, naming the forms it takes */
int sleep_option_parse_uint(const SleepOption *s, const char *text, uint32_t *ret, char *err, size_t err_size);
int sleep_option_check_word(const SleepOption *s, const char *v, char *err, size_t err_size);

/* `words` joined by `sep` into buf ("" when none); returns buf */
char *sleep_option_words(const SleepOption *s, const char *sep, char *buf, size_t size);

/* After all options are read: the first one given that does not apply to
 * `kind` (only_kind) or without the option it requires; NULL when none.
 * *ret_kind tells which: true for the kind. */
const SleepOption *sleep_options_misapplied(const CycleOptions *o, const char *kind, bool *ret_kind);
