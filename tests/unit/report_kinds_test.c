/* The one list of report kinds and titles (preload/base/report_kinds.h):
 * every title the tracer prints reads back to its own kind, and text that is
 * no title reads back to none. */
#include <criterion/criterion.h>
#include <string.h>
#include "base/report_kinds.h"

Test(report_kinds, each_printed_title_reads_back_to_its_kind)
{
	static const struct { const char *title; enum report_kind kind; } cases[] = {
		{ "WARNING: suspicious RCU usage", REPORT_SUSPICIOUS_RCU },
		{ "WARNING: bad unlock balance detected!", REPORT_BAD_UNLOCK },
		{ "WARNING: possible recursive locking detected", REPORT_RECURSIVE_LOCKING },
		{ "BUG: held lock freed!", REPORT_HELD_LOCK_FREED },
		{ "BUG: worker/4242 still has locks held!", REPORT_LOCKS_HELD_AT_EXIT },
		{ "WARNING: possible circular locking dependency detected", REPORT_CIRCULAR_DEPENDENCY },
		{ "WARNING: main/17 at shop.c:42", REPORT_WARNING },
		{ "INFO: rcu_memb detected stalls on tasks:", REPORT_RCU_STALL },
		{ "INFO: task db:123 blocked for more than 5 seconds.", REPORT_HUNG_TASK },
		{ "BUG: RCU-protected object freed while a reader holds it!", REPORT_RCU_USE_AFTER_FREE },
		{ "WARNING: inconsistent lock state", REPORT_INCONSISTENT_LOCK_STATE },
		{ "WARNING: possible irq lock inversion dependency detected", REPORT_IRQ_LOCK_INVERSION },
		{ "WARNING: SIGRTMIN+2-safe -> SIGRTMIN+2-unsafe lock order detected", REPORT_IRQ_LOCK_INVERSION },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(report_kind_of_title(cases[i].title), cases[i].kind, "%s: kind %d, expected %d",
			     cases[i].title, (int)report_kind_of_title(cases[i].title), (int)cases[i].kind);
}

Test(report_kinds, text_that_is_no_title_has_no_kind)
{
	cr_expect_eq(report_kind_of_title("WARNING: something else happened"), NR_REPORT_KINDS);
	cr_expect_eq(report_kind_of_title("BUG: held lock freed"), NR_REPORT_KINDS);   /* the '!' is the kernel's */
	cr_expect_eq(report_kind_of_title(""), NR_REPORT_KINDS);
	cr_expect_eq(report_kind_of_title("INFO: task db:1 blocked"), NR_REPORT_KINDS);
}

Test(report_kinds, every_kind_has_a_title_a_record_kind_a_name_and_an_anchor)
{
	int titled[NR_REPORT_KINDS] = { 0 };
	for (int t = 0; t < NR_REPORT_TITLES; t++) {
		cr_assert(report_title_format[t] && report_title_format[t][0]);
		enum report_kind k = report_kind_of_title(report_title_format[t]);
		cr_assert_lt(k, NR_REPORT_KINDS, "%s", report_title_format[t]);
		titled[k] = 1;
	}
	for (int k = 0; k < NR_REPORT_KINDS; k++) {
		cr_expect(titled[k], "kind %s has no title", report_record_kind[k]);
		cr_expect(report_kind_name[k] && report_kind_anchor[k]);
		cr_expect_eq(report_kind_of_record(report_record_kind[k], strlen(report_record_kind[k])), k);
	}
}
