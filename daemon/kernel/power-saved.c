/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "power-saved.h"

#include <errno.h>
#include <stddef.h>
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
#define ALARM_KEY "wakealarm"

/* The word-list knobs, in the order they are recorded and put back */
static const struct {
        const char *key;
        const char *path;
        size_t offset;
} knobs[] = {
        { "pm_test", POWER_PM_TEST, offsetof(PowerSaved, pm_test) },
        { "mem_sleep", POWER_MEM_SLEEP, offsetof(PowerSaved, mem_sleep) },
        { "disk", POWER_DISK, offsetof(PowerSaved, disk) },
};

static char **knob_field(PowerSaved *s, size_t i) {
        return (char **) ((char *) s + knobs[i].offset);
}

static const char *knob_value(const PowerSaved *s, size_t i) {
        return *(char *const *) ((const char *) s + knobs[i].offset);
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

PowerSaved *power_saved_read(int sysfs_fd, bool alarm) {
        PowerSaved *s = g_new0(PowerSaved, 1);
        for (size_t i = 0; i < ELEMENTSOF(knobs); i++)
                *knob_field(s, i) = current_word(sysfs_fd, knobs[i].path);
        s->alarm = alarm;
        return s;
}

PowerSaved *power_saved_copy(const PowerSaved *s) {
        PowerSaved *c = g_new0(PowerSaved, 1);
        for (size_t i = 0; i < ELEMENTSOF(knobs); i++)
                *knob_field(c, i) = g_strdup(knob_value(s, i));
        c->alarm = s->alarm;
        return c;
}

PowerSaved *power_saved_free(PowerSaved *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(knobs); i++)
                g_free(*knob_field(s, i));
        g_free(s);
        return NULL;
}

int power_saved_put_back(int sysfs_fd, const PowerSaved *s, bool clear_alarm) {
        int r, failed = 0;
        for (size_t i = 0; s && i < ELEMENTSOF(knobs); i++) {
                const char *want = knob_value(s, i), *path = knobs[i].path;
                g_autofree char *now = want ? current_word(sysfs_fd, path) : NULL;
                if (!want || g_strcmp0(now, want) == 0)
                        continue;
                if ((r = write_file_at(sysfs_fd, path, want)) < 0) {
                        log_warning_errno(r, "Failed to put /%s back to %s: %m", path, want);
                        if (r != -ENOENT && failed == 0)
                                failed = r;
                } else
                        log_info("Put /%s back to %s, as it was before the cycle", path, want);
        }
        if (clear_alarm && (r = write_file_at(sysfs_fd, POWER_RTC_ALARM, "0")) < 0) {
                log_warning_errno(r, "Failed to clear the RTC wake alarm: %m");
                if (r != -ENOENT && failed == 0)
                        failed = r;
        }
        return failed;
}

int power_saved_write(int state_fd, const PowerSaved *s) {
        g_autoptr(GString) text = g_string_new(SAVED_HEADER "\n");
        for (size_t i = 0; i < ELEMENTSOF(knobs); i++)
                if (knob_value(s, i))
                        g_string_append_printf(text, "%s %s\n", knobs[i].key, knob_value(s, i));
        if (s->alarm)
                g_string_append(text, ALARM_KEY " 0\n");
        return write_file_atomic_at(state_fd, SAVED_FILE, SAVED_TMP, text->str);
}

int power_saved_remove(int state_fd) {
        if (unlinkat(state_fd, SAVED_FILE, 0) < 0)
                return errno == ENOENT ? 0 : -errno;
        return fsync(state_fd) < 0 ? -errno : 0;
}

static void parse_line(PowerSaved *s, const char *line) {
        g_auto(GStrv) kv = g_strsplit(line, " ", 2);
        if (kv[0] && kv[1] && g_str_equal(kv[0], ALARM_KEY) && g_str_equal(kv[1], "0")) {
                s->alarm = true;
                return;
        }
        for (size_t i = 0; kv[0] && kv[1] && value_is_word(kv[1]) && i < ELEMENTSOF(knobs); i++)
                if (g_str_equal(kv[0], knobs[i].key)) {
                        g_free(*knob_field(s, i));
                        *knob_field(s, i) = g_strdup(kv[1]);
                        return;
                }
        log_warning("Skipping malformed line \"%s\" in the saved kernel settings", line);
}

int power_saved_restore(int state_fd, int sysfs_fd) {
        g_autofree char *text = NULL;
        int r = read_file_at(state_fd, SAVED_FILE, &text);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_warning_errno(r, "Failed to read the saved kernel settings: %m");

        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_autoptr(PowerSaved) s = g_new0(PowerSaved, 1);
        if (!lines[0] || !g_str_equal(lines[0], SAVED_HEADER))
                log_warning("The saved kernel settings are not in a format this fridged knows; ignored");
        else {
                for (char **p = lines + 1; *p; p++)
                        if (**p)
                                parse_line(s, *p);
                /* Kept for the next start (or --thaw-all) to try again */
                r = power_saved_put_back(sysfs_fd, s, s->alarm);
                if (r < 0)
                        return log_warning_errno(r, "Could not put back every kernel setting an interrupted "
                                                 "cycle had changed (%m); kept for the next try");
        }
        r = power_saved_remove(state_fd);
        if (r < 0)
                return log_warning_errno(r, "Failed to remove the saved kernel settings: %m");
        log_notice("Put back the kernel settings that an interrupted cycle had changed");
        return 1;
}
