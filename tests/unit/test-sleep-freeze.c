/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether systemd-sleep (>= 256) freezes user.slice before fridge's hook:
 * SYSTEMD_SLEEP_FREEZE_USER_SESSIONS from a sleep service's unit file and
 * drop-ins, resolved as systemd resolves them, and the version gate. */
#include <glib.h>
#include <errno.h>
#include <string.h>

#include "sleep-freeze.h"
#include "testdir.h"

#define UNIT "[Unit]\nDescription=System Suspend\n[Service]\nType=oneshot\nExecStart=/lib/systemd/systemd-sleep suspend\n"
#define OURS "[Service]\nEnvironment=SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=false\n"

/* "VALUE (FILE below root)", "unset", or "no unit" */
static char *env_of(const char *root, const char *service) {
        g_autofree char *value = NULL, *origin = NULL;
        int r = sleep_freeze_env(root, service, &value, &origin);
        if (r == -ENOENT)
                return g_strdup("no unit");
        g_assert_cmpint(r, ==, 0);
        if (!value)
                return g_strdup("unset");
        return g_strdup_printf("%s (%s)", value, origin + strlen(root));
}

static void test_dropin_resolution(void) {
        g_autofree char *root = g_dir_make_tmp("fridge-sleep-freeze-XXXXXX", NULL);
        const char *svc = "systemd-suspend.service";
        g_autofree char *none = env_of(root, svc);
        g_assert_cmpstr(none, ==, "no unit");

        testdir_put(root, "lib/systemd/system/systemd-suspend.service", UNIT);
        g_autofree char *bare = env_of(root, svc);
        g_assert_cmpstr(bare, ==, "unset");

        testdir_put(root, "lib/systemd/system/systemd-suspend.service.d/fridge.conf", OURS);
        g_autofree char *ours = env_of(root, svc);
        g_assert_cmpstr(ours, ==, "false (/lib/systemd/system/systemd-suspend.service.d/fridge.conf)");

        /* a later name wins, in any directory */
        testdir_put(root, "run/systemd/system/systemd-suspend.service.d/zz-admin.conf",
                    "# admin\n[Service]\nEnvironment=\"FOO=a b\" SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=yes\n");
        g_autofree char *later = env_of(root, svc);
        g_assert_cmpstr(later, ==, "yes (/run/systemd/system/systemd-suspend.service.d/zz-admin.conf)");

        /* the same name in /etc masks /run's and /lib's */
        testdir_put(root, "etc/systemd/system/systemd-suspend.service.d/zz-admin.conf", "[Service]\nNice=1\n");
        g_autofree char *masked = env_of(root, svc);
        g_assert_cmpstr(masked, ==, "false (/lib/systemd/system/systemd-suspend.service.d/fridge.conf)");

        /* an empty Environment= clears what came before it; other sections do not count */
        testdir_put(root, "etc/systemd/system/systemd-suspend.service.d/zz-admin.conf",
                    "[Unit]\nEnvironment=SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=false\n[Service]\nEnvironment=\n");
        g_autofree char *cleared = env_of(root, svc);
        g_assert_cmpstr(cleared, ==, "unset");

        /* a unit file in /etc replaces /lib's, and its drop-ins still apply */
        testdir_put(root, "etc/systemd/system/systemd-suspend.service.d/zz-admin.conf", "[Service]\n");
        testdir_put(root, "etc/systemd/system/systemd-suspend.service",
                    UNIT "Environment=SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=1\n");
        g_autofree char *unit = env_of(root, svc);
        g_assert_cmpstr(unit, ==, "false (/lib/systemd/system/systemd-suspend.service.d/fridge.conf)");
        testdir_remove(root);
}

static void test_value_freezes(void) {
        g_assert_true(sleep_freeze_value_freezes(NULL));
        g_assert_true(sleep_freeze_value_freezes("yes"));
        g_assert_true(sleep_freeze_value_freezes("maybe")); /* systemd freezes unless it reads false */
        g_assert_false(sleep_freeze_value_freezes("false"));
        g_assert_false(sleep_freeze_value_freezes("0"));
        g_assert_false(sleep_freeze_value_freezes("OFF"));
}

static void test_status(void) {
        g_autofree char *root = g_dir_make_tmp("fridge-sleep-freeze-XXXXXX", NULL);
        for (const char *const *s = sleep_freeze_services; *s; s++) {
                g_autofree char *unit = g_strdup_printf("lib/systemd/system/%s", *s);
                g_autofree char *dropin = g_strdup_printf("lib/systemd/system/%s.d/fridge.conf", *s);
                testdir_put(root, unit, UNIT);
                testdir_put(root, dropin, OURS);
        }
        g_autofree char *unknown = sleep_freeze_status(root, 0);
        g_assert_true(g_str_has_prefix(unknown, "unknown: "));
        g_autofree char *old = sleep_freeze_status(root, 252);
        g_assert_true(g_str_has_prefix(old, "not affected: systemd 252 "));
        g_autofree char *prevented = sleep_freeze_status(root, 256);
        g_assert_true(g_str_has_prefix(prevented, "prevented: systemd 256 "));

        testdir_put(root, "etc/systemd/system/systemd-hibernate.service.d/local.conf",
                    "[Service]\nEnvironment=SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=true\n");
        g_autofree char *affected = sleep_freeze_status(root, 257);
        g_assert_true(g_str_has_prefix(affected, "affected: systemd 257 "));
        g_assert_nonnull(strstr(affected, "systemd-hibernate.service (SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=true from "));
        g_assert_nonnull(strstr(affected, "/etc/systemd/system/systemd-hibernate.service.d/local.conf)"));
        g_assert_null(strstr(affected, "systemd-suspend.service"));
        g_autofree char *still_old = sleep_freeze_status(root, 255);
        g_assert_true(g_str_has_prefix(still_old, "not affected: "));
        testdir_remove(root);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/sleep-freeze/dropin-resolution", test_dropin_resolution);
        g_test_add_func("/sleep-freeze/value-freezes", test_value_freezes);
        g_test_add_func("/sleep-freeze/status", test_status);
        return g_test_run();
}
