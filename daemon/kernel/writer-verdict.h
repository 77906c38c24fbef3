/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* What fridge-image-writer last said it could do (its "check": the
 * snapshot device, its capability, lockdown, the next boot's initramfs
 * holding fridge-resume), so that HibernateWriter says which writer a
 * hibernation will use without fridged reading an initramfs itself. The
 * question goes out on the loop, never waited for: until the answer comes
 * the writer is taken at its word. An answer holds until the initramfs
 * it looked at changes (initramfs-watch.h; a stat of it, writer_file_key(),
 * at each read where no watch could be set), and the writer is asked again
 * then; once older
 * than WRITER_VERDICT_TTL_USEC the writer is asked again, and the old
 * answer stands until the new one comes. A cycle asks the writer all the
 * same: this only tells. */

#define WRITER_VERDICT_TTL_USEC (60 * USEC_PER_SEC)
/* After its initramfs changed, the writer is asked again this much later
 * (update-initramfs writes, then renames; a read asks at once) */
#define WRITER_VERDICT_REASK_USEC (100 * USEC_PER_MSEC)
/* A writer busy with a hibernation answers after it; one hung is let go */
#define WRITER_VERDICT_TIMEOUT_USEC (120 * USEC_PER_SEC)

typedef struct WriterVerdict WriterVerdict;

/* socket_path: where the writer listens (copied); ttl_usec: how long an
 * answer stands unasked (WRITER_VERDICT_TTL_USEC; tests, less) */
WriterVerdict *writer_verdict_new(sd_event *e, const char *socket_path, uint64_t ttl_usec);
WriterVerdict *writer_verdict_free(WriterVerdict *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WriterVerdict, writer_verdict_free)

/* NULL: the writer can write an image, as far as is known; else why it
 * cannot, in its words. Asks it again (without waiting) when no answer
 * holds and no question is out. */
const char *writer_verdict_refusal(WriterVerdict *v);
