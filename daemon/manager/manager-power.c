/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager: what this machine can do and how a cycle would get there:
 * Can* and SupportedKinds, the driver a cycle takes, who writes a
 * hibernation's image and whether it goes to an encrypted device. */
#include "manager-internal.h"

#include "log.h"
#include "util.h"

/* Where the kernel is, driven by `config`: the live one for what is asked
 * before a cycle starts; a cycle's kernel phase passes its settings */
PowerContext manager_power_context(const Manager *m, const Config *config) {
        return (PowerContext) { .sysfs_fd = m->sysfs_fd, .proc_fd = m->proc_fd, .config = config,
                                .backends = m->power_backends,
                                .hibernate = (HibernateCache *) &m->hibernate,
                                .image_writer_socket = m->image_writer_socket };
}

PowerCycle manager_power_cycle(SleepKind kind, const CycleOptions *o) {
        return (PowerCycle) { .kind = kind, .pm_test = o->pm_test, .mem_sleep = o->mem_sleep,
                              .wake_after_sec = o->wake_after_sec };
}

/* A hibernation whose image goes to a plain device goes ahead, with the
 * pre-flight's notice logged and in the cycle's warnings. TuxOnIce writes
 * where its own settings say; a test run or a dry run writes no image. */
void manager_note_image_device(Manager *m, Cycle *c) {
        if (c->kind == SLEEP_SUSPEND || c->settings->pm_test || c->settings->dry_run)
                return;
        PowerContext ctx = manager_power_context(m, m->config);
        if (power_backend_select(&ctx, c->kind, false) == &power_backend_tuxonice)
                return;
        g_autofree char *warning = NULL;
        (void) manager_hibernate_encrypted(m, 0, &warning);
        if (!warning)
                return;
        log_warning("Cycle %" G_GUINT64_FORMAT ": %s", c->id, warning);
        cycle_add_warning(c, g_steal_pointer(&warning));
}

/* logind stays in the loop whenever it runs (PrepareForSleep, screen
 * lockers, its block inhibitors): pm_test, mem_sleep and the wake alarm
 * are set from the hook's pre. Only Driver=direct bypasses it, and a dry
 * run, which sleeps nothing. */
int manager_pick_driver(Manager *m, const CycleOptions *o, CycleDriver *ret, char **ret_message) {
        *ret = CYCLE_DRIVER_DIRECT;
        if (m->config->driver == DRIVER_DIRECT || (o->dry_run && !o->pm_test))
                return 0;
        if (logind_present(m->logind)) {
                *ret = CYCLE_DRIVER_LOGIND;
                return 0;
        }
        if (m->config->driver == DRIVER_AUTO)
                return 0;
        *ret_message = g_strdup("Driver=logind is configured, but org.freedesktop.login1 is not on the bus");
        return FRIDGE_ERROR_NOT_SUPPORTED;
}

/* sleep.conf and /sys/power read once for all the kinds one call asks
 * about; call 0 (none) reads them afresh */
static void can_read_shared(Manager *m, uint64_t call) {
        if (call != 0 && call == m->can_shared_call)
                return;
        m->can_sleep_conf = systemd_sleep_conf_free(m->can_sleep_conf);
        m->can_caps = power_caps_free(m->can_caps);
        if (systemd_sleep_conf_load(m->sleep_conf_root, &m->can_sleep_conf) < 0)
                m->can_sleep_conf = NULL;
        if (power_caps_read(m->sysfs_fd, &m->can_caps) < 0)
                m->can_caps = NULL;
        m->can_shared_call = call;
}

const char *manager_can(Manager *m, SleepKind kind, uint64_t call, const char **ret_reason) {
        if (call == 0 || call != m->can_call[kind]) {
                can_read_shared(m, call);
                PowerContext ctx = manager_power_context(m, m->config);
                ctx.call = call;
                ctx.caps = m->can_caps;
                g_free(m->can_reason[kind]);
                m->can_reason[kind] = NULL;
                /* sleep.conf unreadable: as manager_check_sleep_allowed(), nothing ruled out */
                bool allowed = !m->can_sleep_conf ||
                               systemd_sleep_allowed(m->can_sleep_conf, (SystemdSleepOp) kind, &m->can_reason[kind]);
                m->can_answer[kind] = !allowed ? POWER_ANSWER_NO : power_backend_can(&ctx, kind, &m->can_reason[kind]);
                m->can_call[kind] = call;
        }
        *ret_reason = m->can_reason[kind] ? m->can_reason[kind] : "";
        return power_answer_to_string(m->can_answer[kind]);
}

/* A hibernation asked over the bus: systemd-sleep writes the image on
 * logind's path, else the backend fridged would pick */
const char *manager_hibernate_writer(Manager *m, uint64_t call, char **ret_reason) {
        static const CycleOptions none = {};
        CycleDriver driver;
        g_autofree char *refused = NULL;
        *ret_reason = NULL;
        if (manager_pick_driver(m, &none, &driver, &refused) == 0 && driver != CYCLE_DRIVER_DIRECT) {
                if (m->config->hibernate_writer == HIBERNATE_WRITER_FRIDGE)
                        *ret_reason = g_strdup("logind sleeps the machine (Driver=): systemd-sleep has the kernel "
                                               "write the image");
                return "kernel";
        }
        can_read_shared(m, call);
        PowerContext ctx = manager_power_context(m, m->config);
        ctx.call = call;
        ctx.caps = m->can_caps;
        if (m->config->hibernate_writer == HIBERNATE_WRITER_FRIDGE)
                ctx.image_writer_refusal = writer_verdict_refusal(m->writer_verdict);
        return power_backend_hibernate_writer(&ctx, ret_reason);
}

const char *manager_hibernate_encrypted(Manager *m, uint64_t call, char **ret_warning) {
        g_autoptr(HibernateTarget) t = hibernate_check(m->sysfs_fd, m->proc_fd, m->config->resume_device,
                                                        &m->hibernate, call);
        *ret_warning = g_steal_pointer(&t->warning);
        return t->device ? hibernate_encryption_to_string(t->encrypted) : "";
}

char **manager_supported_kinds(Manager *m, uint64_t call) {
        g_autoptr(GPtrArray) kinds = g_ptr_array_new();
        for (int k = 0; k < _SLEEP_KIND_MAX; k++) {
                const char *reason;
                if (!g_str_equal(manager_can(m, (SleepKind) k, call, &reason), "na"))
                        g_ptr_array_add(kinds, g_strdup(sleep_kind_to_string((SleepKind) k)));
        }
        g_ptr_array_add(kinds, NULL);
        return (char **) g_ptr_array_free(g_steal_pointer(&kinds), FALSE);
}
