/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plot [CYCLE]: GetCycleTimeline drawn as SVG on stdout (timeline-svg.c);
 * without CYCLE, the running or the last cycle (CycleId). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-util.h"
#include "cmd.h"
#include "exit-code.h"
#include "fridge-error.h"
#include "i18n.h"
#include "report.h"
#include "timeline-svg.h"

/* The arrays of a reply; their strings are borrowed from it */
typedef struct PlotData {
        PlotTimeline t;
        PlotPhase *phases;
        PlotCgroup *cgroups;
        PlotSample *samples;
} PlotData;

static void plot_data_done(PlotData *d) {
        free(d->phases);
        free(d->cgroups);
        free(d->samples);
}

/* info's keys; a key unknown to this fridgectl, or of another type, is skipped */
static const struct {
        const char *key;
        char type;
        size_t offset;
} info_fields[] = {
        { "id", 't', offsetof(PlotTimeline, id) },
        { "kind", 's', offsetof(PlotTimeline, kind) },
        { "result", 's', offsetof(PlotTimeline, result) },
        { "start-realtime-usec", 't', offsetof(PlotTimeline, start_realtime) },
        { "end-usec", 't', offsetof(PlotTimeline, end) },
        { "slept-usec", 't', offsetof(PlotTimeline, slept_usec) },
        { "wake-reason", 's', offsetof(PlotTimeline, wake_reason) },
        { "cgroups-dropped", 'u', offsetof(PlotTimeline, cgroups_dropped) },
        { "image-raw-bytes", 't', offsetof(PlotTimeline, image_raw_bytes) },
        { "image-written-bytes", 't', offsetof(PlotTimeline, image_written_bytes) },
        { "image-usec", 't', offsetof(PlotTimeline, image_usec) },
};

static int read_info_entry(sd_bus_message *m, PlotTimeline *t) {
        const char *key, *contents;
        int r = sd_bus_message_read(m, "s", &key);
        if (r >= 0)
                r = sd_bus_message_peek_type(m, NULL, &contents);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(info_fields); i++) {
                char type[2] = { info_fields[i].type, 0 };
                if (strcmp(key, info_fields[i].key) != 0 || strcmp(contents, type) != 0)
                        continue;
                r = sd_bus_message_enter_container(m, 'v', type);
                if (r >= 0)
                        r = sd_bus_message_read_basic(m, type[0], (char *) t + info_fields[i].offset);
                return r < 0 ? r : sd_bus_message_exit_container(m);
        }
        return sd_bus_message_skip(m, "v");
}

static int read_info(sd_bus_message *m, PlotTimeline *t) {
        int r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = read_info_entry(m, t);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

/* Room for one more row of `size` bytes in *array of *n */
static void *grow(void **array, size_t n, size_t size) {
        void *a = realloc(*array, (n + 1) * size);
        if (!a)
                return NULL;
        *array = a;
        return (char *) a + n * size;
}

static int read_phases(sd_bus_message *m, PlotData *d) {
        PlotPhase p, *slot;
        int r = sd_bus_message_enter_container(m, 'a', "(stt)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(stt)", &p.name, &p.start, &p.end)) > 0) {
                if (!(slot = grow((void **) &d->phases, d->t.n_phases, sizeof(p))))
                        return -ENOMEM;
                *slot = p;
                d->t.n_phases++;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_cgroups(sd_bus_message *m, PlotData *d) {
        PlotCgroup c, *slot;
        int r = sd_bus_message_enter_container(m, 'a', "(ssttt)");
        while (r >= 0 &&
               (r = sd_bus_message_read(m, "(ssttt)", &c.name, &c.stage, &c.freeze, &c.frozen, &c.thawed)) > 0) {
                if (!(slot = grow((void **) &d->cgroups, d->t.n_cgroups, sizeof(c))))
                        return -ENOMEM;
                *slot = c;
                d->t.n_cgroups++;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_samples(sd_bus_message *m, PlotData *d) {
        PlotSample s, *slot;
        int r = sd_bus_message_enter_container(m, 'a', "(tt)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(tt)", &s.at, &s.kib)) > 0) {
                if (!(slot = grow((void **) &d->samples, d->t.n_samples, sizeof(s))))
                        return -ENOMEM;
                *slot = s;
                d->t.n_samples++;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_timeline(sd_bus_message *m, PlotData *d) {
        d->t = (PlotTimeline) { .kind = "", .result = "", .wake_reason = "", .end = PLOT_NEVER };
        int r = read_info(m, &d->t);
        if (r >= 0)
                r = read_phases(m, d);
        if (r >= 0)
                r = read_cgroups(m, d);
        if (r >= 0)
                r = read_samples(m, d);
        d->t.phases = d->phases;
        d->t.cgroups = d->cgroups;
        d->t.samples = d->samples;
        return r;
}

/* No CYCLE: the running cycle, else the last one */
static int pick_cycle(const Args *a, sd_bus *bus, uint64_t *ret) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        *ret = a->cycle;
        if (*ret > 0)
                return 0;
        int r = sd_bus_get_property_trivial(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "CycleId",
                                            &e, 't', ret);
        if (r < 0)
                return report_call_error(a, _("cannot read CycleId"), &e);
        if (*ret == 0)
                return report_error(a, fridge_error_name(FRIDGE_ERROR_NO_SUCH_CYCLE), _("no cycle has run since fridged started"),
                                    EXIT_CODE_REFUSED);
        return 0;
}

int cmd_plot(const Args *a, sd_bus *bus) {
        _cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_bus_message_ sd_bus_message *reply = NULL;
        _cleanup_(plot_data_done) PlotData d = {};
        char what[64];
        uint64_t id;

        int r = pick_cycle(a, bus, &id);
        if (r != 0)
                return r;
        r = sd_bus_call_method(bus, FRIDGE_BUS_NAME, FRIDGE_OBJECT_PATH, FRIDGE_INTERFACE, "GetCycleTimeline", &e,
                               &reply, "t", id);
        snprintf(what, sizeof(what), _("cannot get the timeline of cycle %llu"), (unsigned long long) id);
        if (r < 0)
                return report_call_error(a, what, &e);
        r = read_timeline(reply, &d);
        if (r < 0)
                return report_errno(a, _("cannot parse fridged's timeline"), r);
        r = timeline_svg_write(stdout, &d.t);
        if (r < 0)
                return report_errno(a, _("cannot write the SVG"), r);
        return EXIT_CODE_DONE;
}
