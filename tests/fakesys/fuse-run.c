/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-run.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sig_ctx {
        struct fuse *f;
        pthread_t main_thread;
        const FuseRunWaits *waits;
};

static void noop_handler(int sig) {}

struct timespec fuse_run_deadline_ms(long ms)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += ms / 1000;
        ts.tv_nsec += (ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        return ts;
}

static void cond_init(pthread_cond_t *cond)
{
        pthread_condattr_t attr;

        /* Monotonic: a test that changes the wall clock must not stretch
         * or cut a simulated sleep. */
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(cond, &attr);
        pthread_condattr_destroy(&attr);
}

/* The only thread that receives SIGTERM/SIGINT/SIGHUP (all others block
 * them), so the handlers' own waits are woken through their condition
 * variables instead of a signal that could land on any thread. */
static void *signal_thread(void *data)
{
        struct sig_ctx *ctx = data;
        sigset_t set;
        int sig;

        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        if (sigwait(&set, &sig) != 0)
                return NULL;
        pthread_mutex_lock(ctx->waits->lock);
        *ctx->waits->quitting = true;
        pthread_cond_broadcast(ctx->waits->cond);
        pthread_mutex_unlock(ctx->waits->lock);
        fuse_exit(ctx->f);
        /* libfuse's main thread waits in sem_wait() and rechecks the exit
         * flag only when interrupted; a single kick could land just before
         * it starts waiting, so repeat until main cancels this thread. */
        for (;;) {
                pthread_kill(ctx->main_thread, SIGUSR1);
                nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000000L }, NULL);
        }
        return NULL;
}

static void setup_signals(void)
{
        struct sigaction sa = { .sa_handler = noop_handler };
        sigset_t set;

        /* No SA_RESTART: the kick must interrupt sem_wait(). */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        signal(SIGPIPE, SIG_IGN);
}

static struct fuse *new_fuse(const char *argv0, bool allow_other,
                             const char *fsname,
                             const struct fuse_operations *fs_ops)
{
        char opts[256];
        struct fuse *f;

        snprintf(opts, sizeof(opts), "fsname=%s,subtype=%s%s", fsname, fsname,
                 allow_other ? ",allow_other" : "");
        char *argv[] = { (char *)argv0, (char *)"-o", opts, NULL };
        struct fuse_args args = FUSE_ARGS_INIT(3, argv);

        f = fuse_new(&args, fs_ops, sizeof(*fs_ops), NULL);
        fuse_opt_free_args(&args);
        return f;
}

static int serve(struct fuse *f, const FuseRunWaits *waits)
{
        struct sig_ctx ctx = {
                .f = f,
                .main_thread = pthread_self(),
                .waits = waits,
        };
        struct fuse_loop_config *cfg;
        pthread_t thr;
        int r;

        if (pthread_create(&thr, NULL, signal_thread, &ctx) != 0)
                return 1;
        cfg = fuse_loop_cfg_create();
        /* libfuse caps workers at 10 by default; held writes each pin one,
         * and the control file must still be served to release them. */
        fuse_loop_cfg_set_max_threads(cfg, 256);
        fuse_loop_cfg_set_idle_threads(cfg, 16);
        r = fuse_loop_mt(f, cfg);
        fuse_loop_cfg_destroy(cfg);
        /* Unmount before joining: it aborts the connection, so nothing can
         * stay blocked on this file system. */
        fuse_unmount(f);
        pthread_cancel(thr);
        pthread_join(thr, NULL);
        return r == 0 ? 0 : 1;
}

int fuse_run(const char *argv0, const char *mountpoint, bool allow_other,
             const char *fsname, const struct fuse_operations *fs_ops,
             const FuseRunWaits *waits)
{
        struct fuse *f;
        int r;

        cond_init(waits->cond);
        setup_signals();
        f = new_fuse(argv0, allow_other, fsname, fs_ops);
        if (!f)
                return 1;
        if (fuse_mount(f, mountpoint) != 0) {
                fuse_destroy(f);
                return 1;
        }
        r = serve(f, waits);
        fuse_destroy(f);
        return r;
}
