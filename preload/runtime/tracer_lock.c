/* The internal lock: a futex mutex whose word holds its holder's thread
 * id and a waiters bit (as PI futexes do, here without the kernel's
 * part), for waiters to tell a holder that is gone. Raw futex syscalls only: glibc's
 * wrappers would be cancellation points, and pthread calls would come back
 * to our own wrappers. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "runtime/sandbox.h"
#include "runtime/tracer_lock.h"
#include "base/raw_syscall.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* In a sandbox the waits spin (a futex call may be what kills the
 * process: sandbox.h), a pause at a time, about as long as they would
 * sleep; the wakes are not made (nothing sleeps there). */
static __thread long spun_ms;   /* time spent spinning, as counted */

static void spin_wait(int *word, int expected, int timeout_ms)
{
	long ms = timeout_ms >= 0 ? timeout_ms : 1000;
	for (long pauses = ms * 20000L; pauses > 0; pauses--) {   /* ~50 ns each */
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected)
			break;
		cpu_relax();
	}
	spun_ms += ms ? ms : 1;   /* an upper bound: a deadline passes in time */
}

long tracer_monotonic_ms(void)
{
	if (!clock_usable())
		return spun_ms;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void tracer_futex_wait(int *word, int expected, int timeout_ms)
{
	if (in_sandbox()) {
		spin_wait(word, expected, timeout_ms);
		return;
	}
	struct timespec t = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
	raw_futex_wait(word, expected, timeout_ms >= 0 ? &t : NULL);
}

void tracer_futex_wake_all(int *word)
{
	if (in_sandbox())
		return;
	raw_futex_wake(word, 0x7fffffff);
}

static void futex_wake_one(int *word)
{
	if (in_sandbox())
		return;
	raw_futex_wake(word, 1);
}

/* The lock word: 0 free, else the holder's thread id (or OWNER_UNKNOWN
 * for a thread whose id the tracer does not know), with WAITERS set once
 * a thread may sleep on it. Who holds it is in the same word as that it
 * is held, so a raw clone() made at any instant leaves its child a word
 * naming the holder it will not find. Thread ids are below 2^22
 * (PID_MAX_LIMIT). */
#define WAITERS 0x40000000
#define OWNER_UNKNOWN 0x3fffffff

static int owner_word(const struct thread_state *self)
{
	return self->tid > 0 && self->tid < OWNER_UNKNOWN ? self->tid : OWNER_UNKNOWN;
}

static int try_word(struct tracer_lock *l, const struct thread_state *self)
{
	int expected = 0;
	return __atomic_compare_exchange_n(&l->word, &expected, owner_word(self), 0, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

/* Whether the holder named by lock word v is not a thread of this process:
 * it vanished (a raw clone()'s child has only the thread that called it).
 * Not asked in a sandbox, where tgkill may be what kills the process. */
static int holder_gone(int v)
{
	int tid = v & ~WAITERS;
	if (!tid || tid == OWNER_UNKNOWN || in_sandbox())
		return 0;
	return raw_thread_gone(tid);
}

/* How long a waiter sleeps between looks at the holder. */
#define OWNER_CHECK_MS 100

/* This thread's claim: set before the first attempt, so a signal handler
 * that interrupts anywhere from here to the release sees it. */
static int claim(struct tracer_lock *l, struct thread_state *self)
{
	if (self->internal_locks & l->bit)
		return 0;
	self->internal_locks |= l->bit;
	signal_fence();
	return 1;
}

static void unclaim(struct tracer_lock *l, struct thread_state *self)
{
	signal_fence();
	self->internal_locks &= ~l->bit;
}

int tracer_lock_try(struct tracer_lock *l, struct thread_state *self)
{
	if (!claim(l, self))
		return 0;
	if (try_word(l, self))
		return 1;
	unclaim(l, self);
	return 0;
}

/* timeout_ms < 0: forever. */
static int acquire(struct tracer_lock *l, struct thread_state *self, int timeout_ms)
{
	if (!claim(l, self))
		return 0;   /* re-entry: this thread holds it or is taking it */
	if (try_word(l, self))
		return 1;
	/* Short spin first: the tracer's critical sections are mostly short. */
	for (int i = 0; i < 100; i++) {
		cpu_relax();
		if (__atomic_load_n(&l->word, __ATOMIC_RELAXED) == 0 && try_word(l, self))
			return 1;
	}
	long deadline = timeout_ms >= 0 ? tracer_monotonic_ms() + timeout_ms : 0;
	int last = 0, waits_unchanged = 0;   /* the word, and for how many waits */
	for (;;) {
		int v = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
		if (v == 0) {
			/* Taken with WAITERS kept: others may be asleep on it
			 * (as mutex3 takes it as 2 after sleeping). */
			if (__atomic_compare_exchange_n(&l->word, &v, owner_word(self) | WAITERS, 0, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return 1;
			continue;
		}
		if (!(v & WAITERS)) {
			if (!__atomic_compare_exchange_n(&l->word, &v, v | WAITERS, 0, __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED))
				continue;
			v |= WAITERS;
		}
		/* The word unchanged for two waits, its holder not a thread of
		 * this process: it will never be released. The data it guards may
		 * be half-updated: this thread stops tracing rather than use it.
		 * (Asked only of a word that stayed: no system call per wake-up.) */
		if (v != last) {
			last = v;
			waits_unchanged = 0;
		} else if (++waits_unchanged >= 2 && holder_gone(v)) {
			self->in_tracer += ABANDONED_TRACER_DEPTH;
			unclaim(l, self);
			return 0;
		}
		int wait_ms = OWNER_CHECK_MS;
		if (timeout_ms >= 0) {
			long left = deadline - tracer_monotonic_ms();
			if (left <= 0) {
				unclaim(l, self);
				return 0;
			}
			wait_ms = left < wait_ms ? (int)left : wait_ms;
		}
		tracer_futex_wait(&l->word, v, wait_ms);
	}
}

int tracer_lock_acquire(struct tracer_lock *l, struct thread_state *self)
{
	return acquire(l, self, -1);
}

int tracer_lock_acquire_timeout(struct tracer_lock *l, struct thread_state *self, int timeout_ms)
{
	return acquire(l, self, timeout_ms);
}

void tracer_lock_release(struct tracer_lock *l)
{
	struct thread_state *self = thread_state();
	if (__atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE) & WAITERS)
		futex_wake_one(&l->word);
	unclaim(l, self);
}

int tracer_lock_held_by(const struct tracer_lock *l, const struct thread_state *self)
{
	return (self->internal_locks & l->bit) != 0;
}

void tracer_lock_reset(struct tracer_lock *l)
{
	__atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
}

void tracer_lock_fork_prepare(struct tracer_lock *l, struct thread_state *self)
{
	int taken = acquire(l, self, 5000);
	if (l->taken_for_fork != taken)
		l->taken_for_fork = taken;
}

void tracer_lock_fork_parent(struct tracer_lock *l)
{
	if (l->taken_for_fork)
		tracer_lock_release(l);
}

int tracer_lock_fork_child(struct tracer_lock *l, struct thread_state *self)
{
	if (l->taken_for_fork) {
		tracer_lock_release(l);
		return 0;
	}
	if (tracer_lock_held_by(l, self))
		return 0;
	int was_held = __atomic_load_n(&l->word, __ATOMIC_RELAXED) != 0;
	if (was_held)
		tracer_lock_reset(l);
	return was_held;
}
