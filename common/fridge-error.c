/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fridge-error.h"

#include <string.h>
#include <systemd/sd-bus-protocol.h>

#define OWN(n) FRIDGE_ERROR_PREFIX n
/* The standard names sd-bus has no constant for */
#define DBUS(n) "org.freedesktop.DBus.Error." n
#define E(id, dbus_name, call, cycle, text) [FRIDGE_ERROR_##id] = { dbus_name, text, EXIT_CODE_##call, cycle }
#define ABORTED EXIT_CODE_ABORTED
#define FAILED EXIT_CODE_FAILED
#define NEVER (-1) /* no cycle ends with it */

/* The truth for the XML contract's error list and the man pages (a unit
 * test compares them). Exit codes: an error of ours answering a method
 * call is a refusal (4; a Hook call answers with its cycle's error); a
 * cycle that ends with one failed (1) or was aborted (3), as its result
 * says. LimitsExceeded is 1, as fridgectl has always said for it. */
static const FridgeErrorInfo table[_FRIDGE_ERROR_MAX] = {
        [FRIDGE_ERROR_NONE] = { "", "no error", EXIT_CODE_DONE, EXIT_CODE_DONE },
        /*  enum                 D-Bus name                  call     cycle    summary */
        E(CANCELLED,           OWN("Cancelled"),           REFUSED, ABORTED, "the cycle was cancelled"),
        E(WAKEUP_EVENT,        OWN("WakeupEvent"),         REFUSED, ABORTED,
          "a wakeup event arrived before the state write"),
        E(KERNEL,              OWN("Kernel"),              REFUSED, FAILED,  "the kernel refused the state write"),
        E(FLUSH_TIMEOUT,       OWN("FlushTimeout"),        REFUSED, FAILED,
          "writeback did not finish within flush-timeout-ms"),
        E(FREEZE_TIMEOUT,      OWN("FreezeTimeout"),       REFUSED, FAILED,
          "a cgroup did not freeze within freeze-timeout-ms"),
        E(NOT_SUPPORTED,       OWN("NotSupported"),        REFUSED, NEVER,
          "the kernel does not offer the kind or mode asked for"),
        E(THAW_FAILED,         OWN("ThawFailed"),          REFUSED, FAILED,
          "a cgroup could not be thawed after the cycle"),
        E(INTERNAL,            SD_BUS_ERROR_FAILED,        FAILED,  FAILED,
          "an internal or system failure; the message says what failed"),
        E(INHIBITED,           OWN("Inhibited"),           REFUSED, FAILED,  "a block inhibitor is held"),
        E(INTERRUPTED,         OWN("Interrupted"),         REFUSED, FAILED,
          "the cycle was cut short: fridged stopped in its middle"),
        E(HOOK_ABANDONED,      OWN("HookAbandoned"),       REFUSED, FAILED,
          "the sleep hook gave up on the cycle: its caller left, its budget ran out, or its post came first"),
        E(BUSY,                OWN("Busy"),                REFUSED, NEVER,   "a cycle is already running or queued"),
        E(NO_SUCH_CYCLE,       OWN("NoSuchCycle"),         REFUSED, NEVER,   "the cycle named is not running"),
        E(TOO_LATE,            OWN("TooLate"),             REFUSED, NEVER,
          "the cycle is past the point of no return"),
        E(HIBERNATE_NOT_READY, OWN("HibernateNotReady"),   REFUSED, NEVER,
          "there is nowhere to write the image, or the next boot would not look for it"),
        E(INVALID_ARGS,        SD_BUS_ERROR_INVALID_ARGS,  USAGE,   NEVER,
          "an argument is not valid; the message names it"),
        E(ACCESS_DENIED,       SD_BUS_ERROR_ACCESS_DENIED, REFUSED, NEVER,   "the caller is not authorized"),
        E(LIMITS_EXCEEDED,     SD_BUS_ERROR_LIMITS_EXCEEDED, FAILED,  NEVER,
          "the caller holds as many inhibitors or class holds as it may, or waits for as many authorizations"),
};

const FridgeErrorInfo *fridge_error_info(FridgeError e) {
        return &table[e >= 0 && e < _FRIDGE_ERROR_MAX ? e : FRIDGE_ERROR_INTERNAL];
}

const char *fridge_error_name(FridgeError e) {
        return fridge_error_info(e)->name;
}

const char *fridge_error_summary(FridgeError e) {
        return fridge_error_info(e)->summary;
}

FridgeError fridge_error_from_name(const char *name) {
        if (!name || !*name)
                return _FRIDGE_ERROR_INVALID;
        for (int e = 0; e < _FRIDGE_ERROR_MAX; e++)
                if (strcmp(name, table[e].name) == 0)
                        return (FridgeError) e;
        return _FRIDGE_ERROR_INVALID;
}

bool fridge_error_is_own(FridgeError e) {
        return strncmp(fridge_error_name(e), FRIDGE_ERROR_PREFIX, strlen(FRIDGE_ERROR_PREFIX)) == 0;
}

/* Standard names that say fridged is not there to answer: the bus daemon's
 * and sd-bus's own, for a name nobody owns, activation that failed, or a
 * connection that went */
static const char *const unreachable[] = {
        SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER, SD_BUS_ERROR_NO_REPLY,
        SD_BUS_ERROR_TIMEOUT,         DBUS("TimedOut"),               SD_BUS_ERROR_DISCONNECTED,
        SD_BUS_ERROR_NO_SERVER,       DBUS("Spawn.ChildExited"),      DBUS("Spawn.Failed"),
};

bool fridge_error_name_is_unreachable(const char *name) {
        for (size_t i = 0; name && i < sizeof(unreachable) / sizeof(unreachable[0]); i++)
                if (strcmp(name, unreachable[i]) == 0)
                        return true;
        return false;
}
