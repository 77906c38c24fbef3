/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* fridge-image-writer --serve: fridged's image writer (HibernateWriter=
 * fridge). It listens on the socket systemd passes it
 * (fridge-image-writer.socket) or on --listen=PATH (tests), serves one
 * connection at a time from uid 0 only, and answers fridged's
 * "hibernate mode=MODE" as hibernate/writer-protocol.h says: unavailable
 * before anything is frozen when it cannot run (no snapshot device, no
 * CAP_SYS_ADMIN, no resume device set, lockdown, test_resume, an initramfs
 * without fridge-resume), otherwise
 * the write of --write with progress lines, fridged's cancel and Esc on
 * --console honoured, and in the end cancelled, failed or resumed. */

typedef struct ServeArgs {
        const char *snapshot;   /* the snapshot device */
        const char *listen;     /* a path to bind, or NULL: systemd's socket */
        const char *sysfs;      /* where power/resume is read: /sys */
        const char *console;    /* the bar and Esc while frozen, or NULL */
        const char *initramfs;  /* the next boot's, to hold fridge-resume: NULL to find the
                                 * running kernel's in /boot, "unchecked" not to look */
        unsigned idle_exit_sec; /* on systemd's socket: exit once idle this long (the socket
                                 * starts it again); 0, or --listen: never */
} ServeArgs;

/* Until the listening socket fails: an exit status */
int image_serve(const ServeArgs *a);
