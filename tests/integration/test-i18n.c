/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fridgectl in German against the real fridged: the build tree's po/ as
 * its locale directory (FRIDGE_LOCALEDIR). glibc has C.UTF-8 built in and
 * honours LANGUAGE whenever LC_MESSAGES is not "C" or "POSIX", so
 * LC_ALL=C.UTF-8 LANGUAGE=de needs no generated de_DE locale (LANG=de_DE
 * alone would: without it setlocale() falls back to "C").
 */
#include <locale.h>
#include <string.h>

#include "harness.h"

typedef HarnessFixture Fixture;

static const char *skip_reason(void) {
        const char *why = harness_skip_reason();
        if (why)
                return why;
        if (!harness_env("FRIDGECTL"))
                return "FRIDGECTL is not set";
        if (!harness_env("FRIDGE_PO_DIR"))
                return "FRIDGE_PO_DIR is not set: built with -Dnls=disabled";
        if (!setlocale(LC_ALL, "C.UTF-8"))
                return "the C.UTF-8 locale is missing (glibc < 2.35 without locales)";
        (void) setlocale(LC_ALL, "C");
        return NULL;
}

/* fridgectl ARG under LANGUAGE=language (NULL: the environment's),
 * stdout and stderr; its exit status */
static int fridgectl_in(Harness *h, const char *language, const char *arg, char **ret_out) {
        g_autofree char *dir = g_strdup_printf("FRIDGE_LOCALEDIR=%s", harness_env("FRIDGE_PO_DIR"));
        g_autofree char *lang = g_strdup_printf("LANGUAGE=%s", language ? language : "");
        g_autofree char *bus = g_strdup_printf("--bus-address=%s", h->bus_address);
        char *argv[] = { "/usr/bin/env", "-u", "LANG", "LC_ALL=C.UTF-8", lang, dir, "/bin/sh", "-c",
                         "exec \"$0\" \"$@\" 2>&1", (char *) harness_env("FRIDGECTL"), bus, (char *) arg, NULL };
        int status = harness_run(argv, 20000, ret_out);
        g_test_message("LANGUAGE=%s fridgectl %s: status %d: %s", language ? language : "", arg, status, *ret_out);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* An error (NoSuchCycle: exit 4, as in English), a plural, a usage error
 * and --help (args.c's tables), in German; the same fridgectl without
 * LANGUAGE in English */
static void test_fridgectl_german(Fixture *f, gconstpointer data) {
        const char *why = skip_reason();
        if (why) {
                g_test_skip(why);
                return;
        }
        Harness *h = f->h = harness_new(NULL);
        g_autofree char *de = NULL, *en = NULL, *history = NULL;

        g_assert_cmpint(fridgectl_in(h, "de", "cancel", &de), ==, 4);
        g_assert_true(g_str_has_prefix(de, "fridgectl: Abbrechen nicht möglich: NoSuchCycle: "));
        g_assert_cmpint(fridgectl_in(h, NULL, "cancel", &en), ==, 4);
        g_assert_true(g_str_has_prefix(en, "fridgectl: cannot cancel: NoSuchCycle: "));
        g_assert_cmpint(fridgectl_in(h, "de", "history", &history), ==, 0);
        g_assert_nonnull(strstr(history, "\n0 Zyklen\n"));

        g_autofree char *usage_de = NULL, *usage_en = NULL, *help = NULL;
        g_assert_cmpint(fridgectl_in(h, "de", "frobnicate", &usage_de), ==, 2);
        g_assert_cmpstr(usage_de, ==, "fridgectl: unbekannter Befehl »frobnicate«\nSiehe »fridgectl --help«.\n");
        g_assert_cmpint(fridgectl_in(h, NULL, "frobnicate", &usage_en), ==, 2);
        g_assert_cmpstr(usage_en, ==, "fridgectl: unknown command \"frobnicate\"\nTry 'fridgectl --help'.\n");
        g_assert_cmpint(fridgectl_in(h, "de", "--help", &help), ==, 0);
        g_assert_true(g_str_has_prefix(help, "Aufruf: fridgectl [OPTIONEN] [BEFEHL]\n"));
        g_assert_nonnull(strstr(help, "  cat-config             Die Konfigurationsdateien zeigen, die fridged"));
        g_assert_nonnull(strstr(help, "\nOptionen für history:\n"));
        /* the Sleep options' table (common/sleep-options.c) and its limits,
         * wrapped by columns, not bytes (»früh, spät« take 81 bytes and 79 columns) */
        g_assert_nonnull(strstr(help, "     --mem-sleep=MODE    In diesem Modus in Bereitschaft gehen\n"
                                      "                         (s2idle|shallow|deep; nur suspend; Vorgabe [Sleep]\n"));
        g_assert_nonnull(strstr(help, "  plan                   Zeigen, welche cgroups früh, spät oder nie eingefroren\n"));
}

#define ADD(path, fn) g_test_add("/i18n/" path, Fixture, NULL, harness_fixture_setup, fn, harness_fixture_teardown)

int main(int argc, char **argv) {
        harness_init(&argc, &argv);
        ADD("fridgectl-german", test_fridgectl_german);
        return g_test_run();
}
