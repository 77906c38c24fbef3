/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integration tests of the test tools themselves: fakesys (the simulated
 * /sys/power) and slowfs (the file system with holdable writeback). Each
 * test mounts a fresh instance in its own mkdtemp directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MOUNT_TIMEOUT_MS 5000

/* ---- child file systems, and their cleanup on every exit path ---------- */

#define MAX_MOUNTS 8

/* Plain arrays, not GLib objects: the abort handler reads them. */
static struct {
        pid_t pid;
        char dir[64];
} mounts[MAX_MOUNTS];

typedef struct {
        int slot;
        char *dir;      /* the mount point, also our mkdtemp directory */
} Fs;

static bool is_mounted(const char *dir)
{
        g_autofree char *info = NULL;
        g_autofree char *needle = g_strdup_printf(" %s ", dir);

        if (!g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL))
                return false;
        return strstr(info, needle) != NULL;
}

static void fusermount(const char *flags, const char *dir)
{
        const char *argv[] = { "fusermount3", flags, "-q", dir, NULL };

        g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH |
                     G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, NULL, NULL, NULL, NULL);
}

/* Bounded wait for a child; SIGKILL if it ignores SIGTERM. Returns the
 * wait status, -1 if it had to be killed. */
static int reap(pid_t pid)
{
        int status;

        for (int i = 0; i < 300; i++) {
                if (waitpid(pid, &status, WNOHANG) == pid)
                        return status;
                g_usleep(10000);
        }
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
}

/* Normal cleanup: SIGTERM lets the daemon unmount itself; fusermount3 -u,
 * then a lazy -uz, catch whatever it left behind. Returns the daemon's
 * wait status (0 = clean exit, also under the sanitizers). */
static int cleanup_slot(int slot)
{
        int status = 0;

        if (mounts[slot].pid > 0) {
                kill(mounts[slot].pid, SIGTERM);
                status = reap(mounts[slot].pid);
                mounts[slot].pid = 0;
        }
        if (mounts[slot].dir[0]) {
                if (is_mounted(mounts[slot].dir))
                        fusermount("-u", mounts[slot].dir);
                if (is_mounted(mounts[slot].dir))
                        fusermount("-uz", mounts[slot].dir);
                rmdir(mounts[slot].dir);
                mounts[slot].dir[0] = '\0';
        }
        return status;
}

static void cleanup_all(void)
{
        for (int i = 0; i < MAX_MOUNTS; i++)
                (void)cleanup_slot(i);
}

/* A failed g_assert aborts, skipping atexit: detach and kill with
 * async-signal-safe calls only, then let the abort proceed. */
static void on_abort(int sig)
{
        for (int i = 0; i < MAX_MOUNTS; i++) {
                if (mounts[i].dir[0])
                        umount2(mounts[i].dir, MNT_DETACH);
                if (mounts[i].pid > 0)
                        kill(mounts[i].pid, SIGKILL);
                if (mounts[i].dir[0])
                        rmdir(mounts[i].dir);
        }
        signal(sig, SIG_DFL);
        raise(sig);
}

static int free_slot(void)
{
        for (int i = 0; i < MAX_MOUNTS; i++)
                if (mounts[i].pid == 0 && mounts[i].dir[0] == '\0')
                        return i;
        g_assert_not_reached();
}

static pid_t spawn(const char *exe, const char *const *opts, const char *dir)
{
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        pid_t pid;

        g_ptr_array_add(argv, (char *)exe);
        for (; opts && *opts; opts++)
                g_ptr_array_add(argv, (char *)*opts);
        g_ptr_array_add(argv, (char *)dir);
        g_ptr_array_add(argv, NULL);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                /* If this test dies hard, the daemon still unmounts. */
                prctl(PR_SET_PDEATHSIG, SIGTERM);
                execv(exe, (char **)argv->pdata);
                _exit(127);
        }
        return pid;
}

static void wait_for_mount(Fs *fs, const char *ctl_name)
{
        g_autofree char *ctl = g_build_filename(fs->dir, ctl_name, NULL);

        for (int t = 0; t < MOUNT_TIMEOUT_MS; t += 5) {
                if (access(ctl, F_OK) == 0)
                        return;
                g_assert_cmpint(waitpid(mounts[fs->slot].pid, NULL, WNOHANG), ==, 0);
                g_usleep(5000);
        }
        g_error("%s did not appear within %d ms", ctl, MOUNT_TIMEOUT_MS);
}

static void fs_start(Fs *fs, const char *env, const char *ctl_name, const char *const *opts)
{
        const char *exe = g_getenv(env);
        char tmpl[] = "/tmp/fakesys-test.XXXXXX";

        g_assert_nonnull(exe);
        fs->slot = free_slot();
        g_assert_nonnull(mkdtemp(tmpl));
        g_strlcpy(mounts[fs->slot].dir, tmpl, sizeof(mounts[fs->slot].dir));
        fs->dir = g_strdup(tmpl);
        mounts[fs->slot].pid = spawn(exe, opts, fs->dir);
        wait_for_mount(fs, ctl_name);
}

