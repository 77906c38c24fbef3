/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "props.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bus-dict.h"
#include "macro.h"

typedef struct PropSpec {
        const char *name;
        char type;              /* 's', 't', 'd', or 'a' for "as" */
        size_t offset;
        uint32_t bit;
} PropSpec;

#define P(n, t, f, b) { n, t, offsetof(FridgeProps, f), b }
static const PropSpec prop_table[] = {
        P("State",                's', state,                   PROP_STATE),
        P("CycleId",              't', cycle_id,                PROP_CYCLE_ID),
        P("Kind",                 's', kind,                    PROP_KIND),
        P("Phase",                's', phase,                   PROP_PHASE),
        P("Progress",             'd', progress,                PROP_PROGRESS),
        P("ProgressText",         's', progress_text,           PROP_PROGRESS_TEXT),
        P("CanSuspend",           's', can_suspend,             0),
        P("CanSuspendReason",     's', can_suspend_reason,      0),
        P("CanHibernate",         's', can_hibernate,           0),
        P("CanHibernateReason",   's', can_hibernate_reason,    0),
        P("CanHybridSleep",       's', can_hybrid_sleep,        0),
        P("CanHybridSleepReason", 's', can_hybrid_sleep_reason, 0),
        P("HibernateWriter",      's', hibernate_writer,        0),
        P("HibernateWriterReason", 's', hibernate_writer_reason, 0),
        P("HibernateEncrypted",   's', hibernate_encrypted,     0),
        P("HibernateWarning",     's', hibernate_warning,       0),
        P("SupportedKinds",       'a', supported_kinds,         0),
        P("CycleSettings",        'a', cycle_settings,          0),
        P("LastResult",           's', last_result,             0),
        P("LastWakeReason",       's', last_wake_reason,        0),
        P("Version",              's', version,                 0),
        P("SleepFreeze",          's', sleep_freeze,            0),
        P("FreezeFilesystems",    's', freeze_filesystems,      0),
};
#undef P

void fridge_props_done(FridgeProps *p) {
        for (size_t i = 0; i < ELEMENTSOF(prop_table); i++) {
                void *field = (char *) p + prop_table[i].offset;

                if (prop_table[i].type == 's')
                        free(*(char **) field);
                else if (prop_table[i].type == 'a')
                        strv_free(*(char ***) field);
        }
        *p = (FridgeProps) {};
}

static const PropSpec *find_spec(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(prop_table); i++)
                if (strcmp(prop_table[i].name, name) == 0)
                        return &prop_table[i];
        return NULL;
}

static const char *spec_signature(const PropSpec *s) {
        switch (s->type) {
        case 's': return "s";
        case 't': return "t";
        case 'd': return "d";
        default:  return "as";
        }
}

/* Reads the value inside an entered variant into its field. */
static int read_value(sd_bus_message *m, const PropSpec *s, FridgeProps *p) {
        void *field = (char *) p + s->offset;
        const char *str;
        char **strv = NULL, *dup;
        int r;

        switch (s->type) {
        case 's':
                r = sd_bus_message_read_basic(m, 's', &str);
                if (r < 0)
                        return r;
                dup = strdup(str);
                if (!dup)
                        return -ENOMEM;
                free(*(char **) field);
                *(char **) field = dup;
                return 0;
        case 't':
                return sd_bus_message_read_basic(m, 't', field);
        case 'd':
                return sd_bus_message_read_basic(m, 'd', field);
        default:
                r = sd_bus_message_read_strv(m, &strv);
                if (r < 0)
                        return r;
                strv_free(*(char ***) field);
                *(char ***) field = strv;
                return 0;
        }
}

typedef struct PropsRead {
        FridgeProps *props;
        uint32_t seen;
} PropsRead;

static int read_entry(sd_bus_message *m, const char *name, void *userdata) {
        PropsRead *p = userdata;
        const PropSpec *s;
        int r;

        s = find_spec(name);
        if (!s)
                return sd_bus_message_skip(m, "v");

        r = sd_bus_message_enter_container(m, 'v', spec_signature(s));
        if (r == -ENXIO)        /* the variant holds another type */
                return sd_bus_message_skip(m, "v");
        if (r < 0)
                return r;
        r = read_value(m, s, p->props);
        if (r < 0)
                return r;
        p->seen |= s->bit;
        return sd_bus_message_exit_container(m);
}

int fridge_props_read(sd_bus_message *m, FridgeProps *p, uint32_t *ret_seen) {
        PropsRead read = { .props = p };
        int r = bus_dict_read(m, read_entry, &read);
        if (r < 0)
                return r;
        if (ret_seen)
                *ret_seen = read.seen;
        return r;
}
