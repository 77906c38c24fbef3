/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The harness's bus connection: recorded signals, calls on fridged and on
 * the logind stand-in, property reads and waits. */
#include "harness.h"
#include "harness-private.h"

#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

#include "fridge-config.h"

#define CALL_TIMEOUT_USEC (10 * G_USEC_PER_SEC)

/* ---------------------------------------------------------------- signals */

void harness_signal_free(gpointer p) {
        HarnessSignal *s = p;
        g_free(s->interface);
        g_free(s->member);
        sd_bus_message_unref(s->message);
        g_free(s);
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Harness *h = userdata;
        HarnessSignal *s = g_new0(HarnessSignal, 1);

        s->time_usec = now_usec();
        s->interface = g_strdup(sd_bus_message_get_interface(m));
        s->member = g_strdup(sd_bus_message_get_member(m));
        s->message = sd_bus_message_ref(m);
        g_ptr_array_add(h->signals, s);
        return 0;
}

void harness_connect_bus(Harness *h) {
        g_autofree char *match = g_strdup_printf("type='signal',path='%s'", FRIDGE_OBJECT_PATH);
        int r;

        r = sd_bus_new(&h->bus);
        g_assert_cmpint(r, >=, 0);
        r = sd_bus_set_address(h->bus, h->bus_address);
        g_assert_cmpint(r, >=, 0);
        r = sd_bus_set_bus_client(h->bus, 1);
        g_assert_cmpint(r, >=, 0);
        r = sd_bus_start(h->bus);
        if (r < 0)
                g_error("sd_bus_start(%s): %s", h->bus_address, g_strerror(-r));
        r = sd_bus_add_match(h->bus, &h->match_slot, match, on_signal, h);
        g_assert_cmpint(r, >=, 0);
}

/* ---------------------------------------------------------------- bus calls */

void harness_take_error(sd_bus_error *e, char **ret_error, char **ret_message) {
        if (ret_error)
                *ret_error = g_strdup(e->name ? e->name : "");
        if (ret_message)
                *ret_message = g_strdup(e->message ? e->message : "");
}

