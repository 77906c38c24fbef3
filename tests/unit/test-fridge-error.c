/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The error table (common/fridge-error.c) is the truth: every error has a
 * name and a summary, names are unique and map back; the D-Bus contract's
 * error lists and the man pages (io.fridge.Fridge1.5 too) name the same
 * errors with the same summaries and exit codes; bus_error_set names an
 * answer by the table and a system failure by its errno, never the one as
 * the other. */
#include <errno.h>
#include <gio/gio.h>
#include <glib.h>
#include <string.h>

#include "bus-error.h"
#include "fridge-error.h"

static const char *short_name(const char *name) {
        const char *dot = strrchr(name, '.');
        return dot ? dot + 1 : name;
}

/* The table's short names of its own errors (own) or of the standard ones */
static GPtrArray *table_names(bool own, bool full) {
        GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
        for (FridgeError e = 1; e < _FRIDGE_ERROR_MAX; e++)
                if (fridge_error_is_own(e) == own)
                        g_ptr_array_add(a, g_strdup(full ? fridge_error_name(e) : short_name(fridge_error_name(e))));
        return a;
}

static int compare_strings(gconstpointer a, gconstpointer b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static char *sorted(GPtrArray *a) {
        g_ptr_array_sort(a, compare_strings);
        g_ptr_array_add(a, NULL);
        char *s = g_strjoinv(" ", (char **) a->pdata);
        g_ptr_array_remove_index(a, a->len - 1);
        return s;
}

static void assert_same_names(GPtrArray *documented, GPtrArray *table, const char *where) {
        g_autofree char *d = sorted(documented);
        g_autofree char *t = sorted(table);
        if (strcmp(d, t) != 0)
                g_error("%s names [%s]; the table (common/fridge-error.c) names [%s]", where, d, t);
}

static char *read_doc(const char *env) {
        const char *path = g_getenv(env);
        g_assert_nonnull(path);
        char *text = NULL;
        g_autoptr(GError) err = NULL;
        if (!g_file_get_contents(path, &text, NULL, &err))
                g_error("cannot read %s: %s", path, err->message);
        return text;
}

static void test_table(void) {
        g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

        g_assert_cmpstr(fridge_error_name(FRIDGE_ERROR_NONE), ==, "");
        for (FridgeError e = 1; e < _FRIDGE_ERROR_MAX; e++) {
                const FridgeErrorInfo *i = fridge_error_info(e);
                g_assert_nonnull(i->name);
                /* error names follow the rules of interface names */
                g_assert_true(g_dbus_is_interface_name(i->name));
                g_assert_true(g_str_has_prefix(i->name, FRIDGE_ERROR_PREFIX) ||
                              g_str_has_prefix(i->name, "org.freedesktop.DBus.Error."));
                g_assert_cmpint(fridge_error_is_own(e), ==, g_str_has_prefix(i->name, FRIDGE_ERROR_PREFIX));
                g_assert_nonnull(i->summary);
                g_assert_cmpuint(strlen(i->summary), >, 0);
                g_assert_false(g_hash_table_contains(seen, i->name));
                g_hash_table_add(seen, (char *) i->name);
                g_assert_cmpint(fridge_error_from_name(i->name), ==, e);
                g_assert_cmpint(i->call_exit, >=, EXIT_CODE_FAILED);
                g_assert_cmpint(i->call_exit, <=, EXIT_CODE_REFUSED);
                g_assert_true(i->cycle_exit == -1 || i->cycle_exit == EXIT_CODE_FAILED ||
                              i->cycle_exit == EXIT_CODE_ABORTED);
        }
        g_assert_cmpuint(g_hash_table_size(seen), ==, _FRIDGE_ERROR_MAX - 1);
}

static void test_lookups(void) {
        g_assert_cmpint(fridge_error_from_name(NULL), ==, _FRIDGE_ERROR_INVALID);
        g_assert_cmpint(fridge_error_from_name(""), ==, _FRIDGE_ERROR_INVALID);
        g_assert_cmpint(fridge_error_from_name(FRIDGE_ERROR_PREFIX), ==, _FRIDGE_ERROR_INVALID);
        g_assert_cmpint(fridge_error_from_name(FRIDGE_ERROR_PREFIX "Nope"), ==, _FRIDGE_ERROR_INVALID);
        g_assert_cmpint(fridge_error_from_name("Busy"), ==, _FRIDGE_ERROR_INVALID);
        g_assert_cmpint(fridge_error_from_name(FRIDGE_ERROR_PREFIX "Busy"), ==, FRIDGE_ERROR_BUSY);
        g_assert_cmpstr(fridge_error_name(FRIDGE_ERROR_INTERNAL), ==, "org.freedesktop.DBus.Error.Failed");
        /* out of range is an internal error, never a crash or a wrong answer */
        g_assert_true(fridge_error_info(_FRIDGE_ERROR_MAX) == fridge_error_info(FRIDGE_ERROR_INTERNAL));
        g_assert_true(fridge_error_info(-1) == fridge_error_info(FRIDGE_ERROR_INTERNAL));
}

/* "  Errors (all io.fridge.Fridge1.Error.*):" and "  Standard errors
 * (org.freedesktop.DBus.Error.*):", each followed by "    Name  text"
 * lines (continuations are indented further) */
static GPtrArray *xml_list(const char *xml, const char *heading) {
        GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
        const char *start = strstr(xml, heading);
        if (!start)
                g_error("dbus/io.fridge.Fridge1.xml has no \"%s\"", heading);
        g_auto(GStrv) lines = g_strsplit(strchr(start, '\n') + 1, "\n", -1);
        for (char **l = lines; *l && g_str_has_prefix(*l, "    "); l++) {
                if ((*l)[4] == ' ')
                        continue;
                g_auto(GStrv) words = g_strsplit((*l) + 4, " ", 2);
                g_ptr_array_add(a, g_strdup(words[0]));
        }
        return a;
}

/* A document's two lists, fridge's own errors and the standard ones,
 * against the table */
static void assert_both_lists(GPtrArray *own, GPtrArray *std, const char *own_what, const char *std_what) {
        g_autoptr(GPtrArray) t_own = table_names(true, false);
        g_autoptr(GPtrArray) t_std = table_names(false, false);
        assert_same_names(own, t_own, own_what);
        assert_same_names(std, t_std, std_what);
}

static void test_xml(void) {
        g_autofree char *xml = read_doc("FRIDGE_XML");
        g_autoptr(GPtrArray) own = xml_list(xml, "Errors (all io.fridge.Fridge1.Error.*):");
        g_autoptr(GPtrArray) std = xml_list(xml, "Standard errors fridged answers with (org.freedesktop.DBus.Error.*):");
        assert_both_lists(own, std, "the XML contract's Errors list", "the XML contract's Standard errors list");
}

/* "Errors are named .BR io.fridge.Fridge1.Error. { A , .BR B , ... C }" and
 * the same for org.freedesktop.DBus.Error. */
static GPtrArray *man_brace_list(const char *man, const char *prefix) {
        GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *opening = g_strdup_printf(".BR %s { ", prefix);
        const char *p = strstr(man, opening);
        if (!p)
                g_error("fridged.8 has no list \"%s\"", opening);
        g_auto(GStrv) lines = g_strsplit(p, "\n", -1);
        for (char **l = lines; *l; l++) {
                const char *w = l == lines ? *l + strlen(opening) : *l + strlen(".BR ");
                g_assert_true(g_str_has_prefix(*l, ".BR "));
                g_auto(GStrv) words = g_strsplit(w, " ", 2);
                g_ptr_array_add(a, g_strdup(words[0]));
                if (!words[1] || strchr(words[1], '}'))
                        break;
        }
        return a;
}

static void test_fridged_man(void) {
        g_autofree char *man = read_doc("FRIDGED_MAN");
        g_autoptr(GPtrArray) own = man_brace_list(man, "io.fridge.Fridge1.Error.");
        g_autoptr(GPtrArray) std = man_brace_list(man, "org.freedesktop.DBus.Error.");
        assert_both_lists(own, std, "fridged.8's io.fridge.Fridge1.Error list",
                          "fridged.8's org.freedesktop.DBus.Error list");
}

static char *roff_unescape(const char *s) {
        g_autoptr(GString) out = g_string_new(NULL);
        for (; *s; s++) {
                if (s[0] == '\\' && s[1] == '-')
                        s++;
                g_string_append_c(out, *s);
        }
        return g_string_free(g_steal_pointer(&out), FALSE);
}

/* A page's ERRORS: ".TP", ".B NAME", the summary as a sentence, then
 * (fridgectl.1) "Exit status: N (call)[, M (cycle)]." or (the API page)
 * what else there is to say */
static void assert_man_errors(const char *env, const char *page, bool exit_status) {
        g_autofree char *man = read_doc(env);
        const char *section = strstr(man, "\n.SH ERRORS\n");
        if (!section)
                g_error("%s has no ERRORS", page);
        g_auto(GStrv) lines = g_strsplit(section + 1, "\n", -1);
        g_autoptr(GPtrArray) documented = g_ptr_array_new_with_free_func(g_free);

        for (char **l = lines + 1; *l && !g_str_has_prefix(*l, ".SH"); l++) {
                if (!g_str_has_prefix(*l, ".B ") || !g_str_equal(l[-1], ".TP"))
                        continue;
                g_autofree char *name = roff_unescape(*l + 3);
                FridgeError e = fridge_error_from_name(name);
                if (e < 0)
                        g_error("%s ERRORS names %s, which the table does not know", page, name);
                const FridgeErrorInfo *i = fridge_error_info(e);
                g_assert_nonnull(l[1]);
                g_assert_nonnull(l[2]);
                g_autofree char *summary = roff_unescape(l[1]);
                g_autofree char *want = g_strdup_printf("%c%s.", g_ascii_toupper(i->summary[0]), i->summary + 1);
                if (strcmp(summary, want) != 0)
                        g_error("%s says of %s \"%s\"; the table says \"%s\"", page, name, summary, want);
                g_autofree char *exit_line = i->cycle_exit < 0
                        ? g_strdup_printf("Exit status: %d (call).", i->call_exit)
                        : g_strdup_printf("Exit status: %d (call), %d (cycle).", i->call_exit, i->cycle_exit);
                if (exit_status && strcmp(l[2], exit_line) != 0)
                        g_error("%s says of %s \"%s\"; the table says \"%s\"", page, name, l[2], exit_line);
                g_ptr_array_add(documented, g_steal_pointer(&name));
        }
        g_autoptr(GPtrArray) table = table_names(true, true);
        g_autoptr(GPtrArray) std = table_names(false, true);
        for (guint k = 0; k < std->len; k++)
                g_ptr_array_add(table, g_strdup(std->pdata[k]));
        g_autofree char *where = g_strdup_printf("%s's ERRORS", page);
        assert_same_names(documented, table, where);
}

static void test_fridgectl_man(void) {
        assert_man_errors("FRIDGECTL_MAN", "fridgectl.1", true);
}

static void test_api_man(void) {
        assert_man_errors("FRIDGE_API_MAN", "io.fridge.Fridge1.5", false);
}

static void assert_bus_error(int r, const char *message, const char *name, const char *want_message) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        int k = bus_error_set(&e, r, message);
        g_assert_cmpint(k, <, 0);
        g_assert_cmpstr(e.name, ==, name);
        g_assert_cmpstr(e.message, ==, want_message);
        sd_bus_error_free(&e);
}

