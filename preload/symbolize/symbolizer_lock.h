/* symbolizer_lock.h - the symbolizer is one thread's at a time: its module
 * list, tables and arena are built lazily, on the tracer's stack. The same
 * lock is the report lock: a report holds it for its whole body, since it
 * names frames as it prints them (report.c). */
#ifndef LOCKDEP_RCU_SYMBOLIZER_LOCK_H
#define LOCKDEP_RCU_SYMBOLIZER_LOCK_H

#include "runtime/thread_state.h"
#include "runtime/tracer_lock.h"

extern struct tracer_lock symbolizer_lock;

/* Runs fn(arg) with the symbolizer to itself: under its lock, on the
 * tracer's stack. Inside a report body it runs fn at once. Returns 0
 * without running fn when this thread holds the lock otherwise (a signal
 * handler interrupting it, or fork preparation). */
int symbolizer_run(struct thread_state *ts, void (*fn)(void *), void *arg);

/* A report body begins (1) or ends (0), under the lock. */
void symbolizer_report_body(int active);

#endif
