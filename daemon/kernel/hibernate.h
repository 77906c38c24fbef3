/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Hibernation pre-flight: is there a swap partition the image fits in, and
 * will the next boot look for it there (/sys/power/resume)? Answered before
 * a hibernate cycle flushes or freezes anything, and for CanHibernate. */

typedef struct HibernateTarget {
        char *reason;      /* NULL when hibernation can work; else what is missing */
        char *device;      /* the swap the image goes to, e.g. "/dev/vdb" */
        char *set_resume;  /* "MAJ:MIN" fridged must write to /sys/power/resume, or NULL */
        uint64_t free_kib; /* free space on `device` */
        uint64_t need_kib; /* the expected image: anonymous memory */
} HibernateTarget;

HibernateTarget *hibernate_target_free(HibernateTarget *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HibernateTarget, hibernate_target_free)

/* The swap a check chose, kept for the next check: the choice stats every
 * swap and resolves ResumeDevice=, and what it rests on (the swaps
 * listed, /sys/power/resume, ResumeDevice=) seldom moves; when any of it
 * does, the next check chooses afresh. The image-size verdict is never
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
