/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fakesys: a simulated kernel /sys/power (and one RTC) for tests, so that
 * fridged can run a whole cycle with --sysfs-root pointing here instead of
 * at the host's real sysfs. See README.md for the tree and the semantics.
 */
#include "fakesys.h"
#include "fuse-run.h"

#include <errno.h>
#include <getopt.h>
#include <glib.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/* ---- FUSE operations -------------------------------------------------- */

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        cfg->direct_io = 1;
        /* Reads must always reach us: contents change behind the kernel. */
        cfg->attr_timeout = 0;
        cfg->entry_timeout = 0;
        cfg->negative_timeout = 0;
        return NULL;
}

static mode_t mode_of(int node)
{
        if (node == NODE_CONTROL)
                return S_IFREG | 0200;
        if (node == NODE_LOG)
                return S_IFREG | 0444;
        if (node == NODE_DIR)
                return S_IFDIR | 0755;
        return S_IFREG | (fakesys_files[node].mode ? fakesys_files[node].mode : 0644);
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
        int node = fakesys_node_of(path);

        if (node == NODE_NONE)
                return -ENOENT;
        memset(st, 0, sizeof(*st));
        st->st_mode = mode_of(node);
        st->st_nlink = node == NODE_DIR ? 2 : 1;
        st->st_size = 4096;
        st->st_uid = getuid();
        st->st_gid = getgid();
        st->st_atime = st->st_mtime = st->st_ctime = fakesys.started;
        return 0;
}

static void add_child(GPtrArray *names, const char *rel_below)
{
        g_autofree char *name = g_strndup(rel_below, strcspn(rel_below, "/"));

        for (guint i = 0; i < names->len; i++)
                if (strcmp(names->pdata[i], name) == 0)
                        return;
        g_ptr_array_add(names, g_steal_pointer(&name));
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        const char *rel;
        size_t len;

        if (fakesys_node_of(path) != NODE_DIR)
                return -ENOTDIR;
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        if (strcmp(path, "/") == 0) {
                fill(buf, "control", NULL, 0, 0);
                fill(buf, "log", NULL, 0, 0);
                fill(buf, "sys", NULL, 0, 0);
                return 0;
        }
        rel = strcmp(path, "/sys") == 0 ? "" : path + 5;
        len = strlen(rel);
        for (int i = 0; i < N_FILES; i++) {
                if (!fakesys_files[i].present)
                        continue;
                if (len == 0)
                        add_child(names, fakesys_files[i].path);
                else if (strncmp(fakesys_files[i].path, rel, len) == 0 && fakesys_files[i].path[len] == '/')
                        add_child(names, fakesys_files[i].path + len + 1);
        }
        for (guint i = 0; i < names->len; i++)
                fill(buf, names->pdata[i], NULL, 0, 0);
        return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
        int node = fakesys_node_of(path);
        int acc = fi->flags & O_ACCMODE;
        mode_t mode;

        if (node == NODE_NONE)
                return -ENOENT;
        if (node == NODE_DIR)
                return -EISDIR;
        mode = mode_of(node);
        /* Like kernfs: no store method = no write open, even for root. */
        if ((acc != O_RDONLY && !(mode & 0222)) || (acc != O_WRONLY && !(mode & 0444)))
                return -EACCES;
        fi->fh = (uint64_t)node;
        fi->direct_io = 1;
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 15)
        /* Without it the FUSE kernel module serialises writes to one inode,
         * so a second state write would wait instead of getting EBUSY. */
        fi->parallel_direct_writes = 1;
#endif
        return 0;
}

/* `echo > file` truncates first; sysfs ignores that, so do we. */
static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
        int node = fakesys_node_of(path);

        if (node == NODE_NONE)
                return -ENOENT;
        return node == NODE_DIR ? -EISDIR : 0;
}

