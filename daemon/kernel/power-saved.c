/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "power-saved.h"

#include <errno.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "parse.h"
#include "power.h"
#include "util.h"

#define SAVED_FILE "kernel"
#define SAVED_TMP ".kernel.tmp"
#define SAVED_HEADER "fridge-kernel 1"

static const struct {
        const char *key;
        const char *path;
} knobs[] = {
        { "pm_test", POWER_PM_TEST },
        { "mem_sleep", POWER_MEM_SLEEP },
        { "disk", POWER_DISK },
        { "wakealarm", POWER_RTC_ALARM },
};

static const char *knob_path(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(knobs); i++)
                if (g_str_equal(knobs[i].key, key))
                        return knobs[i].path;
        return NULL;
}

/* What the kernel offers is words of [a-z0-9_]: nothing else is written back */
static bool value_is_word(const char *v) {
        return *v && strlen(v) < 64 && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(v);
}

/* The bracketed word of a word-list file, or NULL */
static char *current_word(int sysfs_fd, const char *path) {
        g_autofree char *text = NULL, *current = NULL;
        g_auto(GStrv) words = NULL;
        if (read_file_at(sysfs_fd, path, &text) < 0 || parse_word_list(text, &words, &current) < 0 || !current ||
            !value_is_word(current))
                return NULL;
        return g_steal_pointer(&current);
}

static void append_current(GString *s, int sysfs_fd, const char *key) {
        g_autofree char *current = current_word(sysfs_fd, knob_path(key));
        if (current)
                g_string_append_printf(s, "%s %s\n", key, current);
}

int power_saved_write(int state_fd, int sysfs_fd, bool alarm) {
        g_autoptr(GString) s = g_string_new(SAVED_HEADER "\n");
        append_current(s, sysfs_fd, "pm_test");
        append_current(s, sysfs_fd, "mem_sleep");
        append_current(s, sysfs_fd, "disk");
        if (alarm)
                g_string_append(s, "wakealarm 0\n");
        return write_file_atomic_at(state_fd, SAVED_FILE, SAVED_TMP, s->str);
}

int power_saved_remove(int state_fd) {
        if (unlinkat(state_fd, SAVED_FILE, 0) < 0)
                return errno == ENOENT ? 0 : -errno;
        return fsync(state_fd) < 0 ? -errno : 0;
}

static void restore_line(int sysfs_fd, const char *line) {
        g_auto(GStrv) kv = g_strsplit(line, " ", 2);
        const char *path = kv[0] ? knob_path(kv[0]) : NULL;
        if (!path || !kv[1] || !value_is_word(kv[1])) {
                log_warning("Skipping malformed line \"%s\" in the saved kernel settings", line);
                return;
        }
        /* What the cycle did not change (disk for a suspend) is not written */
        g_autofree char *now = g_str_equal(kv[0], "wakealarm") ? NULL : current_word(sysfs_fd, path);
        if (now && g_str_equal(now, kv[1]))
                return;
        int r = write_file_at(sysfs_fd, path, kv[1]);
        if (r < 0)
                log_warning_errno(r, "Failed to restore /%s to %s: %m", path, kv[1]);
        else
                log_info("Restored /%s to %s, as before the interrupted cycle", path, kv[1]);
}

int power_saved_restore(int state_fd, int sysfs_fd) {
        g_autofree char *text = NULL;
        int r = read_file_at(state_fd, SAVED_FILE, &text);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_warning_errno(r, "Failed to read the saved kernel settings: %m");

        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        if (!lines[0] || !g_str_equal(lines[0], SAVED_HEADER))
                log_warning("The saved kernel settings are not in a format this fridged knows; ignored");
        else
                for (char **p = lines + 1; *p; p++)
                        if (**p)
                                restore_line(sysfs_fd, *p);
        r = power_saved_remove(state_fd);
        if (r < 0)
                return log_warning_errno(r, "Failed to remove the saved kernel settings: %m");
        log_notice("Put back the kernel settings that an interrupted cycle had changed");
        return 1;
}
