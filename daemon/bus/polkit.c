/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "polkit.h"

#include <errno.h>

#include "bus-error.h"
#include "log.h"
#include "util.h"

#define POLKIT_BUS_NAME  "org.freedesktop.PolicyKit1"
#define POLKIT_PATH      "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"
#define POLKIT_ALLOW_USER_INTERACTION 1u

/* The questions to polkit about one method call, asked one after the
 * other: every action must be allowed. Keyed by the method call. */
typedef struct Query {
        Polkit *polkit;
        sd_bus_message *request;
        char **actions;
        guint next;             /* the action asked about now */
        char *action;           /* the one refused, for the answer */
        sd_bus_slot *slot;
        uid_t uid;              /* the caller's, for its cap */
        bool check;             /* CanSleep's: never interactive, and a challenge goes on to the next action */
        bool answered;
        bool allowed;
        bool challenge;         /* the last answer: authentication would be required */
        bool challenged;        /* some action of a check needs authentication */
        char *why;              /* when not allowed */
} Query;

struct Polkit {
        GHashTable *queries;    /* sd_bus_message* → Query*, until its call comes back */
        Query *current;         /* the answered one of the call being dispatched */
        sd_bus_slot *filter;
        unsigned pending_max;   /* per uid */
};

static void query_free(Query *q) {
        if (!q)
                return;
        sd_bus_slot_unref(q->slot);
        sd_bus_message_unref(q->request);
        g_strfreev(q->actions);
        g_free(q->action);
        g_free(q->why);
        g_free(q);
}

/* Every incoming message passes here before its method runs. A call that
 * comes back with its answer takes the query out of the table, whatever
 * its method then does: a method may return before it asks again (a limit
 * reached meanwhile), and the answer, with its reference to the call,
 * would stay forever. It lives until the next message. */
static int on_incoming(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Polkit *p = userdata;
        g_clear_pointer(&p->current, query_free);
        Query *q = g_hash_table_lookup(p->queries, m);
        if (q && q->answered) {
                g_hash_table_steal(p->queries, m);
                p->current = q;
        }
        return 0;
}

int polkit_new(sd_bus *bus, unsigned pending_max, Polkit **ret) {
        Polkit *p = g_new0(Polkit, 1);
        p->pending_max = pending_max;
        p->queries = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) query_free);
        int r = sd_bus_add_filter(bus, &p->filter, on_incoming, p);
        if (r < 0) {
                polkit_free(p);
                return r;
        }
        *ret = p;
        return 0;
}

Polkit *polkit_free(Polkit *p) {
        if (!p)
                return NULL;
        sd_bus_slot_unref(p->filter);
        query_free(p->current);
        g_hash_table_unref(p->queries);
        g_free(p);
        return NULL;
}

static int sender_uid(sd_bus_message *msg, uid_t *ret) {
        sd_bus_creds *creds = NULL;
        int r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID, &creds);
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, ret);
        sd_bus_creds_unref(creds);
        return r;
}

static void query_answer(Query *q, bool allowed, char *why) {
        q->answered = true;
        q->allowed = allowed;
        q->challenge = false;
        g_free(q->why);
        q->why = why;
}

static void read_verdict(Query *q, sd_bus_message *reply) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int authorized = 0, challenge = 0;

        if (e) {
                bool absent = sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER);
                query_answer(q, false, absent ? g_strdup("polkit is not running to ask, and only root may without it")
                                              : g_strdup_printf("polkit could not decide: %s", e->message));
                return;
        }
        if (sd_bus_message_enter_container(reply, 'r', "bba{ss}") < 0 ||
            sd_bus_message_read(reply, "bb", &authorized, &challenge) < 0) {
                query_answer(q, false, g_strdup("polkit's answer was malformed"));
                return;
        }
        query_answer(q, authorized, authorized ? NULL
                                    : challenge ? g_strdup("authentication is required")
                                                : g_strdup("not authorized"));
        q->challenge = !authorized && challenge;
}

static int ask_next(Query *q);

static int on_check_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Query *q = userdata;

        q->slot = sd_bus_slot_unref(q->slot);
        read_verdict(q, reply);
        log_debug("polkit: %s for %s: %s", q->actions[q->next], sd_bus_message_get_sender(q->request),
                  q->allowed ? "allowed" : q->why);
        g_free(q->action);
        q->action = g_strdup(q->actions[q->next]);
        int r = 0;
        /* A check asks on past a challenge: a later "no" is its answer */
        q->challenged |= q->check && q->challenge;
        if ((q->allowed || (q->check && q->challenge)) && q->actions[++q->next]) {
                q->answered = false;
                r = ask_next(q);
                if (r >= 0)
                        return 1;
                g_free(q->action);
                q->action = g_strdup(q->actions[q->next]);
                query_answer(q, false, g_strdup_printf("cannot ask polkit about %s: %s", q->actions[q->next],
                                                       errno_text(r)));
        }
        /* The method runs again and finds the answer */
        r = sd_bus_enqueue_for_read(sd_bus_message_get_bus(q->request), q->request);
        if (r < 0) {
                log_warning_errno(r, "Cannot dispatch %s again after polkit answered: %m",
                                  sd_bus_message_get_member(q->request));
                (void) sd_bus_reply_method_errnof(q->request, r, "cannot go on after authorization: %m");
                g_hash_table_remove(q->polkit->queries, q->request);
        }
        return 1;
}