static int append_option(sd_bus_message *m, const char *key, const char *type, va_list *ap) {
        union { int32_t i; uint32_t u; uint64_t t; double d; } v;
        const void *value = &v;
        int r;

        switch (type[0]) {
        case 'b': /* sd-bus takes a boolean as an int, as 'i' */
        case 'i': v.i = va_arg(*ap, int); break;
        case 'u': v.u = va_arg(*ap, unsigned); break;
        case 't': v.t = va_arg(*ap, uint64_t); break;
        case 'd': v.d = va_arg(*ap, double); break;
        case 's': value = va_arg(*ap, const char *); break;
        default: g_error("harness_sleep: unsupported option type %s", type);
        }
        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', key)) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', type)) < 0 ||
            (r = sd_bus_message_append_basic(m, type[0], value)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

static sd_bus_message *new_call(Harness *h, const char *interface, const char *member) {
        sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(h->bus, &m, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                               interface, member);
        g_assert_cmpint(r, >=, 0);
        return m;
}

/* Sends m (and unrefs it): 0 with the reply in *ret_reply (or unref'd),
 * or -1 with the error's name and message */
static int call(Harness *h, sd_bus_message *m, sd_bus_message **ret_reply,
                char **ret_error, char **ret_message) {
        sd_bus_message *reply = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sd_bus_call(h->bus, m, CALL_TIMEOUT_USEC, &e, &reply);

        sd_bus_message_unref(m);
        if (ret_reply)
                *ret_reply = NULL;
        if (r < 0) {
                if (!sd_bus_error_is_set(&e))
                        sd_bus_error_set_errno(&e, r);
                harness_take_error(&e, ret_error, ret_message);
                sd_bus_error_free(&e);
                return -1;
        }
        if (ret_error)
                *ret_error = NULL;
        if (ret_message)
                *ret_message = NULL;
        if (ret_reply)
                *ret_reply = reply;
        else
                sd_bus_message_unref(reply);
        return 0;
}

int harness_sleep(Harness *h, const char *kind, uint64_t *ret_cycle,
                  char **ret_error, char **ret_message, ...) {
        sd_bus_message *m = new_call(h, FRIDGE_INTERFACE, "Sleep"), *reply = NULL;
        va_list ap;
        int r;

        g_assert_cmpint(sd_bus_message_append(m, "s", kind), >=, 0);
        g_assert_cmpint(sd_bus_message_open_container(m, 'a', "{sv}"), >=, 0);
        va_start(ap, ret_message);
        for (;;) {
                const char *key = va_arg(ap, const char *);
                if (!key)
                        break;
                const char *type = va_arg(ap, const char *);
                r = append_option(m, key, type, &ap);
                g_assert_cmpint(r, >=, 0);
        }
        va_end(ap);
        g_assert_cmpint(sd_bus_message_close_container(m), >=, 0);

        if (call(h, m, &reply, ret_error, ret_message) < 0)
                return -1;
        uint64_t cycle = 0;
        r = sd_bus_message_read(reply, "t", &cycle);
        g_assert_cmpint(r, >, 0);
        sd_bus_message_unref(reply);
        if (ret_cycle)
                *ret_cycle = cycle;
        return 0;
}

int harness_call(Harness *h, const char *interface, const char *member,
                 sd_bus_message **ret_reply, char **ret_error, char **ret_message,
                 const char *types, ...) {
        sd_bus_message *m = new_call(h, interface, member);
        va_list ap;

        if (types && *types) {
                va_start(ap, types);
                int r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                g_assert_cmpint(r, >=, 0);
        }
        return call(h, m, ret_reply, ret_error, ret_message);
}

int harness_inhibit_delay(Harness *h, const char *why) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        int fd = -1;
        if (harness_call(h, FRIDGE_INTERFACE, "Inhibit", &reply, &err, &msg, "sss", "test", why, "delay") < 0)
                g_error("Inhibit failed: %s: %s", err, msg);
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        g_assert_cmpint(fd, >=, 0);
        sd_bus_message_unref(reply);
        return fd;
}

int harness_cancel(Harness *h, uint64_t cycle, char **ret_error, char **ret_message) {
        return harness_call(h, FRIDGE_INTERFACE, "Cancel", NULL, ret_error, ret_message, "t", cycle);
}

char *harness_get_string(Harness *h, const char *name) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        char *s = NULL;
        int r = sd_bus_get_property_string(h->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                           FRIDGE_INTERFACE, name, &e, &s);
        if (r < 0)
                g_error("Get %s: %s: %s", name, e.name, e.message);
        char *ret = g_strdup(s);
        free(s);
        return ret;
}

static void get_trivial(Harness *h, const char *name, char type, void *ret) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sd_bus_get_property_trivial(h->bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH,
                                            FRIDGE_INTERFACE, name, &e, type, ret);
        if (r < 0)
                g_error("Get %s: %s: %s", name, e.name, e.message);
}

double harness_get_double(Harness *h, const char *name) {
        double d = 0;
        get_trivial(h, name, 'd', &d);
        return d;
}

uint64_t harness_get_u64(Harness *h, const char *name) {
        uint64_t t = 0;
        get_trivial(h, name, 't', &t);
        return t;
}

/* ---------------------------------------------------------------- waiting */

bool harness_process_until(Harness *h, int timeout_ms,
                           bool (*pred)(Harness *h, void *userdata), void *userdata) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;

        for (;;) {
                if (pred && pred(h, userdata))
                        return true;
                int r = sd_bus_process(h->bus, NULL);
                if (r < 0)
                        g_error("sd_bus_process: %s", g_strerror(-r));
                if (r > 0)
                        continue;
                int64_t left = deadline - now_usec();
                if (left <= 0)
                        return pred ? pred(h, userdata) : false;
                r = sd_bus_wait(h->bus, (uint64_t) left);
                if (r < 0 && r != -EINTR)
                        g_error("sd_bus_wait: %s", g_strerror(-r));
        }
}

