/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The power-backend interface: its contract with the manager on fake
 * backends (no kernel), then the mainline and TuxOnIce backends on sysfs
 * trees in a temp dir, through the interface as the manager uses it. The
 * failure messages are pinned: the integration tests and users read them. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "power-backend.h"
#include "power.h"
#include "testdir.h"
#include "tuxonice.h"

/* ---------------------------------------------------------- fake backends */

typedef struct FakeRequest {
        PowerRequest base;
        int entered;
        int restored;
        int *freed;                 /* counts frees, outlives the request */
        int enter_result;
} FakeRequest;

static bool fake_present = true;
static int fake_frees;
static PowerAnswer fake_answer = POWER_ANSWER_YES;

static bool serves_all(SleepKind kind, bool pm_test) {
        return true;
}

static bool serves_real_hibernate(SleepKind kind, bool pm_test) {
        return kind == SLEEP_HIBERNATE && !pm_test;
}

static bool probe_flag(const PowerContext *ctx) {
        return fake_present;
}

static bool probe_true(const PowerContext *ctx) {
        return true;
}

static PowerAnswer fake_can(const PowerContext *ctx, SleepKind kind, char **ret_reason) {
        /* a reason even for "yes": the interface must not pass it on */
        *ret_reason = g_strdup_printf("fake says %s", power_answer_to_string(fake_answer));
        return kind == SLEEP_HYBRID ? POWER_ANSWER_NA : fake_answer;
}

static int fake_check(const PowerContext *ctx, const PowerCycle *cycle, char **ret_set_resume, char **ret_message) {
        if (cycle->wake_after_sec > 100) {
                *ret_message = g_strdup("too long");
                return FRIDGE_ERROR_NOT_SUPPORTED;
        }
        *ret_set_resume = g_strdup("8:3");
        return 0;
}

static int plain_check(const PowerContext *ctx, const PowerCycle *cycle, char **ret_set_resume, char **ret_message) {
        return 0;
}

static int fake_prepare(const PowerContext *ctx, PowerCycle *cycle, PowerRequest **ret) {
        FakeRequest *r = g_new0(FakeRequest, 1);
        r->freed = &fake_frees;
        r->enter_result = cycle->wake_after_sec == 13 ? -EIO : 0;
        /* base.backend is left for the interface to set */
        *ret = &r->base;
        return 0;
}

static int fake_enter(PowerRequest *r) {
        FakeRequest *f = (FakeRequest *) r;
        f->entered++;
        r->slept_usec = 42;
        return f->enter_result;
}

static void fake_restore(const PowerRequest *r) {
        ((FakeRequest *) r)->restored++;
}

static CycleResult fake_describe(const PowerRequest *r, FridgeError *ret_error, char **ret_message) {
        *ret_error = FRIDGE_ERROR_KERNEL;
        *ret_message = g_strdup_printf("%s failed", r->backend->name);
        return RESULT_FAILED;
}

static const char *fake_transient(const PowerRequest *r) {
        return "try again";
}

/* What a user-space backend would do: a flag enter polls, a figure it publishes */
static int fake_cancel(PowerRequest *r) {
        ((FakeRequest *) r)->enter_result = -ECANCELED;
        return 0;
}

static double fake_progress(const PowerRequest *r, char **ret_text) {
        *ret_text = g_strdup("writing the image");
        return 0.25;
}

static void fake_free(PowerRequest *r) {
        FakeRequest *f = (FakeRequest *) r;
        (*f->freed)++;
        g_free(f);
}

static const PowerBackend fake_special = {
        .name = "special", .serves = serves_real_hibernate, .probe = probe_flag, .can = fake_can,
        .check = fake_check, .prepare = fake_prepare, .enter = fake_enter, .restore_after_abort = fake_restore,
        .describe_failure = fake_describe, .transient = fake_transient, .free = fake_free,
        .cancel = fake_cancel, .progress = fake_progress,
};

/* The least a backend must give: no restore, transient, summary or notes */
static const PowerBackend fake_plain = {
        .name = "plain", .serves = serves_all, .probe = probe_true, .can = fake_can, .check = plain_check,
        .prepare = fake_prepare, .enter = fake_enter, .describe_failure = fake_describe, .free = fake_free,
};

static const PowerBackend *const fake_table[] = { &fake_special, &fake_plain, NULL };
static const PowerBackend *const special_only[] = { &fake_special, NULL };

static PowerContext fake_context(const PowerBackend *const *table) {
        return (PowerContext) { .sysfs_fd = -1, .proc_fd = -1, .backends = table };
}

static void test_select(void) {
        PowerContext ctx = fake_context(fake_table);
        fake_present = true;
        g_assert_true(power_backend_select(&ctx, SLEEP_HIBERNATE, false) == &fake_special);
        g_assert_true(power_backend_select(&ctx, SLEEP_HIBERNATE, true) == &fake_plain);
        g_assert_true(power_backend_select(&ctx, SLEEP_SUSPEND, false) == &fake_plain);
        g_assert_true(power_backend_select(&ctx, SLEEP_HYBRID, false) == &fake_plain);
        fake_present = false;
        g_assert_true(power_backend_select(&ctx, SLEEP_HIBERNATE, false) == &fake_plain);

        /* the built-in table: the catch-all answers for an absent kernel too */
        PowerContext builtin = { .sysfs_fd = -1, .proc_fd = -1 };
        g_assert_true(power_backend_select(&builtin, SLEEP_HIBERNATE, false) == &power_backend_mainline);
        fake_present = true;
}

