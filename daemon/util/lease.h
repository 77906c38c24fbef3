/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <systemd/sd-event.h>

/* A lease scoped to an fd, logind's pattern for inhibitors: fridged keeps
 * the read end of a pipe and hands the holder the write end. When the
 * holder closes it, or dies, which closes it, the read end hangs up and the
 * lease ends. Inhibitors and class holds are both made of one. */

typedef struct Lease Lease;

/* The holder closed its end. The callback may free the lease. */
typedef void (*LeaseEnded)(void *userdata);

/* A new lease on `e`; *ret_fd is the holder's end (the caller passes it on
 * and closes its copy). `description` names the event source in debug
 * output. */
int lease_new(sd_event *e, const char *description, LeaseEnded ended, void *userdata, Lease **ret,
              int *ret_fd);

/* Ends the lease from fridged's side without calling `ended`: closes our
 * end, so the holder's fd is left with no reader. */
Lease *lease_free(Lease *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Lease, lease_free)
