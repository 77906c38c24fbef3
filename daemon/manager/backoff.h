/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* The longest wait between two kernel-phase attempts, whatever
 * [Sleep] RetryDelayMs= and the doubling come to */
#define BACKOFF_CAP_MS 30000U

/* The wait before retry number `retry` (1 for the first retry): `base_ms`
 * doubled for each retry before it, at most `cap_ms` (but never less than
 * base_ms), as Android's SystemSuspend and ChromeOS powerd back off after a
 * failed suspend. Pure: no overflow for any input. */
uint32_t backoff_delay_ms(uint32_t base_ms, unsigned retry, uint32_t cap_ms);
