/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridge's block inhibitors on logind's path: while any is held, fridged
 * holds one logind block inhibitor for sleep (who "fridge", why "fridge: N
 * inhibitors: who (why), …"), so that a sleep asked of logind directly
 * (systemctl suspend, a desktop's button) is refused as it would be by
 * fridged. Against the logind stand-in on the private bus; the third party
 * is uid 65534 calling logind's Suspend through setpriv.
 */
#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "fridge-config.h"
#include "harness.h"

typedef HarnessFixture Fixture;

#define LOGIND "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager"
#define NEVER ((const char *) "")

static Harness *start(Fixture *f, bool logind) {
        if (logind && !harness_env("LOGIND_STANDIN")) {
                g_test_skip("LOGIND_STANDIN is not set");
                return NULL;
        }
        HarnessOptions o = { .open_bus = true, .logind = logind, .logind_hook_script = true };
        f->h = harness_new(&o);
        if (logind && !harness_wait_logind_delay(f->h, "fridge", true, 10000))
                g_error("fridged did not take a logind delay lock");
        return f->h;
}

/* A fridge inhibitor's fd, which the test holds */
static int fridge_inhibit(Harness *h, const char *who, const char *why, const char *mode) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(h, FRIDGE_INTERFACE, "Inhibit", &reply, &err, &msg, "sss", who, why, mode) < 0)
                g_error("Inhibit: %s: %s", err, msg);
        int fd;
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        g_assert_cmpint(fd, >=, 0);
        sd_bus_message_unref(reply);
        return fd;
}

/* The why of the newest "fridge" block inhibitor the stand-in holds, NULL
 * when none; the holder's uid in *ret_uid, how many in *ret_n (two for a
 * moment while the why changes) */
static char *logind_fridge_block_n(Harness *h, unsigned *ret_uid, unsigned *ret_n) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *what, *who, *why, *mode;
        uint32_t uid, pid;
        char *found = NULL;
        unsigned n = 0;
        if (sd_bus_call_method(h->bus, LOGIND, "ListInhibitors", &e, &reply, "") < 0)
                g_error("ListInhibitors: %s", e.message);
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ssssuu)"), >, 0);
        while (sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid) > 0)
                if (strcmp(who, "fridge") == 0 && strcmp(mode, "block") == 0) {
                        g_assert_cmpstr(what, ==, "sleep");
                        g_free(found);
                        found = g_strdup(why);
                        n++;
                        if (ret_uid)
                                *ret_uid = uid;
                }
        sd_bus_message_unref(reply);
        if (ret_n)
                *ret_n = n;
        return found;
}

static char *logind_fridge_block(Harness *h, unsigned *ret_uid) {
        return logind_fridge_block_n(h, ret_uid, NULL);
}

/* Polls (bounded) until logind's fridge block says `want` (NULL: none) */
static void wait_block(Harness *h, const char *want) {
        for (int i = 0; i < 500; i++) {
                unsigned n;
                g_autofree char *why = logind_fridge_block_n(h, NULL, &n);
                if (g_strcmp0(why, want) == 0 && n <= 1) /* one, however many fridge holds */
                        return;
                g_usleep(20000); /* bounded by the count */
        }
        g_autofree char *why = logind_fridge_block(h, NULL);
        g_error("logind's fridge block inhibitor says '%s', not '%s'", why ? why : "(none)", want ? want : "(none)");
}

