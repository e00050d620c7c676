/* Blocking waits the watchdog (watchdog.h) watches: a lock acquisition that
 * has waited a second already, and every grace-period wait. A thread
 * announces its wait in its own thread_state (no lock, no syscall but a
 * rare wake-up of an idle watchdog) and withdraws it when the wait ends.
 * The kinds are here, under the per-thread state; announcing a wait is the
 * watchdog's (wait_begin() in watchdog.h). */
#ifndef LOCKDEP_RCU_WAIT_STATE_H
#define LOCKDEP_RCU_WAIT_STATE_H

#include <stdint.h>
#include "runtime/thread_state.h"

enum wait_kind {
	WAIT_NONE,
	WAIT_LOCK,
	WAIT_GRACE_PERIOD,
};

/* How long a blocking acquisition waits before it is announced: a lock
 * taken within a second never costs more than a failed trylock and a
 * timed wait. */
#define WAIT_ANNOUNCE_NS 1000000000ull

#endif