/* A table where nothing serves: every question has an answer, none crashes */
static void test_nothing_serves(void) {
        PowerContext ctx = fake_context(special_only);
        g_autofree char *reason = NULL, *set_resume = NULL, *message = NULL;
        fake_present = true;
        g_assert_null(power_backend_select(&ctx, SLEEP_SUSPEND, false));
        g_assert_cmpint(power_backend_can(&ctx, SLEEP_SUSPEND, &reason), ==, POWER_ANSWER_NA);
        g_assert_nonnull(reason);
        PowerCycle c = { .kind = SLEEP_SUSPEND };
        g_assert_cmpint(power_backend_check(&ctx, &c, &set_resume, &message), ==, FRIDGE_ERROR_NOT_SUPPORTED);
        g_assert_nonnull(message);
        g_assert_null(set_resume);
        PowerRequest *r = NULL;
        g_assert_cmpint(power_request_new(&ctx, &c, &r), ==, -EOPNOTSUPP);
        g_assert_null(r);
}

static void test_can_contract(void) {
        PowerContext ctx = fake_context(fake_table);
        g_autofree char *yes = NULL, *no = NULL, *na = NULL;
        fake_answer = POWER_ANSWER_YES;
        g_assert_cmpint(power_backend_can(&ctx, SLEEP_SUSPEND, &yes), ==, POWER_ANSWER_YES);
        g_assert_null(yes); /* "yes" has no reason */
        fake_answer = POWER_ANSWER_NO;
        g_assert_cmpint(power_backend_can(&ctx, SLEEP_SUSPEND, &no), ==, POWER_ANSWER_NO);
        g_assert_cmpstr(no, ==, "fake says no");
        g_assert_cmpint(power_backend_can(&ctx, SLEEP_HYBRID, &na), ==, POWER_ANSWER_NA);

        /* "no" is still offered; "na" is not */
        g_auto(GStrv) kinds = power_backend_supported_kinds(&ctx);
        g_autofree char *joined = g_strjoinv(" ", kinds);
        g_assert_cmpstr(joined, ==, "suspend hibernate");
        fake_answer = POWER_ANSWER_YES;

        g_assert_cmpstr(power_answer_to_string(POWER_ANSWER_YES), ==, "yes");
        g_assert_cmpstr(power_answer_to_string(POWER_ANSWER_NO), ==, "no");
        g_assert_cmpstr(power_answer_to_string(POWER_ANSWER_NA), ==, "na");
}

/* The check of the backend a real sleep of the kind uses */
static void test_check_contract(void) {
        PowerContext ctx = fake_context(fake_table);
        g_autofree char *set_resume = NULL, *message = NULL;
        PowerCycle ok = { .kind = SLEEP_HIBERNATE };
        g_assert_cmpint(power_backend_check(&ctx, &ok, &set_resume, &message), ==, 0);
        g_assert_cmpstr(set_resume, ==, "8:3");
        g_assert_null(message);
        g_clear_pointer(&set_resume, g_free);
        PowerCycle refused = { .kind = SLEEP_HIBERNATE, .wake_after_sec = 1000 };
        g_assert_cmpint(power_backend_check(&ctx, &refused, &set_resume, &message), ==, FRIDGE_ERROR_NOT_SUPPORTED);
        g_assert_cmpstr(message, ==, "too long");
        g_assert_null(set_resume);
        g_clear_pointer(&message, g_free);
        /* a test run is checked by the backend of the real sleep, then runs on the other */
        PowerCycle test_run = { .kind = SLEEP_HIBERNATE, .pm_test = "core" };
        g_assert_cmpint(power_backend_check(&ctx, &test_run, &set_resume, &message), ==, 0);
        g_assert_cmpstr(set_resume, ==, "8:3");
        g_clear_pointer(&set_resume, g_free);
        g_autoptr(PowerRequest) r = NULL;
        g_assert_cmpint(power_request_new(&ctx, &test_run, &r), ==, 0);
        g_assert_true(r->backend == &fake_plain);
        PowerCycle suspend = { .kind = SLEEP_SUSPEND, .wake_after_sec = 1000 };
        g_assert_cmpint(power_backend_check(&ctx, &suspend, &set_resume, &message), ==, 0);
        g_assert_null(set_resume);
}

