/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Without libFuzzer: runs every file of the corpus directories given as
 * arguments through the target once, as a quick regression test. */
#include <stdio.h>

#include "fuzz.h"

int main(int argc, char **argv) {
        unsigned n = 0;
        for (int i = 1; i < argc; i++) {
                g_autoptr(GDir) d = g_dir_open(argv[i], 0, NULL);
                if (!d) {
                        fprintf(stderr, "cannot open corpus %s\n", argv[i]);
                        return 1;
                }
                for (const char *name; (name = g_dir_read_name(d)); n++) {
                        g_autofree char *path = g_build_filename(argv[i], name, NULL);
                        g_autofree char *data = NULL;
                        gsize len;
                        if (!g_file_get_contents(path, &data, &len, NULL))
                                return 1;
                        LLVMFuzzerTestOneInput((const uint8_t *) data, len);
                }
        }
        printf("replayed %u corpus files\n", n);
        return n > 0 ? 0 : 1;
}
