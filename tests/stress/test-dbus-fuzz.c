/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * D-Bus fuzz: 10,000 seeded calls to every method and property of the real
 * fridged on a private bus, with wrong signatures, wrong variant types in
 * a{sv}, unknown option keys, empty and 1 MiB strings, invalid UTF-8 (by
 * hand-built messages: sd-bus will not marshal it), out-of-range numbers,
 * unknown cycle ids and fds that are not pipes. fridged must answer each
 * with a named error (or a return), never stay silent, never crash; under
 * the ASan build a sanitizer report aborts it, which shows up as a crash.
 *
 *   test-dbus-fuzz [SEED] [CALLS]      (or FUZZ_SEED / FUZZ_CALLS)
 *
 * No call can start a cycle that writes the state file: every Sleep the
 * fuzzer sends starts its options with dry-run true (or a dry-run of the
 * wrong type, or twice), and a cycle that starts is cancelled at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fridge-config.h"
#include "harness.h"
#include "rawbus.h"
#include "util.h"

#define DEFAULT_SEED 20050401u
#define DEFAULT_CALLS 10000u
#define REPLY_TIMEOUT_USEC (10 * G_USEC_PER_SEC)
#define HUGE_SIZE (1024 * 1024)
#define PROPS "org.freedesktop.DBus.Properties"
#define DBUS_NAME "org.freedesktop.DBus"

/* Error names that say nothing about what was wrong: fridged must never
 * answer a bad call with these */
static bool error_is_unnamed(const char *name) {
        return g_str_has_prefix(name, "System.Error.") || strcmp(name, "org.freedesktop.DBus.Error.Failed") == 0 ||
               strcmp(name, "org.freedesktop.DBus.Error.NoMemory") == 0;
}

typedef struct Fuzz {
        Harness *h;
        GRand *rand;
        char *fridged_name;     /* its unique name: who answered */
        char *huge;             /* HUGE_SIZE 'x' */
        int fds[4];             /* a regular file, /dev/null, a socket, a pipe end */
        uint64_t last_cycle;
        unsigned calls, returns, client_refused, bus_refused, timeouts, disconnects, unnamed, set_accepted;
        GHashTable *errors;     /* name → count (fridged's answers) */
        GHashTable *bus_errors; /* name → count (the bus daemon's) */
} Fuzz;

static unsigned pick(Fuzz *f, unsigned n) {
        return (unsigned) g_rand_int_range(f->rand, 0, (gint32) n);
}

static void count(GHashTable *t, const char *name) {
        gpointer old = g_hash_table_lookup(t, name);
        g_hash_table_replace(t, g_strdup(name), GUINT_TO_POINTER(GPOINTER_TO_UINT(old) + 1));
}

/* ---- values ---- */

static const char *const words[] = {
        "suspend", "hibernate", "hybrid-sleep", "early", "late", "nofreeze", "block", "delay",
        "backup.service", "user.slice", "user.slice/user-0.slice", "../etc", "/sys/power", "a/../b",
        "sshfs@x.service", "x.scope", ".", "..", "a//b", "none", "deep", "s2idle", "freezer", "dry-run",
};

/* A string that valid sd-bus can carry (UTF-8, no NUL): the usual words,
 * control characters, long ones, and now and then 1 MiB. */
static char *random_string(Fuzz *f) {
        switch (pick(f, 9)) {
        case 0: return g_strdup("");
        case 1: return g_strdup(pick(f, 64) == 0 ? f->huge : words[pick(f, G_N_ELEMENTS(words))]);
        case 2: return g_strnfill(pick(f, 2) ? 257 : 1025, 'w');
        case 3: return g_strdup_printf("a\nb\t%c\x7f", (char) (1 + pick(f, 31)));
        case 4: return g_strdup("h\xc3\xa9\xe2\x98\x83 \xf0\x9f\x8d\xa6");
        case 5: return g_strdup_printf("%s.service", words[pick(f, G_N_ELEMENTS(words))]);
        default: return g_strdup(words[pick(f, G_N_ELEMENTS(words))]);
        }
}

static uint32_t random_u32(Fuzz *f) {
        static const uint32_t edges[] = { 0, 1, 99, 100, 101, 600000, 600001, 3600000, 3600001,
                                          31536000, 31536001, UINT32_MAX, INT32_MAX, (uint32_t) INT32_MAX + 1 };
        return pick(f, 2) ? edges[pick(f, G_N_ELEMENTS(edges))] : g_rand_int(f->rand);
}

