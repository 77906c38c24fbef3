/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files meson installs into /etc/fridge and /usr/lib/fridge: read by
 * fridged's own parsers, they must load without a problem, and the defaults
 * fridge.conf shows in its comments must be fridged's real defaults. */
#include <glib.h>
#include <stdbool.h>
#include <string.h>

#include "classes.h"
#include "config.h"
#include "config-keys.h"

static char *data_path(const char *name) {
        return g_build_filename(g_getenv("FRIDGE_DATA_DIR"), name, NULL);
}

static unsigned count_keys(const char *text) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        unsigned n = 0;
        for (char **l = lines; *l; l++)
                n += g_ascii_isalpha(**l) && strchr(*l, '=');
        return n;
}

static void assert_config_equal(const Config *a, const Config *b) {
        g_assert_cmpint(a->driver, ==, b->driver);
        g_assert_cmpstr(a->mem_sleep, ==, b->mem_sleep);
        g_assert_cmpstr(a->hibernate_mode, ==, b->hibernate_mode);
        g_assert_cmpstr(a->resume_device, ==, b->resume_device);
        g_assert_cmpuint(a->retries, ==, b->retries);
        g_assert_cmpuint(a->retry_delay_ms, ==, b->retry_delay_ms);
        g_assert_cmpuint(a->flush_timeout_ms, ==, b->flush_timeout_ms);
        g_assert_cmpint(a->flush_on_timeout, ==, b->flush_on_timeout);
        g_assert_true(g_strv_equal((const char *const *) a->freeze_roots, (const char *const *) b->freeze_roots));
        g_assert_cmpuint(a->freeze_timeout_ms, ==, b->freeze_timeout_ms);
        g_assert_cmpuint(a->delay_timeout_ms, ==, b->delay_timeout_ms);
        g_assert_cmpuint(a->hook_timeout_ms, ==, b->hook_timeout_ms);
        g_assert_cmpuint(a->kernel_watchdog_ms, ==, b->kernel_watchdog_ms);
        g_assert_cmpuint(a->writer_cancel_timeout_ms, ==, b->writer_cancel_timeout_ms);
        g_assert_cmpint(a->tuxonice.image_size_limit, ==, b->tuxonice.image_size_limit);
        g_assert_cmpstr(a->tuxonice.compressor, ==, b->tuxonice.compressor);
        g_assert_cmpint(a->tuxonice.enable_escape, ==, b->tuxonice.enable_escape);
}

static void test_fridge_conf(void) {
        g_autofree char *path = data_path("fridge.conf");
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        g_autoptr(Config) defaults = NULL;
        g_assert_cmpint(config_new_default(&defaults), ==, 0);

        /* As shipped: every key commented out */
        g_autoptr(Config) shipped = NULL;
        g_assert_cmpint(config_new_default(&shipped), ==, 0);
        g_assert_cmpuint(config_apply_text(shipped, path, text), ==, 0);
        assert_config_equal(shipped, defaults);

        /* Every "#Key=value" made live: the values shown are the defaults */
        g_autoptr(GRegex) re = g_regex_new("^#([A-Za-z]+=)", G_REGEX_MULTILINE, 0, NULL);
        g_autofree char *live = g_regex_replace(re, text, -1, 0, "\\1", 0, NULL);
        g_assert_cmpuint(count_keys(live), ==, config_keys_count); /* every key fridged knows */
        g_autoptr(Config) uncommented = NULL;
        g_assert_cmpint(config_new_default(&uncommented), ==, 0);
        g_assert_cmpuint(config_apply_text(uncommented, path, live), ==, 0);
        assert_config_equal(uncommented, defaults);
}

/* The "# ..." lines right above "#Name=" in [group], joined by spaces;
 * *ret_value is what "#Name=" shows. NULL when the key is not there. */
static char *comment_of(char **lines, const char *group, const char *name, char **ret_value) {
        g_autofree char *header = g_strdup_printf("[%s]", group);
        g_autofree char *key = g_strdup_printf("#%s=", name);
        bool in_group = false;
        for (char **l = lines; *l; l++) {
                if (**l == '[')
                        in_group = g_str_equal(*l, header);
                if (!in_group || !g_str_has_prefix(*l, key))
                        continue;
                GString *text = g_string_new(NULL);
                for (char **c = l - 1; c >= lines && g_str_has_prefix(*c, "# "); c--) {
                        g_string_prepend(text, *c + 2);
                        g_string_prepend_c(text, ' ');
                }
                *ret_value = g_strdup(*l + strlen(key));
                return g_string_free(text, FALSE);
        }
        return NULL;
}

/* Each key of the table is shown with its default, its help line and its
 * range or values, as config-keys.c declares them */
static void test_fridge_conf_follows_table(void) {
        g_autofree char *path = data_path("fridge.conf");
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (size_t i = 0; i < config_keys_count; i++) {
                const ConfigKey *k = &config_keys[i];
                g_autofree char *value = NULL;
                g_autofree char *comment = comment_of(lines, k->group, k->name, &value);
                if (!comment)
                        g_error("%s: [%s] %s is not shown", path, k->group, k->name);
                g_assert_cmpstr(value, ==, k->default_value);
                if (!strstr(comment, k->help))
                        g_error("%s: the comment of [%s] %s lacks \"%s\":%s", path, k->group, k->name, k->help,
                                comment);
                g_autofree char *limits = (k->type == CONFIG_KEY_U32 || k->type == CONFIG_KEY_MSEC)
                                                  ? g_strdup_printf("%" G_GINT64_FORMAT "..%" G_GINT64_FORMAT, k->min,
                                                                    k->max)
                                          : k->words ? g_strjoinv("|", (char **) k->words)
                                                     : g_strdup("");
                if (!strstr(comment, limits))
                        g_error("%s: the comment of [%s] %s lacks \"%s\":%s", path, k->group, k->name, limits,
                                comment);
        }
}