static void fs_stop(Fs *fs)
{
        int status = cleanup_slot(fs->slot);

        g_clear_pointer(&fs->dir, g_free);
        g_assert_cmpint(status, ==, 0);
}

/* ---- file helpers ------------------------------------------------------ */

static char *path_in(Fs *fs, const char *rel)
{
        return g_build_filename(fs->dir, rel, NULL);
}

/* One write(2) of the whole value, like `echo VALUE > FILE`; 0 or errno. */
static int write_rel(Fs *fs, const char *rel, const char *value)
{
        g_autofree char *p = path_in(fs, rel);
        size_t len = strlen(value);
        int fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
        int err = 0;

        if (fd < 0)
                return errno;
        if (write(fd, value, len) != (ssize_t)len)
                err = errno;
        close(fd);
        return err;
}

static char *read_rel(Fs *fs, const char *rel)
{
        g_autofree char *p = path_in(fs, rel);
        g_autoptr(GError) error = NULL;
        char *text = NULL;

        g_file_get_contents(p, &text, NULL, &error);
        g_assert_no_error(error);
        return text;
}

#define assert_read(fs, rel, expect) do { \
        g_autofree char *_t = read_rel(fs, rel); \
        g_assert_cmpstr(_t, ==, expect); \
} while (0)

#define assert_write(fs, rel, value, expect_errno) \
        g_assert_cmpstr(g_strerror(write_rel(fs, rel, value)), ==, g_strerror(expect_errno))

#define ctl(fs, cmd) assert_write(fs, "control", cmd "\n", 0)

/* Writes run in a thread when they are expected to block. */
typedef struct {
        Fs *fs;
        const char *rel, *value;
        int err;
        gint64 elapsed_ms;
        gint done;
        GThread *thread;
} BgWrite;

static gpointer bg_write_run(gpointer data)
{
        BgWrite *w = data;
        gint64 start = g_get_monotonic_time();

        w->err = write_rel(w->fs, w->rel, w->value);
        w->elapsed_ms = (g_get_monotonic_time() - start) / 1000;
        g_atomic_int_set(&w->done, 1);
        return NULL;
}

static void bg_write_start(BgWrite *w, Fs *fs, const char *rel, const char *value)
{
        *w = (BgWrite){ .fs = fs, .rel = rel, .value = value };
        w->thread = g_thread_new("bg-write", bg_write_run, w);
}

static int bg_write_join(BgWrite *w)
{
        g_thread_join(w->thread);
        return w->err;
}

/* Polls the log (fakesys has no change notification) for a line. */
static void wait_for_log(Fs *fs, const char *line)
{
        g_autofree char *needle = g_strconcat(line, "\n", NULL);

        for (int t = 0; t < 5000; t += 5) {
                g_autofree char *log = read_rel(fs, "log");
                if (strstr(log, needle))
                        return;
                g_usleep(5000);
        }
        g_error("log line \"%s\" did not appear", line);
}

/* ---- fakesys fixture -------------------------------------------------- */

static void fakesys_setup(Fs *fs, gconstpointer opts)
{
        fs_start(fs, "FAKESYS", "control", opts);
}

static void fakesys_teardown(Fs *fs, gconstpointer opts)
{
        fs_stop(fs);
}

static const char *const default_opts[] = { "--sleep-ms=100", NULL };
static const char *const minimal_opts[] = {
        "--no-pm-test", "--no-mem-sleep", "--no-rtc", "--states=mem", NULL
};

static const char *const tuxonice_opts[] = { "--sleep-ms=10", "--tuxonice", NULL };

static void test_defaults(Fs *fs, gconstpointer opts)
{
        assert_read(fs, "sys/power/state", "freeze mem disk\n");
        assert_read(fs, "sys/power/mem_sleep", "s2idle [deep]\n");
        assert_read(fs, "sys/power/disk", "[platform] shutdown reboot suspend test_resume\n");
        assert_read(fs, "sys/power/pm_test", "[none] core processors platform devices freezer\n");
        assert_read(fs, "sys/power/wakeup_count", "0\n");
        assert_read(fs, "sys/power/image_size", "838860800\n");
        assert_read(fs, "sys/power/resume", "0:0\n");
        assert_read(fs, "sys/power/pm_freeze_timeout", "20000\n");
        assert_read(fs, "sys/power/sync_on_suspend", "1\n");
        assert_read(fs, "sys/class/rtc/rtc0/wakealarm", "");
        assert_read(fs, "log", "");
        /* Modes say who may open what, even for root. */
        assert_write(fs, "log", "x", EACCES);
        g_autofree char *ctl_path = path_in(fs, "control");
        g_assert_cmpint(open(ctl_path, O_RDONLY), ==, -1);
        g_assert_cmpint(errno, ==, EACCES);
}

