/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The org.freedesktop.Notifications client on the session bus. Calls go
 * out one at a time, so that an update always carries the id the
 * notification it replaces was given; an update still waiting to go out
 * is replaced by a newer one of the same slot. With no notification
 * server, what would be shown is dropped: that is logged once, until a
 * server answers again. */

#include <gio/gio.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct Notify Notify;

/* One notification a cycle keeps: its id, 0 until the server gave one
 * (or once the server closed it), so every update replaces it */
typedef struct NotifySlot {
        uint32_t id;
        bool dismissed;                 /* the user closed it: no progress shows again */
} NotifySlot;

typedef struct NotifyRequest {
        const char *summary;
        const char *body;               /* markup */
        const char *const *actions;     /* key, label pairs, NULL-terminated; NULL: none */
        int value;                      /* the `value` hint 0..100, or -1: none */
        uint8_t urgency;                /* 0 low, 1 normal, 2 critical */
        int32_t expire_ms;              /* 0: never expires, -1: the server's choice */
        bool progress;                  /* may be replaced by a newer request of its slot */
} NotifyRequest;

/* The reasons of NotificationClosed, from the specification */
typedef enum NotifyCloseReason {
        NOTIFY_CLOSED_EXPIRED = 1,
        NOTIFY_CLOSED_DISMISSED = 2,
        NOTIFY_CLOSED_BY_CALL = 3,
} NotifyCloseReason;

typedef struct NotifyOps {
        /* ActionInvoked(id, key) of a notification */
        void (*action)(void *userdata, uint32_t id, const char *key);
        /* NotificationClosed(id, reason) */
        void (*closed)(void *userdata, uint32_t id, uint32_t reason);
} NotifyOps;

int notify_new(GDBusConnection *session, const NotifyOps *ops, void *userdata, Notify **ret);
Notify *notify_free(Notify *n);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Notify, notify_free)

/* The server drops the buttons of a notification it updates in place, and
 * shows no banner for an update after the user clicked one: each update
 * closes the notification and shows a new one */
void notify_set_renew_updates(Notify *n, bool renew);

/* Shows or updates the notification of `slot` (a reference is taken); a
 * progress request of a dismissed slot is dropped */
void notify_show(Notify *n, NotifySlot *slot, const NotifyRequest *req);

/* The server closed the slot's notification: its id is no more, and when
 * the user dismissed it, the progress still queued for it is dropped */
void notify_slot_closed(Notify *n, NotifySlot *slot, uint32_t reason);

NotifySlot *notify_slot_new(void);
NotifySlot *notify_slot_ref(NotifySlot *s);
void notify_slot_unref(NotifySlot *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NotifySlot, notify_slot_unref)
