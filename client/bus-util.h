/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Connecting to the bus and subscribing to fridged: shared by the commands
 * that talk to the daemon. */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "args.h"
#include "bus-match.h"
#include "fridge-config.h"
#include "macro.h"

#define MATCH_FRIDGE_SIGNALS                                            \
        "type='signal',sender='" FRIDGE_BUS_NAME "',"                   \
        "path='" FRIDGE_OBJECT_PATH "',interface='" FRIDGE_INTERFACE "'"

#define MATCH_FRIDGE_PROPERTIES                                         \
        "type='signal',sender='" FRIDGE_BUS_NAME "',"                   \
        "path='" FRIDGE_OBJECT_PATH "',"                                \
        "interface='org.freedesktop.DBus.Properties',"                  \
        "member='PropertiesChanged',arg0='" FRIDGE_INTERFACE "'"

#define MATCH_FRIDGE_OWNER BUS_MATCH_NAME_OWNER_CHANGED(FRIDGE_BUS_NAME)


#define _cleanup_bus_ _cleanup_(sd_bus_flush_close_unrefp)
#define _cleanup_bus_message_ _cleanup_(sd_bus_message_unrefp)
#define _cleanup_bus_error_ _cleanup_(sd_bus_error_free)

/* What a follower of fridged is told about. Any handler may be NULL. */
typedef struct FridgeHandlers {
        sd_bus_message_handler_t signal;        /* SleepImminent, Resumed, CycleFinished */
        sd_bus_message_handler_t properties;    /* PropertiesChanged of FRIDGE_INTERFACE */
        sd_bus_message_handler_t owner;         /* NameOwnerChanged of FRIDGE_BUS_NAME */
        sd_bus_message_handler_t disconnected;  /* our own bus connection closed */
} FridgeHandlers;

/* Opens the bus chosen by --bus / --bus-address. */
int bus_open(const Args *a, sd_bus **ret);

/* "the system bus", "the session bus" or "the bus at ADDRESS". */
const char *bus_description(const Args *a);

/* Installs the match rules synchronously: once this returns, the bus
 * daemon routes every later signal to us, so a call made afterwards
 * cannot race past its own signals. The slots float on the bus. */
int bus_add_fridge_matches(sd_bus *bus, const FridgeHandlers *h, void *userdata);

/* SIGINT and SIGTERM as events of e: sd-event reads them through a
 * signalfd, which needs them blocked. ISIG stays on the terminal, so Ctrl-C
 * arrives here too. */
int event_add_exit_signals(sd_event *e, sd_event_signal_handler_t on_sigint, sd_event_signal_handler_t on_sigterm,
                           void *userdata);