static int ask_next(Query *q) {
        sd_bus_message *msg = q->request;
        uint32_t flags = !q->check && sd_bus_message_get_allow_interactive_authorization(msg)
                                 ? POLKIT_ALLOW_USER_INTERACTION : 0;
        return sd_bus_call_method_async(sd_bus_message_get_bus(msg), &q->slot, POLKIT_BUS_NAME, POLKIT_PATH,
                                        POLKIT_INTERFACE, "CheckAuthorization", on_check_reply, q,
                                        "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s",
                                        sd_bus_message_get_sender(msg), q->actions[q->next], 0, flags, "");
}

static unsigned pending_of(Polkit *p, uid_t uid) {
        GHashTableIter i;
        gpointer v;
        unsigned n = 0;
        g_hash_table_iter_init(&i, p->queries);
        while (g_hash_table_iter_next(&i, NULL, &v))
                n += ((Query *) v)->uid == uid;
        return n;
}

static int ask(Polkit *p, sd_bus_message *msg, uid_t uid, const char *const *actions, bool check) {
        Query *q = g_new0(Query, 1);
        q->polkit = p;
        q->uid = uid;
        q->check = check;
        q->request = sd_bus_message_ref(msg);
        q->actions = g_strdupv((char **) actions);
        int r = ask_next(q);
        if (r < 0) {
                query_free(q);
                return r;
        }
        g_hash_table_insert(p->queries, msg, q);
        return 0;
}

int polkit_verify(Polkit *p, sd_bus_message *msg, const char *action, sd_bus_error *error) {
        const char *const actions[] = { action, NULL };
        return polkit_verify_all(p, msg, actions, error);
}

/* 1: *ret is the answered query of `msg`, the caller's now; 0: polkit is
 * asked (now or before: the call comes back with the answer); negative:
 * refused or failed, with `error` set. `what` names the actions. */
static int take_answer(Polkit *p, sd_bus_message *msg, uid_t uid, const char *const *actions, bool check,
                       const char *what, Query **ret, sd_bus_error *error) {
        Query *q = p->current && p->current->request == msg ? p->current : g_hash_table_lookup(p->queries, msg);
        if (!q) {
                unsigned pending = pending_of(p, uid);
                if (pending >= p->pending_max)
                        return bus_error_setf(error, FRIDGE_ERROR_LIMITS_EXCEEDED,
                                              "uid %u already waits for %u authorizations; try again once "
                                              "polkit has answered them", (unsigned) uid, pending);
                int r = ask(p, msg, uid, actions, check);
                return r < 0 ? bus_error_setf(error, FRIDGE_ERROR_ACCESS_DENIED, "cannot ask polkit about %s: %s",
                                              what, errno_text(r))
                             : 0;
        }
        if (!q->answered)
                return 0;   /* dispatched again before the answer: keep waiting */
        if (q == p->current)
                p->current = NULL;
        else
                g_hash_table_steal(p->queries, msg);
        *ret = q;
        return 1;
}

/* The caller's uid, or AccessDenied about `what` when it cannot be told */
static int caller_uid(sd_bus_message *msg, const char *what, uid_t *ret, sd_bus_error *error) {
        int r = sender_uid(msg, ret);
        return r < 0 ? bus_error_setf(error, FRIDGE_ERROR_ACCESS_DENIED, "cannot tell who is asking for %s: %s",
                                      what, errno_text(r))
                     : 0;
}

int polkit_verify_all(Polkit *p, sd_bus_message *msg, const char *const *actions, sd_bus_error *error) {
        g_autofree char *all = g_strjoinv(" and ", (char **) actions);
        uid_t uid;
        int r = caller_uid(msg, all, &uid, error);
        if (r < 0)
                return r;
        if (uid == 0)
                return 1;
        Query *q = NULL;
        r = take_answer(p, msg, uid, actions, false, all, &q, error);
        if (r <= 0)
                return r;
        bool allowed = q->allowed;
        g_autofree char *why = g_steal_pointer(&q->why);
        g_autofree char *refused = g_steal_pointer(&q->action);
        query_free(q);
        if (allowed)
                return 1;
        return bus_error_setf(error, FRIDGE_ERROR_ACCESS_DENIED, "uid %u is not authorized for %s: %s",
                              (unsigned) uid, refused ? refused : all, why);
}

int polkit_check_all(Polkit *p, sd_bus_message *msg, const char *const *actions, PolkitAnswer *ret,
                     sd_bus_error *error) {
        g_autofree char *all = g_strjoinv(" and ", (char **) actions);
        uid_t uid;
        int r = caller_uid(msg, all, &uid, error);
        if (r < 0)
                return r;
        if (uid == 0) {
                *ret = POLKIT_ANSWER_YES;
                return 1;
        }
        Query *q = NULL;
        r = take_answer(p, msg, uid, actions, true, all, &q, error);
        if (r <= 0)
                return r;
        /* a "no" anywhere is no; else a challenge anywhere is one */
        *ret = !q->allowed && !q->challenge ? POLKIT_ANSWER_NO
             : q->challenged ? POLKIT_ANSWER_CHALLENGE : POLKIT_ANSWER_YES;
        query_free(q);
        return 1;
}

const char *polkit_answer_to_string(PolkitAnswer a) {
        static const char *const words[_POLKIT_ANSWER_MAX] = {
                [POLKIT_ANSWER_YES] = "yes", [POLKIT_ANSWER_CHALLENGE] = "challenge", [POLKIT_ANSWER_NO] = "no",
        };
        return a >= 0 && a < _POLKIT_ANSWER_MAX ? words[a] : NULL;
}
