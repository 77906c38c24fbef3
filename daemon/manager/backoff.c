/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "backoff.h"

uint32_t backoff_delay_ms(uint32_t base_ms, unsigned retry, uint32_t cap_ms) {
        if (cap_ms < base_ms)
                cap_ms = base_ms;
        uint64_t d = base_ms;
        for (unsigned i = 1; i < retry && d < cap_ms; i++)
                d *= 2;
        return d > cap_ms ? cap_ms : (uint32_t) d;
}
