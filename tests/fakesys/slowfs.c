/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * slowfs: an in-memory flat FUSE file system with the kernel writeback
 * cache on, whose FUSE writes can be held or slowed from a control file.
 * Writes land in the page cache as dirty pages and only reach us on
 * writeback, so a syncfs() of the mount blocks for as long as we hold
 * them: the honest slow flush that fridged's flush phase must survive.
 * Directories (mkdir, rename of files) are there so that a state
 * directory can live on it: fridged's atomic writes (write, fsync,
 * rename) then stall on a held slowfs as on a stuck disk.
 */
#include "fuse-run.h"

#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define CONTROL_NAME ".control"
#define STATS_NAME ".stats"

/* fh values of the two virtual files; real files use their node pointer. */
enum { FH_CONTROL = 1, FH_STATS = 2 };

struct node {
        int refs;               /* the table's one, plus one per open */
        GByteArray *data;
        mode_t mode;
        struct timespec mtime;
};

static struct {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        GHashTable *files;      /* name -> struct node */
        bool hold;
        long delay_ms;
        unsigned long long writes, bytes;
        unsigned held;
        bool quitting;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- nodes (called with S.lock held) ---------------------------------- */

static struct node *node_new(mode_t mode)
{
        struct node *n = g_new0(struct node, 1);

        n->refs = 1;
        n->data = g_byte_array_new();
        n->mode = S_IFREG | (mode & 07777);
        clock_gettime(CLOCK_REALTIME, &n->mtime);
        return n;
}

static void node_unref(struct node *n)
{
        if (n && --n->refs == 0) {
                g_byte_array_unref(n->data);
                g_free(n);
        }
}

static void node_unref_void(void *n)
{
        node_unref(n);
}

/* "/dir/name" keyed by "dir/name"; NULL for the root or virtual names. */
static struct node *lookup(const char *path)
{
        if (!path || path[0] != '/')
                return NULL;
        return g_hash_table_lookup(S.files, path + 1);
}

/* May `path` be made: its parent is the root or a directory we have */
static bool parent_is_dir(const char *path)
{
        const char *slash = path ? strrchr(path, '/') : NULL;
        if (!slash || strlen(slash + 1) > NAME_MAX || !slash[1])
                return false;
        if (slash == path)
                return true;
        g_autofree char *parent = g_strndup(path, slash - path);
        struct node *p = lookup(parent);
        return p && S_ISDIR(p->mode);
}

/* Is `key` an entry right below directory `dir` ("" for the root) */
static bool in_dir(const char *key, const char *dir)
{
        size_t n = strlen(dir);
        if (n == 0)
                return !strchr(key, '/');
        return strncmp(key, dir, n) == 0 && key[n] == '/' && !strchr(key + n + 1, '/');
}

static bool is_virtual(const char *path, uint64_t *fh)
{
        if (path && strcmp(path, "/" CONTROL_NAME) == 0)
                *fh = FH_CONTROL;
        else if (path && strcmp(path, "/" STATS_NAME) == 0)
                *fh = FH_STATS;
        else
                return false;
        return true;
}

/* ---- control ---------------------------------------------------------- */

static int run_command(const char *line)
{
        unsigned long long n;
        char *end;

        if (strcmp(line, "hold") == 0)
                S.hold = true;
        else if (strcmp(line, "release") == 0)
                S.hold = false;
        else if (g_str_has_prefix(line, "write-delay-ms ") && g_ascii_isdigit(line[15]) &&
                 (errno = 0, n = strtoull(line + 15, &end, 10), errno == 0) &&
                 *end == '\0' && n <= LONG_MAX / 1000)
                S.delay_ms = (long)n;
        else
                return EINVAL;
        return 0;
}

static int control_write(const char *buf, size_t size)
{
        g_autofree char *text = g_strndup(buf, size);
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        int err = 0;

        pthread_mutex_lock(&S.lock);
        for (char **l = lines; *l && !err; l++) {
                g_strstrip(*l);
                if (**l)
                        err = run_command(*l);
        }
        pthread_cond_broadcast(&S.cond);
        pthread_mutex_unlock(&S.lock);
        return err ? -err : (int)size;
}

/* ---- FUSE operations -------------------------------------------------- */

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        /* The whole point: writes stay dirty in the page cache until
         * writeback (or syncfs) sends them to us. */
        if (conn->capable & FUSE_CAP_WRITEBACK_CACHE)
                conn->want |= FUSE_CAP_WRITEBACK_CACHE;
        /* Unlinked-but-open files vanish at once instead of being renamed
         * to .fuse_hidden*; ops then get NULL paths and use fh. */
        cfg->hard_remove = 1;
        cfg->nullpath_ok = 1;
        return NULL;
}

