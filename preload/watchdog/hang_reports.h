/* The watchdog's reports, in the kernel's words: RCU stall warnings and
 * hung tasks, with every thread's held locks (debug_show_all_locks()). */
#ifndef LOCKDEP_RCU_HANG_REPORTS_H
#define LOCKDEP_RCU_HANG_REPORTS_H

#include <stdint.h>
#include "runtime/thread_state.h"

/* What the watchdog remembers between its looks: which waits it reported
 * and when a stall is due again. */
struct hang_watch;

struct hang_watch *hang_watch_new(void);
/* One look at every thread's wait (now: CLOCK_MONOTONIC ns). */
void hang_watch_scan(struct hang_watch *watch, struct thread_state *self, uint64_t now);
/* The process did not run for `length` ns, up to resumed_at (stopped by
 * SIGSTOP or a debugger: the watchdog woke that much later than it
 * asked): that time counts in no wait that began before it. */
void hang_watch_note_pause(struct hang_watch *watch, uint64_t resumed_at, uint64_t length);

#endif