/* Everything the manager does with a request goes to the backend that made it */
static void test_request_contract(void) {
        PowerContext ctx = fake_context(fake_table);
        PowerCycle c = { .kind = SLEEP_HIBERNATE, .wake_after_sec = 13 };
        PowerRequest *r = NULL;
        fake_frees = 0;
        g_assert_cmpint(power_request_new(&ctx, &c, &r), ==, 0);
        g_assert_true(r->backend == &fake_special);
        g_assert_cmpstr(power_request_backend_name(r), ==, "special");

        g_assert_cmpint(power_request_enter(r), ==, -EIO); /* as the worker calls it */
        g_assert_cmpint(((FakeRequest *) r)->entered, ==, 1);
        g_assert_cmpuint(r->slept_usec, ==, 42);
        FridgeError error = FRIDGE_ERROR_NONE;
        g_autofree char *message = NULL;
        g_assert_cmpint(power_request_describe_failure(r, &error, &message), ==, RESULT_FAILED);
        g_assert_cmpint(error, ==, FRIDGE_ERROR_KERNEL);
        g_assert_cmpstr(message, ==, "special failed");
        g_assert_cmpstr(power_request_transient(r), ==, "try again");
        power_request_restore_after_abort(r);
        g_assert_cmpint(((FakeRequest *) r)->restored, ==, 1);
        g_autofree char *summary = power_request_summary(r);
        g_assert_cmpstr(summary, ==, "special"); /* no summary of its own: its name */
        g_assert_null(power_request_notes(r));
        double fraction = 0;
        g_autofree char *text = NULL;
        g_assert_true(power_request_progress(r, &fraction, &text));
        g_assert_cmpfloat(fraction, ==, 0.25);
        g_assert_cmpstr(text, ==, "writing the image");
        g_assert_cmpint(power_request_cancel(r), ==, 0);
        g_assert_cmpint(power_request_enter(r), ==, -ECANCELED);
        power_request_free_void(r); /* as the worker frees it */
        g_assert_cmpint(fake_frees, ==, 1);
        g_assert_null(power_request_free(NULL));

        /* the optional hooks missing: nothing is called, nothing is retried */
        c.kind = SLEEP_SUSPEND;
        c.wake_after_sec = 0;
        g_autoptr(PowerRequest) plain = NULL;
        g_assert_cmpint(power_request_new(&ctx, &c, &plain), ==, 0);
        g_assert_true(plain->backend == &fake_plain);
        g_assert_cmpint(power_request_enter(plain), ==, 0);
        g_assert_cmpint(power_request_finish(plain), ==, 0);
        g_assert_null(power_request_transient(plain));
        power_request_restore_after_abort(plain);
        /* no cancel: too late once entered; no progress: none to show */
        g_assert_cmpint(power_request_cancel(plain), ==, -EINPROGRESS);
        double f = -1;
        g_assert_false(power_request_progress(plain, &f, NULL));
        g_assert_cmpfloat(f, ==, -1);
}

/* ------------------------------------------------------ the kernel's own */

typedef struct Fixture {
        char *dir;
        int sys_fd;
        int proc_fd;
        Config *config;
        PowerContext ctx;
} Fixture;

static void put(Fixture *f, const char *path, const char *text) {
        g_autofree char *p = g_build_filename(f->dir, "sys", path, NULL);
        g_autofree char *parent = g_path_get_dirname(p);
        g_assert_cmpint(g_mkdir_with_parents(parent, 0755), ==, 0);
        (void) g_rmdir(p); /* a file refuse() made a directory */
        g_assert_true(g_file_set_contents(p, text, -1, NULL));
}

static char *get(Fixture *f, const char *path) {
        char *text = NULL;
        g_assert_cmpint(read_file_at(f->sys_fd, path, &text), ==, 0);
        return text;
}

static void remove_file(Fixture *f, const char *path) {
        g_autofree char *p = g_build_filename(f->dir, "sys", path, NULL);
        g_assert_cmpint(g_unlink(p), ==, 0);
}

/* A file the kernel refuses to write: a directory in its place */
static void refuse(Fixture *f, const char *path) {
        g_autofree char *p = g_build_filename(f->dir, "sys", path, NULL);
        (void) g_unlink(p);
        g_assert_cmpint(g_mkdir_with_parents(p, 0755), ==, 0);
}

typedef struct SysFile {
        const char *path, *text;
} SysFile;

static void put_all(Fixture *f, const SysFile *files, size_t n) {
        for (size_t i = 0; i < n; i++)
                put(f, files[i].path, files[i].text);
}

static void put_tuxonice(Fixture *f) {
        static const SysFile files[] = {
                { TUXONICE_DO_HIBERNATE, "" },      { TUXONICE_LAST_RESULT, "0\n" },
                { TUXONICE_IMAGE_SIZE_LIMIT, "XX" }, { TUXONICE_COMPRESSOR, "XXX" },
                { TUXONICE_COMPRESSION, "X" },      { TUXONICE_ENABLE_ESCAPE, "X" },
        };
        put_all(f, files, G_N_ELEMENTS(files));
}

static void setup(Fixture *f, gconstpointer data) {
        f->dir = g_dir_make_tmp("fridge-backend-XXXXXX", NULL);
        g_autofree char *sysfs = g_build_filename(f->dir, "sys", NULL);
        testdir_put_power(sysfs);
        /* no sys/power/resume and no /proc/swaps: hibernation has nowhere to go */
        g_autofree char *sys = g_build_filename(f->dir, "sys", NULL);
        g_autofree char *proc = g_build_filename(f->dir, "proc", NULL);
        g_assert_cmpint(g_mkdir_with_parents(proc, 0755), ==, 0);
        f->sys_fd = root_open(sys);
        f->proc_fd = root_open(proc);
        g_assert_cmpint(f->sys_fd, >=, 0);
        g_assert_cmpint(f->proc_fd, >=, 0);
        g_assert_cmpint(config_new_default(&f->config), ==, 0);
        g_free(f->config->hibernate_mode);
        f->config->hibernate_mode = g_strdup("platform");
        f->ctx = (PowerContext) { .sysfs_fd = f->sys_fd, .proc_fd = f->proc_fd, .config = f->config };
}

static void teardown(Fixture *f, gconstpointer data) {
        close(f->sys_fd);
        close(f->proc_fd);
        config_free(f->config);
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", f->dir);
        g_assert_cmpint(system(cmd), ==, 0);
        g_free(f->dir);
}

