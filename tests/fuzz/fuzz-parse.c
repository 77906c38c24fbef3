/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the /proc and sysfs parsers. The first byte picks the
 * parser, the rest is the file's text. */
#include <stddef.h>
#include <stdint.h>

#include "detect.h"
#include "fuzz.h"
#include "parse.h"
#include "tuxonice.h"

static void parse_one(uint8_t which, const char *text) {
        g_auto(GStrv) words = NULL;
        g_autofree char *current = NULL, *described = NULL;
        g_autoptr(GPtrArray) entries = NULL;
        MeminfoDirty dirty;
        uint64_t u64;
        uint32_t u32;
        unsigned major, minor;
        long nr;
        uint64_t args[DETECT_SYSCALL_ARGS];

        switch (which % 10) {
        case 0: (void) parse_word_list(text, &words, &current); break;
        case 1: (void) parse_uint64(text, &u64); (void) parse_uint32(text, &u32); break;
        case 2: (void) parse_meminfo(text, &dirty); (void) parse_meminfo_kib(text, "MemTotal", &u64); break;
        case 3: (void) parse_mountinfo(text, &entries); break;
        case 4: (void) parse_swaps(text, &entries); break;
        case 5: (void) parse_devnum(text, &major, &minor); break;
        case 6: if (detect_parse_syscall(text, &nr) >= 0) (void) detect_syscall_is_sync(nr);
                (void) detect_parse_syscall_args(text, &nr, args); break;
        case 7: if (tuxonice_parse_result(text, &u64) >= 0) described = tuxonice_describe_result(u64); break;
        case 8: (void) mount_options_has(text, "rw"); break;
        default: (void) parse_word_list(text, &words, NULL); break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        g_autofree char *text = fuzz_text(data + 1, size - 1);
        fuzz_quiet();
        parse_one(data[0], text);
        return 0;
}