static uint64_t random_cycle(Fuzz *f) {
        static const uint64_t edges[] = { 0, 1, 2, UINT64_MAX, (uint64_t) INT64_MAX + 1, 1000000 };
        switch (pick(f, 3)) {
        case 0: return f->last_cycle;
        case 1: return f->last_cycle + 1 + pick(f, 3);
        default: return edges[pick(f, G_N_ELEMENTS(edges))];
        }
}

static int random_fd(Fuzz *f) {
        return f->fds[pick(f, G_N_ELEMENTS(f->fds))];
}

/* One value of a random basic or container type: the "arbitrary append
 * sequences" that give wrong signatures */
static int append_random(Fuzz *f, sd_bus_message *m, unsigned depth) {
        static const char types[] = "ybnqiuxtdsoghvaer";
        char t = types[pick(f, depth > 2 ? 13 : sizeof types - 1)];
        g_autofree char *s = NULL;
        switch (t) {
        case 'y': return sd_bus_message_append(m, "y", (uint8_t) g_rand_int(f->rand));
        case 'b': return sd_bus_message_append(m, "b", (int) pick(f, 2));
        case 'n': case 'q': return sd_bus_message_append_basic(m, t, &(uint16_t) { (uint16_t) g_rand_int(f->rand) });
        case 'i': case 'u': return sd_bus_message_append_basic(m, t, &(uint32_t) { random_u32(f) });
        case 'x': case 't': return sd_bus_message_append_basic(m, t, &(uint64_t) { random_cycle(f) });
        case 'd': return sd_bus_message_append(m, "d", g_rand_double_range(f->rand, -1e300, 1e300));
        case 's': s = random_string(f); return sd_bus_message_append(m, "s", s);
        case 'o': return sd_bus_message_append(m, "o", pick(f, 2) ? FRIDGE_OBJECT_PATH : "/");
        case 'g': return sd_bus_message_append(m, "g", pick(f, 2) ? "a{sv}" : "");
        case 'h': return sd_bus_message_append(m, "h", random_fd(f));
        case 'v': return sd_bus_message_append(m, "v", "u", random_u32(f));
        case 'a': return sd_bus_message_append(m, "as", 2, "a", "b");
        case 'e': return sd_bus_message_append(m, "a{sv}", 1, "dry-run", "b", 1);
        default: return sd_bus_message_append(m, "(st)", "r", random_cycle(f));
        }
}

