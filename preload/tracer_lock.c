/* The internal lock: Drepper's three-state futex mutex ("Futexes Are
 * Tricky", mutex3) with an owner field. Raw futex syscalls only: glibc's
 * wrappers would be cancellation points, and pthread calls would come back
 * to our own wrappers. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "sandbox.h"
#include "tracer_lock.h"

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
	int saved = errno;
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout_ms >= 0 ? &t : NULL, NULL, 0);
	errno = saved;
}

void tracer_futex_wake_all(int *word)
{
	if (in_sandbox())
		return;
	int saved = errno;
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
	errno = saved;
}

static void futex_wake_one(int *word)
{
	if (in_sandbox())
		return;
	int saved = errno;
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}

static int try_word(struct tracer_lock *l)
{
	int expected = 0;
	return __atomic_compare_exchange_n(&l->word, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

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
	if (try_word(l))
		return 1;
	unclaim(l, self);
	return 0;
}

/* timeout_ms < 0: forever. */
static int acquire(struct tracer_lock *l, struct thread_state *self, int timeout_ms)
{
	if (!claim(l, self))
		return 0;   /* re-entry: this thread holds it or is taking it */
	if (try_word(l))
		return 1;
	/* Short spin first: the tracer's critical sections are mostly short. */
	for (int i = 0; i < 100; i++) {
		cpu_relax();
		if (__atomic_load_n(&l->word, __ATOMIC_RELAXED) == 0 && try_word(l))
			return 1;
	}
	long deadline = timeout_ms >= 0 ? tracer_monotonic_ms() + timeout_ms : 0;
	/* Mark contended and sleep until the holder wakes us. */
	while (__atomic_exchange_n(&l->word, 2, __ATOMIC_ACQUIRE) != 0) {
		int wait_ms = 1000;
		if (timeout_ms >= 0) {
			long left = deadline - tracer_monotonic_ms();
			if (left <= 0) {
				unclaim(l, self);
				return 0;
			}
			wait_ms = left < wait_ms ? (int)left : wait_ms;
		}
		tracer_futex_wait(&l->word, 2, wait_ms);
	}
	return 1;
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
	if (__atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE) == 2)
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

int tracer_lock_fork_prepare(struct tracer_lock *l, struct thread_state *self)
{
	return acquire(l, self, 5000);
}

void tracer_lock_fork_parent(struct tracer_lock *l, int taken)
{
	if (taken)
		tracer_lock_release(l);
}

int tracer_lock_fork_child(struct tracer_lock *l, int taken, struct thread_state *self)
{
	if (taken) {
		tracer_lock_release(l);
		return 0;
	}
	if (tracer_lock_held_by(l, self))
		return 0;
	int was_held = __atomic_load_n(&l->word, __ATOMIC_RELAXED) != 0;
	tracer_lock_reset(l);
	return was_held;
}
