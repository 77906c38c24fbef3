/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fridge-image-writer --console=vt's choice of a VT, made without one:
 * /sys/class/tty/tty0/active read ("tty2" is 2; a serial console, tty0,
 * past tty63 or trailing words are not a VT), then a free VT switched to;
 * with none free, the VT in front when it shows text; else no bar. The
 * ioctls themselves run only inside qemu (vm-uhib-vt): never on the host's
 * VTs. */
#include <errno.h>
#include <glib.h>
#include <string.h>

#include "image-console.h"
#include "vt-plan.h"

static void test_parse_active(void) {
        g_assert_cmpint(vt_parse_active("tty2\n"), ==, 2);
        g_assert_cmpint(vt_parse_active("tty1"), ==, 1);
        g_assert_cmpint(vt_parse_active("tty63\n"), ==, 63);
        const char *const bad[] = { "", "\n", "tty", "tty\n", "tty0", "tty64", "tty100", "ttyS0\n", "tty2\n\n",
                                    "tty2 ", " tty2", "tty02", "tty-1", "console", "vc/2", "TTY2" };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
                if (vt_parse_active(bad[i]) != -EINVAL)
                        g_error("\"%s\" parsed as a VT", bad[i]);
}

static void test_plan(void) {
        /* a desktop on tty2, tty3 free: switch there */
        VtPlan p = vt_plan(&(VtSeen) { .active = 2, .free_vt = 3 });
        g_assert_cmpint(p.kind, ==, VT_PLAN_SWITCH);
        g_assert_cmpint(p.vt, ==, 3);
        /* the same on a text console */
        p = vt_plan(&(VtSeen) { .active = 1, .free_vt = 2, .active_text = true });
        g_assert_cmpint(p.kind, ==, VT_PLAN_SWITCH);
        g_assert_cmpint(p.vt, ==, 2);
        /* none free (VT_OPENQRY's -1, or it failed): the text VT in front */
        p = vt_plan(&(VtSeen) { .active = 5, .free_vt = -1, .active_text = true });
        g_assert_cmpint(p.kind, ==, VT_PLAN_STAY);
        g_assert_cmpint(p.vt, ==, 5);
        g_assert_nonnull(strstr(p.why, "tty5"));
        p = vt_plan(&(VtSeen) { .active = 5, .free_vt = 0, .active_text = true });
        g_assert_cmpint(p.kind, ==, VT_PLAN_STAY);
        /* the "free" one is the one in front: nothing to switch */
        p = vt_plan(&(VtSeen) { .active = 4, .free_vt = 4, .active_text = true });
        g_assert_cmpint(p.kind, ==, VT_PLAN_STAY);
        /* none free and a compositor in front: no bar, said why */
        p = vt_plan(&(VtSeen) { .active = 2, .free_vt = -1 });
        g_assert_cmpint(p.kind, ==, VT_PLAN_NONE);
        g_assert_nonnull(strstr(p.why, "graphical"));
        p = vt_plan(&(VtSeen) { .active = 2, .free_vt = 64 });
        g_assert_cmpint(p.kind, ==, VT_PLAN_NONE);
        /* no VT in front (no VTs in this kernel): no bar */
        p = vt_plan(&(VtSeen) { .active = 0, .free_vt = 3, .active_text = true });
        g_assert_cmpint(p.kind, ==, VT_PLAN_NONE);
        g_assert_cmpstr(p.why, !=, "");
}

/* "vt" is no path: opening it opens nothing; the VT is taken only at
 * image_console_show, just before the freeze (not run here) */
static void test_console_vt(void) {
        ImageConsole c;
        g_assert_cmpint(image_console_open(&c, IMAGE_CONSOLE_VT), ==, 0);
        g_assert_true(c.want_vt);
        g_assert_cmpint(c.fd, ==, -1);
        g_assert_cmpint(c.vt.fd, ==, -1);
        g_assert_false(image_console_abort_typed(&c));
        image_console_close(&c);
        g_assert_cmpint(c.fd, ==, -1);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/vt-plan/parse-active", test_parse_active);
        g_test_add_func("/vt-plan/plan", test_plan);
        g_test_add_func("/vt-plan/console-vt", test_console_vt);
        return g_test_run();
}
