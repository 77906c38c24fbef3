/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-options.h"

#include <glib.h>
#include <string.h>

#include "bus-dict.h"
#include "bus-error.h"

static int invalid(sd_bus_error *error, const SleepOption *s, const char *why) {
        return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS, "option '%s' %s", s->name, why);
}

static int read_bool(sd_bus_message *msg, const SleepOption *s, CycleOptions *o) {
        int b, r = sd_bus_message_read_basic(msg, 'b', &b);
        if (r < 0)
                return r;
        *(bool *) sleep_option_field(o, s) = b;
        return 0;
}

static int read_string(sd_bus_message *msg, const SleepOption *s, CycleOptions *o, sd_bus_error *error) {
        char why[512];
        const char *v;
        int r = sd_bus_message_read_basic(msg, 's', &v);
        if (r < 0)
                return r;
        if (sleep_option_check_word(s, v, why, sizeof(why)) < 0)
                return invalid(error, s, why);
        char **field = sleep_option_field(o, s);
        g_free(*field);
        *field = s->none_word && strcmp(v, s->none_word) == 0 ? NULL : g_strdup(v);
        return 0;
}

static int read_uint(sd_bus_message *msg, const SleepOption *s, CycleOptions *o, sd_bus_error *error) {
        char why[128];
        uint32_t v;
        int r = sd_bus_message_read_basic(msg, 'u', &v);
        if (r < 0)
                return r;
        if (sleep_option_check_uint(s, v, why, sizeof(why)) < 0)
                return invalid(error, s, why);
        *(uint32_t *) sleep_option_field(o, s) = v;
        return 0;
}

int bus_options_read_value(sd_bus_message *msg, const SleepOption *s, CycleOptions *o, sd_bus_error *error) {
        switch (s->type) {
        case SLEEP_OPTION_BOOL:   return read_bool(msg, s, o);
        case SLEEP_OPTION_STRING: return read_string(msg, s, o, error);
        case SLEEP_OPTION_UINT:   return read_uint(msg, s, o, error);
        }
        return bus_error_setf(error, FRIDGE_ERROR_INTERNAL, "option '%s' has no reader", s->name);
}

typedef struct OptionsRead {
        CycleOptions *options;
        uint64_t seen;
        sd_bus_error *error;
} OptionsRead;

static int read_one(sd_bus_message *msg, const char *key, void *userdata) {
        OptionsRead *ctx = userdata;
        sd_bus_error *error = ctx->error;
        const char *contents;
        int r;

        const SleepOption *s = sleep_option_by_name(key);
        if (!s)
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS, "unknown option '%s'", key);
        uint64_t bit = UINT64_C(1) << (s - sleep_options);
        if (ctx->seen & bit)
                return invalid(error, s, "is given twice");
        ctx->seen |= bit;

        r = sd_bus_message_peek_type(msg, NULL, &contents);
        if (r < 0)
                return r;
        if (strlen(contents) != 1 || contents[0] != (char) s->type)
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS, "option '%s' must be of type '%c', not '%s'",
                                         key, (char) s->type, contents);
        r = sd_bus_message_enter_container(msg, 'v', contents);
        if (r < 0)
                return r;
        r = bus_options_read_value(msg, s, ctx->options, error);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

static int check_combination(const CycleOptions *o, const char *kind, sd_bus_error *error) {
        bool for_kind;
        const SleepOption *s = sleep_options_misapplied(o, kind, &for_kind);
        if (!s)
                return 0;
        if (for_kind)
                return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS,
                                         "option '%s' applies to kind %s only, not %s", s->name, s->only_kind, kind);
        return bus_error_setf(error, FRIDGE_ERROR_INVALID_ARGS, "option '%s' applies only with option '%s' true",
                                 s->name, s->requires);
}

int bus_options_read(sd_bus_message *msg, const char *kind, CycleOptions *o, sd_bus_error *error) {
        int r = bus_dict_read(msg, read_one, &(OptionsRead) { .options = o, .error = error });
        if (r < 0)
                return r;
        return check_combination(o, kind, error);
}
