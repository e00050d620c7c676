/* The symbolizer's lock and the way in for code outside a report. */
#include <errno.h>
#include "symbolize/symbolizer_lock.h"
#include "runtime/tracer_stack.h"

struct tracer_lock symbolizer_lock = TRACER_LOCK_INITIALIZER(TRACER_LOCK_REPORT, "report");

/* Set while a report body runs (under the lock). */
static int report_body_active;

void symbolizer_report_body(int active)
{
	report_body_active = active;
}

int symbolizer_run(struct thread_state *ts, void (*fn)(void *), void *arg)
{
	if (tracer_lock_held_by(&symbolizer_lock, ts)) {
		if (!report_body_active)
			return 0;
		fn(arg);
		return 1;
	}
	int saved_errno = errno;
	int cancel = tracer_cancel_off();
	tracer_enter(ts);
	int ran = tracer_lock_acquire(&symbolizer_lock, ts);
	if (ran) {
		run_on_tracer_stack(fn, arg);
		tracer_lock_release(&symbolizer_lock);
	}
	tracer_leave(ts);
	tracer_cancel_restore(cancel);
	errno = saved_errno;
	return ran;
}