static void fill_stat(struct stat *st, mode_t mode, off_t size, struct timespec mtime)
{
        memset(st, 0, sizeof(*st));
        st->st_mode = mode;
        st->st_nlink = S_ISDIR(mode) ? 2 : 1;
        st->st_size = size;
        st->st_blocks = (size + 511) / 512;
        st->st_uid = getuid();
        st->st_gid = getgid();
        st->st_atim = st->st_mtim = st->st_ctim = mtime;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
        struct timespec now;
        struct node *n;
        uint64_t fh;

        clock_gettime(CLOCK_REALTIME, &now);
        /* With nullpath_ok an fstat of the root directory comes with no
         * path and fh 0 (we have no opendir). */
        if ((path && strcmp(path, "/") == 0) || (!path && fi && fi->fh == 0)) {
                fill_stat(st, S_IFDIR | 0755, 0, now);
                return 0;
        }
        if (fi && fi->fh <= FH_STATS)
                fh = fi->fh;
        else if (!is_virtual(path, &fh))
                fh = 0;
        if (fh) {
                fill_stat(st, fh == FH_CONTROL ? S_IFREG | 0200 : S_IFREG | 0444, 4096, now);
                return 0;
        }
        pthread_mutex_lock(&S.lock);
        n = fi ? (struct node *)(uintptr_t)fi->fh : lookup(path);
        if (n)
                fill_stat(st, n->mode, (off_t)n->data->len, n->mtime);
        pthread_mutex_unlock(&S.lock);
        return n ? 0 : -ENOENT;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
        GHashTableIter it;
        gpointer key, value;
        const char *dir = "";

        /* fh is the directory's node (fs_opendir), 0 for the root; path is
         * NULL with nullpath_ok when libfuse has the open directory */
        pthread_mutex_lock(&S.lock);
        if (fi && fi->fh > FH_STATS) {
                g_hash_table_iter_init(&it, S.files);
                while (g_hash_table_iter_next(&it, &key, &value))
                        if (value == (void *)(uintptr_t)fi->fh)
                                dir = key;
        }
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        /* .control and .stats are deliberately not listed. */
        g_hash_table_iter_init(&it, S.files);
        while (g_hash_table_iter_next(&it, &key, NULL))
                if (in_dir(key, dir))
                        fill(buf, (char *)key + (*dir ? strlen(dir) + 1 : 0), NULL, 0, 0);
        pthread_mutex_unlock(&S.lock);
        return 0;
}

static int open_virtual(uint64_t fh, struct fuse_file_info *fi)
{
        int acc = fi->flags & O_ACCMODE;

        if ((fh == FH_CONTROL && acc == O_RDONLY) || (fh == FH_STATS && acc != O_RDONLY))
                return -EACCES;
        fi->fh = fh;
        /* Bypass the page cache: contents are computed per read/write. */
        fi->direct_io = 1;
        return 0;
}

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
        struct node *n;
        uint64_t fh;

        if (is_virtual(path, &fh))
                return open_virtual(fh, fi);
        pthread_mutex_lock(&S.lock);
        if (!parent_is_dir(path)) {
                pthread_mutex_unlock(&S.lock);
                return -ENOENT;
        }
        n = lookup(path);
        if (!n) {
                n = node_new(mode);
                g_hash_table_replace(S.files, g_strdup(path + 1), n);
        }
        n->refs++;
        pthread_mutex_unlock(&S.lock);
        fi->fh = (uintptr_t)n;
        return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
        struct node *n;
        uint64_t fh;

        if (is_virtual(path, &fh))
                return open_virtual(fh, fi);
        pthread_mutex_lock(&S.lock);
        n = lookup(path);
        if (n)
                n->refs++;
        pthread_mutex_unlock(&S.lock);
        if (!n)
                return -ENOENT;
        fi->fh = (uintptr_t)n;
        return 0;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
        if (fi->fh <= FH_STATS)
                return 0;
        pthread_mutex_lock(&S.lock);
        node_unref((struct node *)(uintptr_t)fi->fh);
        pthread_mutex_unlock(&S.lock);
        return 0;
}

