/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Hibernation pre-flight: is there a swap partition the image fits in, and
 * will the next boot look for it there (/sys/power/resume)? Answered before
 * a hibernate cycle flushes or freezes anything, and for CanHibernate. */

/* Whether the image lands on encrypted storage: the resume device is a
 * dm-crypt device (LUKS: dm/uuid "CRYPT-…") or sits on one (an LVM volume,
 * a partition). Never a refusal: a notice that a plain copy of memory
 * (keys, passwords) is written to disk. */
typedef enum HibernateEncryption {
        HIBERNATE_ENCRYPTION_UNKNOWN,   /* no device chosen, or sysfs did not say */
        HIBERNATE_ENCRYPTION_NO,
        HIBERNATE_ENCRYPTION_YES,
} HibernateEncryption;

/* "unknown", "no", "yes" */
const char *hibernate_encryption_to_string(HibernateEncryption e);

/* The block device MAJ:MIN's encryption, from SYSFS/dev/block/MAJ:MIN (dm/uuid,
 * slaves/, partition): yes when it is a dm-crypt device or all it rests on
 * is encrypted, no when something below is plain, unknown when sysfs cannot
 * be read. `sysfs_fd` is the root holding sys/. */
HibernateEncryption hibernate_device_encryption(int sysfs_fd, unsigned major, unsigned minor);

typedef struct HibernateTarget {
        char *reason;      /* NULL when hibernation can work; else what is missing */
        char *device;      /* the swap the image goes to, e.g. "/dev/vdb" */
        char *set_resume;  /* "MAJ:MIN" fridged must write to /sys/power/resume, or NULL */
        uint64_t free_kib; /* free space on `device` */
        uint64_t need_kib; /* the expected image: anonymous memory */
        HibernateEncryption encrypted; /* of `device` (for a swap file: the device holding it) */
        char *warning;     /* a notice that does not refuse (the device is not encrypted), or NULL */
} HibernateTarget;

HibernateTarget *hibernate_target_free(HibernateTarget *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HibernateTarget, hibernate_target_free)

/* The swap a check chose and its encryption, kept for the next check: the
 * choice stats every swap and resolves ResumeDevice=, and what it rests on
 * (the swaps listed, /sys/power/resume, ResumeDevice=) seldom moves; when
 * any of it does, the next check chooses afresh. The image-size verdict is never
 * kept: it follows the memory in use. */
typedef struct HibernateChoice HibernateChoice;
HibernateChoice *hibernate_choice_free(HibernateChoice *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HibernateChoice, hibernate_choice_free)

typedef struct HibernateCache {
        HibernateChoice *choice;
        uint64_t call;          /* nonzero: `last` answers every check made for this call */
        HibernateTarget *last;
} HibernateCache;
void hibernate_cache_clear(HibernateCache *c);

/* Reads PROC/swaps, PROC/meminfo and SYSFS/sys/power/resume. Never fails:
 * what cannot be read becomes the reason. `resume_device` is the configured
 * ResumeDevice= (a block device path or "MAJ:MIN"), or NULL. `cache`
 * (NULL: none) keeps the swap's choice between checks, and the whole
 * answer for the rest of one call (a GetAll reads five properties that
 * need it): `call` names it, 0 for a check of its own. */
HibernateTarget *hibernate_check(int sysfs_fd, int proc_fd, const char *resume_device, HibernateCache *cache,
                                 uint64_t call);
