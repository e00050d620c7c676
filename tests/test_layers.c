/* The tracer's layering (preload/check-layers.sh): the real tree passes,
 * and a copy of it with an include that goes up, or a circle between two
 * modules of one folder, or a file outside every layer, is rejected with
 * the offending line named. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

static struct run check_layers(const char *dir)
{
	char *argv[] = { "/bin/bash", "preload/check-layers.sh", (char *)dir, NULL };
	struct run_options o = { .preload = 0 };
	return run_program(argv, &o);
}

/* A copy of preload/ to break. */
static void copy_tree(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/lockdep-rcu-layers.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "cp -r preload/. %s/", dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void remove_tree(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

static void append(const char *dir, const char *file, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "a");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

Test(layers, the_tracer_s_includes_only_go_down)
{
	struct run r = check_layers("preload");
	cr_assert_eq(r.exit_code, 0, "check-layers failed on the tree:\n%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "no include goes up, no circle"), "%s", r.out);
	run_free(&r);
}

Test(layers, an_include_that_goes_up_is_rejected_with_its_line)
{
	char dir[64];
	copy_tree(dir, sizeof(dir));
	/* the per-thread state (runtime) reaching for the report layer */
	append(dir, "runtime/thread_state.c", "#include \"report/report.h\"\n");
	struct run r = check_layers(dir);
	cr_assert_eq(r.exit_code, 1, "an upward include passed:\n%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "runtime/thread_state.c:"), "%s", r.out);
	cr_assert(strstr(r.out, "#include \"report/report.h\" goes up: runtime/ is below report/"), "%s", r.out);
	run_free(&r);
	remove_tree(dir);
}

Test(layers, a_circle_inside_one_layer_is_rejected)
{
	char dir[64];
	copy_tree(dir, sizeof(dir));
	/* tracer_lock.h already includes thread_state.h: the way back closes a circle */
	append(dir, "runtime/thread_state.c", "#include \"runtime/tracer_lock.h\"\n");
	append(dir, "runtime/tracer_lock.c", "#include \"runtime/thread_state.h\"\n");
	append(dir, "runtime/thread_state.h", "#include \"runtime/tracer_lock.h\"\n");
	struct run r = check_layers(dir);
	cr_assert_eq(r.exit_code, 1, "a circle passed:\n%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "go in a circle"), "%s", r.out);
	cr_assert(strstr(r.out, "runtime/thread_state") && strstr(r.out, "runtime/tracer_lock"), "%s", r.out);
	run_free(&r);
	remove_tree(dir);
}

Test(layers, a_file_outside_every_layer_or_an_unnamed_include_is_rejected)
{
	char dir[64];
	copy_tree(dir, sizeof(dir));
	append(dir, "stray.c", "int stray;\n");
	append(dir, "graph/lock_graph.c", "#include \"thread_state.h\"\n");
	struct run r = check_layers(dir);
	cr_assert_eq(r.exit_code, 1, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "stray.c is in no layer"), "%s", r.out);
	cr_assert(strstr(r.out, "name the layer"), "%s", r.out);
	run_free(&r);
	remove_tree(dir);
}