static int read_stats(char *buf, size_t size, off_t off)
{
        char text[128];
        int len;

        pthread_mutex_lock(&S.lock);
        len = snprintf(text, sizeof(text), "writes=%llu held=%u bytes=%llu\n",
                       S.writes, S.held, S.bytes);
        pthread_mutex_unlock(&S.lock);
        if (off >= len)
                return 0;
        size = MIN(size, (size_t)(len - off));
        memcpy(buf, text + off, size);
        return (int)size;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
        struct node *n = (struct node *)(uintptr_t)fi->fh;

        if (fi->fh == FH_STATS)
                return read_stats(buf, size, off);
        if (fi->fh == FH_CONTROL)
                return -EACCES;
        pthread_mutex_lock(&S.lock);
        if (off < 0 || (size_t)off >= n->data->len)
                size = 0;
        else
                size = MIN(size, n->data->len - (size_t)off);
        if (size)
                memcpy(buf, n->data->data + off, size);
        pthread_mutex_unlock(&S.lock);
        return (int)size;
}

/* Blocks (mutex released) while held or delayed; returns with S.lock. */
static void hold_gate(void)
{
        if (S.hold && !S.quitting) {
                S.held++;
                while (S.hold && !S.quitting)
                        pthread_cond_wait(&S.cond, &S.lock);
                S.held--;
        }
        if (S.delay_ms > 0) {
                struct timespec dl = fuse_run_deadline_ms(S.delay_ms);

                while (!S.quitting && pthread_cond_timedwait(&S.cond, &S.lock, &dl) != ETIMEDOUT)
                        ;
        }
}

static void write_gate(void)
{
        S.writes++;
        hold_gate();
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
        struct node *n = (struct node *)(uintptr_t)fi->fh;

        if (fi->fh == FH_CONTROL)
                return control_write(buf, size);
        if (fi->fh == FH_STATS)
                return -EACCES;
        if (off < 0 || (unsigned long long)off + size > G_MAXUINT / 2)
                return -EFBIG;
        pthread_mutex_lock(&S.lock);
        write_gate();
        if ((size_t)off + size > n->data->len)
                g_byte_array_set_size(n->data, (guint)(off + size));
        memcpy(n->data->data + off, buf, size);
        clock_gettime(CLOCK_REALTIME, &n->mtime);
        S.bytes += size;
        pthread_mutex_unlock(&S.lock);
        return (int)size;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
        uint64_t fh;
        struct node *n;

        if (is_virtual(path, &fh) || (fi && fi->fh <= FH_STATS))
                return 0;
        if (size < 0 || size > G_MAXUINT / 2)
                return -EFBIG;
        pthread_mutex_lock(&S.lock);
        n = fi ? (struct node *)(uintptr_t)fi->fh : lookup(path);
        if (n) {
                guint old = n->data->len;

                g_byte_array_set_size(n->data, (guint)size);
                if ((guint)size > old)
                        memset(n->data->data + old, 0, (guint)size - old);
        }
        pthread_mutex_unlock(&S.lock);
        return n ? 0 : -ENOENT;
}

static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
        struct node *n;

        pthread_mutex_lock(&S.lock);
        n = fi && fi->fh > FH_STATS ? (struct node *)(uintptr_t)fi->fh : lookup(path);
        /* With the writeback cache, syncfs() waits for this mtime update
         * (write_inode) even where it no longer waits for the data writes
         * (6.x kernels with SB_I_NO_DATA_INTEGRITY on FUSE): a slow server
         * is slow here too, which is what lets tests hold a flush. */
        if (n)
                hold_gate();
        /* The writeback cache keeps mtime in the kernel and sends it here. */
        if (n && tv[1].tv_nsec == UTIME_NOW)
                clock_gettime(CLOCK_REALTIME, &n->mtime);
        else if (n && tv[1].tv_nsec != UTIME_OMIT)
                n->mtime = tv[1];
        pthread_mutex_unlock(&S.lock);
        return 0;
}

