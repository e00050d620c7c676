/* Stack capture for reports, with libunwind loaded privately. */
#ifndef LOCKDEP_RCU_BACKTRACE_H
#define LOCKDEP_RCU_BACKTRACE_H
#include <stddef.h>
#include <stdint.h>

/* Return addresses of the calling thread, innermost first, with the
 * tracer's own frames skipped. Slow path only: libunwind locks and mallocs. */
size_t backtrace_capture(uintptr_t *frames, size_t max);
/* Pays libunwind's first-call cost (~200 us) at startup, not in a report. */
void backtrace_warm_up(void);
#endif
