/* The header's lock-order annotations: named classes and nesting
 * subclasses show in the validator's reports. */
#include <criterion/criterion.h>
#include "harness.h"

static const struct run_options preloaded = { .preload = 1 };

Test(annotations, named_classes_name_the_report)
{
	struct run r = run_target("lock_annotations", "memb", "bug-named-classes", &preloaded);
	cr_expect(strstr(r.err, "WARNING: possible circular locking dependency detected"), "%s", r.err);
	cr_expect(strstr(r.err, "(request_lock)"), "%s", r.err);
	cr_expect(strstr(r.err, "(session_lock)"), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	run_free(&r);
}

Test(annotations, nesting_subclass_is_a_class_of_its_own)
{
	struct run r = run_target("lock_annotations", "memb", "bug-nested-annotated", &preloaded);
	cr_expect(strstr(r.err, "node_new+0x"), "%s", r.err);
	cr_expect(strstr(r.err, "/1)"), "the subclass shows as /1:\n%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	run_free(&r);
}