static int fs_unlink(const char *path)
{
        bool found;

        pthread_mutex_lock(&S.lock);
        found = lookup(path) && g_hash_table_remove(S.files, path + 1);
        pthread_mutex_unlock(&S.lock);
        return found ? 0 : -ENOENT;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
        return 0;       /* memory is our disk */
}

static int fs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
        return 0;
}

static int fs_mkdir(const char *path, mode_t mode)
{
        int r = 0;

        pthread_mutex_lock(&S.lock);
        if (!parent_is_dir(path))
                r = -ENOENT;
        else if (lookup(path))
                r = -EEXIST;
        else {
                struct node *n = node_new(mode);

                n->mode = S_IFDIR | (mode & 07777);
                g_hash_table_replace(S.files, g_strdup(path + 1), n);
        }
        pthread_mutex_unlock(&S.lock);
        return r;
}

/* A directory's node as fh, so readdir knows which (0: the root) */
static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
        struct node *n;

        if (!path || strcmp(path, "/") == 0) {
                fi->fh = 0;
                return 0;
        }
        pthread_mutex_lock(&S.lock);
        n = lookup(path);
        if (n && S_ISDIR(n->mode))
                n->refs++;
        pthread_mutex_unlock(&S.lock);
        if (!n || !S_ISDIR(n->mode))
                return n ? -ENOTDIR : -ENOENT;
        fi->fh = (uintptr_t)n;
        return 0;
}

static int fs_releasedir(const char *path, struct fuse_file_info *fi)
{
        return fs_release(path, fi);
}

/* Files only: a directory's entries would have to move with it */
static int fs_rename(const char *from, const char *to, unsigned int flags)
{
        struct node *n, *old;
        int r = 0;

        if (flags)
                return -EINVAL;
        pthread_mutex_lock(&S.lock);
        n = lookup(from);
        old = lookup(to);
        if (!n || !parent_is_dir(to))
                r = -ENOENT;
        else if (S_ISDIR(n->mode) || (old && S_ISDIR(old->mode)))
                r = -EISDIR;
        else if (n != old) {
                n->refs++;
                g_hash_table_remove(S.files, from + 1);
                g_hash_table_replace(S.files, g_strdup(to + 1), n);
        }
        pthread_mutex_unlock(&S.lock);
        return r;
}

static int fs_flush(const char *path, struct fuse_file_info *fi)
{
        return 0;
}

static int fs_statfs(const char *path, struct statvfs *st)
{
        memset(st, 0, sizeof(*st));
        st->f_bsize = st->f_frsize = 4096;
        st->f_blocks = st->f_bfree = st->f_bavail = 1 << 20;
        st->f_files = st->f_ffree = 1 << 20;
        st->f_namemax = NAME_MAX;
        return 0;
}

static const struct fuse_operations fs_ops = {
        .init = fs_init,
        .getattr = fs_getattr,
        .readdir = fs_readdir,
        .create = fs_create,
        .open = fs_open,
        .release = fs_release,
        .read = fs_read,
        .write = fs_write,
        .truncate = fs_truncate,
        .utimens = fs_utimens,
        .unlink = fs_unlink,
        .fsync = fs_fsync,
        .fsyncdir = fs_fsyncdir,
        .mkdir = fs_mkdir,
        .opendir = fs_opendir,
        .releasedir = fs_releasedir,
        .rename = fs_rename,
        .flush = fs_flush,
        .statfs = fs_statfs,
};

int main(int argc, char **argv)
{
        bool allow_other = false;
        int r;

        if (argc == 3 && strcmp(argv[1], "--allow-other") == 0)
                allow_other = true;
        else if (argc != 2 || argv[1][0] == '-') {
                fprintf(stderr, "Usage: %s [--allow-other] MOUNTPOINT\n", argv[0]);
                return 2;
        }
        S.files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, node_unref_void);
        r = fuse_run(argv[0], argv[argc - 1], allow_other, "slowfs", &fs_ops,
                     &(FuseRunWaits){ &S.lock, &S.cond, &S.quitting });
        g_hash_table_unref(S.files);
        return r;
}