static bool signal_cycle_is(HarnessSignal *s, uint64_t cycle) {
        uint64_t c = 0;
        sd_bus_message_rewind(s->message, true);
        if (sd_bus_message_read_basic(s->message, 't', &c) <= 0)
                return false;
        return c == cycle;
}

int harness_find_signal(Harness *h, const char *member, bool match_cycle, uint64_t cycle) {
        for (guint i = 0; i < h->signals->len; i++) {
                HarnessSignal *s = g_ptr_array_index(h->signals, i);
                if (g_strcmp0(s->interface, FRIDGE_INTERFACE) != 0 || g_strcmp0(s->member, member) != 0)
                        continue;
                if (match_cycle && !signal_cycle_is(s, cycle))
                        continue;
                return (int) i;
        }
        return -1;
}

typedef struct { uint64_t cycle; } CycleArg;

static bool finished_pred(Harness *h, void *userdata) {
        CycleArg *a = userdata;
        return harness_find_signal(h, "CycleFinished", true, a->cycle) >= 0;
}

bool harness_wait_finished(Harness *h, uint64_t cycle, int timeout_ms,
                           char **ret_result, char **ret_error, char **ret_message) {
        CycleArg a = { cycle };
        const char *result = NULL, *error = NULL, *message = NULL;
        uint64_t c;

        if (!harness_process_until(h, timeout_ms, finished_pred, &a)) {
                g_test_message("no CycleFinished for cycle %" G_GUINT64_FORMAT " within %d ms",
                               cycle, timeout_ms);
                return false;
        }
        HarnessSignal *s = g_ptr_array_index(h->signals, harness_find_signal(h, "CycleFinished", true, cycle));
        sd_bus_message_rewind(s->message, true);
        int r = sd_bus_message_read(s->message, "tsss", &c, &result, &error, &message);
        g_assert_cmpint(r, >, 0);
        g_test_message("cycle %" G_GUINT64_FORMAT " finished: result=%s error=%s message=%s",
                       cycle, result, error, message);
        if (ret_result)
                *ret_result = g_strdup(result);
        if (ret_error)
                *ret_error = g_strdup(error);
        if (ret_message)
                *ret_message = g_strdup(message);
        return true;
}

void harness_prop_change_free(HarnessPropChange *c) {
        if (!c)
                return;
        g_free(c->name);
        g_free(c->s);
        g_free(c);
}

GPtrArray *harness_parse_props_changed(HarnessSignal *sig) {
        GPtrArray *a = g_ptr_array_new_with_free_func((GDestroyNotify) harness_prop_change_free);
        sd_bus_message *m = sig->message;
        const char *iface = NULL;
        int r;

        if (g_strcmp0(sig->interface, "org.freedesktop.DBus.Properties") != 0 ||
            g_strcmp0(sig->member, "PropertiesChanged") != 0)
                return a;
        sd_bus_message_rewind(m, true);
        r = sd_bus_message_read_basic(m, 's', &iface);
        g_assert_cmpint(r, >, 0);
        if (g_strcmp0(iface, FRIDGE_INTERFACE) != 0)
                return a;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        g_assert_cmpint(r, >, 0);
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *name = NULL, *contents = NULL;
                char type;
                HarnessPropChange *c = g_new0(HarnessPropChange, 1);

                g_assert_cmpint(sd_bus_message_read_basic(m, 's', &name), >, 0);
                c->name = g_strdup(name);
                g_assert_cmpint(sd_bus_message_peek_type(m, &type, &contents), >, 0);
                g_assert_cmpint(type, ==, 'v');
                c->type = contents[0];
                if (g_str_equal(contents, "s")) {
                        const char *v = NULL;
                        g_assert_cmpint(sd_bus_message_read(m, "v", "s", &v), >, 0);
                        c->s = g_strdup(v);
                } else if (g_str_equal(contents, "d")) {
                        g_assert_cmpint(sd_bus_message_read(m, "v", "d", &c->d), >, 0);
                } else if (g_str_equal(contents, "t")) {
                        g_assert_cmpint(sd_bus_message_read(m, "v", "t", &c->t), >, 0);
                } else {
                        g_assert_cmpint(sd_bus_message_skip(m, "v"), >=, 0);
                }
                g_assert_cmpint(sd_bus_message_exit_container(m), >=, 0);
                g_ptr_array_add(a, c);
        }
        g_assert_cmpint(r, >=, 0);
        sd_bus_message_exit_container(m);
        return a;
}

