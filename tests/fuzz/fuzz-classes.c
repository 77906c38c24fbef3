/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: one classes.d text, then a match against what it added. */
#include <stddef.h>
#include <stdint.h>

#include "classes.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        g_autofree char *text = fuzz_text(data, size);
        g_autoptr(ClassRules) r = NULL;
        g_assert_cmpint(class_rules_new(&r), ==, 0);
        fuzz_quiet();
        if (class_rules_add_text(r, "fuzz.conf", text) == 0)
                (void) class_rules_match(r, "user.slice/user-1000.slice/app-x.scope", "app-x.scope", NULL, NULL);
        return 0;
}
