/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Sleep options' table (common/sleep-options.c) and fridged's reader of
 * the a{sv} (daemon/bus/bus-options.c), on messages built here: each option
 * is read by its table type into its table field, and every refusal says
 * which option and why. */
#include <glib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-options.h"
#include "macro.h"
#include "manager.h"

/* A bus that only builds messages: started on one end of a socketpair
 * nobody answers, since sd-bus makes messages for started buses only */
static sd_bus *message_bus(void) {
        static sd_bus *bus;
        int sv[2];
        if (bus)
                return bus;
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        g_assert_cmpint(sd_bus_new(&bus), >=, 0);
        g_assert_cmpint(sd_bus_set_fd(bus, sv[0], sv[0]), >=, 0);
        g_assert_cmpint(sd_bus_start(bus), >=, 0);
        return bus;
}

/* An a{sv} of one key with a value of D-Bus type `type`, sealed and
 * rewound for reading */
static sd_bus_message *options_message(const char *key, char type, const void *value) {
        static uint64_t cookie;
        sd_bus_message *m = NULL;
        char sig[2] = { type, 0 };
        g_assert_cmpint(sd_bus_message_new_method_call(message_bus(), &m, "io.fridge.Fridge1", "/io/fridge/Fridge1",
                                                       "io.fridge.Fridge1", "Sleep"), >=, 0);
        g_assert_cmpint(sd_bus_message_open_container(m, 'a', "{sv}"), >=, 0);
        if (key) {
                g_assert_cmpint(sd_bus_message_open_container(m, 'e', "sv"), >=, 0);
                g_assert_cmpint(sd_bus_message_append_basic(m, 's', key), >=, 0);
                g_assert_cmpint(sd_bus_message_open_container(m, 'v', sig), >=, 0);
                g_assert_cmpint(sd_bus_message_append_basic(m, type, value), >=, 0);
                g_assert_cmpint(sd_bus_message_close_container(m), >=, 0);
                g_assert_cmpint(sd_bus_message_close_container(m), >=, 0);
        }
        g_assert_cmpint(sd_bus_message_close_container(m), >=, 0);
        g_assert_cmpint(sd_bus_message_seal(m, ++cookie, 0), >=, 0);
        g_assert_cmpint(sd_bus_message_rewind(m, 1), >=, 0);
        return m;
}

/* Reads one option for a suspend; the error message, or NULL when read */
static char *read_one(const char *key, char type, const void *value, CycleOptions *o) {
        sd_bus_message *m = options_message(key, type, value);
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = bus_options_read(m, "suspend", o, &error);
        char *message = r < 0 ? g_strdup(error.message ? error.message : "(no message)") : NULL;
        if (r < 0)
                g_assert_cmpstr(error.name, ==, SD_BUS_ERROR_INVALID_ARGS);
        sd_bus_error_free(&error);
        sd_bus_message_unref(m);
        return message;
}

/* A value the option takes, of its type */
static const void *good_value(const SleepOption *s, int *b, uint32_t *u, const char **str) {
        switch (s->type) {
        case SLEEP_OPTION_BOOL:
                *b = 1;
                return b;
        case SLEEP_OPTION_UINT:
                *u = s->max;
                return u;
        case SLEEP_OPTION_STRING:
                *str = s->words[g_strv_length((char **) s->words) - 1]; /* not none_word, which stores NULL */
                return *str;
        }
        g_assert_not_reached();
}

/* Every option lands in its own field and nowhere else: the reader goes by
 * the table's type and offset, not by the name */
static void test_each_option_lands_in_its_field(void) {
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                int b;
                uint32_t u;
                const char *str;
                const void *v = good_value(s, &b, &u, &str);
                _cleanup_(cycle_options_clear) CycleOptions o = {};
                /* an option that requires another is read alone here: the
                 * combination check is its own test */
                g_autofree char *msg = read_one(s->name, (char) s->type, v, &o);
                if (s->requires)
                        g_assert_nonnull(msg);
                else
                        g_assert_null(msg);
                for (size_t j = 0; j < sleep_options_count; j++)
                        g_assert_true(sleep_option_is_set(&o, &sleep_options[j]) == (i == j));
                if (s->type == SLEEP_OPTION_STRING)
                        g_assert_cmpstr(*(char **) sleep_option_field(&o, s), ==, str);
                if (s->type == SLEEP_OPTION_UINT)
                        g_assert_cmpuint(*(uint32_t *) sleep_option_field(&o, s), ==, s->max);
        }
}

/* The case: read_option_value put every boolean but "queue" into
 * dry_run. A new boolean option, declared as a table line would declare
 * it, lands in the field its line names. */
