/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Every key of fridge.conf, declared once: config_new_default() applies
 * the defaults through the same parsers as the files, the messages about
 * bad values come from the ranges and words here, and the unit tests hold
 * fridge.conf(5) and the shipped fridge.conf to this table.
 *
 * Adding a key: a field in Config, one line in config_keys[], its use. */

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* How a value is parsed, and the type of the field it lands in */
typedef enum ConfigKeyType {
        CONFIG_KEY_U32,      /* uint32_t from min to max */
        CONFIG_KEY_MSEC,     /* uint32_t ms from min to max: a time span, a bare number in ms */
        CONFIG_KEY_I32,      /* int32_t from min to max; empty: INT32_MIN (unset) */
        CONFIG_KEY_ENUM,     /* an int-sized enum: the index of the value in words */
        CONFIG_KEY_CHOICE,   /* char *: one of words; empty (when empty_ok): NULL */
        CONFIG_KEY_ROOTS,    /* char **: ;-separated cgroup paths */
        CONFIG_KEY_NAME,     /* char *: a crypto API name of at most max characters; empty: NULL */
        CONFIG_KEY_DEVICE,   /* char *: printable UTF-8 (a path or MAJ:MIN); empty: NULL */
        CONFIG_KEY_TRISTATE, /* int: yes 1, no 0, empty -1 */
        _CONFIG_KEY_TYPE_MAX,
} ConfigKeyType;

typedef struct ConfigKey {
        const char *group;
        const char *name;
        ConfigKeyType type;
        size_t offset;              /* of its field in Config */
        int64_t min, max;
        const char *const *words;   /* ENUM, CHOICE; NULL-terminated */
        gboolean empty_ok;          /* CHOICE, I32 */
        const char *default_value;  /* as it would be written in the file */
        const char *expected;       /* for messages; NULL: said from the type, range and words */
        const char *help;           /* one line, as the shipped fridge.conf says it */
} ConfigKey;

extern const ConfigKey config_keys[];
extern const size_t config_keys_count;

const ConfigKey *config_key_find(const char *group, const char *name);

/* Parses `value` (stripped) into its field in c: 0, or -EINVAL when it is
 * not a value the key takes (c unchanged). Says nothing. */
int config_key_apply(const ConfigKey *k, Config *c, const char *value);

/* What a value of the key must be, for "expected ..." (free it) */
char *config_key_expected(const ConfigKey *k);

/* Frees what the keys' fields own (their strings and lists) */
void config_keys_clear(Config *c);

/* Whether a bad value may be shown in a message (not when it may hold
 * control characters or invalid UTF-8) */
gboolean config_key_shows_value(const ConfigKey *k);
