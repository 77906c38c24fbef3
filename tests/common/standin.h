/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* The service side of a stand-in on a private test bus (polkit's, logind's):
 * connects to `address`, serves `vtable` at path/interface, owns `name`,
 * prints READY on stdout and runs the thread's default event loop until it
 * exits. *ret_bus (if given) is the connection while the loop runs, for
 * emitting signals. Returns the process's exit status. */
int standin_serve(const char *who, const char *address, const char *name, const char *path, const char *interface,
                  const sd_bus_vtable *vtable, sd_bus **ret_bus);
