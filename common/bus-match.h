/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The match rule for a well-known name's owner coming or going (a literal
 * string): fridged follows logind's and systemd's, the clients fridged's */
#define BUS_MATCH_NAME_OWNER_CHANGED(name)                              \
        "type='signal',sender='org.freedesktop.DBus',"                  \
        "path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"\
        "member='NameOwnerChanged',arg0='" name "'"
