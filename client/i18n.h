/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridgectl's translations: glibc's gettext directly (fridgectl has no GLib).
 * _() marks and translates a message, N_() only marks one (a table's
 * entry, translated where it is printed), ngettext() chooses a plural.
 * JSON keys and values, D-Bus names and the values scripts read (yes, no,
 * a result) are never translated. */
#pragma once

#include "fridge-config.h"

#if ENABLE_NLS
#include <libintl.h>
#else
#define gettext(msgid) (msgid)
#define ngettext(msgid, plural, n) ((n) == 1 ? (msgid) : (plural))
#endif

#define _(msgid) gettext(msgid)
#define N_(msgid) msgid

/* The locale from the environment for messages and characters only (numbers
 * keep their '.' for JSON and scripts), and fridge's catalog. */
void i18n_init(void);
