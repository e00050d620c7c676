/* The tracer's checks of itself; see self_check.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include "runtime/self_check.h"
#include "base/options.h"
#include "runtime/log_output.h"

int tracer_checks_off;

int self_check_failed(const char *invariant, const char *file, int line)
{
	/* One line in all, whichever thread (or signal handler) fails first;
	 * the others find the checks off already. */
	if (__atomic_exchange_n(&tracer_checks_off, 1, __ATOMIC_ACQ_REL))
		return 1;
	int saved_errno = errno;
	char msg[512];
	int n = snprintf(msg, sizeof(msg),
			 "lockdep-rcu: BUG: self-check failed: %s at %s:%d; the lock and RCU checks are "
			 "turned off, the program keeps running\n",
			 invariant, file, line);
	if (n > (int)sizeof(msg) - 1)
		n = (int)sizeof(msg) - 1;
	log_output_write(msg, n > 0 ? (size_t)n : 0);
	errno = saved_errno;
	return 1;
}

int self_check_fault(void)
{
	static unsigned long calls;
	unsigned long at = (unsigned long)tracer_options.self_check_fault;
	return at && __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) == at;
}
