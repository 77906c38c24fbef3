/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tuxonice.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "parse.h"
#include "util.h"

#define BIT(b) (UINT64_C(1) << (b))

typedef struct ResultBit {
        const char *name;
        const char *text;
} ResultBit;

/* Numbers from TuxOnIce's kernel/power/tuxonice.h (see tuxonice.h); the
 * words are ours, after TuxOnIce's result_strings[] */
static const ResultBit result_bits[_TOI_RESULT_BIT_MAX] = {
#define B(n, t) [n] = { #n, t }
        B(TOI_ABORTED, "the hibernation was aborted"),
        B(TOI_ABORT_REQUESTED, "the user asked to cancel it"),
        B(TOI_NOSTORAGE_AVAILABLE, "no storage was available for the image"),
        B(TOI_INSUFFICIENT_STORAGE, "there was not enough storage for the image"),
        B(TOI_FREEZING_FAILED, "freezing tasks or file systems failed"),
        B(TOI_KEPT_IMAGE, "an existing image was kept"),
        B(TOI_WOULD_EAT_MEMORY, "memory had to be freed, which image_size_limit forbids"),
        B(TOI_UNABLE_TO_FREE_ENOUGH_MEMORY, "not enough memory could be freed"),
        B(TOI_PM_SEM, "the power management lock could not be taken"),
        B(TOI_DEVICE_REFUSED, "a device refused to suspend"),
        B(TOI_SYSDEV_REFUSED, "a system device refused to suspend"),
        B(TOI_EXTRA_PAGES_ALLOW_TOO_SMALL, "the extra pages allowance was too small"),
        B(TOI_UNABLE_TO_PREPARE_IMAGE, "the image could not be prepared"),
        B(TOI_FAILED_MODULE_INIT, "a TuxOnIce module failed to initialise"),
        B(TOI_FAILED_MODULE_CLEANUP, "a TuxOnIce module failed to clean up"),
        B(TOI_FAILED_IO, "I/O errors occurred while writing the image"),
        B(TOI_OUT_OF_MEMORY, "TuxOnIce ran out of memory"),
        B(TOI_IMAGE_ERROR, "the image had an error"),
        B(TOI_PLATFORM_PREP_FAILED, "the platform (firmware) preparation failed"),
        B(TOI_CPU_HOTPLUG_FAILED, "the other CPUs could not be taken offline"),
        B(TOI_ARCH_PREPARE_FAILED, "the architecture preparation failed"),
        B(TOI_RESAVE_NEEDED, "pages needed saving again, and TuxOnIce was told to abort then"),
        B(TOI_CANT_SUSPEND, "TuxOnIce cannot hibernate now (is resume= or the file target valid?)"),
        B(TOI_NOTIFIERS_PREPARE_FAILED, "a hibernation notifier refused"),
        B(TOI_PRE_SNAPSHOT_FAILED, "the pre-snapshot preparation failed"),
        B(TOI_PRE_RESTORE_FAILED, "the pre-restore preparation failed"),
        B(TOI_USERMODE_HELPERS_ERR, "usermode helpers could not be disabled"),
        B(TOI_CANT_USE_ALT_RESUME, "the alternate resume image could not be used"),
        B(TOI_HEADER_TOO_BIG, "the space reserved for the image header was too small"),
        B(TOI_WAKEUP_EVENT, "a wakeup event arrived"),
        B(TOI_SYSCORE_REFUSED, "a syscore suspend callback refused"),
        B(TOI_DPM_PREPARE_FAILED, "preparing the devices for suspend failed"),
        B(TOI_DPM_SUSPEND_FAILED, "suspending the devices failed"),
#undef B
};

#define KNOWN_BITS (BIT(_TOI_RESULT_BIT_MAX) - 1)

bool tuxonice_present(int sysfs_fd) {
        return faccessat(sysfs_fd, TUXONICE_DO_HIBERNATE, W_OK, 0) >= 0;
}

static int write_setting(int fd, const char *path, const char *value, const char **ret_what) {
        int r = write_file_at(fd, path, value);
        if (r < 0)
                *ret_what = path;
        return r;
}

int tuxonice_apply(int fd, const TuxOnIceConfig *c, const char **ret_what) {
        char buf[32];
        int r;

        if (c->image_size_limit != TUXONICE_IMAGE_SIZE_LIMIT_UNSET) {
                snprintf(buf, sizeof(buf), "%" PRId32, c->image_size_limit);
                if ((r = write_setting(fd, TUXONICE_IMAGE_SIZE_LIMIT, buf, ret_what)) < 0)
                        return r;
        }
        /* The algorithm is only used while the compression module is enabled */
        if (c->compressor && strcmp(c->compressor, "none") != 0 &&
            (r = write_setting(fd, TUXONICE_COMPRESSOR, c->compressor, ret_what)) < 0)
                return r;
        if (c->compressor &&
            (r = write_setting(fd, TUXONICE_COMPRESSION, strcmp(c->compressor, "none") == 0 ? "0" : "1",
                               ret_what)) < 0)
                return r;
        if (c->enable_escape >= 0 &&
            (r = write_setting(fd, TUXONICE_ENABLE_ESCAPE, c->enable_escape ? "1" : "0", ret_what)) < 0)
                return r;
        return 0;
}

int tuxonice_parse_result(const char *text, uint64_t *ret) {
        return parse_uint64(text, ret);
}

int tuxonice_read_result(int fd, uint64_t *ret) {
        return read_parsed_at(fd, TUXONICE_LAST_RESULT, tuxonice_parse_result, ret);
}

const char *tuxonice_result_bit_name(unsigned bit) {
        return bit < _TOI_RESULT_BIT_MAX ? result_bits[bit].name : NULL;
}

bool tuxonice_result_failed(uint64_t result) {
        return result & BIT(TOI_ABORTED);
}

CycleResult tuxonice_result_outcome(uint64_t result, FridgeError *ret_error) {
        if (result & BIT(TOI_ABORT_REQUESTED)) {
                *ret_error = FRIDGE_ERROR_CANCELLED;
                return RESULT_ABORTED;
        }
        if (result & BIT(TOI_WAKEUP_EVENT)) {
                *ret_error = FRIDGE_ERROR_WAKEUP_EVENT;
                return RESULT_ABORTED;
        }
        *ret_error = FRIDGE_ERROR_KERNEL;
        return RESULT_FAILED;
}

char *tuxonice_describe_result(uint64_t result) {
        g_autoptr(GString) s = g_string_new(NULL);
        /* TOI_ABORTED only says that a reason follows; alone, it is the reason */
        uint64_t shown = (result & KNOWN_BITS) == BIT(TOI_ABORTED) ? result : result & ~BIT(TOI_ABORTED);

        for (unsigned b = 0; b < _TOI_RESULT_BIT_MAX; b++)
                if (shown & BIT(b))
                        g_string_append_printf(s, "%s%s (%s)", s->len ? "; " : "", result_bits[b].text,
                                               result_bits[b].name);
        if (result & ~KNOWN_BITS)
                g_string_append_printf(s, "%sunknown result bits 0x%" PRIx64, s->len ? "; " : "",
                                       result & ~KNOWN_BITS);
        return g_string_free(g_steal_pointer(&s), FALSE);
}
