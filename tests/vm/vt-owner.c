/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vt-owner TTY ack|never: a compositor's hold on its VT, for the qemu
 * tier (vm-uhib-vt): TTY set graphical and VT_PROCESS, so the kernel asks
 * this process (SIGUSR1) before switching away from it. ack: it lets go at
 * once (VT_RELDISP 1, as logind does for a session) and takes the VT back
 * when it returns (SIGUSR2, VT_ACKACQ); never: it does not answer, as a
 * hung compositor. Each signal is said on stdout ("released",
 * "not released", "acquired"); "ready" once it holds the VT. Runs until
 * SIGTERM. Never run on a host's VTs. */
#include <fcntl.h>
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
        if (argc != 3 || (strcmp(argv[2], "ack") != 0 && strcmp(argv[2], "never") != 0))
                return fprintf(stderr, "usage: vt-owner TTY ack|never\n"), 2;
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        sigaddset(&set, SIGUSR2);
        sigaddset(&set, SIGTERM);
        sigprocmask(SIG_BLOCK, &set, NULL);
        int fd = open(argv[1], O_RDWR | O_NOCTTY | O_CLOEXEC);
        struct vt_mode m = { .mode = VT_PROCESS, .relsig = SIGUSR1, .acqsig = SIGUSR2 };
        if (fd < 0 || ioctl(fd, KDSETMODE, KD_GRAPHICS) < 0 || ioctl(fd, VT_SETMODE, &m) < 0)
                return fprintf(stderr, "vt-owner: cannot hold %s: %m\n", argv[1]), 1;
        bool ack = strcmp(argv[2], "ack") == 0;
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("ready\n");
        for (int sig; sigwait(&set, &sig) == 0 && sig != SIGTERM;) {
                if (sig == SIGUSR2) {
                        (void) ioctl(fd, VT_RELDISP, VT_ACKACQ);
                        printf("acquired\n");
                } else if (ack) {
                        printf(ioctl(fd, VT_RELDISP, 1) == 0 ? "released\n" : "release refused: %m\n");
                } else
                        printf("not released\n");
        }
        m = (struct vt_mode) { .mode = VT_AUTO };
        (void) ioctl(fd, VT_SETMODE, &m);
        (void) ioctl(fd, KDSETMODE, KD_TEXT);
        return 0;
}