static void test_probe(Fixture *f, gconstpointer data) {
        g_assert_true(power_backend_mainline.probe(&f->ctx));
        g_assert_false(power_backend_tuxonice.probe(&f->ctx));
        for (int k = 0; k < _SLEEP_KIND_MAX; k++)
                g_assert_true(power_backend_select(&f->ctx, (SleepKind) k, false) == &power_backend_mainline);
        g_autoptr(PowerCaps) before = NULL;
        g_assert_cmpint(power_caps_read(f->sys_fd, &before), ==, 0);

        put_tuxonice(f);
        /* a call that read the kernel's offer before asks no more (a GetAll's properties) */
        PowerContext read_before = f->ctx;
        read_before.caps = before;
        g_assert_false(power_backend_tuxonice.probe(&read_before));
        g_assert_true(power_backend_select(&read_before, SLEEP_HIBERNATE, false) == &power_backend_mainline);
        g_autoptr(PowerCaps) after = NULL;
        g_assert_cmpint(power_caps_read(f->sys_fd, &after), ==, 0);
        read_before.caps = after;
        g_assert_true(power_backend_tuxonice.probe(&read_before));
        g_assert_true(power_backend_tuxonice.probe(&f->ctx));
        g_assert_true(power_backend_select(&f->ctx, SLEEP_HIBERNATE, false) == &power_backend_tuxonice);
        /* pm_test is the mainline kernel's test mode, hybrid sleep the mainline kernel's */
        g_assert_true(power_backend_select(&f->ctx, SLEEP_HIBERNATE, true) == &power_backend_mainline);
        g_assert_true(power_backend_select(&f->ctx, SLEEP_HYBRID, false) == &power_backend_mainline);
        g_assert_true(power_backend_select(&f->ctx, SLEEP_SUSPEND, false) == &power_backend_mainline);
}

static void assert_can(Fixture *f, SleepKind kind, PowerAnswer want, const char *reason_has) {
        g_autofree char *reason = NULL;
        PowerAnswer a = power_backend_can(&f->ctx, kind, &reason);
        if (a != want || (reason_has ? !reason || !strstr(reason, reason_has) : reason != NULL))
                g_error("%s: %s (%s), wanted %s (%s)", sleep_kind_to_string(kind), power_answer_to_string(a),
                        reason ? reason : "no reason", power_answer_to_string(want), reason_has ? reason_has : "none");
}

static void test_can(Fixture *f, gconstpointer data) {
        assert_can(f, SLEEP_SUSPEND, POWER_ANSWER_YES, NULL);
        /* offered, but the pre-flight finds nowhere for the image */
        assert_can(f, SLEEP_HIBERNATE, POWER_ANSWER_NO, "/" POWER_RESUME " is missing or malformed");
        assert_can(f, SLEEP_HYBRID, POWER_ANSWER_NO, "/" POWER_RESUME " is missing or malformed");
        g_free(f->config->hibernate_mode);
        f->config->hibernate_mode = g_strdup("bogus");
        assert_can(f, SLEEP_HIBERNATE, POWER_ANSWER_NO, "the configured HibernateMode is not offered in /" POWER_DISK);

        put(f, POWER_STATE, "freeze mem\n");
        assert_can(f, SLEEP_HIBERNATE, POWER_ANSWER_NA, "the kernel does not offer disk in /" POWER_STATE);
        g_auto(GStrv) kinds = power_backend_supported_kinds(&f->ctx);
        g_autofree char *joined = g_strjoinv(" ", kinds);
        g_assert_cmpstr(joined, ==, "suspend");

        remove_file(f, POWER_STATE);
        for (int k = 0; k < _SLEEP_KIND_MAX; k++)
                assert_can(f, (SleepKind) k, POWER_ANSWER_NA, POWER_STATE_UNUSABLE);
}

/* TuxOnIce hibernates without disk in state, without swap or resume */
static void test_tuxonice_can(Fixture *f, gconstpointer data) {
        put(f, POWER_STATE, "freeze mem\n");
        put_tuxonice(f);
        assert_can(f, SLEEP_HIBERNATE, POWER_ANSWER_YES, NULL);
        assert_can(f, SLEEP_HYBRID, POWER_ANSWER_NA, "the kernel does not offer disk in /" POWER_STATE);
        g_auto(GStrv) kinds = power_backend_supported_kinds(&f->ctx);
        g_autofree char *joined = g_strjoinv(" ", kinds);
        g_assert_cmpstr(joined, ==, "suspend hibernate");
        put(f, POWER_STATE, "mem [disk\n");
        assert_can(f, SLEEP_HIBERNATE, POWER_ANSWER_NA, POWER_STATE_UNUSABLE);
}

static void assert_check(Fixture *f, const PowerCycle *c, int want, const char *message) {
        g_autofree char *set_resume = NULL, *got = NULL;
        int r = power_backend_check(&f->ctx, c, &set_resume, &got);
        if (r != want || g_strcmp0(got, message) != 0)
                g_error("%s: %d (%s), wanted %d (%s)", sleep_kind_to_string(c->kind), r, got ? got : "no message",
                        want, message ? message : "no message");
        g_assert_null(set_resume);
}

