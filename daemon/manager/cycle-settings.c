/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cycle-settings.h"

#include "manager.h"

static const char *const driver_names[_CYCLE_DRIVER_MAX] = {
        /* a hook cycle's kernel phase is systemd-sleep's: named for who sleeps */
        [CYCLE_DRIVER_DIRECT] = "direct",
        [CYCLE_DRIVER_HOOK] = "systemd",
        [CYCLE_DRIVER_LOGIND] = "logind",
};

const char *cycle_driver_to_string(CycleDriver d) {
        return d >= 0 && d < _CYCLE_DRIVER_MAX ? driver_names[d] : "";
}

static uint32_t or_default(uint32_t option, uint32_t configured) {
        return option ? option : configured;
}

int cycle_settings_new(const Config *config, const CycleOptions *opts, CycleDriver driver, bool suspend,
                       CycleSettings **ret) {
        static const CycleOptions none = {};
        if (!opts)
                opts = &none;
        CycleSettings *s = g_new0(CycleSettings, 1);
        s->driver = driver;
        s->dry_run = opts->dry_run;
        s->queue = opts->queue;
        s->ignore_inhibitors = opts->ignore_inhibitors;
        s->pm_test = g_strdup(opts->pm_test);
        if (suspend)
                s->mem_sleep = g_strdup(opts->mem_sleep ? opts->mem_sleep : config->mem_sleep);
        s->hibernate_mode = g_strdup(config->hibernate_mode);
        s->hibernate_writer = config->hibernate_writer;
        s->wake_after_sec = opts->wake_after_sec;
        s->queue_timeout_ms = opts->queue ? or_default(opts->queue_timeout_ms, QUEUE_TIMEOUT_DEFAULT_MS) : 0;
        s->delay_timeout_ms = config->delay_timeout_ms;
        s->flush_timeout_ms = or_default(opts->flush_timeout_ms, config->flush_timeout_ms);
        s->flush_on_timeout = config->flush_on_timeout;
        s->freeze_timeout_ms = or_default(opts->freeze_timeout_ms, config->freeze_timeout_ms);
        s->hook_timeout_ms = config->hook_timeout_ms;
        s->kernel_watchdog_ms = config->kernel_watchdog_ms;
        s->writer_cancel_timeout_ms = config->writer_cancel_timeout_ms;
        s->retries = config->retries;
        s->retry_delay_ms = config->retry_delay_ms;
        s->freeze_roots = g_strdupv(config->freeze_roots);
        config_tuxonice_copy(&s->tuxonice, &config->tuxonice);
        *ret = s;
        return 0;
}

CycleSettings *cycle_settings_free(CycleSettings *s) {
        if (!s)
                return NULL;
        g_free(s->pm_test);
        g_free(s->mem_sleep);
        g_free(s->hibernate_mode);
        g_strfreev(s->freeze_roots);
        config_tuxonice_clear(&s->tuxonice);
        g_free(s);
        return NULL;
}

static void add(GPtrArray *a, const char *name, char *value) {
        g_ptr_array_add(a, g_strdup_printf("%s=%s", name, value));
        g_free(value);
}

static char *ms(uint32_t v) {
        return g_strdup_printf("%" G_GUINT32_FORMAT, v);
}

char **cycle_settings_strv(const CycleSettings *s) {
        GPtrArray *a = g_ptr_array_new();
        add(a, "driver", g_strdup(cycle_driver_to_string(s->driver)));
        add(a, "dry-run", g_strdup(s->dry_run ? "yes" : "no"));
        add(a, "pm-test", g_strdup(s->pm_test ? s->pm_test : "none"));
        add(a, "mem-sleep", g_strdup(s->mem_sleep ? s->mem_sleep : "kernel"));
        add(a, "hibernate-mode", g_strdup(s->hibernate_mode ? s->hibernate_mode : ""));
        add(a, "hibernate-writer", g_strdup(s->hibernate_writer == HIBERNATE_WRITER_FRIDGE ? "fridge" : "kernel"));
        add(a, "wake-after-sec", ms(s->wake_after_sec));
        add(a, "queue-timeout-ms", ms(s->queue_timeout_ms));
        add(a, "delay-timeout-ms", ms(s->delay_timeout_ms));
        add(a, "flush-timeout-ms", ms(s->flush_timeout_ms));
        add(a, "flush-on-timeout", g_strdup(s->flush_on_timeout == FLUSH_ON_TIMEOUT_CONTINUE ? "continue" : "fail"));
        add(a, "freeze-timeout-ms", ms(s->freeze_timeout_ms));
        add(a, "hook-timeout-ms", ms(s->hook_timeout_ms));
        add(a, "kernel-watchdog-ms", ms(s->kernel_watchdog_ms));
        add(a, "writer-cancel-timeout-ms", ms(s->writer_cancel_timeout_ms));
        add(a, "retries", ms(s->retries));
        add(a, "retry-delay-ms", ms(s->retry_delay_ms));
        g_autofree char *roots = s->freeze_roots ? g_strjoinv(",", s->freeze_roots) : NULL;
        add(a, "freeze-roots", g_strdup(roots ? roots : ""));
        g_ptr_array_add(a, NULL);
        return (char **) g_ptr_array_free(a, FALSE);
}

char *cycle_settings_describe(const CycleSettings *s) {
        g_auto(GStrv) l = cycle_settings_strv(s);
        return g_strjoinv(" ", l);
}
