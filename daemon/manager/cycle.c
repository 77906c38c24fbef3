/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cycle.h"

#include <string.h>

#include "util.h"

static const char *const kind_names[_SLEEP_KIND_MAX] = {
        [SLEEP_SUSPEND] = "suspend",
        [SLEEP_HIBERNATE] = "hibernate",
        [SLEEP_HYBRID] = "hybrid-sleep",
};

static const char *const phase_names[_PHASE_MAX] = {
        [PHASE_NONE] = "",
        [PHASE_PREPARE] = "prepare",
        [PHASE_FLUSH] = "flush",
        [PHASE_FREEZE_EARLY] = "freeze-early",
        [PHASE_FLUSH_AGAIN] = "flush-again",
        [PHASE_FREEZE_LATE] = "freeze-late",
        [PHASE_KERNEL] = "kernel",
        [PHASE_THAW] = "thaw",
};

static const char *const result_names[_RESULT_MAX] = {
        [RESULT_NONE] = "",
        [RESULT_DONE] = "done",
        [RESULT_ABORTED] = "aborted",
        [RESULT_FAILED] = "failed",
        [RESULT_DRY_RUN] = "dry-run",
};

const char *sleep_kind_to_string(SleepKind k) {
        return k >= 0 && k < _SLEEP_KIND_MAX ? kind_names[k] : "";
}

SleepKind sleep_kind_from_string(const char *s) {
        for (int k = 0; k < _SLEEP_KIND_MAX; k++)
                if (s && strcmp(s, kind_names[k]) == 0)
                        return (SleepKind) k;
        return _SLEEP_KIND_INVALID;
}

const char *phase_to_string(Phase p) {
        return p < _PHASE_MAX ? phase_names[p] : "";
}

const char *cycle_result_to_string(CycleResult r) {
        return r < _RESULT_MAX ? result_names[r] : "";
}