typedef struct { const char *name, *value; } PropArg;

static bool prop_pred(Harness *h, void *userdata) {
        PropArg *p = userdata;
        for (guint i = 0; i < h->signals->len; i++) {
                g_autoptr(GPtrArray) ch = harness_parse_props_changed(g_ptr_array_index(h->signals, i));
                for (guint j = 0; j < ch->len; j++) {
                        HarnessPropChange *c = g_ptr_array_index(ch, j);
                        if (c->type == 's' && g_str_equal(c->name, p->name) && g_str_equal(c->s, p->value))
                                return true;
                }
        }
        return false;
}

bool harness_wait_property_signal(Harness *h, const char *name, const char *value, int timeout_ms) {
        PropArg p = { name, value };
        return harness_process_until(h, timeout_ms, prop_pred, &p);
}

char *harness_logind_log(Harness *h) {
        char *text = NULL;
        g_assert_nonnull(h->logind_log);
        g_assert_true(g_file_get_contents(h->logind_log, &text, NULL, NULL));
        return text;
}

bool harness_wait_logind_line(Harness *h, const char *line, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        do {
                g_autofree char *text = harness_logind_log(h);
                g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
                if (g_strv_contains((const char *const *) lines, line))
                        return true;
                g_usleep(20000); /* bounded by the deadline */
        } while (remaining_ms(deadline) > 0);
        return false;
}

char *harness_logind_inhibitors(Harness *h) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *what, *who, *why, *mode;
        uint32_t uid, pid;
        int r = sd_bus_call_method(h->bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                                   "org.freedesktop.login1.Manager", "ListInhibitors", &e, &reply, "");
        if (r < 0)
                g_error("ListInhibitors: %s", e.message);
        GString *out = g_string_new(NULL);
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ssssuu)"), >, 0);
        while (sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid) > 0)
                g_string_append_printf(out, "%s %s\n", who, mode);
        sd_bus_message_unref(reply);
        return g_string_free(out, FALSE);
}

bool harness_wait_logind_delay(Harness *h, const char *who, bool held, int timeout_ms) {
        int64_t deadline = now_usec() + (int64_t) timeout_ms * 1000;
        g_autofree char *want = g_strdup_printf("%s delay\n", who);
        do {
                g_autofree char *list = harness_logind_inhibitors(h);
                if ((strstr(list, want) != NULL) == held)
                        return true;
                g_usleep(20000); /* bounded by the deadline */
        } while (remaining_ms(deadline) > 0);
        return false;
}

int harness_logind_sleep(Harness *h, const char *method, char **ret_error, char **ret_message) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sd_bus_call_method(h->bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                                   "org.freedesktop.login1.Manager", method, &e, NULL, "b", 0);
        if (r >= 0)
                return 0;
        harness_take_error(&e, ret_error, ret_message);
        return -1;
}

bool harness_plan_row(Harness *h, const char *cgroup, char **ret_class, char **ret_reason) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(h, FRIDGE_INTERFACE, "GetPlan", &reply, &err, &msg, "") < 0)
                g_error("GetPlan failed: %s: %s", err, msg);
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ssss)"), >, 0);
        const char *cg, *unit, *cls, *reason;
        bool found = false;
        while (!found && sd_bus_message_read(reply, "(ssss)", &cg, &unit, &cls, &reason) > 0)
                if (g_str_equal(cg, cgroup)) {
                        *ret_class = g_strdup(cls);
                        *ret_reason = g_strdup(reason);
                        found = true;
                }
        sd_bus_message_unref(reply);
        return found;
}
