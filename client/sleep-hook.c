/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridgectl as systemd-sleep's hook. systemd-sleep runs SLEEPDIR/fridge,
 * a link to fridgectl, with "pre" or "post" and the kind of sleep around
 * the kernel's state write; fridgectl then runs `hook`: the phases before
 * the write (pre), the thaw (post). A link rather than a script: every
 * process a hook starts delays every sleep, and under emulation a shell
 * cost as much as fridgectl's own start (35-50 ms each, twice a sleep).
 * systemd ignores the status, and a hook that hangs holds up the sleep:
 * this one logs what went wrong and always exits 0; `fridgectl hook` keeps
 * the hook's budget itself (cmd-hook.c). */
#include "sleep-hook.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "conf-files.h"
#include "exit-code.h"
#include "journal-stream.h"
#include "macro.h"

/* where `systemctl mask` puts its link (or with --runtime) */
#define UNIT_DIRS_DEFAULT "/etc/systemd/system /run/systemd/system"

bool sleep_hook_invoked(const char *argv0) {
        const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
        return argv0 && strcmp(slash ? slash + 1 : argv0, SLEEP_HOOK_NAME) == 0;
}

/* A line for stderr, which systemd-sleep's service sends to the journal:
 * there as a warning (sd-daemon's "<4>" prefix, read on a journal stream) */
__attribute__((format(printf, 3, 0))) static void hook_vline(char *buf, size_t size, const char *format,
                                                           va_list ap) {
        int n = snprintf(buf, size, "%sfridge-sleep-hook: ", journal_stream_is(STDERR_FILENO) ? "<4>" : "");
        if (n < 0 || (size_t) n >= size - 1)
                return;
        int m = vsnprintf(buf + n, size - (size_t) n - 1, format, ap);
        size_t end = m < 0 ? (size_t) n : (size_t) n + (size_t) m < size - 1 ? (size_t) n + (size_t) m : size - 2;
        buf[end] = '\n';
        buf[end + 1] = '\0';
}

__attribute__((format(printf, 3, 4))) static void hook_line(char *buf, size_t size, const char *format, ...) {
        va_list ap;
        va_start(ap, format);
        hook_vline(buf, size, format, ap);
        va_end(ap);
}

/* What a failed `fridgectl hook` leaves, whether it failed or ran out of time */
static void hook_failed_line(char *buf, size_t size, const char *phase, const char *kind, int status) {
        hook_line(buf, size, "fridgectl hook %s %s failed (exit status %d)", phase, kind, status);
}

__attribute__((format(printf, 1, 2))) static void hook_log(const char *format, ...) {
        char line[512];
        va_list ap;
        va_start(ap, format);
        hook_vline(line, sizeof(line), format, ap);
        va_end(ap);
        fputs(line, stderr);
}

/* fridged.service masked: the first of its unit files in the unit
 * directories (FRIDGE_HOOK_UNIT_DIRS, separated by blanks) masks, as
 * systemd reads a mask and fridge's own files are (conf-files.h); read
 * here, not asked of systemctl, whose start and round trip to PID1 every
 * sleep would pay */
static bool fridged_masked(void) {
        const char *dirs = getenv("FRIDGE_HOOK_UNIT_DIRS");
        _cleanup_free_ char *copy = strdup(dirs ? dirs : UNIT_DIRS_DEFAULT);
        char *save = NULL;
        for (char *d = copy ? strtok_r(copy, " \t\n", &save) : NULL; d; d = strtok_r(NULL, " \t\n", &save)) {
                char path[PATH_MAX];
                if (snprintf(path, sizeof(path), "%s/fridged.service", d) >= (int) sizeof(path) ||
                    access(path, F_OK) < 0)
                        continue;
                return conf_file_is_masked(path);
        }
        return false;
}

int sleep_hook_main(int argc, char **argv, int (*fridgectl_main)(int argc, char **argv)) {
        char *phase = argc > 1 ? argv[1] : (char *) "";
        char *kind = argc > 2 ? argv[2] : (char *) "";
        if (strcmp(phase, "pre") != 0 && strcmp(phase, "post") != 0) {
                hook_log("unexpected phase '%s' (expected pre or post); nothing done", phase);
                return 0;
        }
        if (fridged_masked())
                return 0;
        /* nothing to read from whoever started systemd-sleep */
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0 && null != STDIN_FILENO) {
                (void) dup2(null, STDIN_FILENO);
                close(null);
        }
        /* a reader gone (stdout, stderr) is no reason to die before the 0 */
        (void) signal(SIGPIPE, SIG_IGN);
        char line[512];
        hook_failed_line(line, sizeof(line), phase, kind, EXIT_CODE_FAILED);
        cmd_hook_as_sleep_hook(line); /* copied: the deadline's own word */
        /* "cycle N frozen: …" in systemd-sleep's journal ties it to fridged's cycle */
        char *args[] = { argv[0], (char *) "--no-progress", (char *) "hook", phase, kind, NULL };
        int r = fridgectl_main((int) ELEMENTSOF(args) - 1, args);
        /* a failure before Hook was asked leaves the deadline armed: it must not add its line to this one */
        cmd_hook_deadline_disarm();
        if (r != 0) {
                hook_failed_line(line, sizeof(line), phase, kind, r);
                fputs(line, stderr);
        }
        return 0;
}
