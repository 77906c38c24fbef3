/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cycle-text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit-code.h"
#include "fridge-error.h"
#include "i18n.h"
#include "macro.h"

/* asprintf() leaves the pointer undefined on failure; callers want NULL. */
__attribute__((format(printf, 1, 2)))
static char *strdup_printf(const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

char *cycle_label(const char *phase, const char *text) {
        if (isempty(phase))
                return strdup(strempty(text));
        if (isempty(text))
                return strdup(phase);
        return strdup_printf("%s: %s", phase, text);
}

char *format_duration(uint64_t usec) {
        uint64_t sec = usec / 1000000;

        if (sec < 60)
                return strdup_printf("%.1f s", (double) usec / 1e6);
        if (sec < 3600)
                return strdup_printf("%u min %u s", (unsigned) (sec / 60), (unsigned) (sec % 60));
        return strdup_printf("%llu h %u min", (unsigned long long) (sec / 3600), (unsigned) (sec % 3600 / 60));
}

char *cycle_resumed_line(uint64_t slept_usec, const char *wake_reason) {
        _cleanup_free_ char *d = format_duration(slept_usec);

        if (!d)
                return NULL;
        return strdup_printf(_("resumed after %s (wake: %s)"), d, isempty(wake_reason) ? _("unknown") : wake_reason);
}

static char *done_line(const CycleOutcome *o) {
        _cleanup_free_ char *r = NULL;

        if (!o->resumed)
                return isempty(o->message) ? strdup(_("done")) : strdup_printf(_("done: %s"), o->message);
        r = cycle_resumed_line(o->slept_usec, o->wake_reason);
        return r ? strdup_printf(_("done: %s"), r) : NULL;
}

static char *aborted_line(const CycleOutcome *o) {
        /* Our own cancel gets the reassuring sentence; any other abort
         * (cancelled elsewhere, a wakeup event, …) shows fridged's reason. */
        if (o->cancel_requested && strcmp(error_short_name(o->error), "Cancelled") == 0)
                return strdup(_("aborted: cancelled by user; all services thawed"));
        return strdup_printf(_("aborted: %s"), isempty(o->message) ? error_short_name(o->error) : o->message);
}

/* Whether head (len bytes) ends in " within DIGITS ms", as the head of a
 * FreezeTimeout message does. */
static bool is_within_ms(const char *head, size_t len) {
        static const char within[] = " within ", ms[] = " ms";
        const char *end = head + len, *digits;

        if (len < strlen(ms) || memcmp(end - strlen(ms), ms, strlen(ms)) != 0)
                return false;
        end -= strlen(ms);
        for (digits = end; digits > head && digits[-1] >= '0' && digits[-1] <= '9'; digits--)
                ;
        if (digits == end || (size_t) (digits - head) < strlen(within))
                return false;
        return memcmp(digits - strlen(within), within, strlen(within)) == 0;
}

char *freeze_timeout_text(const char *message) {
        const char *colon = message ? strstr(message, ": ") : NULL;
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        if (!colon || !is_within_ms(message, (size_t) (colon - message)))
                return NULL;
        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        fwrite(message, 1, (size_t) (colon - message), f);
        for (const char *p = colon + 2; *p; ) {
                const char *sep = strstr(p, "; ");
                size_t len = sep ? (size_t) (sep - p) : strlen(p);

                if (len > 0) {
                        fputs("\n  ", f);
                        fwrite(p, 1, len, f);
                }
                p += sep ? len + 2 : len;
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

char *cycle_final_line(const CycleOutcome *o) {
        const char *result = strempty(o->result);

        if (strcmp(result, "done") == 0)
                return done_line(o);
        if (strcmp(result, "dry-run") == 0) {
                /* With pm-test the kernel did get a (test) write. */
                if (!isempty(o->pm_test) && strcmp(o->pm_test, "none") != 0)
                        return strdup_printf(_("dry-run: all phases ran; the kernel ran its pm_test \"%s\" mode"),
                                             o->pm_test);
                return strdup(_("dry-run: all phases ran; nothing was written to the kernel"));
        }
        if (strcmp(result, "aborted") == 0)
                return aborted_line(o);
        if (strcmp(result, "failed") == 0) {
                const char *name = isempty(o->error) ? _("unknown error") : error_short_name(o->error);

                if (!isempty(o->error) && strcmp(o->error, fridge_error_name(FRIDGE_ERROR_FREEZE_TIMEOUT)) == 0) {
                        _cleanup_free_ char *text = freeze_timeout_text(o->message);

                        if (text)
                                return strdup_printf(_("failed: %s: %s"), name, text);
                }
                if (isempty(o->message))
                        return strdup_printf(_("failed: %s"), name);
                return strdup_printf(_("failed: %s: %s"), name, o->message);
        }
        return strdup_printf("%s: %s", isempty(result) ? _("unknown result") : result, strempty(o->message));
}