static void test_minimal(Fs *fs, gconstpointer opts)
{
        g_autofree char *pm_test = path_in(fs, "sys/power/pm_test");
        g_autofree char *mem_sleep = path_in(fs, "sys/power/mem_sleep");
        g_autofree char *class_dir = path_in(fs, "sys/class");

        assert_read(fs, "sys/power/state", "mem\n");
        g_assert_false(g_file_test(pm_test, G_FILE_TEST_EXISTS));
        g_assert_false(g_file_test(mem_sleep, G_FILE_TEST_EXISTS));
        g_assert_false(g_file_test(class_dir, G_FILE_TEST_EXISTS));
        assert_write(fs, "sys/power/state", "freeze\n", EINVAL);
        /* Without pm_test, a state write is a real (simulated) sleep. */
        ctl(fs, "sleep-ms 10");
        assert_write(fs, "sys/power/state", "mem\n", 0);
        assert_read(fs, "log", "power/state freeze EINVAL\n"
                    "power/state mem sleeping\npower/state mem ok\n");
}

static void test_words(Fs *fs, gconstpointer opts)
{
        assert_write(fs, "sys/power/mem_sleep", "s2idle\n", 0);
        assert_read(fs, "sys/power/mem_sleep", "[s2idle] deep\n");
        assert_write(fs, "sys/power/mem_sleep", "shallow\n", EINVAL);
        assert_write(fs, "sys/power/mem_sleep", "[deep]\n", EINVAL);
        assert_write(fs, "sys/power/mem_sleep", "deep", 0);
        assert_read(fs, "sys/power/mem_sleep", "s2idle [deep]\n");
        assert_write(fs, "sys/power/disk", "suspend\n", 0);
        assert_read(fs, "sys/power/disk", "platform shutdown reboot [suspend] test_resume\n");
        assert_write(fs, "sys/power/pm_test", "devices\n", 0);
        assert_read(fs, "sys/power/pm_test", "none core processors platform [devices] freezer\n");
        assert_write(fs, "sys/power/state", "standby\n", EINVAL);
        assert_read(fs, "log",
                    "power/mem_sleep s2idle ok\n"
                    "power/mem_sleep shallow EINVAL\n"
                    "power/mem_sleep [deep] EINVAL\n"
                    "power/mem_sleep deep ok\n"
                    "power/disk suspend ok\n"
                    "power/pm_test devices ok\n"
                    "power/state standby EINVAL\n");
        ctl(fs, "clear-log");
        assert_read(fs, "log", "");
}

/* Writes value + "\n" to sys/power/ATTR: it fails with err, or (0) the
 * file then reads back as shown + "\n" */
typedef struct Store {
        const char *attr, *value, *shown;
        int err;
} Store;

static void assert_stores(Fs *fs, const Store *stores, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                g_autofree char *rel = g_strdup_printf("sys/power/%s", stores[i].attr);
                g_autofree char *value = g_strconcat(stores[i].value, "\n", NULL);
                assert_write(fs, rel, value, stores[i].err);
                if (stores[i].err == 0) {
                        g_autofree char *shown = g_strconcat(stores[i].shown, "\n", NULL);
                        assert_read(fs, rel, shown);
                }
        }
}

static void test_scalars(Fs *fs, gconstpointer opts)
{
        static const Store stores[] = {
                { "image_size", "0", "0" }, { "image_size", "-1", .err = EINVAL },
                { "resume", "8:3", "8:3" }, { "resume", "/dev/sda3", .err = EINVAL },
                { "resume", "8:", .err = EINVAL },
                { "pm_freeze_timeout", "5000", "5000" }, { "pm_freeze_timeout", "5s", .err = EINVAL },
                { "sync_on_suspend", "0", "0" }, { "sync_on_suspend", "2", .err = EINVAL },
        };

        assert_stores(fs, stores, G_N_ELEMENTS(stores));
        assert_read(fs, "log",
                    "power/image_size 0 ok\npower/image_size -1 EINVAL\n"
                    "power/resume 8:3 ok\npower/resume /dev/sda3 EINVAL\n"
                    "power/resume 8: EINVAL\n"
                    "power/pm_freeze_timeout 5000 ok\npower/pm_freeze_timeout 5s EINVAL\n"
                    "power/sync_on_suspend 0 ok\npower/sync_on_suspend 2 EINVAL\n");
}

static void test_wakeup_count(Fs *fs, gconstpointer opts)
{
        assert_write(fs, "sys/power/wakeup_count", "3\n", EINVAL);
        assert_write(fs, "sys/power/wakeup_count", "zero\n", EINVAL);
        assert_write(fs, "sys/power/wakeup_count", "0\n", 0);
        ctl(fs, "wakeup");
        assert_read(fs, "sys/power/wakeup_count", "1\n");
        assert_write(fs, "sys/power/wakeup_count", "0\n", EINVAL);
        /* Injected: the event lands between the read and the save. */
        ctl(fs, "wakeup-on-write power/mem_sleep");
        assert_write(fs, "sys/power/mem_sleep", "deep\n", 0);
        assert_write(fs, "sys/power/wakeup_count", "1\n", EINVAL);
        assert_read(fs, "sys/power/wakeup_count", "2\n");
        assert_write(fs, "sys/power/mem_sleep", "deep\n", 0);  /* one-shot */
        assert_write(fs, "sys/power/wakeup_count", "2\n", 0);
        /* Raw contents for odd-sysfs tests, not logged. */
        ctl(fs, "set power/wakeup_count 7");
        assert_read(fs, "sys/power/wakeup_count", "7\n");
        assert_write(fs, "sys/power/wakeup_count", "7\n", 0);
        ctl(fs, "set power/mem_sleep s2idle [deep");
        assert_read(fs, "sys/power/mem_sleep", "s2idle [deep\n");
        assert_read(fs, "log",
                    "power/wakeup_count 3 EINVAL\npower/wakeup_count zero EINVAL\n"
                    "power/wakeup_count 0 ok\npower/wakeup_count 0 EINVAL\n"
                    "power/mem_sleep deep ok\npower/wakeup_count 1 EINVAL\n"
                    "power/mem_sleep deep ok\npower/wakeup_count 2 ok\n"
                    "power/wakeup_count 7 ok\n");
}

