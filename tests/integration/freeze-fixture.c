/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The freezing tests' fixture (freeze-fixture.h). Every scratch cgroup is
 * thawed and removed at the end whatever happens (scratch.c). */
#include "freeze-fixture.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "fridge-config.h"

static const char classes_conf[] = "[Late]\nUnits=b.service\n[NoFreeze]\nUnits=c.service\n";
void freeze_fixture_setup(Fixture *f, gconstpointer data) {
        const char *why = harness_scratch_skip_reason();
        if (why) {
                g_test_skip(why);
                return;
        }
        f->s = scratch_new();
        f->a = scratch_add(f->s, "a.service");
        f->b = scratch_add(f->s, "b.service");
        f->c = scratch_add(f->s, "c.service");
        for (int i = 0; i < 2; i++) {
                scratch_spawn(f->s, f->a, NULL);
                scratch_spawn(f->s, f->b, NULL);
                scratch_spawn(f->s, f->c, NULL);
        }
        /* a writer that keeps dirtying a file: a data producer, frozen early */
        f->writer_file = g_build_filename(g_get_tmp_dir(), "fridge-itest-writer-XXXXXX", NULL);
        int wfd = g_mkstemp(f->writer_file);
        g_assert_cmpint(wfd, >=, 0);
        close(wfd);
        g_autofree char *loop = g_strdup_printf("while :; do echo data >> '%s'; sleep 0.01; done", f->writer_file);
        char *writer[] = { (char *) "sh", (char *) "-c", loop, NULL };
        scratch_spawn(f->s, f->a, writer);
        const CaseOptions *co = data;
        g_autofree char *config = g_strdup_printf("[Freeze]\nRoots=%s\n%s", f->s->root,
                                                  co && co->extra_config ? co->extra_config : "");
        HarnessOptions o = { .config = config, .classes = co && co->classes ? co->classes : classes_conf,
                             .slowfs = co && co->slowfs, .real_cgroups = true,
                             .fakesys_args = co ? co->fakesys_args : NULL, .open_bus = co && co->open_bus,
                             .unit_capabilities = co && co->unit_capabilities,
                             .polkit_table = co ? co->polkit_table : NULL };
        f->h = harness_new(&o);
}

void freeze_fixture_teardown(Fixture *f, gconstpointer data) {
        if (f->fuse_mount) {
                g_autofree char *fusermount = g_find_program_in_path("fusermount3");
                char *um[] = { fusermount, (char *) "-uz", f->fuse_mount, NULL };
                if (fusermount)
                        (void) harness_run(um, 5000, NULL);
                g_free(f->fuse_mount);
        }
        if (f->h && g_test_failed())
                harness_dump_fridged_log(f->h);
        harness_free(f->h);
        scratch_free(f->s); /* after fridged: it must not hold anything frozen */
        if (f->writer_file) {
                (void) g_unlink(f->writer_file);
                g_free(f->writer_file);
        }
}

uint64_t freeze_sleep_ok(Harness *h, const char *kind, const char *k1, const char *t1, int v1) {
        uint64_t cycle = 0;
        g_autofree char *err = NULL, *msg = NULL;
        int r = k1 ? harness_sleep(h, kind, &cycle, &err, &msg, k1, t1, v1, NULL)
                   : harness_sleep(h, kind, &cycle, &err, &msg, NULL);
        if (r < 0)
                g_error("Sleep failed: %s: %s", err, msg);
        return cycle;
}

void freeze_expect_finished(Harness *h, uint64_t cycle, const char *result, const char *error) {
        g_autofree char *res = NULL, *err = NULL, *msg = NULL;
        if (!harness_wait_finished(h, cycle, 20000, &res, &err, &msg))
                g_error("cycle %" G_GUINT64_FORMAT " did not finish", cycle);
        if (!g_str_equal(res, result) || (error && !g_str_equal(err, error)))
                g_error("cycle ended (%s, %s, %s); expected (%s, %s)", res, err, msg, result, error ? error : "*");
}

void freeze_wait_fuse_mount(Fixture *f) {
        g_autofree char *control = g_build_filename(f->fuse_mount, ".control", NULL);
        for (int i = 0; i < 500 && access(control, F_OK) < 0; i++)
                g_usleep(10000); /* bounded wait for the mount to appear */
        g_assert_cmpint(access(control, F_OK), ==, 0);
}

void freeze_fuse_unmount(Fixture *f, pid_t server) {
        g_autofree char *fusermount = g_find_program_in_path("fusermount3");
        g_assert_nonnull(fusermount);
        char *um[] = { fusermount, (char *) "-u", f->fuse_mount, NULL };
        g_assert_cmpint(harness_run(um, 5000, NULL), ==, 0);
        g_clear_pointer(&f->fuse_mount, g_free);
        (void) waitpid(server, NULL, 0);
}

void freeze_assert_none_frozen(Fixture *f) {
        for (guint i = 0; i < f->s->cgroups->len; i++)
                if (scratch_is_frozen(f->s, f->s->cgroups->pdata[i]))
                        g_error("%s is still frozen after the cycle", (char *) f->s->cgroups->pdata[i]);
}

char *freeze_fridged_log(Harness *h) {
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(h->fridged_log, &text, NULL, NULL));
        return g_steal_pointer(&text);
}

gsize freeze_log_pos(const char *log, const char *needle) {
        const char *p = strstr(log, needle);
        if (!p)
                g_error("fridged's log lacks '%s'", needle);
        return (gsize) (p - log);
}

static void plan_row_free(PlanRow *r) {
        g_free(r->cgroup);
        g_free(r->unit);
        g_free(r->class);
        g_free(r->reason);
        g_free(r);
}

GPtrArray *freeze_get_plan(Harness *h) {
        sd_bus_message *reply = NULL;
        g_autofree char *err = NULL, *msg = NULL;
        if (harness_call(h, FRIDGE_INTERFACE, "GetPlan", &reply, &err, &msg, "") < 0)
                g_error("GetPlan failed: %s: %s", err, msg);
        GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify) plan_row_free);
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "(ssss)"), >, 0);
        const char *cg, *unit, *cls, *reason;
        while (sd_bus_message_read(reply, "(ssss)", &cg, &unit, &cls, &reason) > 0) {
                PlanRow *r = g_new0(PlanRow, 1);
                *r = (PlanRow) { g_strdup(cg), g_strdup(unit), g_strdup(cls), g_strdup(reason) };
                g_ptr_array_add(rows, r);
        }
        sd_bus_message_unref(reply);
        return rows;
}

const PlanRow *freeze_plan_find(GPtrArray *rows, const char *cgroup, int *ret_index) {
        for (guint i = 0; i < rows->len; i++) {
                const PlanRow *r = rows->pdata[i];
                if (g_str_equal(r->cgroup, cgroup)) {
                        if (ret_index)
                                *ret_index = (int) i;
                        return r;
                }
        }
        g_error("the plan has no entry for %s", cgroup);
}