/* Today's messages, word for word */
static void test_check(Fixture *f, gconstpointer data) {
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .mem_sleep = "s2idle", .pm_test = "devices",
                                        .wake_after_sec = 5 }, 0, NULL);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .mem_sleep = "shallow" }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "the kernel does not offer shallow in /" POWER_MEM_SLEEP);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .pm_test = "bogus" }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "the kernel does not offer bogus in /" POWER_PM_TEST);
        f->config->mem_sleep = g_strdup("shallow");
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "the configured MemSleep=shallow is not offered in /" POWER_MEM_SLEEP);
        /* the option wins over the configured mode */
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .mem_sleep = "deep" }, 0, NULL);
        g_clear_pointer(&f->config->mem_sleep, g_free);

        /* a pm_test run writes no image: no pre-flight */
        assert_check(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE, .pm_test = "devices" }, 0, NULL);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE }, FRIDGE_ERROR_HIBERNATE_NOT_READY,
                     "/" POWER_RESUME " is missing or malformed (No such file or directory)");
        put(f, POWER_RESUME, "0:0\n");
        assert_check(f, &(PowerCycle) { .kind = SLEEP_HYBRID }, FRIDGE_ERROR_HIBERNATE_NOT_READY,
                     "cannot read /proc/swaps: No such file or directory");

        remove_file(f, POWER_RTC_ALARM);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .wake_after_sec = 5 }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "no RTC wake alarm (class/rtc/rtc0/wakealarm) to wake the machine with");
        remove_file(f, POWER_PM_TEST);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .pm_test = "core" }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "the kernel has no /" POWER_PM_TEST);
        put(f, POWER_MEM_SLEEP, "[s2idle] [deep]\n");
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .mem_sleep = "deep" }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "cannot use deep in /" POWER_MEM_SLEEP ": " POWER_MEM_SLEEP
                     " is unreadable or malformed (Bad message)");
        put(f, POWER_STATE, "freeze disk\n");
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "the kernel does not offer mem in /" POWER_STATE);
        put(f, POWER_STATE, "mem [disk\n");
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "/" POWER_STATE " is malformed: not a list of words");
        remove_file(f, POWER_STATE);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_SUSPEND }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "cannot read /" POWER_STATE ": No such file or directory");
}

/* TuxOnIce needs neither disk nor swap; the options are checked as ever */
static void test_tuxonice_check(Fixture *f, gconstpointer data) {
        put(f, POWER_STATE, "freeze mem\n");
        put_tuxonice(f);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE, .wake_after_sec = 5 }, 0, NULL);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE, .mem_sleep = "shallow" }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "the kernel does not offer shallow in /" POWER_MEM_SLEEP);
        /* a pm_test run is checked as a real one (today's rule), its pm_test word too */
        assert_check(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE, .pm_test = "devices" }, 0, NULL);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE, .pm_test = "bogus" }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "the kernel does not offer bogus in /" POWER_PM_TEST);
        remove_file(f, POWER_RTC_ALARM);
        assert_check(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE, .wake_after_sec = 5 }, FRIDGE_ERROR_NOT_SUPPORTED,
                     "no RTC wake alarm (class/rtc/rtc0/wakealarm) to wake the machine with");
}

static PowerSysfsRequest *prepare(Fixture *f, PowerCycle *c) {
        PowerRequest *r = NULL;
        g_assert_cmpint(power_request_new(&f->ctx, c, &r), ==, 0);
        return (PowerSysfsRequest *) r;
}

static void test_prepare(Fixture *f, gconstpointer data) {
        f->config->mem_sleep = g_strdup("s2idle");
        g_autoptr(PowerRequest) suspend = &prepare(f, &(PowerCycle) { .kind = SLEEP_SUSPEND })->base;
        g_autoptr(PowerRequest) chosen = &prepare(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .mem_sleep = "deep",
                                                                     .pm_test = "devices",
                                                                     .wake_after_sec = 9 })->base;
        PowerCycle hib = { .kind = SLEEP_HIBERNATE, .set_resume = "8:3", .have_wakeup_count = true,
                           .wakeup_count = 17, .count_sources = devices_wakeup_snapshot(f->sys_fd) };
        g_autoptr(PowerRequest) hibernate = &prepare(f, &hib)->base;
        g_autoptr(PowerRequest) hybrid = &prepare(f, &(PowerCycle) { .kind = SLEEP_HYBRID })->base;

        const PowerSysfsRequest *s = (PowerSysfsRequest *) suspend;
        g_assert_true(suspend->backend == &power_backend_mainline);
        g_assert_cmpstr(s->state, ==, "mem");
        g_assert_cmpstr(s->mem_sleep, ==, "s2idle");
        g_assert_null(s->disk_mode);
        g_assert_null(s->pm_test);
        g_assert_false(s->write_wakeup_count);
        g_assert_cmpint(s->sysfs_fd, !=, f->sys_fd); /* its own fd, for the worker */
        g_assert_cmpint(s->sysfs_fd, >=, 0);

        const PowerSysfsRequest *c = (PowerSysfsRequest *) chosen;
        g_assert_cmpstr(c->mem_sleep, ==, "deep");
        g_assert_cmpstr(c->pm_test, ==, "devices");
        g_assert_cmpuint(c->wake_after_sec, ==, 9);

        const PowerSysfsRequest *h = (PowerSysfsRequest *) hibernate;
        g_assert_cmpstr(h->state, ==, "disk");
        g_assert_null(h->mem_sleep);
        g_assert_cmpstr(h->disk_mode, ==, "platform");
        g_assert_cmpstr(h->resume, ==, "8:3");
        g_assert_true(h->write_wakeup_count);
        g_assert_cmpuint(h->wakeup_count, ==, 17);
        g_assert_nonnull(h->count_sources);
        g_assert_null(hib.count_sources); /* the request took them */

        const PowerSysfsRequest *y = (PowerSysfsRequest *) hybrid;
        g_assert_cmpstr(y->state, ==, "disk");
        g_assert_cmpstr(y->disk_mode, ==, "suspend");

        g_autofree char *s1 = power_request_summary(suspend), *s2 = power_request_summary(chosen);
        g_assert_cmpstr(s1, ==, "mem");
        g_assert_cmpstr(s2, ==, "mem, pm_test devices");
        g_assert_null(power_request_notes(suspend));
        /* the state write is the point of no return */
        g_assert_cmpint(power_request_cancel(suspend), ==, -EINPROGRESS);
}