/* logind's Suspend(false) as uid 65534: busctl's exit status and output */
static int suspend_as_nobody(Harness *h, char **ret_out) {
        g_autofree char *cmd = g_strdup_printf("exec setpriv --reuid=65534 --regid=65534 --clear-groups -- busctl "
                                               "--address='%s' call org.freedesktop.login1 /org/freedesktop/login1 "
                                               "org.freedesktop.login1.Manager Suspend b false 2>&1",
                                               h->bus_address);
        char *sh[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
        int status = harness_run(sh, 20000, ret_out);
        g_assert_true(status != -1 && WIFEXITED(status));
        g_test_message("Suspend as nobody -> %d: %s", WEXITSTATUS(status), *ret_out);
        return WEXITSTATUS(status);
}

/* Where `first` is in the stand-in's log before the LAST `then` */
static void assert_before(Harness *h, const char *first, const char *then) {
        g_autofree char *log = harness_logind_log(h);
        const char *a = strstr(log, first), *b = g_strrstr(log, then);
        if (!a || !b || a > b)
                g_error("the logind stand-in's log does not have '%s' before '%s':\n%s", first, then, log);
}

/* One mirror for the whole set, its why following each change, a new one
 * taken before the old one goes; the third party refused until the last
 * block goes, and its sleep going through after */
static void test_mirror_follows_the_set(Fixture *f, gconstpointer data) {
        Harness *h = start(f, true);
        if (!h)
                return;
        g_autofree char *none = logind_fridge_block(h, NULL);
        g_assert_null(none);
        int burner = fridge_inhibit(h, "burner", "writing a disc", "block");
        wait_block(h, "fridge: 1 inhibitor: burner (writing a disc)");
        unsigned uid = 1;
        g_autofree char *why = logind_fridge_block(h, &uid);
        g_assert_cmpstr(why, ==, "fridge: 1 inhibitor: burner (writing a disc)");
        g_assert_cmpuint(uid, ==, 0); /* fridged's own */
        int delay = fridge_inhibit(h, "locker", "lock first", "delay"); /* delays are fridge's business */
        int backup = fridge_inhibit(h, "backup", "", "block");
        wait_block(h, "fridge: 2 inhibitors: burner (writing a disc), backup");
        /* no gap: the second fridge block was taken before the first went */
        assert_before(h, "inhibit fridge block\ninhibit fridge block\n", "released fridge block");

        g_autofree char *out = NULL;
        g_assert_cmpint(suspend_as_nobody(h, &out), !=, 0);
        g_assert_nonnull(strstr(out, "Access denied")); /* busctl prints errno text, not the message */
        g_assert_true(harness_wait_logind_line(h, "refused suspend uid=65534", 5000));

        close(burner);
        wait_block(h, "fridge: 1 inhibitor: backup");
        close(backup);
        wait_block(h, NULL);
        close(delay);
        g_autofree char *out2 = NULL;
        g_assert_cmpint(suspend_as_nobody(h, &out2), ==, 0);
        g_assert_true(harness_wait_logind_line(h, "prepare-for-sleep false", 30000));
        g_autofree char *log = harness_logind_log(h);
        g_assert_nonnull(strstr(log, "hook pre suspend 0\nstate mem ok\nhook post suspend 0\n"));
}

/* However many and however long: bounded, the rest counted */
static void test_mirror_bounded(Fixture *f, gconstpointer data) {
        Harness *h = start(f, true);
        if (!h)
                return;
        g_autofree char *who = g_strnfill(200, 'w'), *why = g_strnfill(1000, 'y');
        int fds[16];
        for (int i = 0; i < 16; i++)
                fds[i] = fridge_inhibit(h, who, why, "block");
        g_autofree char *got = NULL;
        for (int i = 0; i < 500 && !(got && g_str_has_prefix(got, "fridge: 16 ")); i++) {
                g_free(got);
                got = logind_fridge_block(h, NULL);
                g_usleep(20000); /* bounded by the count */
        }
        g_assert_nonnull(got);
        g_test_message("%zu bytes: %s", strlen(got), got);
        g_assert_true(g_str_has_prefix(got, "fridge: 16 inhibitors: www"));
        g_assert_cmpuint(strlen(got), <=, 512);
        g_assert_true(g_str_has_suffix(got, " more"));
        g_assert_nonnull(strstr(got, "w… (yyy"));
        for (int i = 0; i < 16; i++)
                close(fds[i]);
        wait_block(h, NULL);
}

/* fridge's own cycle through logind (the logind driver, allowed to ignore
 * the blocks) is not stopped by its own mirror: it is let go for the
 * cycle, and taken again after it */
static void test_own_logind_cycle(Fixture *f, gconstpointer data) {
        Harness *h = start(f, true);
        if (!h)
                return;
        int burner = fridge_inhibit(h, "burner", "writing a disc", "block");
        wait_block(h, "fridge: 1 inhibitor: burner (writing a disc)");
        g_autofree char *out = NULL;
        g_assert_cmpint(harness_fridgectl(h, 60000, &out, "suspend", "--ignore-inhibitors", NULL), ==, 0);
        g_assert_true(harness_wait_logind_line(h, "prepare-for-sleep false", 30000));
        assert_before(h, "released fridge block", "sleep suspend flags=0");
        wait_block(h, "fridge: 1 inhibitor: burner (writing a disc)");
        g_autofree char *flog = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &flog, NULL, NULL));
        g_assert_nonnull(strstr(flog, "(driver logind)"));
        close(burner);
        wait_block(h, NULL);
}

/* No logind: said once, and fridge's own inhibitors work as before */
static void test_no_logind(Fixture *f, gconstpointer data) {
        Harness *h = start(f, false);
        int burner = fridge_inhibit(h, "burner", "writing a disc", "block");
        int backup = fridge_inhibit(h, "backup", "", "block");
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        g_assert_cmpint(harness_sleep(h, "suspend", &cycle, &err, &msg, NULL), !=, 0);
        g_assert_cmpstr(err, ==, "io.fridge.Fridge1.Error.Inhibited");
        g_autofree char *flog = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &flog, NULL, NULL));
        const char *warning = "logind is not on the bus: fridge's block inhibitors cannot stop its sleeps";
        const char *at = strstr(flog, warning);
        g_assert_nonnull(at);
        g_assert_null(strstr(at + 1, warning));
        close(burner);
        close(backup);
}

#define ADD(path, fn) g_test_add("/logind-block/" path, Fixture, NULL, harness_fixture_setup, fn, harness_fixture_teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        ADD("mirror-follows-the-set", test_mirror_follows_the_set);
        ADD("mirror-bounded", test_mirror_bounded);
        ADD("own-logind-cycle", test_own_logind_cycle);
        ADD("no-logind", test_no_logind);
        return g_test_run();
}
