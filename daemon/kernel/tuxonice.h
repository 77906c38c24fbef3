/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "cycle.h"

/* The TuxOnIce backend: the patched kernel of the suspend2 line hibernates
 * through its own sysfs tree rather than /sys/power/state. Paths are
 * relative to the sysfs root fd, as TuxOnIce's Documentation/power/
 * tuxonice.txt names them. */

#define TUXONICE_DIR               "sys/power/tuxonice"
#define TUXONICE_DO_HIBERNATE      TUXONICE_DIR "/do_hibernate"
#define TUXONICE_LAST_RESULT       TUXONICE_DIR "/last_result"
#define TUXONICE_IMAGE_SIZE_LIMIT  TUXONICE_DIR "/image_size_limit"
#define TUXONICE_COMPRESSOR        TUXONICE_DIR "/compression/algorithm"
#define TUXONICE_COMPRESSION       TUXONICE_DIR "/compression/enabled"
#define TUXONICE_ENABLE_ESCAPE     TUXONICE_DIR "/user_interface/enable_escape"

/* The bits of last_result (an unsigned long, printed "%lu"): the "Result
 * states" enum of kernel/power/tuxonice.h in TuxOnIce 3.3 (TOI_CORE_VERSION
 * "3.3"), where set_abort_result() sets TOI_ABORTED together with the
 * reason and toi_init() clears them all when a cycle starts. Older trees
 * stop earlier (2.2.10 ends at TOI_CANT_SUSPEND, without TOI_SYSDEV_REFUSED
 * but with a TOI_UNEXPECTED_ALLOC at 5); this is the newest numbering.
 * TOI_ARCH_PREPARE_FAILED is unused since Linux 3.0 but keeps its number.
 * A vendor variant built with CONFIG_TOI_FIXUP folds TOI_DPM_SUSPEND_FAILED
 * into TOI_DPM_PREPARE_FAILED (31); upstream it is 32. */
typedef enum TuxOnIceResultBit {
        TOI_ABORTED,
        TOI_ABORT_REQUESTED,
        TOI_NOSTORAGE_AVAILABLE,
        TOI_INSUFFICIENT_STORAGE,
        TOI_FREEZING_FAILED,
        TOI_KEPT_IMAGE,
        TOI_WOULD_EAT_MEMORY,
        TOI_UNABLE_TO_FREE_ENOUGH_MEMORY,
        TOI_PM_SEM,
        TOI_DEVICE_REFUSED,
        TOI_SYSDEV_REFUSED,
        TOI_EXTRA_PAGES_ALLOW_TOO_SMALL,
        TOI_UNABLE_TO_PREPARE_IMAGE,
        TOI_FAILED_MODULE_INIT,
        TOI_FAILED_MODULE_CLEANUP,
        TOI_FAILED_IO,
        TOI_OUT_OF_MEMORY,
        TOI_IMAGE_ERROR,
        TOI_PLATFORM_PREP_FAILED,
        TOI_CPU_HOTPLUG_FAILED,
        TOI_ARCH_PREPARE_FAILED,
        TOI_RESAVE_NEEDED,
        TOI_CANT_SUSPEND,
        TOI_NOTIFIERS_PREPARE_FAILED,
        TOI_PRE_SNAPSHOT_FAILED,
        TOI_PRE_RESTORE_FAILED,
        TOI_USERMODE_HELPERS_ERR,
        TOI_CANT_USE_ALT_RESUME,
        TOI_HEADER_TOO_BIG,
        TOI_WAKEUP_EVENT,
        TOI_SYSCORE_REFUSED,
        TOI_DPM_PREPARE_FAILED,
        TOI_DPM_SUSPEND_FAILED,
        _TOI_RESULT_BIT_MAX,
} TuxOnIceResultBit;

/* do_hibernate is there to be written. */
bool tuxonice_present(int sysfs_fd);

/* Writes the configured settings (the unset ones are left alone). On
 * failure *ret_what (static) names the file. */
int tuxonice_apply(int sysfs_fd, const TuxOnIceConfig *c, const char **ret_what);

/* A write of do_hibernate returns after resume, or after TuxOnIce gave up;
 * either way it succeeds and only last_result, read after it, tells. */
int tuxonice_read_result(int sysfs_fd, uint64_t *ret);

/* last_result as the kernel prints it ("%lu\n"). */
int tuxonice_parse_result(const char *text, uint64_t *ret);

/* "TOI_NOSTORAGE_AVAILABLE", or NULL for a bit TuxOnIce does not define. */
const char *tuxonice_result_bit_name(unsigned bit);

/* TuxOnIce marks every abort with TOI_ABORTED; other bits alone are notes
 * on a cycle that went on (a kept image, a raised extra pages allowance). */
bool tuxonice_result_failed(uint64_t result);

/* How the cycle ends for a failed result: an abort the user asked for at
 * the console is a cancel, a wakeup event is the same as with the mainline
 * backend, everything else is the kernel's failure. */
CycleResult tuxonice_result_outcome(uint64_t result, FridgeError *ret_error);

/* "no storage was available for the image (TOI_NOSTORAGE_AVAILABLE); ..."
 * for every set bit in bit order, unknown bits in hex. "" for 0. */
char *tuxonice_describe_result(uint64_t result);