static void test_tuxonice_absent(Fs *fs, gconstpointer opts)
{
        g_autofree char *dir = path_in(fs, "sys/power/tuxonice");

        g_assert_false(g_file_test(dir, G_FILE_TEST_EXISTS));
}

static const char *const file_opts[] = {
        "--file=dev/block/7:0/dm/uuid=CRYPT-LUKS2-0123-swap", "--file=dev/block/7:0/dev=7:0", NULL
};

/* --file: read-only files below sys/, their directories listed */
static void test_extra_files(Fs *fs, gconstpointer opts)
{
        assert_read(fs, "sys/dev/block/7:0/dm/uuid", "CRYPT-LUKS2-0123-swap\n");
        assert_read(fs, "sys/dev/block/7:0/dev", "7:0\n");
        assert_write(fs, "sys/dev/block/7:0/dev", "8:0", EACCES);
        g_autofree char *dir = path_in(fs, "sys/dev/block/7:0");
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        g_assert_nonnull(d);
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        for (const char *n; (n = g_dir_read_name(d));)
                g_ptr_array_add(names, (char *)n);
        g_assert_cmpuint(names->len, ==, 2);
        g_autofree char *absent = path_in(fs, "sys/dev/block/7:1");
        g_assert_false(g_file_test(absent, G_FILE_TEST_EXISTS));
}

/* toi_attr_store(): base-0 numbers, clamped to the bounds, bits, strings */
static void test_tuxonice_settings(Fs *fs, gconstpointer opts)
{
        assert_read(fs, "sys/power/tuxonice/version", "3.3\n");
        assert_read(fs, "sys/power/tuxonice/last_result", "0\n");
        assert_read(fs, "sys/power/tuxonice/compression/algorithm", "lzo\n");
        static const Store stores[] = {
                { "tuxonice/image_size_limit", "0x400", "1024" },
                { "tuxonice/image_size_limit", "-7", "-2" },
                { "tuxonice/image_size_limit", "12M", .err = EINVAL },
                { "tuxonice/compression/enabled", "5", "1" },
                { "tuxonice/user_interface/enable_escape", "-1", .err = EINVAL },
                { "tuxonice/user_interface/enable_escape", "2", "1" },
                { "tuxonice/compression/algorithm", "a234567890123456789012345678901xyz",
                  "a234567890123456789012345678901" },
                { "tuxonice/version", "4", .err = EACCES },
        };
        assert_stores(fs, stores, G_N_ELEMENTS(stores));
        g_autofree char *do_hibernate = path_in(fs, "sys/power/tuxonice/do_hibernate");
        g_assert_cmpint(open(do_hibernate, O_RDONLY), ==, -1);
        g_assert_cmpint(errno, ==, EACCES);
}

/* A good cycle sleeps; an injected result gives up at once and still
 * succeeds; a wakeup after the saved count is TuxOnIce's own abort */
static void test_tuxonice_hibernate(Fs *fs, gconstpointer opts)
{
        assert_write(fs, "sys/power/tuxonice/do_hibernate", "1\n", 0);
        assert_read(fs, "sys/power/tuxonice/last_result", "0\n");
        ctl(fs, "toi-fail-result 0x5 2");
        assert_write(fs, "sys/power/tuxonice/do_hibernate", "1\n", 0);
        assert_read(fs, "sys/power/tuxonice/last_result", "5\n");
        assert_write(fs, "sys/power/tuxonice/do_hibernate", "1\n", 0);
        assert_write(fs, "sys/power/wakeup_count", "1\n", 0); /* one sleep, one event */
        ctl(fs, "wakeup");
        assert_write(fs, "sys/power/tuxonice/do_hibernate", "1\n", 0);
        assert_read(fs, "sys/power/tuxonice/last_result", "536870913\n");
        assert_write(fs, "control", "toi-fail-result 0\n", EINVAL);
        assert_write(fs, "control", "toi-fail-result lots\n", EINVAL);
        assert_read(fs, "log",
                    "power/tuxonice/do_hibernate 1 sleeping\n"
                    "power/tuxonice/do_hibernate 1 ok\n"
                    "power/tuxonice/do_hibernate 1 ok\n"
                    "power/tuxonice/do_hibernate 1 ok\n"
                    "power/wakeup_count 1 ok\n"
                    "power/tuxonice/do_hibernate 1 ok\n");
}

