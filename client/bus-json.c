/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "json.h"

typedef union BasicValue {
        uint8_t y;
        int b;
        int16_t n;
        uint16_t q;
        int32_t i;
        uint32_t u;
        int64_t x;
        uint64_t t;
        double d;
        const char *s;
        int h;
} BasicValue;

/* Reads a basic value; as_key writes numbers quoted (JSON keys are strings). */
static int write_basic(sd_bus_message *m, char type, FILE *f, bool as_key) {
        BasicValue v;
        const char *q = as_key ? "\"" : "";
        int r;

        r = sd_bus_message_read_basic(m, type, &v);
        if (r < 0)
                return r;
        switch (type) {
        case 's': case 'o': case 'g':
                json_write_string(f, v.s);
                break;
        case 'b': fprintf(f, "%s%s%s", q, v.b ? "true" : "false", q); break;
        case 'y': fprintf(f, "%s%u%s", q, v.y, q); break;
        case 'n': fprintf(f, "%s%d%s", q, v.n, q); break;
        case 'q': fprintf(f, "%s%u%s", q, v.q, q); break;
        case 'i': fprintf(f, "%s%" PRIi32 "%s", q, v.i, q); break;
        case 'u': fprintf(f, "%s%" PRIu32 "%s", q, v.u, q); break;
        case 'x': fprintf(f, "%s%" PRIi64 "%s", q, v.x, q); break;
        case 't': fprintf(f, "%s%" PRIu64 "%s", q, v.t, q); break;
        case 'h': fprintf(f, "%s%d%s", q, v.h, q); break;
        case 'd':
                fputs(q, f);
                json_write_double(f, v.d);
                fputs(q, f);
                break;
        default:
                return -EINVAL;
        }
        return 0;
}

/* An a{..} whose entry signature is contents ("{sv}"): a JSON object. */
static int write_dict(sd_bus_message *m, const char *contents, FILE *f) {
        char entry[256];
        size_t len = strlen(contents);
        bool first = true;
        int r;

        if (len < 2 || len - 2 >= sizeof(entry))
                return -EINVAL;
        memcpy(entry, contents + 1, len - 2);
        entry[len - 2] = 0;

        fputc('{', f);
        while ((r = sd_bus_message_enter_container(m, 'e', entry)) > 0) {
                if (!first)
                        fputc(',', f);
                first = false;
                r = write_basic(m, entry[0], f, true);
                if (r < 0)
                        return r;
                fputc(':', f);
                r = bus_json_write_value(m, f);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        fputc('}', f);
        return r;
}

/* Arrays and structs: their members, in order, as a JSON array. */
static int write_members(sd_bus_message *m, FILE *f) {
        bool first = true;
        int r;

        fputc('[', f);
        for (;;) {
                r = sd_bus_message_at_end(m, false);
                if (r < 0)
                        return r;
                if (r > 0)
                        break;
                if (!first)
                        fputc(',', f);
                r = bus_json_write_value(m, f);
                if (r < 0)
                        return r;
                first = false;
        }
        fputc(']', f);
        return 0;
}

static int write_container(sd_bus_message *m, char type, const char *contents, FILE *f) {
        int r;

        r = sd_bus_message_enter_container(m, type, contents);
        if (r < 0)
                return r;
        if (type == 'a' && contents[0] == '{')
                r = write_dict(m, contents, f);
        else if (type == 'v')
                r = bus_json_write_value(m, f);
        else
                r = write_members(m, f);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

int bus_json_write_value(sd_bus_message *m, FILE *f) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENXIO;
        if (type == 'a' || type == 'v' || type == 'r' || type == 'e')
                return write_container(m, type, contents, f);
        return write_basic(m, type, f, false);
}
