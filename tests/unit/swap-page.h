/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The swap header page the hibernate/ tests start from */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096u

/* mkswap's first page of a 1 MiB swap file, or one built as mkswap builds it */
static inline uint8_t *test_swap_page(void) {
        uint8_t *page = g_malloc0(PAGE);
        g_autofree char *path = g_build_filename(g_get_tmp_dir(), "fridge-swapsig-XXXXXX", NULL);
        int fd = g_mkstemp(path);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(ftruncate(fd, 1 << 20), ==, 0);
        close(fd);
        const char *mkswap = g_file_test("/sbin/mkswap", G_FILE_TEST_IS_EXECUTABLE) ? "/sbin/mkswap" : "mkswap";
        const char *argv[] = { mkswap, path, NULL };
        gint status = -1;
        gsize len = 0;
        g_autofree char *data = NULL;
        if (g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL |
                                                         G_SPAWN_STDERR_TO_DEV_NULL,
                         NULL, NULL, NULL, NULL, &status, NULL) &&
            status == 0 && g_file_get_contents(path, &data, &len, NULL) && len >= PAGE)
                memcpy(page, data, PAGE);
        else {
                g_test_message("no mkswap: the page is built by hand");
                page[1024] = 1;                         /* version */
                memcpy(page + 1036, "0123456789abcdef", 16); /* UUID */
                memcpy(page + PAGE - 10, "SWAPSPACE2", 10);
        }
        g_unlink(path);
        return page;
}