static int copy_out(const char *src, size_t srclen, char *buf, size_t size, off_t off)
{
        if (off < 0 || (size_t)off >= srclen)
                return 0;
        size = MIN(size, srclen - (size_t)off);
        memcpy(buf, src + off, size);
        return (int)size;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
        int node = (int)fi->fh;
        g_autofree char *text = NULL;
        int r;

        pthread_mutex_lock(&fakesys.lock);
        if (node == NODE_LOG) {
                r = copy_out(fakesys.log->str, fakesys.log->len, buf, size, off);
                pthread_mutex_unlock(&fakesys.lock);
                return r;
        }
        if (node < 0 || node >= N_FILES) {
                pthread_mutex_unlock(&fakesys.lock);
                return -EACCES;
        }
        if (node == F_WAKEALARM)
                fakesys_expire_alarm();
        /* The kernel's pm_wakeup_irq_show() when no IRQ woke the machine */
        if (node == F_WAKEUP_IRQ && !fakesys_files[node].value[0]) {
                pthread_mutex_unlock(&fakesys.lock);
                return -ENODATA;
        }
        text = fakesys_files[node].value[0] ? g_strconcat(fakesys_files[node].value, "\n", NULL) : g_strdup("");
        pthread_mutex_unlock(&fakesys.lock);
        return copy_out(text, strlen(text), buf, size, off);
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
        int node = (int)fi->fh;
        g_autofree char *val = g_strndup(buf, size);
        size_t len = strlen(val);
        int err;

        /* sysfs store methods see the trailing newline of `echo` and drop it. */
        if (len > 0 && val[len - 1] == '\n')
                val[len - 1] = '\0';
        if (node == NODE_CONTROL)
                err = fakesys_control_write(val);
        else if (node >= 0 && node < N_FILES)
                err = fakesys_sys_write(&fakesys_files[node], val);
        else
                err = EACCES;
        return err ? -err : (int)size;
}

static const struct fuse_operations fs_ops = {
        .init = fs_init,
        .getattr = fs_getattr,
        .readdir = fs_readdir,
        .open = fs_open,
        .truncate = fs_truncate,
        .read = fs_read,
        .write = fs_write,
};

/* ---- options ---------------------------------------------------------- */

static void set_value(int i, const char *v)
{
        g_strlcpy(fakesys_files[i].value, v, VALUE_MAX);
}

static void init_files(void)
{
        for (int i = 0; i < N_FILES; i++)
                fakesys_files[i].present = i < F_TOI_FIRST;
        set_value(F_STATE, "freeze mem disk");
        set_value(F_MEM_SLEEP, "s2idle [deep]");
        set_value(F_DISK, "[platform] shutdown reboot suspend test_resume");
        set_value(F_PM_TEST, "[none] core processors platform devices freezer");
        set_value(F_IMAGE_SIZE, "838860800");
        set_value(F_RESUME, "0:0");
        set_value(F_FREEZE_TIMEOUT, "20000");
        set_value(F_SYNC_ON_SUSPEND, "1");
        set_value(F_FAILED_ERRNO, "0");
        set_value(F_RTC_SOURCE_NAME, "rtc0");
        set_value(F_RTC_SOURCE_COUNT, "0");
        /* TuxOnIce 3.3's defaults */
        set_value(F_TOI_LAST_RESULT, "0");
        set_value(F_TOI_IMAGE_SIZE_LIMIT, "0");
        set_value(F_TOI_ALGORITHM, "lzo");
        set_value(F_TOI_COMPRESSION, "0");
        set_value(F_TOI_ENABLE_ESCAPE, "0");
        set_value(F_TOI_VERSION, "3.3");
        fakesys_render_count();
        fakesys_render_alarm();
}

/* --file=PATH=VALUE: a read-only file below sys/ */
static bool add_file(const char *arg)
{
        static int next = F_EXTRA_FIRST;
        const char *eq = strchr(arg, '=');

        if (!eq || eq == arg || arg[0] == '/' || next == N_FILES)
                return false;
        fakesys_files[next] = (struct sysfile){ .path = g_strndup(arg, eq - arg), .kind = K_STAT, .mode = 0444,
                                                .present = true };
        set_value(next++, eq + 1);
        return true;
}

