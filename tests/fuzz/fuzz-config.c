/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: one text through the configuration loader, and through
 * the reader of systemd-sleep's sleep.conf. */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "fuzz.h"
#include "keyfile.h"
#include "systemd-sleep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        g_autofree char *text = fuzz_text(data, size);
        g_autoptr(Config) c = NULL;
        g_assert_cmpint(config_new_default(&c), ==, 0);
        fuzz_quiet();
        (void) keyfile_nul_line((const char *) data, size);
        (void) config_apply_text(c, "fuzz.conf", text);
        g_autoptr(SystemdSleepConf) sleep = g_new0(SystemdSleepConf, 1);
        (void) systemd_sleep_conf_apply_text(sleep, text, "sleep.conf");
        return 0;
}