static void test_control_errors(Fs *fs, gconstpointer opts)
{
        static const char *const refused[] = {
                "bogus\n", "sleep-ms x\n", "fail-state ENOTANERRNO\n", "hold-write power/nope\n",
                "set power/nope 1\n",
        };

        for (size_t i = 0; i < G_N_ELEMENTS(refused); i++)
                assert_write(fs, "control", refused[i], EINVAL);
        /* Several commands in one write. */
        assert_write(fs, "control", "sleep-ms 10\npm-test-delay-ms 5\nwakeup\n", 0);
        assert_read(fs, "sys/power/wakeup_count", "1\n");
        assert_read(fs, "log", "");
}

static void test_fail_state(Fs *fs, gconstpointer opts)
{
        ctl(fs, "sleep-ms 10");
        ctl(fs, "fail-state EBUSY");
        assert_write(fs, "sys/power/state", "mem\n", EBUSY);
        assert_write(fs, "sys/power/state", "mem\n", 0);
        ctl(fs, "fail-state EIO 2");
        assert_write(fs, "sys/power/state", "disk\n", EIO);
        assert_write(fs, "sys/power/state", "disk\n", EIO);
        ctl(fs, "fail-state 19");       /* numbers work too: ENODEV */
        assert_write(fs, "sys/power/state", "freeze\n", ENODEV);
        assert_read(fs, "log",
                    "power/state mem EBUSY\n"
                    "power/state mem sleeping\npower/state mem ok\n"
                    "power/state disk EIO\npower/state disk EIO\n"
                    "power/state freeze ENODEV\n");
}

static void test_sleep_wakeup(Fs *fs, gconstpointer opts)
{
        BgWrite w;

        ctl(fs, "sleep-ms 20000");
        assert_write(fs, "sys/power/wakeup_count", "0\n", 0);
        bg_write_start(&w, fs, "sys/power/state", "mem\n");
        wait_for_log(fs, "power/state mem sleeping");
        /* The sleeper holds no lock: reads and other writes go through. */
        assert_read(fs, "sys/power/wakeup_count", "0\n");
        assert_write(fs, "sys/power/mem_sleep", "deep\n", 0);
        assert_read(fs, "sys/power/state", "freeze mem disk\n");
        g_assert_false(g_atomic_int_get(&w.done));
        ctl(fs, "wakeup");
        g_assert_cmpint(bg_write_join(&w), ==, 0);
        /* woken, not the 20 s sleep's end (bounds far apart: ASan under load) */
        g_assert_cmpint(w.elapsed_ms, <, 15000);
        /* One event for the whole sleep: the wakeup that ended it. */
        assert_read(fs, "sys/power/wakeup_count", "1\n");
        /* Timer-ended sleep: also one event. */
        ctl(fs, "sleep-ms 100");
        assert_write(fs, "sys/power/wakeup_count", "1\n", 0);
        bg_write_start(&w, fs, "sys/power/state", "freeze\n");
        g_assert_cmpint(bg_write_join(&w), ==, 0);
        g_assert_cmpint(w.elapsed_ms, >=, 95);
        assert_read(fs, "sys/power/wakeup_count", "2\n");
        assert_read(fs, "log",
                    "power/wakeup_count 0 ok\n"
                    "power/state mem sleeping\n"
                    "power/mem_sleep deep ok\n"
                    "power/state mem ok\n"
                    "power/wakeup_count 1 ok\n"
                    "power/state freeze sleeping\npower/state freeze ok\n");
}

/* read(2) of a file that may fail: the errno, or 0 and the text in *ret */
static int read_errno(Fs *fs, const char *rel, char **ret)
{
        g_autofree char *p = path_in(fs, rel);
        char buf[64];
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        g_assert_cmpint(fd, >=, 0);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n < 0)
                return errno;
        *ret = g_strndup(buf, (gsize)n);
        return 0;
}

static void test_wakeup_irq_stats(Fs *fs, gconstpointer opts)
{
        g_autofree char *irq = NULL;
        BgWrite w;

        /* No IRQ woke the machine yet: ENODATA, as the kernel says it */
        g_assert_cmpstr(g_strerror(read_errno(fs, "sys/power/pm_wakeup_irq", &irq)), ==, g_strerror(ENODATA));
        assert_read(fs, "sys/power/suspend_stats/last_failed_dev", "");
        assert_read(fs, "sys/power/suspend_stats/last_failed_errno", "0\n");
        /* Statistics are read-only; `set` changes them */
        assert_write(fs, "sys/power/suspend_stats/last_failed_dev", "x\n", EACCES);
        ctl(fs, "set power/suspend_stats/last_failed_dev foo\nset power/suspend_stats/last_failed_errno -16");
        assert_read(fs, "sys/power/suspend_stats/last_failed_dev", "foo\n");
        assert_read(fs, "sys/power/suspend_stats/last_failed_errno", "-16\n");
        ctl(fs, "set power/pm_wakeup_irq 3");
        assert_read(fs, "sys/power/pm_wakeup_irq", "3\n");
        /* A sleep forgets the last IRQ; `wakeup-irq N` ends it by IRQ N */
        ctl(fs, "sleep-ms 20000");
        bg_write_start(&w, fs, "sys/power/state", "mem\n");
        wait_for_log(fs, "power/state mem sleeping");
        g_assert_cmpint(read_errno(fs, "sys/power/pm_wakeup_irq", &irq), ==, ENODATA);
        assert_write(fs, "control", "wakeup-irq 0\n", EINVAL);
        ctl(fs, "wakeup-irq 9");
        g_assert_cmpint(bg_write_join(&w), ==, 0);
        assert_read(fs, "sys/power/pm_wakeup_irq", "9\n");
        assert_read(fs, "sys/power/wakeup_count", "1\n");
}