/* One failed step of a suspend: the cycle's result, error and message */
static void expect_failure(Fixture *f, PowerCycle *c, const char *refused, CycleResult result, FridgeError error,
                           const char *message) {
        if (refused)
                refuse(f, refused);
        g_autoptr(PowerRequest) r = &prepare(f, c)->base;
        g_assert_cmpint(power_request_enter(r), <, 0);
        FridgeError e = FRIDGE_ERROR_NONE;
        g_autofree char *got = NULL;
        g_assert_cmpint(power_request_describe_failure(r, &e, &got), ==, result);
        g_assert_cmpint(e, ==, error);
        g_assert_cmpstr(got, ==, message);
}

#define ISDIR "Is a directory"

static void test_describe_failure(Fixture *f, gconstpointer data) {
        expect_failure(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .mem_sleep = "s2idle" }, POWER_MEM_SLEEP,
                       RESULT_FAILED, FRIDGE_ERROR_KERNEL,
                       "the kernel refused to select the mem_sleep mode s2idle: " ISDIR);
        expect_failure(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE, .set_resume = "8:3" }, POWER_RESUME,
                       RESULT_FAILED, FRIDGE_ERROR_KERNEL, "the kernel refused to set the resume device 8:3: " ISDIR);
        expect_failure(f, &(PowerCycle) { .kind = SLEEP_HYBRID }, POWER_DISK, RESULT_FAILED, FRIDGE_ERROR_KERNEL,
                       "the kernel refused to select the disk mode suspend: " ISDIR);
        expect_failure(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .pm_test = "core" }, POWER_PM_TEST,
                       RESULT_FAILED, FRIDGE_ERROR_KERNEL, "the kernel refused to set pm_test core: " ISDIR);
        expect_failure(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .wake_after_sec = 4 }, POWER_RTC_ALARM,
                       RESULT_FAILED, FRIDGE_ERROR_KERNEL, "the kernel refused to arm the RTC wake alarm: " ISDIR);
        expect_failure(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .have_wakeup_count = true, .wakeup_count = 16 },
                       POWER_WAKEUP_COUNT, RESULT_ABORTED, FRIDGE_ERROR_WAKEUP_EVENT,
                       "a wakeup event arrived during the cycle (wakeup_count 16 is stale); not sleeping");
        expect_failure(f, &(PowerCycle) { .kind = SLEEP_SUSPEND }, POWER_STATE, RESULT_FAILED, FRIDGE_ERROR_KERNEL,
                       "the kernel refused to write the sleep state mem: " ISDIR);
}

/* A wakeup event and a busy kernel may pass; other refusals stay */
static void test_transient(Fixture *f, gconstpointer data) {
        refuse(f, POWER_WAKEUP_COUNT);
        g_autoptr(PowerRequest) spoiled = &prepare(f, &(PowerCycle) { .kind = SLEEP_SUSPEND,
                                                                      .have_wakeup_count = true })->base;
        g_assert_cmpint(power_request_enter(spoiled), <, 0);
        g_assert_cmpstr(power_request_transient(spoiled), ==, "a wakeup event arrived");

        refuse(f, POWER_STATE);
        g_autoptr(PowerRequest) refused = &prepare(f, &(PowerCycle) { .kind = SLEEP_SUSPEND })->base;
        g_assert_cmpint(power_request_enter(refused), <, 0);
        g_assert_null(power_request_transient(refused));
        /* EBUSY cannot be had from a plain file: the state write's result by hand */
        ((PowerSysfsRequest *) refused)->error = -EBUSY;
        g_assert_cmpstr(power_request_transient(refused), ==, "the kernel was busy (EBUSY)");
        FridgeError e;
        g_autofree char *message = NULL;
        g_assert_cmpint(power_request_describe_failure(refused, &e, &message), ==, RESULT_FAILED);
        g_assert_cmpstr(message, ==, "the kernel refused to write the sleep state mem: Device or resource busy");
}

/* While the state write hangs, fridged stops: the knobs go back as they
 * were before the cycle (not to defaults), and the alarm is cleared */
