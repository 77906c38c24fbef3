/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* --console=vt (issue 17): the writer's bar on a text VT of its own, the
 * one the user sees. A compositor frozen with the rest of user space
 * could not give the screen back, so the switch is made before the freeze
 * (the compositor, or logind for it, releases its VT while it still runs)
 * and undone after the write: resumed, aborted or failed. Which VT comes
 * from vt-plan.c; this file only asks the kernel and switches. Every step
 * may fail without stopping the write: no console means no bar, never no
 * hibernation; each failure is said on stderr (the journal). */

typedef struct ImageVt {
        int fd;       /* /dev/ttyN drawn on (O_NONBLOCK), or -1 */
        int vt;       /* its N */
        int previous; /* in front before, switched back to after; 0: no switch made */
        int kd_mode;  /* its KD mode before it was set to text; -1: unchanged */
} ImageVt;

#define IMAGE_VT_NONE ((ImageVt) { .fd = -1, .kd_mode = -1 })

/* Before the freeze: a VT found, in text mode, brought to the front
 * (waiting at most 2 s for its owner to let the one in front go) and
 * opened; its fd (kept in vt), or a negative errno, the reason said */
int image_vt_take(ImageVt *vt);
/* After the write: its mode back, closed, the VT in front before back in
 * front, the one taken deallocated. Nothing when image_vt_take failed. */
void image_vt_release(ImageVt *vt);