/* A shipped class file, which must load whole */
static ClassRules *load_vendor(const char *name) {
        g_autofree char *path = data_path(name);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        ClassRules *rules = NULL;
        g_assert_cmpint(class_rules_new(&rules), ==, 0);
        g_assert_cmpint(class_rules_add_text(rules, path, text), ==, 0);
        g_assert_cmpuint(rules->rules->len, >, 0);
        return rules;
}

static void test_vendor_classes(void) {
        g_autoptr(ClassRules) rules = load_vendor("50-default.conf");
        g_assert_false(class_rules_have_processes(rules));
}

/* The desktops' user interface, by process and by unit: each is ui */
static void test_vendor_desktop(void) {
        static const char *const programs[] = {
                "gnome-shell", "kwin_x11", "kwin_wayland", "plasmashell", "Xorg", "Xwayland", "sway", "labwc",
                "wayfire", "Hyprland", "dunst", "mako", "xfce4-notifyd", "gnome-screensaver", "swaylock", "i3lock",
                "light-locker", "xscreensaver", "kscreenlocker_greet", "ibus-daemon", "fcitx5",
                "at-spi-bus-launcher", "at-spi2-registryd", "xdg-desktop-portal", "xdg-desktop-portal-gnome",
                "polkit-gnome-authentication-agent-1", "polkit-kde-authentication-agent-1", "lxpolkit",
                "fridge-agent",
        };
        static const char *const units[] = {
                "org.gnome.Shell@wayland.service", "org.gnome.Shell@x11.service", "plasma-kwin_wayland.service",
                "plasma-kwin_x11.service", "plasma-plasmashell.service", "dunst.service",
                "xdg-desktop-portal.service", "xdg-desktop-portal-gtk.service", "at-spi-dbus-bus.service",
                /* GNOME's notification proxy, bus-activated under dbus-broker */
                "dbus-:1.2-org.gnome.Shell.Notifications@0.service",
        };
        g_autoptr(ClassRules) rules = load_vendor("60-desktop.conf");
        for (size_t i = 0; i < G_N_ELEMENTS(programs); i++) {
                /* the exe's basename: comm keeps only 15 bytes of it */
                g_autofree char *comm = g_strndup(programs[i], 15);
                ClassProcess p = { .pid = 1, .comm = comm, .exe = programs[i] };
                CgroupClass c = _CLASS_INVALID;
                if (!class_rules_match_processes(rules, &p, 1, &c, NULL, NULL, NULL) || c != CLASS_UI)
                        g_error("60-desktop.conf: process %s is not ui", programs[i]);
        }
        for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
                g_autofree char *cgroup = g_strdup_printf("user.slice/user-1000.slice/user@1000.service/"
                                                          "session.slice/%s", units[i]);
                CgroupClass c = _CLASS_INVALID;
                if (!class_rules_match(rules, cgroup, units[i], &c, NULL) || c != CLASS_UI)
                        g_error("60-desktop.conf: unit %s is not ui", units[i]);
        }
        /* an application is not, nor is a bus-activated one */
        ClassProcess app = { .pid = 2, .comm = "firefox", .exe = "firefox" };
        g_assert_false(class_rules_match_processes(rules, &app, 1, NULL, NULL, NULL, NULL));
        g_assert_false(class_rules_match(rules, "u/dbus-:1.2-org.gnome.Weather@0.service",
                                         "dbus-:1.2-org.gnome.Weather@0.service", NULL, NULL));

        /* GNOME's notification proxy by its command line (GNOME 43, and 45's
         * "gjs -m"), whose arguments are read only for gjs; gjs running an
         * application is not ui */
        char *proxy43[] = { (char *) "/usr/share/gnome-shell/org.gnome.Shell.Notifications", NULL };
        char *proxy45[] = { (char *) "-m", (char *) "/usr/share/gnome-shell/org.gnome.Shell.Notifications", NULL };
        char *weather[] = { (char *) "/usr/share/org.gnome.Weather/org.gnome.Weather", NULL };
        char **const argvs[] = { proxy43, proxy45 };
        for (size_t i = 0; i < G_N_ELEMENTS(argvs); i++) {
                ClassProcess p = { .pid = 3, .comm = "gjs", .exe = "gjs", .args = argvs[i] };
                g_assert_true(class_rules_want_args(rules, &p));
                CgroupClass c = _CLASS_INVALID;
                g_assert_true(class_rules_match_processes(rules, &p, 1, &c, NULL, NULL, NULL));
                g_assert_cmpint(c, ==, CLASS_UI);
        }
        ClassProcess gjs_app = { .pid = 4, .comm = "gjs", .exe = "gjs", .args = weather };
        g_assert_false(class_rules_match_processes(rules, &gjs_app, 1, NULL, NULL, NULL, NULL));
        g_assert_false(class_rules_want_args(rules, &app));
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/shipped/fridge-conf", test_fridge_conf);
        g_test_add_func("/shipped/fridge-conf-follows-table", test_fridge_conf_follows_table);
        g_test_add_func("/shipped/vendor-classes", test_vendor_classes);
        g_test_add_func("/shipped/vendor-desktop", test_vendor_desktop);
        return g_test_run();
}
