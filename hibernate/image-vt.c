/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "image-vt.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "vt-plan.h"

#define say(...) fprintf(stderr, "fridge-image-writer: console: " __VA_ARGS__)

/* A compositor in VT_PROCESS mode (or logind for it) answers the kernel's
 * release signal in milliseconds while it runs; one that has not in 2 s
 * will not, and the write does not wait for it */
#define SWITCH_WAIT_MS 2000
#define SWITCH_STEP_MS 10

/* The VT in front: sysfs (what logind watches), else VT_GETSTATE; 0: none */
static int active_vt(int tty0) {
        char buf[32] = "";
        _cleanup_close_ int fd = open("/sys/class/tty/tty0/active", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n > 0) {
                buf[n] = '\0';
                int vt = vt_parse_active(buf);
                if (vt > 0)
                        return vt;
        }
        struct vt_stat st;
        return ioctl(tty0, VT_GETSTATE, &st) == 0 ? st.v_active : 0;
}

static bool in_front(int tty0, int vt) {
        struct vt_stat st;
        return ioctl(tty0, VT_GETSTATE, &st) == 0 && st.v_active == vt;
}

/* VT_WAITACTIVE cannot be bounded: VT_GETSTATE, polled; the ms it took
 * (to the poll's step), or -1 */
static int wait_front(int tty0, int vt) {
        for (int waited = 0; waited < SWITCH_WAIT_MS; waited += SWITCH_STEP_MS) {
                if (in_front(tty0, vt))
                        return waited;
                nanosleep(&(struct timespec) { 0, SWITCH_STEP_MS * 1000000L }, NULL);
        }
        return in_front(tty0, vt) ? SWITCH_WAIT_MS : -1;
}

/* The switch its owner never answered is withdrawn (VT_RELDISP 0, the
 * owner's own "no"), or it would happen when the owner thaws, after the
 * write, onto a VT given back by then */
static void switch_withdraw(int from) {
        char path[32];
        snprintf(path, sizeof(path), "/dev/tty%d", from);
        _cleanup_close_ int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || ioctl(fd, VT_RELDISP, 0) < 0)
                say("could not withdraw the switch from tty%d: %m\n", from);
}

static void vt_close(ImageVt *vt) {
        if (vt->kd_mode >= 0 && ioctl(vt->fd, KDSETMODE, vt->kd_mode) < 0)
                say("could not set tty%d's mode back: %m\n", vt->vt);
        close(vt->fd);
        vt->fd = -1;
}

/* The VT given back. Its tty is released by a kernel work item after the
 * last close, EBUSY until then; a failure leaves it allocated, harmless. */
static bool vt_deallocate(int tty0, int n) {
        for (int waited = 0;; waited += SWITCH_STEP_MS) {
                if (ioctl(tty0, VT_DISALLOCATE, n) == 0)
                        return true;
                if (errno != EBUSY || waited >= SWITCH_WAIT_MS)
                        break;
                nanosleep(&(struct timespec) { 0, SWITCH_STEP_MS * 1000000L }, NULL);
        }
        say("could not deallocate tty%d: %m\n", n);
        return false;
}

/* Opened and in text mode (a VT left graphical by a program that died
 * would show nothing); vt->fd, or a negative errno */
static int vt_open(ImageVt *vt, int n) {
        char path[32];
        snprintf(path, sizeof(path), "/dev/tty%d", n);
        vt->fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (vt->fd < 0)
                return -errno;
        vt->vt = n;
        int mode = KD_TEXT;
        if (ioctl(vt->fd, KDGETMODE, &mode) == 0 && mode != KD_TEXT) {
                if (ioctl(vt->fd, KDSETMODE, KD_TEXT) < 0)
                        say("could not set %s to text mode: %m\n", path);
                else
                        vt->kd_mode = mode;
        }
        return vt->fd;
}