static void test_restore_after_abort(Fixture *f, gconstpointer data) {
        put(f, POWER_PM_TEST, "none core [freezer] devices\n");
        put(f, POWER_RTC_ALARM, "12345\n");
        g_autoptr(PowerRequest) plain = &prepare(f, &(PowerCycle) { .kind = SLEEP_SUSPEND })->base;
        power_request_restore_after_abort(plain);
        g_autofree char *pm0 = get(f, POWER_PM_TEST), *alarm0 = get(f, POWER_RTC_ALARM);
        g_assert_cmpstr(pm0, ==, "none core [freezer] devices\n"); /* nothing changed, nothing written */
        g_assert_cmpstr(alarm0, ==, "12345\n");

        g_autoptr(PowerSaved) before = power_saved_read(f->sys_fd, true);
        g_autoptr(PowerRequest) r = &prepare(f, &(PowerCycle) { .kind = SLEEP_SUSPEND, .pm_test = "devices",
                                                                .mem_sleep = "s2idle", .wake_after_sec = 3,
                                                                .before = before })->base;
        /* as the kernel phase left them */
        put(f, POWER_PM_TEST, "none core freezer [devices]\n");
        put(f, POWER_MEM_SLEEP, "[s2idle] deep\n");
        power_request_restore_after_abort(r);
        g_autofree char *pm = get(f, POWER_PM_TEST), *mem = get(f, POWER_MEM_SLEEP), *alarm = get(f, POWER_RTC_ALARM);
        /* plain files keep their old tail after a shorter write: compare the start */
        g_assert_true(g_str_has_prefix(pm, "freezer"));
        g_assert_true(g_str_has_prefix(mem, "deep"));
        g_assert_true(g_str_has_prefix(alarm, "0"));
}

/* ------------------------------------------------------------- TuxOnIce */

static PowerRequest *prepare_tuxonice(Fixture *f) {
        PowerRequest *r = &prepare(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE })->base;
        g_assert_true(r->backend == &power_backend_tuxonice);
        return r;
}

/* do_hibernate instead of state, then the result; no disk mode is chosen */
static void test_tuxonice_enter(Fixture *f, gconstpointer data) {
        put_tuxonice(f);
        f->config->tuxonice = (TuxOnIceConfig) { .image_size_limit = 10, .enable_escape = -1 };
        put(f, TUXONICE_LAST_RESULT, "5\n");
        g_autoptr(PowerRequest) r = prepare_tuxonice(f);
        g_assert_cmpint(power_request_cancel(r), ==, -EINPROGRESS);
        g_autofree char *summary = power_request_summary(r);
        g_assert_cmpstr(summary, ==, "disk through TuxOnIce");
        g_assert_cmpint(power_request_enter(r), ==, -ECANCELED);
        g_autofree char *written = get(f, TUXONICE_DO_HIBERNATE), *limit = get(f, TUXONICE_IMAGE_SIZE_LIMIT);
        g_autofree char *state = get(f, POWER_STATE), *disk = get(f, POWER_DISK);
        g_assert_cmpstr(written, ==, "1");
        g_assert_cmpstr(limit, ==, "10");
        g_assert_cmpstr(state, ==, "freeze mem disk\n");
        g_assert_cmpstr(disk, ==, "[platform] shutdown reboot suspend test_resume\n");
        FridgeError e;
        g_autofree char *message = NULL;
        g_assert_cmpint(power_request_describe_failure(r, &e, &message), ==, RESULT_FAILED);
        g_assert_cmpint(e, ==, FRIDGE_ERROR_KERNEL);
        g_assert_cmpstr(message, ==, "TuxOnIce aborted the hibernation: no storage was available for the image "
                                     "(TOI_NOSTORAGE_AVAILABLE) (last_result 0x5)");
        g_assert_null(power_request_transient(r));

        /* the user pressed Escape: a cancel */
        put(f, TUXONICE_LAST_RESULT, "3\n");
        g_autoptr(PowerRequest) escaped = prepare_tuxonice(f);
        g_assert_cmpint(power_request_enter(escaped), ==, -ECANCELED);
        g_autofree char *m2 = NULL;
        g_assert_cmpint(power_request_describe_failure(escaped, &e, &m2), ==, RESULT_ABORTED);
        g_assert_cmpint(e, ==, FRIDGE_ERROR_CANCELLED);

        /* a note, not a failure: logged by whoever ran it */
        put(f, TUXONICE_LAST_RESULT, "32\n");
        g_autoptr(PowerRequest) kept = prepare_tuxonice(f);
        g_assert_cmpint(power_request_enter(kept), ==, 0);
        g_autofree char *notes = power_request_notes(kept);
        g_assert_cmpstr(notes, ==, "TuxOnIce hibernated with notes: an existing image was kept (TOI_KEPT_IMAGE)");

        put(f, TUXONICE_LAST_RESULT, "0\n");
        g_autoptr(PowerRequest) ok = prepare_tuxonice(f);
        g_assert_cmpint(power_request_enter(ok), ==, 0);
        g_assert_null(power_request_notes(ok));
}

static void expect_tuxonice_refused(Fixture *f, const char *message) {
        g_autoptr(PowerRequest) r = prepare_tuxonice(f);
        g_assert_cmpint(power_request_enter(r), <, 0);
        FridgeError e;
        g_autofree char *got = NULL;
        g_assert_cmpint(power_request_describe_failure(r, &e, &got), ==, RESULT_FAILED);
        g_assert_cmpint(e, ==, FRIDGE_ERROR_KERNEL);
        g_assert_cmpstr(got, ==, message);
}