static void test_pending_ebusy(Fs *fs, gconstpointer opts)
{
        ctl(fs, "sleep-ms 10");
        assert_write(fs, "sys/power/wakeup_count", "0\n", 0);
        ctl(fs, "wakeup");
        assert_write(fs, "sys/power/state", "mem\n", EBUSY);
        /* Like the kernel, the abort disables the check until next save. */
        assert_write(fs, "sys/power/state", "mem\n", 0);
        assert_write(fs, "sys/power/state", "mem\n", 0);
        /* Each sleep is a wakeup event: a saved count goes stale. */
        assert_write(fs, "sys/power/wakeup_count", "3\n", 0);
        assert_write(fs, "sys/power/state", "mem\n", 0);
        assert_write(fs, "sys/power/state", "mem\n", EBUSY);
        assert_read(fs, "log",
                    "power/wakeup_count 0 ok\npower/state mem EBUSY\n"
                    "power/state mem sleeping\npower/state mem ok\n"
                    "power/state mem sleeping\npower/state mem ok\n"
                    "power/wakeup_count 3 ok\n"
                    "power/state mem sleeping\npower/state mem ok\n"
                    "power/state mem EBUSY\n");
}

static void test_pm_test(Fs *fs, gconstpointer opts)
{
        BgWrite w;

        ctl(fs, "sleep-ms 20000");
        ctl(fs, "pm-test-delay-ms 200");
        assert_write(fs, "sys/power/pm_test", "devices\n", 0);
        bg_write_start(&w, fs, "sys/power/state", "mem\n");
        g_assert_cmpint(bg_write_join(&w), ==, 0);
        g_assert_cmpint(w.elapsed_ms, >=, 195);
        g_assert_cmpint(w.elapsed_ms, <, 15000);               /* not the 20 s sleep */
        assert_read(fs, "sys/power/wakeup_count", "0\n");     /* no real sleep */
        ctl(fs, "pm-test-delay-ms 10");
        assert_write(fs, "sys/power/pm_test", "processors\n", 0);
        assert_write(fs, "sys/power/state", "freeze\n", EAGAIN);
        assert_write(fs, "sys/power/state", "mem\n", 0);
        assert_write(fs, "sys/power/pm_test", "core\n", 0);
        assert_write(fs, "sys/power/state", "freeze\n", EAGAIN);
        assert_write(fs, "sys/power/pm_test", "freezer\n", 0);
        assert_write(fs, "sys/power/state", "freeze\n", 0);
        assert_read(fs, "log",
                    "power/pm_test devices ok\npower/state mem ok\n"
                    "power/pm_test processors ok\npower/state freeze EAGAIN\n"
                    "power/state mem ok\n"
                    "power/pm_test core ok\npower/state freeze EAGAIN\n"
                    "power/pm_test freezer ok\npower/state freeze ok\n");
}

static long long read_alarm(Fs *fs)
{
        g_autofree char *t = read_rel(fs, "sys/class/rtc/rtc0/wakealarm");

        return *t ? g_ascii_strtoll(t, NULL, 10) : 0;
}

static void test_wakealarm(Fs *fs, gconstpointer opts)
{
        const char *rel = "sys/class/rtc/rtc0/wakealarm";
        long long now = (long long)time(NULL);
        g_autofree char *abs_val = g_strdup_printf("%lld\n", now + 100);
        BgWrite w;

        assert_write(fs, rel, "+30\n", 0);
        g_assert_cmpint(read_alarm(fs), >=, now + 30);
        g_assert_cmpint(read_alarm(fs), <=, now + 32);
        assert_write(fs, rel, "+30\n", EBUSY);     /* kernel: clear first */
        assert_write(fs, rel, abs_val, EBUSY);
        assert_write(fs, rel, "+=10\n", 0);       /* extends an armed alarm */
        g_assert_cmpint(read_alarm(fs), >=, now + 40);
        assert_write(fs, rel, "0\n", 0);
        assert_read(fs, rel, "");
        assert_write(fs, rel, "+=10\n", EINVAL);
        assert_write(fs, rel, "soon\n", EINVAL);
        assert_write(fs, rel, abs_val, 0);
        g_assert_cmpint(read_alarm(fs), ==, now + 100);
        assert_write(fs, rel, "0\n", 0);
        /* The RTC ends a simulated sleep and disarms itself. */
        ctl(fs, "sleep-ms 20000");
        assert_write(fs, rel, "+1\n", 0);
        bg_write_start(&w, fs, "sys/power/state", "mem\n");
        g_assert_cmpint(bg_write_join(&w), ==, 0);
        g_assert_cmpint(w.elapsed_ms, <, 15000); /* the alarm's 1 s, not the sleep's 20 */
        assert_read(fs, rel, "");
        assert_read(fs, "sys/power/wakeup_count", "1\n");
}