/* The VT brought to the front: the ms that took, or a negative errno with
 * the reason said */
static int vt_switch(ImageVt *vt, int tty0, int from) {
        if (ioctl(tty0, VT_ACTIVATE, vt->vt) < 0) {
                int e = errno;
                say("cannot switch from tty%d to tty%d: %s (tty%d is graphical and not in VT_PROCESS mode, or "
                    "switching is locked)\n", from, vt->vt, strerror(e), from);
                return -e;
        }
        int ms = wait_front(tty0, vt->vt);
        if (ms >= 0)
                return ms;
        switch_withdraw(from);
        if (in_front(tty0, vt->vt)) /* answered after all */
                return SWITCH_WAIT_MS;
        say("tty%d was not given up within %d ms (its owner did not answer the switch to tty%d)\n", from,
            SWITCH_WAIT_MS, vt->vt);
        return -ETIMEDOUT;
}

int image_vt_take(ImageVt *vt) {
        *vt = IMAGE_VT_NONE;
        _cleanup_close_ int tty0 = open("/dev/tty0", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (tty0 < 0) {
                int e = errno;
                say("cannot open /dev/tty0: %s; writing without a progress bar\n", strerror(e));
                return -e;
        }
        VtSeen seen = { .active = active_vt(tty0) };
        int kd = KD_GRAPHICS;
        seen.active_text = ioctl(tty0, KDGETMODE, &kd) == 0 && kd == KD_TEXT;
        if (ioctl(tty0, VT_OPENQRY, &seen.free_vt) < 0)
                seen.free_vt = 0;
        VtPlan p = vt_plan(&seen);
        if (p.kind == VT_PLAN_NONE) {
                say("%s; writing without a progress bar\n", p.why);
                return -ENODEV;
        }
        if (p.kind == VT_PLAN_STAY)
                say("%s\n", p.why);
        int r = vt_open(vt, p.vt);
        if (r < 0) {
                say("cannot open /dev/tty%d: %s; writing without a progress bar\n", p.vt, strerror(-r));
                return r;
        }
        if (p.kind == VT_PLAN_STAY) {
                say("the progress bar on tty%d (in front)\n", vt->vt);
                return vt->fd;
        }
        r = vt_switch(vt, tty0, seen.active);
        if (r < 0) {
                vt_close(vt);
                (void) vt_deallocate(tty0, p.vt);
                say("writing without a progress bar\n");
                return r;
        }
        vt->previous = seen.active;
        say("the progress bar on tty%d (tty%d was in front; switched in %d ms)\n", vt->vt, seen.active, r);
        return vt->fd;
}

void image_vt_release(ImageVt *vt) {
        if (vt->fd < 0)
                return;
        vt_close(vt);
        if (vt->previous <= 0)
                return;
        _cleanup_close_ int tty0 = open("/dev/tty0", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (tty0 < 0) {
                say("cannot open /dev/tty0 (%m): tty%d stays in front, not tty%d\n", vt->vt, vt->previous);
                return;
        }
        if (ioctl(tty0, VT_ACTIVATE, vt->previous) < 0) {
                say("could not switch back to tty%d (%m): tty%d stays in front\n", vt->previous, vt->vt);
                return;
        }
        if (wait_front(tty0, vt->previous) < 0) {
                say("tty%d did not come back to front within %d ms: tty%d stays\n", vt->previous, SWITCH_WAIT_MS,
                    vt->vt);
                return;
        }
        /* /dev/tty0 is the VT in front when it is opened: this one holds
         * the VT taken open (EBUSY), one opened now does not */
        close(tty0);
        tty0 = open("/dev/tty0", O_RDWR | O_NOCTTY | O_CLOEXEC);
        say("back on tty%d; tty%d %s\n", vt->previous, vt->vt,
            tty0 >= 0 && vt_deallocate(tty0, vt->vt) ? "deallocated" : "left allocated");
        vt->previous = 0;
}