static void test_tuxonice_describe_failure(Fixture *f, gconstpointer data) {
        put_tuxonice(f);
        f->config->tuxonice = (TuxOnIceConfig) { .image_size_limit = TUXONICE_IMAGE_SIZE_LIMIT_UNSET,
                                                 .enable_escape = 1 };
        refuse(f, TUXONICE_ENABLE_ESCAPE);
        expect_tuxonice_refused(f, "the kernel refused to apply the TuxOnIce setting " TUXONICE_ENABLE_ESCAPE
                                   ": " ISDIR);
        f->config->tuxonice.enable_escape = -1;
        remove_file(f, TUXONICE_LAST_RESULT);
        expect_tuxonice_refused(f, "the kernel refused to give TuxOnIce's result in " TUXONICE_LAST_RESULT
                                   ": No such file or directory");
        refuse(f, TUXONICE_DO_HIBERNATE);
        expect_tuxonice_refused(f, "the kernel refused to start a TuxOnIce hibernation with "
                                   TUXONICE_DO_HIBERNATE ": " ISDIR);
        /* the steps it shares with the mainline kernel say what they said */
        put(f, TUXONICE_DO_HIBERNATE, "");
        put(f, TUXONICE_LAST_RESULT, "0\n");
        refuse(f, POWER_RTC_ALARM);
        g_autoptr(PowerRequest) r = &prepare(f, &(PowerCycle) { .kind = SLEEP_HIBERNATE, .wake_after_sec = 2 })->base;
        g_assert_cmpint(power_request_enter(r), <, 0);
        FridgeError e;
        g_autofree char *got = NULL;
        g_assert_cmpint(power_request_describe_failure(r, &e, &got), ==, RESULT_FAILED);
        g_assert_cmpstr(got, ==, "the kernel refused to arm the RTC wake alarm: " ISDIR);
}

static void assert_writer(Fixture *f, const char *want, const char *reason_has) {
        g_autofree char *reason = NULL;
        const char *w = power_backend_hibernate_writer(&f->ctx, &reason);
        if (!g_str_equal(w, want) || (reason_has ? !reason || !strstr(reason, reason_has) : reason != NULL))
                g_error("writer %s (%s), wanted %s (%s)", w, reason ? reason : "no reason", want,
                        reason_has ? reason_has : "none");
}

static int listen_at(const char *path) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        g_assert_cmpint(fd, >=, 0);
        g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
        g_assert_cmpint(bind(fd, (struct sockaddr *) &sa, sizeof sa), ==, 0);
        g_assert_cmpint(listen(fd, 1), ==, 0);
        return fd;
}

/* fridge writes the image only when asked to, when its writer listens,
 * and when the kernel is not locked down; every refusal names its cause */
static void test_userspace_select(Fixture *f, gconstpointer data) {
        g_autofree char *sock = g_build_filename(f->dir, "image-writer.sock", NULL);
        f->ctx.image_writer_socket = sock;
        assert_writer(f, "kernel", NULL); /* HibernateWriter=kernel, the default: nothing to explain */

        f->config->hibernate_writer = HIBERNATE_WRITER_FRIDGE;
        g_assert_true(power_backend_select(&f->ctx, SLEEP_HIBERNATE, false) == &power_backend_mainline);
        assert_writer(f, "kernel", "does not listen on");

        int fd = listen_at(sock);
        g_assert_true(power_backend_select(&f->ctx, SLEEP_HIBERNATE, false) == &power_backend_userspace);
        assert_writer(f, "fridge", NULL);
        /* pm_test, suspend and hybrid sleep stay the kernel's */
        g_assert_true(power_backend_select(&f->ctx, SLEEP_HIBERNATE, true) == &power_backend_mainline);
        g_assert_true(power_backend_select(&f->ctx, SLEEP_SUSPEND, false) == &power_backend_mainline);
        g_assert_true(power_backend_select(&f->ctx, SLEEP_HYBRID, false) == &power_backend_mainline);

        put(f, "sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
        g_assert_true(power_backend_select(&f->ctx, SLEEP_HIBERNATE, false) == &power_backend_mainline);
        assert_writer(f, "kernel", "locked down (integrity)");
        put(f, "sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
        assert_writer(f, "fridge", NULL);

        put_tuxonice(f);
        assert_writer(f, "tuxonice", "TuxOnIce is in this kernel");
        close(fd);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        log_set_max_level(LOG_EMERG);
        g_test_add_func("/power-backend/select", test_select);
        g_test_add_func("/power-backend/nothing-serves", test_nothing_serves);
        g_test_add_func("/power-backend/can-contract", test_can_contract);
        g_test_add_func("/power-backend/check-contract", test_check_contract);
        g_test_add_func("/power-backend/request-contract", test_request_contract);
#define ADD(path, fn) g_test_add("/power-backend/" path, Fixture, NULL, setup, fn, teardown)
        ADD("probe", test_probe);
        ADD("mainline/can", test_can);
        ADD("mainline/check", test_check);
        ADD("mainline/prepare", test_prepare);
        ADD("mainline/describe-failure", test_describe_failure);
        ADD("mainline/transient", test_transient);
        ADD("mainline/restore-after-abort", test_restore_after_abort);
        ADD("tuxonice/can", test_tuxonice_can);
        ADD("tuxonice/check", test_tuxonice_check);
        ADD("tuxonice/enter", test_tuxonice_enter);
        ADD("tuxonice/describe-failure", test_tuxonice_describe_failure);
        ADD("userspace/select", test_userspace_select);
        return g_test_run();
}
