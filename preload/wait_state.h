/* Blocking waits the watchdog (watchdog.h) watches: a lock acquisition that
 * has waited a second already, and every grace-period wait. A thread
 * announces its wait in its own thread_state (no lock, no syscall but a
 * rare wake-up of an idle watchdog) and withdraws it when the wait ends. */
#ifndef LOCKDEP_RCU_WAIT_STATE_H
#define LOCKDEP_RCU_WAIT_STATE_H

#include <stdint.h>
#include "thread_state.h"

enum wait_kind {
	WAIT_NONE,
	WAIT_LOCK,
	WAIT_GRACE_PERIOD,
};

/* How long a blocking acquisition waits before it is announced: a lock
 * taken within a second never costs more than a failed trylock and a
 * timed wait. */
#define WAIT_ANNOUNCE_NS 1000000000ull

/* Whether blocked lock acquisitions are watched (hung_task_timeout), and
 * grace-period waits (stall_timeout). */
extern int hung_task_checks;
extern int stall_checks;

/* From the options, at startup. */
void wait_state_setup(void);

/* The thread starts waiting (since: CLOCK_MONOTONIC ns). Captures its
 * stack, publishes the wait and makes sure the watchdog runs. */
void wait_begin(struct thread_state *ts, enum wait_kind kind, const void *object, uint8_t lock_kind,
		uint8_t flavor, int barrier, uintptr_t ip, uint64_t since);
/* The wait is over, however it ended. */
void wait_end(struct thread_state *ts);

#endif