static void usage(FILE *out, const char *argv0)
{
        fprintf(out,
                "Usage: %s [options] MOUNTPOINT\n"
                "  --states=WORDS      (default \"freeze mem disk\")\n"
                "  --mem-sleep=WORDS   (default \"s2idle [deep]\")\n"
                "  --disk=WORDS        (default \"[platform] shutdown reboot suspend test_resume\")\n"
                "  --pm-test=WORDS     (default \"[none] core processors platform devices freezer\")\n"
                "  --sleep-ms=N        simulated sleep length (default 100)\n"
                "  --tuxonice          also a TuxOnIce power/tuxonice tree\n"
                "  --file=PATH=VALUE   also a read-only file sys/PATH (up to 8)\n"
                "  --no-pm-test --no-mem-sleep --no-rtc --no-wakeup-count --allow-other\n",
                argv0);
}

static bool parse_options(int argc, char **argv, bool *allow_other)
{
        enum { O_STATES = 256, O_MEM, O_DISK, O_PMTEST, O_SLEEP, O_NOPM, O_NOMEM, O_NORTC, O_NOWC, O_ALLOW, O_HELP, O_TOI,
               O_FILE };
        static const struct option opts[] = {
                { "states", required_argument, NULL, O_STATES },
                { "mem-sleep", required_argument, NULL, O_MEM },
                { "disk", required_argument, NULL, O_DISK },
                { "pm-test", required_argument, NULL, O_PMTEST },
                { "sleep-ms", required_argument, NULL, O_SLEEP },
                { "no-pm-test", no_argument, NULL, O_NOPM },
                { "no-mem-sleep", no_argument, NULL, O_NOMEM },
                { "no-rtc", no_argument, NULL, O_NORTC },
                { "no-wakeup-count", no_argument, NULL, O_NOWC },
                { "allow-other", no_argument, NULL, O_ALLOW },
                { "tuxonice", no_argument, NULL, O_TOI },
                { "file", required_argument, NULL, O_FILE },
                { "help", no_argument, NULL, O_HELP },
                {}
        };
        unsigned long long n;
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case O_STATES: set_value(F_STATE, optarg); break;
                case O_MEM: set_value(F_MEM_SLEEP, optarg); break;
                case O_DISK: set_value(F_DISK, optarg); break;
                case O_PMTEST: set_value(F_PM_TEST, optarg); break;
                case O_SLEEP:
                        if (!fakesys_parse_ull(optarg, LONG_MAX / 1000, &n))
                                return false;
                        fakesys.sleep_ms = (long)n;
                        break;
                case O_NOPM: fakesys_files[F_PM_TEST].present = false; break;
                case O_NOMEM: fakesys_files[F_MEM_SLEEP].present = false; break;
                case O_NORTC:
                        fakesys_files[F_WAKEALARM].present = false;
                        fakesys_files[F_RTC_SOURCE_NAME].present = false;
                        fakesys_files[F_RTC_SOURCE_COUNT].present = false;
                        break;
                case O_NOWC: fakesys_files[F_WAKEUP_COUNT].present = false; break;
                case O_ALLOW: *allow_other = true; break;
                case O_TOI:
                        for (int i = F_TOI_FIRST; i < F_EXTRA_FIRST; i++)
                                fakesys_files[i].present = true;
                        break;
                case O_FILE:
                        if (!add_file(optarg))
                                return false;
                        break;
                case O_HELP: usage(stdout, argv[0]); exit(0);
                default: return false;
                }
        }
        return optind == argc - 1;
}

int main(int argc, char **argv)
{
        bool allow_other = false;
        int r;

        fakesys.log = g_string_new(NULL);
        fakesys.started = time(NULL);
        init_files();
        if (!parse_options(argc, argv, &allow_other)) {
                usage(stderr, argv[0]);
                return 2;
        }
        r = fuse_run(argv[0], argv[optind], allow_other, "fakesys", &fs_ops,
                     &(FuseRunWaits){ &fakesys.lock, &fakesys.cond, &fakesys.quitting });
        g_string_free(fakesys.log, TRUE);
        for (int i = F_EXTRA_FIRST; i < N_FILES; i++)
                g_free((char *)fakesys_files[i].path);
        return r;
}

