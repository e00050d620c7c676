/* The real call of a blocking lock acquisition, when lock statistics or the
 * hang checks are on: the lock is tried first (the real trylock; mutrace
 * does the same), and only a lock found taken pays for more. Then, with the
 * hang checks, the wait is a timed one of a second (WAIT_ANNOUNCE_NS)
 * first, and only an acquisition still waiting after it is announced to
 * the watchdog before the real blocking call. The trylock's and the timed
 * wait's results stand when they took the lock or failed for another
 * reason (a robust mutex's EOWNERDEAD is an acquisition; EDEADLK or EINVAL
 * would be the blocking call's answer too): the program sees what the
 * blocking call alone would have given it. */
#ifndef LOCKDEP_RCU_LOCK_WAIT_H
#define LOCKDEP_RCU_LOCK_WAIT_H

#include <errno.h>
#include <time.h>
#include "report/lock_stat.h"
#include "watchdog/watchdog.h"

/* lock_stat_enabled | hung_task_checks: whether a blocking acquisition
 * tries the lock first (lock_tracking_setup()). */
extern int lock_slow_paths;
/* perturb | lock_stat_enabled: the wrappers' fast paths (lock_tracking.h)
 * are off, every acquisition and release takes the full path. */
extern int lock_slow_hooks;

/* The coarse clock (the vDSO's last tick: ~5 ns against ~21 here): the
 * deadline is a second of waiting, a tick (a few ms) sooner is the same. */
static inline void lock_wait_deadline(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME_COARSE, t);
	t->tv_sec += (time_t)(WAIT_ANNOUNCE_NS / 1000000000u);
}

/* After the real trylock said the lock is taken: with the hang checks, a
 * timed wait of a second first (`deadline_`, CLOCK_REALTIME, is in scope of
 * timed_call; `timedout` is its answer at the deadline), announced to the
 * watchdog only if it times out, then the real blocking call; with
 * lock_stat, the wait is timed. */
#define LOCK_CONTENDED_CALL(ts, lock, lock_kind, ip, read, timed_call, timedout, call) ({ \
	int ret_;                                                                \
	uint64_t start_ = lock_stat_now();                                       \
	if (hung_task_checks) {                                                  \
		struct timespec deadline_;                                       \
		lock_wait_deadline(&deadline_);                                  \
		ret_ = (timed_call);                                             \
		if (ret_ == (timedout)) {                                        \
			wait_begin(ts, WAIT_LOCK, lock, lock_kind, 0, 0, ip, start_); \
			ret_ = (call);                                           \
			wait_end(ts);                                            \
		}                                                                \
	} else {                                                                 \
		ret_ = (call);                                                   \
	}                                                                        \
	if (lock_stat_enabled)                                                   \
		lock_stat_contended(ts, lock, ip, read, lock_stat_now() - start_); \
	ret_;                                                                    \
})

/* try_call: the real trylock, `busy` its "taken" answer; timed_call: the
 * real timed acquisition until `deadline_` (CLOCK_REALTIME), `timedout` its
 * answer at the deadline; call: the real blocking call. */
#define LOCK_BLOCKING_CALL(ts, lock, lock_kind, ip, read, try_call, busy, timed_call, timedout, call) ({ \
	int ret_;                                                                \
	if (__builtin_expect(!lock_slow_paths, 1))                               \
		ret_ = (call);                                                   \
	else if ((ret_ = (try_call)) == (busy))                                  \
		ret_ = LOCK_CONTENDED_CALL(ts, lock, lock_kind, ip, read, timed_call, timedout, call); \
	ret_;                                                                    \
})

/* Whether glibc's clock variants (pthread_mutex_clocklock(), the rwlock
 * ones) accept the clock: they fail with EINVAL on any other before
 * trying the lock, so a trylock first would take it where they do not. */
static inline int clock_supported(clockid_t clock)
{
	return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC;
}

/* A call with a deadline of its own (timedlock, clocklock): it returns by
 * itself, so it is never announced; only counted by lock_stat. */
#define LOCK_TIMED_CALL(ts, lock, ip, read, try_call, busy, call) ({              \
	int ret_;                                                                \
	if (__builtin_expect(!lock_stat_enabled, 1)) {                           \
		ret_ = (call);                                                   \
	} else if ((ret_ = (try_call)) == (busy)) {                              \
		uint64_t start_ = lock_stat_now();                               \
		ret_ = (call);                                                   \
		lock_stat_contended(ts, lock, ip, read, lock_stat_now() - start_); \
	}                                                                        \
	ret_;                                                                    \
})

#endif
