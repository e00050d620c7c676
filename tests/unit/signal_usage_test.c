/* The usage states of a lock class per signal (preload/checks/signal_usage.h):
 * kernel lockdep's rules for IRQ states, with signals; and the command's
 * recognition of the two reports they give. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include "checks/signal_usage.h"
#include "../../tools/splat.h"

Test(signal_usage, names_are_the_kernels_with_signal_for_irq)
{
	cr_expect_str_eq(signal_usage_name(USED_IN_SIGNAL_W), "IN-SIGNAL-W");
	cr_expect_str_eq(signal_usage_name(USED_IN_SIGNAL_R), "IN-SIGNAL-R");
	cr_expect_str_eq(signal_usage_name(SIGNAL_ON_W), "SIGNAL-ON-W");
	cr_expect_str_eq(signal_usage_name(SIGNAL_ON_R), "SIGNAL-ON-R");
}

/* mark_lock_irq(): a usage conflicts with the opposite direction's write
 * usage, and a write usage also with the opposite direction's read usage:
 * two reads of a reader-preferring lock never wait for each other. */
Test(signal_usage, conflicts_follow_mark_lock_irq)
{
	cr_expect_eq(signal_usage_conflicts(USED_IN_SIGNAL_W), USAGE_BIT(SIGNAL_ON_W) | USAGE_BIT(SIGNAL_ON_R));
	cr_expect_eq(signal_usage_conflicts(USED_IN_SIGNAL_R), USAGE_BIT(SIGNAL_ON_W));
	cr_expect_eq(signal_usage_conflicts(SIGNAL_ON_W), USAGE_BIT(USED_IN_SIGNAL_W) | USAGE_BIT(USED_IN_SIGNAL_R));
	cr_expect_eq(signal_usage_conflicts(SIGNAL_ON_R), USAGE_BIT(USED_IN_SIGNAL_W));
}

Test(signal_usage, the_conflict_reported_is_the_write_one_first)
{
	/* check_usage's order: the exclusive bit, then its read variant */
	cr_expect_eq(signal_usage_first_conflict(USED_IN_SIGNAL_W, USAGE_BIT(SIGNAL_ON_R) | USAGE_BIT(SIGNAL_ON_W)),
		     SIGNAL_ON_W);
	cr_expect_eq(signal_usage_first_conflict(USED_IN_SIGNAL_W, USAGE_BIT(SIGNAL_ON_R)), SIGNAL_ON_R);
	cr_expect_eq(signal_usage_first_conflict(USED_IN_SIGNAL_R, USAGE_BIT(SIGNAL_ON_R)), -1);
	cr_expect_eq(signal_usage_first_conflict(SIGNAL_ON_R, USAGE_BIT(USED_IN_SIGNAL_R)), -1);
	cr_expect_eq(signal_usage_first_conflict(SIGNAL_ON_R, USAGE_BIT(USED_IN_SIGNAL_W)), USED_IN_SIGNAL_W);
}

Test(signal_usage, signal_names)
{
	char buf[32];
	cr_expect_str_eq(signal_name(SIGALRM, buf, sizeof(buf)), "SIGALRM");
	cr_expect_str_eq(signal_name(SIGUSR1, buf, sizeof(buf)), "SIGUSR1");
	cr_expect_str_eq(signal_name(SIGRTMIN + 3, buf, sizeof(buf)), "SIGRTMIN+3");
	cr_expect_str_eq(signal_name(SIGRTMAX, buf, sizeof(buf)), "SIGRTMAX");
	cr_expect_str_eq(signal_name(0, buf, sizeof(buf)), "signal 0");
}

Test(signal_usage, report_titles_are_known_kinds)
{
	cr_expect_str_eq(splat_kind_of_title("WARNING: inconsistent lock state"), "inconsistent_lock_state");
	cr_expect_str_eq(splat_kind_of_title("WARNING: possible irq lock inversion dependency detected"),
			 "irq_lock_inversion");
	cr_expect_str_eq(splat_kind_of_title("WARNING: SIGALRM-safe -> SIGALRM-unsafe lock order detected"),
			 "irq_lock_inversion");
	cr_expect_str_eq(splat_kind_of_title("WARNING: SIGRTMIN+2-safe -> SIGRTMIN+2-unsafe lock order detected"),
			 "irq_lock_inversion");
	cr_expect(splat_is_report_kind("inconsistent_lock_state"));
	cr_expect(splat_is_report_kind("irq_lock_inversion"));
}