static void test_hold_delay(Fs *fs, gconstpointer opts)
{
        BgWrite w;

        ctl(fs, "hold-write power/disk");
        bg_write_start(&w, fs, "sys/power/disk", "shutdown\n");
        g_usleep(200 * 1000);
        g_assert_false(g_atomic_int_get(&w.done));
        /* Held writes are not processed yet: no log line, no change. */
        assert_read(fs, "log", "");
        assert_read(fs, "sys/power/disk", "[platform] shutdown reboot suspend test_resume\n");
        /* not done 200 ms on (above) is the hold; how long the writer
         * thread itself waited depends on when it was scheduled */
        ctl(fs, "release-write power/disk");
        g_assert_cmpint(bg_write_join(&w), ==, 0);
        ctl(fs, "delay-write power/image_size 150");
        bg_write_start(&w, fs, "sys/power/image_size", "1\n");
        g_assert_cmpint(bg_write_join(&w), ==, 0);
        g_assert_cmpint(w.elapsed_ms, >=, 145);
        ctl(fs, "delay-write power/image_size 0");
        assert_read(fs, "log", "power/disk shutdown ok\npower/image_size 1 ok\n");
}

/* SIGTERM while a state write sleeps: the daemon must still exit and
 * unmount promptly, and the writer must come back. */
static void test_sigterm(Fs *fs, gconstpointer opts)
{
        BgWrite w;
        gint64 start;

        ctl(fs, "sleep-ms 60000");
        bg_write_start(&w, fs, "sys/power/state", "mem\n");
        wait_for_log(fs, "power/state mem sleeping");
        start = g_get_monotonic_time();
        kill(mounts[fs->slot].pid, SIGTERM);
        g_assert_cmpint(reap(mounts[fs->slot].pid), ==, 0);
        mounts[fs->slot].pid = 0;
        bg_write_join(&w);
        g_assert_cmpint((g_get_monotonic_time() - start) / 1000, <, 30000); /* not the sleep's 60 s */
        g_assert_false(is_mounted(fs->dir));
}

/* ---- slowfs ------------------------------------------------------------ */

typedef struct {
        int fd;
        int (*sync)(int fd);
        gint done;
} SyncJob;

static gpointer sync_run(gpointer data)
{
        SyncJob *job = data;

        job->sync(job->fd);
        g_atomic_int_set(&job->done, 1);
        return NULL;
}

static void parse_stats(Fs *fs, unsigned *writes, unsigned *held, unsigned long long *bytes)
{
        g_autofree char *s = read_rel(fs, ".stats");

        g_assert_cmpint(sscanf(s, "writes=%u held=%u bytes=%llu", writes, held, bytes), ==, 3);
}

static unsigned held_writes(Fs *fs)
{
        unsigned writes, held;
        unsigned long long bytes;

        parse_stats(fs, &writes, &held, &bytes);
        return held;
}

/* Writeback completes asynchronously after a release: poll for it. */
static void wait_for_bytes(Fs *fs, unsigned long long want)
{
        unsigned writes, held;
        unsigned long long bytes = 0;

        for (int t = 0; t < 5000 && bytes < want; t += 10) {
                parse_stats(fs, &writes, &held, &bytes);
                if (bytes < want)
                        g_usleep(10000);
        }
        g_assert_cmpuint(bytes, >=, want);
}

/* Writes 1 MiB through the page cache; the fd stays open because with
 * the writeback cache close() would flush. */
