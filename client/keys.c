/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "keys.h"

#define KEY_ESC '\x1b'

bool keys_have_lone_escape(const char *buf, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (buf[i] == KEY_ESC && (i + 1 == n || buf[i + 1] == KEY_ESC))
                        return true;
        return false;
}