static int append_random_args(Fuzz *f, sd_bus_message *m) {
        unsigned n = pick(f, 5);
        for (unsigned i = 0; i < n; i++) {
                int r = append_random(f, m, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- Sleep options ---- */

static const char *const option_keys[] = { "pm-test", "mem-sleep", "wake-after-sec", "flush-timeout-ms",
                                            "freeze-timeout-ms", "queue", "queue-timeout-ms" };

/* One option entry: a known key with a value of its own type (in range or
 * not), a known key with another type, or an unknown key. */
static int append_option(Fuzz *f, sd_bus_message *m) {
        const char *key = option_keys[pick(f, G_N_ELEMENTS(option_keys))];
        g_autofree char *unknown = NULL;
        int r;
        if (pick(f, 6) == 0)
                key = unknown = random_string(f);
        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append(m, "s", key)) < 0)
                return r;
        g_autofree char *s = random_string(f);
        switch (pick(f, 6)) {
        case 0: r = sd_bus_message_append(m, "v", "s", s); break;
        case 1: r = sd_bus_message_append(m, "v", "u", random_u32(f)); break;
        case 2: r = sd_bus_message_append(m, "v", "b", (int) pick(f, 2)); break;
        case 3: r = sd_bus_message_append(m, "v", "i", (int32_t) random_u32(f)); break;
        case 4: r = sd_bus_message_append(m, "v", "t", random_cycle(f)); break;
        default: r = sd_bus_message_append(m, "v", "as", 1, s); break;
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* dry-run always comes first: right (true), of a wrong type, or twice */
static int append_options(Fuzz *f, sd_bus_message *m) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        unsigned how = pick(f, 10);
        if (how == 0)
                r = sd_bus_message_append(m, "{sv}", "dry-run", "s", "true");
        else
                r = sd_bus_message_append(m, "{sv}", "dry-run", "b", 1);
        if (r >= 0 && how == 1)
                r = sd_bus_message_append(m, "{sv}", "dry-run", "b", 0);
        for (unsigned i = 0, n = pick(f, 4); r >= 0 && i < n; i++)
                r = append_option(f, m);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* ---- the calls ---- */

typedef int (*Builder)(Fuzz *f, sd_bus_message *m);

static int build_sleep(Fuzz *f, sd_bus_message *m) {
        g_autofree char *kind = random_string(f);
        int r = sd_bus_message_append(m, "s", pick(f, 3) ? words[pick(f, 3)] : kind);
        return r < 0 ? r : append_options(f, m);
}

static int build_cancel(Fuzz *f, sd_bus_message *m) {
        return sd_bus_message_append(m, "t", random_cycle(f));
}

static int build_strings(Fuzz *f, sd_bus_message *m, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *s = random_string(f);
                int r = sd_bus_message_append(m, "s", s);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int build_set_class(Fuzz *f, sd_bus_message *m) { return build_strings(f, m, 2); }
static int build_three(Fuzz *f, sd_bus_message *m) { return build_strings(f, m, 3); }
static int build_nothing(Fuzz *f, sd_bus_message *m) { return 0; }

static const char *const properties[] = {
        "State", "CycleId", "Kind", "Phase", "Progress", "ProgressText", "CanSuspend", "CanSuspendReason",
        "CanHibernate", "CanHibernateReason", "CanHybridSleep", "CanHybridSleepReason", "SupportedKinds",
        "LastResult", "LastWakeReason", "Version", "NoSuchProperty", "",
};

static const char *random_interface(Fuzz *f) {
        static const char *const names[] = { FRIDGE_INTERFACE, FRIDGE_INTERFACE, "io.fridge.Nope", "" };
        return names[pick(f, G_N_ELEMENTS(names))];
}

static int build_get(Fuzz *f, sd_bus_message *m) {
        return sd_bus_message_append(m, "ss", random_interface(f), properties[pick(f, G_N_ELEMENTS(properties))]);
}

static int build_get_all(Fuzz *f, sd_bus_message *m) {
        return sd_bus_message_append(m, "s", random_interface(f));
}

/* Every property is read-only: each Set must be refused */
static int build_set(Fuzz *f, sd_bus_message *m) {
        int r = build_get(f, m);
        if (r < 0)
                return r;
        if (pick(f, 2))
                return sd_bus_message_append(m, "v", "s", "idle");
        return sd_bus_message_append(m, "v", "t", random_cycle(f));
}

typedef struct CallSpec {
        const char *interface;
        const char *member;
        Builder build;
} CallSpec;

static const CallSpec calls[] = {
        { FRIDGE_INTERFACE, "Sleep", build_sleep },
        { FRIDGE_INTERFACE, "Sleep", build_sleep },
        { FRIDGE_INTERFACE, "Cancel", build_cancel },
        { FRIDGE_INTERFACE, "GetPlan", build_nothing },
        { FRIDGE_INTERFACE, "SetClass", build_set_class },
        { FRIDGE_INTERFACE, "HoldClass", build_three },
        { FRIDGE_INTERFACE, "Inhibit", build_three },
        { FRIDGE_INTERFACE, "ListInhibitors", build_nothing },
        { PROPS, "Get", build_get },
        { PROPS, "GetAll", build_get_all },
        { PROPS, "Set", build_set },
        { "org.freedesktop.DBus.Introspectable", "Introspect", build_nothing },
        { "org.freedesktop.DBus.Peer", "Ping", build_nothing },
        { FRIDGE_INTERFACE, "NoSuchMethod", build_nothing },
        { "io.fridge.Nope", "Sleep", build_sleep },
        { NULL, "Sleep", build_sleep },
};

/* ---- replies ---- */

typedef struct Pending {
        bool done;
        sd_bus_message *reply;
} Pending;

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Pending *p = userdata;
        p->done = true;
        p->reply = sd_bus_message_ref(m);
        return 0;
}

/* The reply, an error sd-bus made up (a timeout), or NULL: disconnected */
static sd_bus_message *call_wait(Fuzz *f, sd_bus_message *m) {
        sd_bus *bus = f->h->bus;
        sd_bus_slot *slot = NULL;
        Pending p = {};
        if (sd_bus_call_async(bus, &slot, m, on_reply, &p, REPLY_TIMEOUT_USEC) < 0)
                return NULL;
        while (!p.done) {
                int r = sd_bus_process(bus, NULL);
                if (r < 0)
                        break;
                if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
                        break;
        }
        sd_bus_slot_unref(slot);
        return p.reply;
}

static void send_call(Fuzz *f, sd_bus_message *m);

/* A cycle that started is cancelled at once, so that the next Sleep goes as
 * far as it can; fds (inhibitors, holds) close with the reply. */
static void on_return(Fuzz *f, sd_bus_message *call, sd_bus_message *reply) {
        const char *member = sd_bus_message_get_member(call);
        const char *interface = sd_bus_message_get_interface(call);
        if (g_strcmp0(interface, PROPS) == 0 && strcmp(member, "Set") == 0)
                f->set_accepted++;
        uint64_t id;
        if (strcmp(member, "Sleep") == 0 && sd_bus_message_read(reply, "t", &id) > 0) {
                f->last_cycle = id;
                sd_bus_message *cancel = NULL;
                g_assert_cmpint(sd_bus_message_new_method_call(f->h->bus, &cancel, FRIDGE_BUS_NAME,
                                                               FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "Cancel"),
                                >=, 0);
                g_assert_cmpint(sd_bus_message_append(cancel, "t", id), >=, 0);
                f->calls++;
                send_call(f, cancel);
                sd_bus_message_unref(cancel);
        }
}

static void on_error(Fuzz *f, sd_bus_message *call, sd_bus_message *reply) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const char *sender = sd_bus_message_get_sender(reply);
        if (!sender && sd_bus_error_has_name(e, SD_BUS_ERROR_NO_REPLY)) {
                f->timeouts++;
                g_printerr("no reply to %s.%s within %d s\n", sd_bus_message_get_interface(call),
                           sd_bus_message_get_member(call), (int) (REPLY_TIMEOUT_USEC / G_USEC_PER_SEC));
                return;
        }
        if (g_strcmp0(sender, DBUS_NAME) == 0) {
                count(f->bus_errors, e->name);
                return;
        }
        count(f->errors, e->name);
        if (error_is_unnamed(e->name)) {
                f->unnamed++;
                g_printerr("unnamed error to %s.%s: %s: %s\n", sd_bus_message_get_interface(call),
                           sd_bus_message_get_member(call), e->name, e->message);
        }
}

static void send_call(Fuzz *f, sd_bus_message *m) {
        sd_bus_message *reply = call_wait(f, m);
        if (!reply || !sd_bus_is_open(f->h->bus)) {
                f->disconnects++;
        } else if (sd_bus_message_is_method_error(reply, NULL)) {
                on_error(f, m, reply);
        } else {
                f->returns++;
                on_return(f, m, reply);
        }
        sd_bus_message_unref(reply);
}

static void fuzz_one(Fuzz *f) {
        const CallSpec *c = &calls[pick(f, G_N_ELEMENTS(calls))];
        const char *path = pick(f, 50) == 0 ? "/io/fridge" : FRIDGE_OBJECT_PATH;
        sd_bus_message *m = NULL;
        g_assert_cmpint(sd_bus_message_new_method_call(f->h->bus, &m, FRIDGE_BUS_NAME, path, c->interface,
                                                       c->member), >=, 0);
        /* a fifth of the calls get a random argument list instead */
        int r = pick(f, 5) == 0 ? append_random_args(f, m) : c->build(f, m);
        f->calls++;
        if (r < 0)
                f->client_refused++;
        else
                send_call(f, m);
        sd_bus_message_unref(m);
}

/* ---- invalid UTF-8, by hand ---- */

static void fuzz_invalid_utf8(Fuzz *f) {
        static const char *const bad[] = { "\xff\xfe", "sus\xc3pend", "\xed\xa0\x80", "\xc0\xaf", "a\xf8\x88\x80\x80" };
        static const struct { const char *member, *signature; } targets[] = {
                { "Sleep", "sa{sv}" }, { "SetClass", "ss" }, { "HoldClass", "sss" }, { "Inhibit", "sss" },
        };
        unsigned t = pick(f, G_N_ELEMENTS(targets));
        const char *sig = targets[t].signature;
        unsigned n_strings = (unsigned) strspn(sig, "s"), which = pick(f, n_strings);
        g_autoptr(GByteArray) body = g_byte_array_new();
        for (unsigned i = 0; i < n_strings; i++) {
                const char *s = i == which ? bad[pick(f, G_N_ELEMENTS(bad))] : "x";
                rawbus_put_string(body, s, strlen(s));
        }
        if (sig[n_strings])
                rawbus_put_empty_array(body, 8);

        f->calls++;
        g_autoptr(RawBus) rb = rawbus_connect(f->h->bus_address);
        g_assert_nonnull(rb);
        RawReply reply = {};
        int64_t start = g_get_monotonic_time();
        if (!rawbus_call(rb, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, targets[t].member, sig, body,
                         &reply, REPLY_TIMEOUT_USEC / 1000)) {
                /* the bus daemon validates every message and drops the sender of a bad one */
                if (g_get_monotonic_time() - start >= REPLY_TIMEOUT_USEC)
                        f->timeouts++;
                else
                        f->bus_refused++;
                return;
        }
        if (reply.type == 2)
                f->returns++;
        else
                count(g_strcmp0(reply.sender, DBUS_NAME) == 0 ? f->bus_errors : f->errors,
                      reply.error_name ? reply.error_name : "(none)");
        rawbus_reply_clear(&reply);
}

/* ---- the run ---- */

/* Alive, without reaping it (the harness does that) */
static bool fridged_alive(Harness *h) {
        siginfo_t si = {};
        return waitid(P_PID, (id_t) h->fridged_pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0;
}

static char *fridged_unique_name(Harness *h) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *name = NULL;
        int r = sd_bus_call_method(h->bus, DBUS_NAME, "/org/freedesktop/DBus", DBUS_NAME, "GetNameOwner", &e,
                                   &reply, "s", FRIDGE_BUS_NAME);
        g_assert_cmpint(r, >=, 0);
        g_assert_cmpint(sd_bus_message_read(reply, "s", &name), >, 0);
        char *ret = g_strdup(name);
        sd_bus_message_unref(reply);
        return ret;
}

static void open_fds(Fuzz *f) {
        g_autofree char *file = g_build_filename(f->h->dir, "fuzz-regular-file", NULL);
        int sv[2], p[2];
        f->fds[0] = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        f->fds[1] = open("/dev/null", O_RDWR | O_CLOEXEC);
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        f->fds[2] = sv[0];
        close(sv[1]);
        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        f->fds[3] = p[0];
        close(p[1]);
        for (unsigned i = 0; i < G_N_ELEMENTS(f->fds); i++)
                g_assert_cmpint(f->fds[i], >=, 0);
}

static char *format_counts(GHashTable *t) {
        g_autoptr(GPtrArray) keys = hash_table_sorted_keys(t);
        GString *s = g_string_new(NULL);
        for (guint i = 0; i < keys->len; i++)
                g_string_append_printf(s, " %s=%u", (const char *) keys->pdata[i],
                                       GPOINTER_TO_UINT(g_hash_table_lookup(t, keys->pdata[i])));
        return g_string_free(s, FALSE);
}

static void report(Fuzz *f, unsigned seed, unsigned crashes) {
        g_autofree char *errors = format_counts(f->errors);
        g_autofree char *bus_errors = format_counts(f->bus_errors);
        printf("FIGURE: dbus-fuzz seed=%u calls=%u replies=%u returns=%u errors:%s; crashes=%u\n", seed, f->calls,
               f->calls - f->client_refused - f->bus_refused - f->timeouts - f->disconnects, f->returns, errors,
               crashes);
        printf("FIGURE: dbus-fuzz seed=%u refused-by-bus-daemon=%u (invalid UTF-8: connection dropped) "
               "bus-daemon-errors:%s; refused-by-sd-bus=%u timeouts=%u disconnects=%u unnamed-errors=%u "
               "set-accepted=%u\n", seed, f->bus_refused, *bus_errors ? bus_errors : " none", f->client_refused,
               f->timeouts, f->disconnects, f->unnamed, f->set_accepted);
        fflush(stdout);
}

static unsigned env_or(const char *arg, const char *env, unsigned fallback) {
        const char *v = arg ? arg : g_getenv(env);
        return v && *v ? (unsigned) g_ascii_strtoull(v, NULL, 10) : fallback;
}

static const char *const fakesys_args[] = { "--sleep-ms=10", NULL };
/* a fake /proc: the flush then syncs only the harness's own mounts */
static const char *const proc_files[] = { "swaps", "Filename\tType\tSize\tUsed\tPriority\n", NULL };

static unsigned seed_arg, calls_arg;

static void test_dbus_fuzz(void) {
        HarnessOptions o = { .fakesys_args = fakesys_args, .proc_files = proc_files };
        Fuzz f = { .rand = g_rand_new_with_seed(seed_arg), .huge = g_strnfill(HUGE_SIZE, 'x'),
                   .errors = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
                   .bus_errors = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) };
        f.h = harness_new(&o);
        f.fridged_name = fridged_unique_name(f.h);
        open_fds(&f);

        int64_t start = g_get_monotonic_time();
        unsigned crashes = 0;
        while (f.calls < calls_arg && !crashes && !f.timeouts && !f.disconnects) {
                if (pick(&f, 100) == 0)
                        fuzz_invalid_utf8(&f);
                else
                        fuzz_one(&f);
                if (f.calls % 200 == 0) {
                        g_ptr_array_set_size(f.h->signals, 0);  /* only the replies matter here */
                        crashes += !fridged_alive(f.h);
                }
        }
        crashes += !fridged_alive(f.h);
        report(&f, seed_arg, crashes);
        printf("# %u calls in %.1f s\n", f.calls, (double) (g_get_monotonic_time() - start) / G_USEC_PER_SEC);
        if (crashes || f.timeouts || f.disconnects || f.unnamed || f.set_accepted)
                harness_dump_fridged_log(f.h);
        g_assert_cmpuint(crashes, ==, 0);
        g_assert_cmpuint(f.disconnects, ==, 0);
        g_assert_cmpuint(f.timeouts, ==, 0);
        g_assert_cmpuint(f.unnamed, ==, 0);
        g_assert_cmpuint(f.set_accepted, ==, 0);
        g_assert_cmpuint(f.calls, >=, calls_arg);

        /* still answering, and it exits cleanly (ASan's leak check included) */
        g_autofree char *version = harness_get_string(f.h, "Version");
        g_assert_cmpstr(version, ==, FRIDGE_VERSION);
        g_assert_cmpint(harness_stop(f.h), ==, 0);

        for (unsigned i = 0; i < G_N_ELEMENTS(f.fds); i++)
                close(f.fds[i]);
        harness_free(f.h);
        g_hash_table_unref(f.errors);
        g_hash_table_unref(f.bus_errors);
        g_free(f.fridged_name);
        g_free(f.huge);
        g_rand_free(f.rand);
}

/* What earlier runs found, each pinned down on its own */
static void test_regressions(void) {
        HarnessOptions o = { .fakesys_args = fakesys_args, .proc_files = proc_files };
        g_autoptr(Harness) h = harness_new(&o);
        g_autofree char *err = NULL, *msg = NULL;

        /* The fake /proc does not show fridged the caller's cgroup: that
         * was org.freedesktop.DBus.Error.Failed, a name that says nothing */
        g_assert_cmpint(harness_call(h, FRIDGE_INTERFACE, "HoldClass", NULL, &err, &msg, "sss", "late", "fuzz", ""),
                        ==, -1);
        g_assert_cmpstr(err, ==, SD_BUS_ERROR_INVALID_ARGS);
        g_assert_nonnull(strstr(msg, "caller's cgroup"));
        g_assert_cmpint(harness_stop(h), ==, 0);
}

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        seed_arg = env_or(argc > 1 ? argv[1] : NULL, "FUZZ_SEED", DEFAULT_SEED);
        calls_arg = env_or(argc > 2 ? argv[2] : NULL, "FUZZ_CALLS", DEFAULT_CALLS);
        printf("# seed %u (again: FUZZ_SEED=%u %s)\n", seed_arg, seed_arg, argv[0]);
        g_test_add_func("/stress/dbus-fuzz/regressions", test_regressions);
        g_test_add_func("/stress/dbus-fuzz", test_dbus_fuzz);
        return g_test_run();
}