static int dirty_mib(Fs *fs, const char *name)
{
        g_autofree char *file = path_in(fs, name);
        g_autofree char *buf = g_malloc(1 << 20);
        int fd = open(file, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        unsigned writes, held;
        unsigned long long bytes;

        g_assert_cmpint(fd, >=, 0);
        memset(buf, 'x', 1 << 20);
        g_assert_cmpint(write(fd, buf, 1 << 20), ==, 1 << 20);
        parse_stats(fs, &writes, &held, &bytes);
        g_test_message("after 1 MiB write: writes=%u bytes=%llu", writes, bytes);
        g_assert_cmpuint(bytes, <, 1 << 20);   /* still dirty in the page cache */
        return fd;
}

static void slowfs_setup(Fs *fs, gconstpointer opts)
{
        fs_start(fs, "SLOWFS", ".control", opts);
}

/* fsync waits for the FUSE writes on every kernel: the honest slow flush. */
static void test_slowfs_fsync(Fs *fs, gconstpointer opts)
{
        SyncJob job = { .fd = dirty_mib(fs, "data"), .sync = fsync };
        GThread *t;

        assert_write(fs, ".control", "hold\n", 0);
        t = g_thread_new("fsync", sync_run, &job);
        g_usleep(300 * 1000);
        g_assert_false(g_atomic_int_get(&job.done));
        g_assert_cmpuint(held_writes(fs), >, 0);
        assert_write(fs, ".control", "release\n", 0);
        g_thread_join(t);
        g_assert_cmpuint(held_writes(fs), ==, 0);
        wait_for_bytes(fs, 1 << 20);
        /* slowfs stores what it was sent; .control/.stats stay hidden. */
        g_autoptr(GDir) dir = g_dir_open(fs->dir, 0, NULL);
        g_assert_cmpstr(g_dir_read_name(dir), ==, "data");
        g_assert_null(g_dir_read_name(dir));
        close(job.fd);
}

/* syncfs sends the dirty pages as FUSE writes, which we hold. Whether it
 * then waits for them depends on the kernel: since "writeback: don't block
 * sync for filesystems with no data integrity guarantees" (FUSE sets
 * SB_I_NO_DATA_INTEGRITY) sync()/syncfs() start FUSE writeback and return. */
static void test_slowfs_syncfs(Fs *fs, gconstpointer opts)
{
        int fd = dirty_mib(fs, "data");
        SyncJob job = { .fd = open(fs->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), .sync = syncfs };
        GThread *t;
        bool waited;

        g_assert_cmpint(job.fd, >=, 0);
        assert_write(fs, ".control", "hold\n", 0);
        t = g_thread_new("syncfs", sync_run, &job);
        g_usleep(300 * 1000);
        g_assert_cmpuint(held_writes(fs), >, 0);
        waited = !g_atomic_int_get(&job.done);
        g_test_message("syncfs %s for held FUSE writeback on this kernel",
                       waited ? "waits" : "does NOT wait");
        assert_write(fs, ".control", "release\n", 0);
        g_thread_join(t);
        wait_for_bytes(fs, 1 << 20);
        close(fd);
        close(job.fd);
}

static void test_slowfs_delay(Fs *fs, gconstpointer opts)
{
        g_autofree char *file = path_in(fs, "slow");
        int fd = open(file, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        gint64 start;

        g_assert_cmpint(fd, >=, 0);
        assert_write(fs, ".control", "write-delay-ms 200\n", 0);
        assert_write(fs, ".control", "bogus\n", EINVAL);
        g_assert_cmpint(write(fd, "hello", 5), ==, 5);
        start = g_get_monotonic_time();
        g_assert_cmpint(fsync(fd), ==, 0);
        g_assert_cmpint((g_get_monotonic_time() - start) / 1000, >=, 195);
        close(fd);
        assert_read(fs, "slow", "hello");
        g_assert_cmpint(unlink(file), ==, 0);
        g_assert_false(g_file_test(file, G_FILE_TEST_EXISTS));
}

/* ---- main -------------------------------------------------------------- */

static const char *skip_reason(void)
{
        if (geteuid() != 0)
                return "not root";
        if (access("/dev/fuse", R_OK | W_OK) != 0)
                return "/dev/fuse is not usable";
        if (!g_getenv("FAKESYS") || !g_getenv("SLOWFS"))
                return "FAKESYS and SLOWFS must name the binaries";
        return NULL;
}

#define ADD_FAKESYS(name, fn, opts) \
        g_test_add("/fakesys/" name, Fs, opts, fakesys_setup, fn, fakesys_teardown)
#define ADD_SLOWFS(name, fn) \
        g_test_add("/slowfs/" name, Fs, NULL, slowfs_setup, fn, fakesys_teardown)

int main(int argc, char **argv)
{
        const char *why = skip_reason();

        g_test_init(&argc, &argv, NULL);
        if (why) {
                printf("1..0 # SKIP %s\n", why);
                return 77;
        }
        atexit(cleanup_all);
        signal(SIGABRT, on_abort);
        signal(SIGPIPE, SIG_IGN);
        ADD_FAKESYS("defaults", test_defaults, default_opts);
        ADD_FAKESYS("minimal", test_minimal, minimal_opts);
        ADD_FAKESYS("words", test_words, default_opts);
        ADD_FAKESYS("scalars", test_scalars, default_opts);
        ADD_FAKESYS("wakeup-count", test_wakeup_count, default_opts);
        ADD_FAKESYS("control-errors", test_control_errors, default_opts);
        ADD_FAKESYS("fail-state", test_fail_state, default_opts);
        ADD_FAKESYS("sleep-wakeup", test_sleep_wakeup, default_opts);
        ADD_FAKESYS("pending-ebusy", test_pending_ebusy, default_opts);
        ADD_FAKESYS("wakeup-irq-stats", test_wakeup_irq_stats, default_opts);
        ADD_FAKESYS("pm-test", test_pm_test, default_opts);
        ADD_FAKESYS("wakealarm", test_wakealarm, default_opts);
        ADD_FAKESYS("hold-delay", test_hold_delay, default_opts);
        ADD_FAKESYS("sigterm", test_sigterm, default_opts);
        ADD_FAKESYS("tuxonice-absent", test_tuxonice_absent, default_opts);
        ADD_FAKESYS("tuxonice-settings", test_tuxonice_settings, tuxonice_opts);
        ADD_FAKESYS("extra-files", test_extra_files, file_opts);
        ADD_FAKESYS("tuxonice-hibernate", test_tuxonice_hibernate, tuxonice_opts);
        ADD_SLOWFS("fsync-hold", test_slowfs_fsync);
        ADD_SLOWFS("syncfs-hold", test_slowfs_syncfs);
        ADD_SLOWFS("delay", test_slowfs_delay);
        return g_test_run();
}