static void test_new_boolean_lands_by_table(void) {
        const SleepOption new_bool = { .name = "new-flag", .flag = "new-flag", .type = SLEEP_OPTION_BOOL,
                                       .offset = offsetof(CycleOptions, queue), .help = "a test option" };
        int yes = 1;
        sd_bus_message *m = NULL;
        g_assert_cmpint(sd_bus_message_new_method_call(message_bus(), &m, "io.fridge.Fridge1", "/io/fridge/Fridge1",
                                                       "io.fridge.Fridge1", "Sleep"), >=, 0);
        g_assert_cmpint(sd_bus_message_append_basic(m, 'b', &yes), >=, 0);
        g_assert_cmpint(sd_bus_message_seal(m, 999, 0), >=, 0);
        g_assert_cmpint(sd_bus_message_rewind(m, 1), >=, 0);
        CycleOptions o = {};
        sd_bus_error error = SD_BUS_ERROR_NULL;
        g_assert_cmpint(bus_options_read_value(m, &new_bool, &o, &error), >=, 0);
        g_assert_true(o.queue);
        g_assert_false(o.dry_run);
        sd_bus_message_unref(m);

        /* and the same for an option of each type: the field follows the
         * line, the name plays no part */
        const SleepOption *pm_test = sleep_option_by_name("pm-test");
        SleepOption moved = *pm_test;
        moved.name = "another-word";
        moved.offset = offsetof(CycleOptions, mem_sleep);
        const char *word = "devices";
        m = NULL;
        g_assert_cmpint(sd_bus_message_new_method_call(message_bus(), &m, "io.fridge.Fridge1", "/io/fridge/Fridge1",
                                                       "io.fridge.Fridge1", "Sleep"), >=, 0);
        g_assert_cmpint(sd_bus_message_append_basic(m, 's', word), >=, 0);
        g_assert_cmpint(sd_bus_message_seal(m, 1000, 0), >=, 0);
        g_assert_cmpint(sd_bus_message_rewind(m, 1), >=, 0);
        g_assert_cmpint(bus_options_read_value(m, &moved, &o, &error), >=, 0);
        g_assert_cmpstr(o.mem_sleep, ==, "devices");
        g_assert_null(o.pm_test);
        sd_bus_message_unref(m);
        cycle_options_clear(&o);
}

/* A value of another type than the table's is refused before it is read,
 * for every option */
static void test_wrong_type_refused(void) {
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                CycleOptions o = {};
                int b = 1;
                uint32_t u = 5;
                g_autofree char *msg = s->type == SLEEP_OPTION_UINT ? read_one(s->name, 'b', &b, &o)
                                                                    : read_one(s->name, 'u', &u, &o);
                g_autofree char *want = g_strdup_printf("option '%s' must be of type '%c', not '%c'", s->name,
                                                        (char) s->type, s->type == SLEEP_OPTION_UINT ? 'b' : 'u');
                g_assert_cmpstr(msg, ==, want);
                for (size_t j = 0; j < sleep_options_count; j++)
                        g_assert_false(sleep_option_is_set(&o, &sleep_options[j]));
        }
        CycleOptions o = {};
        g_autofree char *msg = read_one("dry-run", 's', "yes", &o);
        g_assert_cmpstr(msg, ==, "option 'dry-run' must be of type 'b', not 's'");
}

/* Each uint option's bounds, from the table */
static void test_uint_ranges(void) {
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                if (s->type != SLEEP_OPTION_UINT || s->requires)
                        continue;
                const uint32_t good[] = { s->min, s->max }, bad[] = { s->min - 1, s->max + 1 };
                for (size_t k = 0; k < 2; k++) {
                        _cleanup_(cycle_options_clear) CycleOptions o = {};
                        g_autofree char *ok = read_one(s->name, 'u', &good[k], &o);
                        g_assert_null(ok);
                        g_autofree char *msg = read_one(s->name, 'u', &bad[k], &o);
                        g_autofree char *want = g_strdup_printf("option '%s' is %u; it must be from %u to %u",
                                                                s->name, bad[k], s->min, s->max);
                        g_assert_cmpstr(msg, ==, want);
                }
        }
        CycleOptions o = {};
        uint32_t zero = 0;
        g_autofree char *msg = read_one("wake-after-sec", 'u', &zero, &o);
        g_assert_cmpstr(msg, ==, "option 'wake-after-sec' is 0; it must be from 1 to 31536000");
}

static void test_messages(void) {
        CycleOptions o = {};
        int b = 1;
        g_autofree char *unknown = read_one("bogus", 'b', &b, &o);
        g_assert_cmpstr(unknown, ==, "unknown option 'bogus'");
        g_autofree char *word = read_one("mem-sleep", 's', "deeper", &o);
        g_assert_cmpstr(word, ==, "option 'mem-sleep' is 'deeper'; it must be one of s2idle, shallow, deep");
        g_autofree char *level = read_one("pm-test", 's', "all", &o);
        g_assert_cmpstr(level, ==,
                        "option 'pm-test' is 'all'; it must be one of none, core, processors, platform, devices, freezer");
        uint32_t ms = 500;
        g_autofree char *alone = read_one("queue-timeout-ms", 'u', &ms, &o);
        g_assert_cmpstr(alone, ==, "option 'queue-timeout-ms' applies only with option 'queue' true");
        cycle_options_clear(&o);
}

