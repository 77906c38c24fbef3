/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Long listings through a pager, as systemctl pages them: $SYSTEMD_PAGER,
 * else $PAGER, else less (LESS=FRXMK, or $SYSTEMD_LESS), and only for a
 * person: stdout a terminal, not --json, not --no-pager. */

#include "args.h"

/* From here on stdout is the pager's input, until pager_close(). Does
 * nothing when no pager is wanted or one cannot be started. */
void pager_open(const Args *a);

/* Ends the pager's input and waits for the reader to quit it; twice is
 * harmless */
void pager_close(void);
