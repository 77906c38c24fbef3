/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "i18n.h"

#include <locale.h>
#include <stdlib.h>

void i18n_init(void) {
        /* LC_CTYPE too: gettext converts to its charset, and in "C" an
         * umlaut would become '?' */
        (void) setlocale(LC_CTYPE, "");
        (void) setlocale(LC_MESSAGES, "");
#if ENABLE_NLS
        /* Only for the tests, which point it at the build tree's po/; never
         * when set-uid */
        const char *dir = secure_getenv("FRIDGE_LOCALEDIR");
        (void) bindtextdomain(GETTEXT_PACKAGE, dir && *dir ? dir : LOCALEDIR);
        (void) textdomain(GETTEXT_PACKAGE);
#endif
}