/* pm-test "none" is no pm_test; a repeated key and a kind the option does
 * not apply to are refused */
static void test_combinations(void) {
        static uint64_t cookie = 5000;
        sd_bus_message *m = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(cycle_options_clear) CycleOptions o = {};

        g_assert_cmpint(sd_bus_message_new_method_call(message_bus(), &m, "io.fridge.Fridge1", "/io/fridge/Fridge1",
                                                       "io.fridge.Fridge1", "Sleep"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(m, "a{sv}", 3, "pm-test", "s", "none", "queue", "b", 1,
                                              "queue-timeout-ms", "u", 250), >=, 0);
        g_assert_cmpint(sd_bus_message_seal(m, ++cookie, 0), >=, 0);
        g_assert_cmpint(sd_bus_message_rewind(m, 1), >=, 0);
        g_assert_cmpint(bus_options_read(m, "hibernate", &o, &error), >=, 0);
        g_assert_null(o.pm_test);
        g_assert_true(o.queue);
        g_assert_cmpuint(o.queue_timeout_ms, ==, 250);
        m = sd_bus_message_unref(m);

        g_assert_cmpint(sd_bus_message_new_method_call(message_bus(), &m, "io.fridge.Fridge1", "/io/fridge/Fridge1",
                                                       "io.fridge.Fridge1", "Sleep"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(m, "a{sv}", 2, "dry-run", "b", 1, "dry-run", "b", 0), >=, 0);
        g_assert_cmpint(sd_bus_message_seal(m, ++cookie, 0), >=, 0);
        g_assert_cmpint(sd_bus_message_rewind(m, 1), >=, 0);
        g_assert_cmpint(bus_options_read(m, "suspend", &o, &error), <, 0);
        g_assert_cmpstr(error.message, ==, "option 'dry-run' is given twice");
        sd_bus_error_free(&error);
        m = sd_bus_message_unref(m);

        g_assert_cmpint(sd_bus_message_new_method_call(message_bus(), &m, "io.fridge.Fridge1", "/io/fridge/Fridge1",
                                                       "io.fridge.Fridge1", "Sleep"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(m, "a{sv}", 1, "mem-sleep", "s", "deep"), >=, 0);
        g_assert_cmpint(sd_bus_message_seal(m, ++cookie, 0), >=, 0);
        g_assert_cmpint(sd_bus_message_rewind(m, 1), >=, 0);
        g_assert_cmpint(bus_options_read(m, "hybrid-sleep", &o, &error), <, 0);
        g_assert_cmpstr(error.message, ==, "option 'mem-sleep' applies to kind suspend only, not hybrid-sleep");
        sd_bus_error_free(&error);
        sd_bus_message_unref(m);
}

/* What the table's users rely on */
static void test_table_is_sound(void) {
        g_assert_cmpuint(sleep_options_count, <=, 64); /* the reader's bitmask of keys seen */
        for (size_t i = 0; i < sleep_options_count; i++) {
                const SleepOption *s = &sleep_options[i];
                g_assert_true(sleep_option_by_name(s->name) == s);
                g_assert_true(sleep_option_by_flag(s->flag, strlen(s->flag)) == s);
                g_assert_true(s->help && *s->help);
                g_assert_true((s->metavar != NULL) == (s->type != SLEEP_OPTION_BOOL));
                if (s->type == SLEEP_OPTION_UINT)
                        g_assert_cmpuint(s->min, >, 0); /* 0 in CycleOptions means "not given" */
                if (s->type == SLEEP_OPTION_STRING)
                        g_assert_true(s->words && s->words[0]);
                if (s->none_word)
                        g_assert_true(g_strv_contains(s->words, s->none_word));
                if (s->requires)
                        g_assert_cmpint(sleep_option_by_name(s->requires)->type, ==, SLEEP_OPTION_BOOL);
        }
        /* the manager's default for a queued cycle is the one documented */
        g_autofree char *queue_default = g_strdup_printf("%u", QUEUE_TIMEOUT_DEFAULT_MS);
        g_assert_cmpstr(sleep_option_by_name("queue-timeout-ms")->fallback, ==, queue_default);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/options/table-is-sound", test_table_is_sound);
        g_test_add_func("/options/each-option-lands-in-its-field", test_each_option_lands_in_its_field);
        g_test_add_func("/options/new-boolean-lands-by-table", test_new_boolean_lands_by_table);
        g_test_add_func("/options/wrong-type-refused", test_wrong_type_refused);
        g_test_add_func("/options/uint-ranges", test_uint_ranges);
        g_test_add_func("/options/messages", test_messages);
        g_test_add_func("/options/combinations", test_combinations);
        return g_test_run();
}
