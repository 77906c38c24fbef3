/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool word_is_valid(const char *w) {
        if (!*w)
                return false;
        for (const char *p = w; *p; p++)
                if (!isalnum((unsigned char) *p) && *p != '_' && *p != '-')
                        return false;
        return true;
}

int parse_word_list(const char *text, char ***ret_words, char **ret_current) {
        g_auto(GStrv) tokens = g_strsplit_set(text, " \t\n", -1);
        g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *current = NULL;

        for (char **t = tokens; *t; t++) {
                const char *tok = *t;
                size_t len = strlen(tok);
                if (len == 0)
                        continue;

                bool bracketed = tok[0] == '[';
                if (bracketed != (tok[len - 1] == ']'))
                        return -EBADMSG;
                g_autofree char *word = bracketed ? g_strndup(tok + 1, len - 2) : g_strdup(tok);
                if (!word_is_valid(word))
                        return -EBADMSG;
                if (bracketed) {
                        if (current)
                                return -EBADMSG; /* two current modes cannot both be true */
                        current = g_strdup(word);
                }
                g_ptr_array_add(words, g_steal_pointer(&word));
        }
        g_ptr_array_add(words, NULL);

        *ret_words = (char **) g_ptr_array_free(g_steal_pointer(&words), FALSE);
        if (ret_current)
                *ret_current = g_steal_pointer(&current);
        return 0;
}