static void test_bus_error_tiers(void) {
        assert_bus_error(FRIDGE_ERROR_BUSY, "cycle 3 is running", FRIDGE_ERROR_PREFIX "Busy", "cycle 3 is running");
        assert_bus_error(FRIDGE_ERROR_TOO_LATE, NULL, FRIDGE_ERROR_PREFIX "TooLate",
                         fridge_error_summary(FRIDGE_ERROR_TOO_LATE));
        assert_bus_error(FRIDGE_ERROR_LIMITS_EXCEEDED, "x", "org.freedesktop.DBus.Error.LimitsExceeded", "x");
        /* an errno is a system failure: -EBUSY is not Busy, -EAGAIN not Inhibited */
        assert_bus_error(-EBUSY, "lost", "System.Error.EBUSY", "lost");
        assert_bus_error(-EAGAIN, "lost", "System.Error.EAGAIN", "lost");
        assert_bus_error(-ENOMEM, "short", "org.freedesktop.DBus.Error.NoMemory", "short");
        assert_bus_error(0, NULL, "org.freedesktop.DBus.Error.Failed", fridge_error_summary(FRIDGE_ERROR_INTERNAL));

        sd_bus_error e = SD_BUS_ERROR_NULL;
        g_assert_cmpint(bus_error_setf(&e, FRIDGE_ERROR_NO_SUCH_CYCLE, "cycle %u is not running", 7u), <, 0);
        g_assert_cmpstr(e.name, ==, FRIDGE_ERROR_PREFIX "NoSuchCycle");
        g_assert_cmpstr(e.message, ==, "cycle 7 is not running");
        sd_bus_error_free(&e);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/fridge-error/table", test_table);
        g_test_add_func("/fridge-error/lookups", test_lookups);
        g_test_add_func("/fridge-error/xml", test_xml);
        g_test_add_func("/fridge-error/fridged-man", test_fridged_man);
        g_test_add_func("/fridge-error/fridgectl-man", test_fridgectl_man);
        g_test_add_func("/fridge-error/api-man", test_api_man);
        g_test_add_func("/fridge-error/bus-error-tiers", test_bus_error_tiers);
        return g_test_run();
}
