/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * fridge-agent's test fixture (fx_): the real fridged (the harness's
 * private "system" bus, fakesys), a private session bus, and
 * python3-dbusmock's notification_daemon template, whose Notify calls are
 * read back through org.freedesktop.DBus.Mock.GetCalls, or a real dunst
 * under Xvfb. test-agent.c and test-agent-desktops.c share it.
 */
#include <gio/gio.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"
#include "scratch.h"

#define PYTHON "/usr/bin/python3"
#define NOTIFY_NAME "org.freedesktop.Notifications"
#define NOTIFY_PATH "/org/freedesktop/Notifications"
#define WAIT_MS 20000

typedef struct Fixture {
        Harness *h;
        char *session_address;
        GDBusConnection *session;
        bool nobody;            /* the agent runs as uid 65534, as a desktop user would */
        bool german;            /* the agent runs under LANGUAGE=de with the build tree's catalogs */
        pid_t session_pid, mock_pid, agent_pid, xvfb_pid, dunst_pid, jobview_pid;
        char *config_home;      /* XDG_CONFIG_HOME of the agent, NULL: none */
        Scratch *s;             /* scratch cgroups of the role cases */
        int displayfd;          /* Xvfb writes its display number here again at a reset: kept open */
        char *agent_log;
} Fixture;

/* One Notify call the mock recorded */
typedef struct Note {
        uint32_t replaces;
        char *summary, *body;
        char **actions;
        int value;              /* -1: no value hint */
        int urgency;            /* -1: none */
} Note;

typedef struct CaseOptions {
        bool mock;              /* a mock notification server from the start */
        bool dunst;
        const char *config;
        const char *polkit_table;       /* with it, the agent runs as nobody */
        bool logind;                    /* the logind stand-in: Sleep goes through logind */
        bool german;                    /* the agent in German (needs the built catalogs) */
        bool slowfs;                    /* slowfs, for a flush that takes as long as the case likes */
        const char *const *proc_files;  /* fakesys's /proc files: name, contents, ... */
} CaseOptions;

typedef bool (*NotePred)(const Note *n, const void *data);

#define SKIP_IF_UNSET(f) do { if (!(f)->h) return; } while (0)

void fx_note_free(Note *n);

/* argv with `env`, stdout to `stdout_fd` (-1: the log), stderr to `log` */
pid_t fx_spawn_logged(char **argv, const char *const *env, const char *log, int stdout_fd);

/* The session bus: dbus-daemon --session, or for the nobody cases one
 * any uid may use */
void fx_start_session_bus(Fixture *f);
/* The session's GLib context and fridged's bus, for `ms` */
void fx_pump(Fixture *f, int ms);
/* Until `name` has an owner on the session bus, bounded */
void fx_wait_name(Fixture *f, const char *name);

/* German: glibc honours LANGUAGE under the built-in C.UTF-8 (see test-i18n.c) */
const char *const *fx_session_env(Fixture *f);

/* python3-dbusmock's notification_daemon (as nobody in the nobody cases) */
void fx_start_mock(Fixture *f);
/* fridge-agent (as nobody in the nobody cases), its log in DIR/agent.log */
void fx_start_agent(Fixture *f);
char *fx_agent_log(Fixture *f);
void fx_assert_agent_alive(Fixture *f);

/* Why the cases cannot run here (with dunst: its tools too), or NULL */
const char *fx_skip_reason(bool dunst);
/* data: the case's CaseOptions */
void fx_setup(Fixture *f, gconstpointer data);
/* Ends what the case started; an agent that did not exit 0 on SIGTERM
 * fails the case */
void fx_teardown(Fixture *f, gconstpointer data);

/* A mock object's recorded calls, (a(tsav)); NULL with the error */
GVariant *fx_mock_get_calls(Fixture *f, const char *name, const char *path, GError **error);

/* How many times the mock was called `method` */
guint fx_mock_count(Fixture *f, const char *method);

/* Every Notify the mock answered, in order */
GPtrArray *fx_notes(Fixture *f);

bool fx_note_has_action(const Note *n, const char *key, const char *label);

/* Waits (bounded) for a Notify from index `from` on that satisfies `pred`;
 * its index */
guint fx_wait_note(Fixture *f, guint from, NotePred pred, const void *data, const char *what);

/* NotePreds: the summary is `s`; it offers Cancel; the body holds `s` */
bool fx_summary_is(const Note *n, const void *s);
bool fx_offers_cancel(const Note *n, const void *unused);
bool fx_body_has(const Note *n, const void *s);

/* Sleep("suspend") that must be accepted; the cycle's id */
uint64_t fx_sleep_ok(Harness *h);
/* CycleFinished of `cycle` with `result` and `error`, bounded */
void fx_expect_finished(Harness *h, uint64_t cycle, const char *result, const char *error);

/* The agent running, and a cycle held in prepare by a delay inhibitor
 * (closing *ret_delay lets it go on): Cancel can still stop it there */
uint64_t fx_start_held_cycle(Fixture *f, int *ret_delay);

/* A call of a mock's org.freedesktop.DBus.Mock (EmitSignal, AddMethod) */
void fx_mock_call(Fixture *f, const char *name, const char *path, const char *method, GVariant *args);

/* A signal from the notification server, as the mock's EmitSignal sends it */
void fx_emit_server_signal(Fixture *f, const char *member, const char *signature, GVariantBuilder *args);

/* The server's ActionInvoked for the notification of Notify call `i`, as
 * when the user presses Cancel; the notification's id */
uint32_t fx_press_cancel(Fixture *f, guint i);

/* The server's NotificationClosed(id, reason), as when the user closes it */
void fx_emit_closed(Fixture *f, uint32_t id, uint32_t reason);

/* Pumps (bounded) until the text `read` gives holds `line`; whether it did */
bool fx_wait_text(Fixture *f, char *(*read)(Fixture *f), const char *line);

/* Until the agent logged `line`, bounded */
void fx_wait_agent_log(Fixture *f, const char *line);

/* The user dismisses the progress notification (reason 2) */
void fx_dismiss(Fixture *f, uint32_t id);