int parse_uint64(const char *text, uint64_t *ret) {
        const char *p = text;
        while (*p == ' ' || *p == '\t')
                p++;
        if (!isdigit((unsigned char) *p))
                return -EBADMSG;

        uint64_t v = 0;
        for (; isdigit((unsigned char) *p); p++) {
                unsigned d = (unsigned) (*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        for (; *p; p++)
                if (!isspace((unsigned char) *p))
                        return -EBADMSG;
        *ret = v;
        return 0;
}

int parse_uint32(const char *text, uint32_t *ret) {
        uint64_t v;
        int r = parse_uint64(text, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

/* "Dirty:            1234 kB" */
static int meminfo_field(const char *line, const char *key, uint64_t *ret) {
        size_t n = strlen(key);
        if (strncmp(line, key, n) != 0 || line[n] != ':')
                return 0;

        g_autofree char *rest = g_strdup(line + n + 1);
        char *unit = strstr(rest, "kB");
        if (!unit)
                return -EBADMSG;
        *unit = '\0';
        int r = parse_uint64(rest, ret);
        return r < 0 ? r : 1;
}

int parse_meminfo(const char *text, MeminfoDirty *ret) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        bool have_dirty = false, have_writeback = false;
        MeminfoDirty m = {};

        for (char **l = lines; *l; l++) {
                int r = meminfo_field(*l, "Dirty", &m.dirty_kib);
                if (r < 0)
                        return r;
                have_dirty = have_dirty || r > 0;
                r = meminfo_field(*l, "Writeback", &m.writeback_kib);
                if (r < 0)
                        return r;
                have_writeback = have_writeback || r > 0;
        }
        if (!have_dirty || !have_writeback)
                return -EBADMSG;
        *ret = m;
        return 0;
}

MountEntry *mount_entry_free(MountEntry *m) {
        if (!m)
                return NULL;
        g_free(m->root);
        g_free(m->mount_point);
        g_free(m->mount_options);
        g_free(m->fstype);
        g_free(m->source);
        g_free(m->super_options);
        g_free(m);
        return NULL;
}

/* GLib's containers take a destroy function that returns nothing */
static void mount_entry_destroy(gpointer m) {
        mount_entry_free(m);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static char *unescape_octal(const char *s) {
        GString *out = g_string_sized_new(strlen(s));
        for (const char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
                    p[3] >= '0' && p[3] <= '7') {
                        g_string_append_c(out, (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0')));
                        p += 3;
                } else
                        g_string_append_c(out, *p);
        }
        return g_string_free(out, FALSE);
}

/* 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue */
static int parse_mountinfo_line(const char *line, MountEntry **ret) {
        g_auto(GStrv) f = g_strsplit(line, " ", -1);
        guint n = g_strv_length(f);
        guint sep = 6;
        while (sep < n && strcmp(f[sep], "-") != 0)
                sep++; /* optional fields end at "-" */
        if (sep + 2 >= n)
                return -EBADMSG;

        g_autoptr(MountEntry) m = g_new0(MountEntry, 1);
        uint32_t id, parent;
        if (parse_uint32(f[0], &id) < 0 || parse_uint32(f[1], &parent) < 0)
                return -EBADMSG;
        if (sscanf(f[2], "%u:%u", &m->major, &m->minor) != 2)
                return -EBADMSG;
        m->mount_id = id;
        m->parent_id = parent;
        m->root = unescape_octal(f[3]);
        m->mount_point = unescape_octal(f[4]);
        m->mount_options = g_strdup(f[5]);
        m->fstype = g_strdup(f[sep + 1]);
        m->source = unescape_octal(f[sep + 2]);
        m->super_options = g_strdup(sep + 3 < n ? f[sep + 3] : "");
        *ret = g_steal_pointer(&m);
        return 0;
}

/* Line by line, not split whole: a host's table can be megabytes, and a
 * strstr over the rest of it for each line is quadratic under ASan */
int parse_mountinfo(const char *text, GPtrArray **ret) {
        g_autoptr(GPtrArray) mounts = g_ptr_array_new_with_free_func(mount_entry_destroy);

        for (const char *p = text; *p;) {
                const char *end = strchrnul(p, '\n');
                if (end > p) {
                        g_autofree char *line = g_strndup(p, (gsize) (end - p));
                        MountEntry *m;
                        int r = parse_mountinfo_line(line, &m);
                        if (r < 0)
                                return r;
                        g_ptr_array_add(mounts, m);
                }
                p = *end ? end + 1 : end;
        }
        *ret = g_steal_pointer(&mounts);
        return 0;
}

SwapEntry *swap_entry_free(SwapEntry *s) {
        if (!s)
                return NULL;
        g_free(s->path);
        g_free(s);
        return NULL;
}

static void swap_entry_destroy(gpointer s) {
        swap_entry_free(s);
}

/* "/dev/vdb  partition  1048572  0  -2" */
static int parse_swaps_line(const char *line, SwapEntry **ret) {
        g_auto(GStrv) f = g_strsplit_set(line, " \t", -1);
        const char *w[5];
        guint n = 0;
        for (char **p = f; *p; p++)
                if (**p) {
                        if (n == G_N_ELEMENTS(w))
                                return -EBADMSG;
                        w[n++] = *p;
                }
        if (n != G_N_ELEMENTS(w))
                return -EBADMSG;

        g_autoptr(SwapEntry) s = g_new0(SwapEntry, 1);
        char *end;
        errno = 0;
        long prio = strtol(w[4], &end, 10);
        if (*end || errno || prio < INT_MIN || prio > INT_MAX)
                return -EBADMSG;
        if (parse_uint64(w[2], &s->size_kib) < 0 || parse_uint64(w[3], &s->used_kib) < 0 ||
            s->used_kib > s->size_kib)
                return -EBADMSG;
        if (strcmp(w[1], "partition") != 0 && strcmp(w[1], "file") != 0)
                return -EBADMSG;
        s->path = unescape_octal(w[0]);
        s->is_partition = strcmp(w[1], "partition") == 0;
        s->priority = (int) prio;
        *ret = g_steal_pointer(&s);
        return 0;
}

int parse_swaps(const char *text, GPtrArray **ret) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        g_autoptr(GPtrArray) swaps = g_ptr_array_new_with_free_func(swap_entry_destroy);

        if (!lines[0] || !g_str_has_prefix(lines[0], "Filename"))
                return -EBADMSG;
        for (char **l = lines + 1; *l; l++) {
                if (!**l)
                        continue;
                SwapEntry *s;
                int r = parse_swaps_line(*l, &s);
                if (r < 0)
                        return r;
                g_ptr_array_add(swaps, s);
        }
        *ret = g_steal_pointer(&swaps);
        return 0;
}

int parse_meminfo_kib(const char *text, const char *key, uint64_t *ret) {
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                int r = meminfo_field(*l, key, ret);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return -ENOENT;
}

int parse_devnum(const char *text, unsigned *ret_major, unsigned *ret_minor) {
        g_autofree char *t = g_strstrip(g_strdup(text));
        g_auto(GStrv) parts = g_strsplit(t, ":", -1);
        guint64 ma, mi;
        if (g_strv_length(parts) != 2 ||
            !g_ascii_string_to_unsigned(parts[0], 10, 0, UINT_MAX, &ma, NULL) ||
            !g_ascii_string_to_unsigned(parts[1], 10, 0, UINT_MAX, &mi, NULL))
                return -EBADMSG;
        *ret_major = (unsigned) ma;
        *ret_minor = (unsigned) mi;
        return 0;
}

bool mount_options_has(const char *options, const char *option) {
        g_auto(GStrv) opts = g_strsplit(options, ",", -1);
        return g_strv_contains((const char * const *) opts, option);
}

char parse_stat_state(const char *text) {
        const char *p = text ? strrchr(text, ')') : NULL;
        return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

char **parse_stat_fields(const char *text, unsigned min) {
        /* comm (field 2) may hold spaces and parentheses: count after the last ')' */
        const char *p = text ? strrchr(text, ')') : NULL;
        if (!p)
                return NULL;
        char **fields = g_strsplit(p + 1, " ", -1);
        if (g_strv_length(fields) >= min)
                return fields;
        g_strfreev(fields);
        return NULL;
}

int parse_stat_starttime(const char *text, uint64_t *ret) {
        g_auto(GStrv) fields = parse_stat_fields(text, 21);
        return fields ? parse_uint64(fields[20], ret) : -EBADMSG;
}
