/* The perturbation: a per-thread splitmix64 stream seeded from the seed
 * option and the order in which threads first perturb, so one seed replays
 * the same decisions (as far as the scheduler lets a replay be the same). */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "runtime/perturb.h"
#include "runtime/sandbox.h"
#include "base/raw_syscall.h"

static uint64_t next_thread_index;

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void perturb_slow(struct thread_state *ts)
{
	/* In a seccomp sandbox a yield or a sleep may be a call that kills
	 * (sandbox.h): the window is not widened there. */
	if (ts->in_tracer || in_sandbox())
		return;
	if (!ts->perturb_state) {
		uint64_t index = __atomic_add_fetch(&next_thread_index, 1, __ATOMIC_RELAXED);
		ts->perturb_state = ((uint64_t)(unsigned)tracer_options.seed << 20 ^ index) | 1;
	}
	uint64_t r = splitmix64(&ts->perturb_state);
	/* Raw system calls: glibc's nanosleep() is a cancellation point, and a
	 * delay must never make a lock or read-side call cancellable (a thread
	 * cancelled inside pthread_mutex_unlock() leaves the mutex locked),
	 * and they leave errno alone. */
	switch (r & 31) {
	case 0: case 1: case 2: case 3:
		raw_syscall(SYS_sched_yield);
		break;
	case 4: {
		/* 1-50 us: long enough to let another thread into the window.
		 * The kernel may stretch a sleep by the thread's timer slack
		 * (50 us by default; mpd sets 100 ms on its player threads, which
		 * made every delay a tenth of a second): a longer slack is set
		 * aside for the sleep, and put back. */
		struct timespec delay = { 0, (long)(1000 + (r >> 8) % 49000) };
		long slack = raw_syscall(SYS_prctl, PR_GET_TIMERSLACK);
		int narrowed = slack > delay.tv_nsec && raw_syscall(SYS_prctl, PR_SET_TIMERSLACK, 1L) == 0;
		raw_syscall(SYS_nanosleep, &delay, NULL);
		if (narrowed)
			raw_syscall(SYS_prctl, PR_SET_TIMERSLACK, slack);
		break;
	}
	default:
		break;
	}
}
