/* The tracer's internal lock (preload/runtime/tracer_lock.c): mutual exclusion
 * under contention, refusal instead of self-deadlock when the holder (or a
 * thread in the middle of taking it) asks again, the bounded wait, and the
 * fork-child rules. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <unistd.h>
#include "runtime/tracer_lock.h"

/* The per-thread state the lock records its claims in. */
__thread struct thread_state tracer_thread __attribute__((tls_model("initial-exec")));

static struct tracer_lock lock = TRACER_LOCK_INITIALIZER(TRACER_LOCK_GRAPH, "test");
static long counter;

static void *contender(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200000; i++) {
		cr_assert(tracer_lock_acquire(&lock, thread_state()));
		long v = counter;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		counter = v + 1;
		tracer_lock_release(&lock);
	}
	return NULL;
}

Test(tracer_lock, excludes_under_contention)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, contender, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	cr_expect_eq(counter, 800000);
	cr_expect_eq(thread_state()->internal_locks, 0u);
}

Test(tracer_lock, refuses_reentry_by_its_holder)
{
	struct thread_state *self = thread_state();
	cr_assert(tracer_lock_acquire(&lock, self));
	cr_expect(tracer_lock_held_by(&lock, self));
	/* a signal handler on the same thread asks again: refused at once */
	cr_expect_not(tracer_lock_acquire(&lock, self));
	cr_expect_not(tracer_lock_try(&lock, self));
	cr_expect_not(tracer_lock_acquire_timeout(&lock, self, 1000));
	tracer_lock_release(&lock);
	cr_expect_not(tracer_lock_held_by(&lock, self));
	cr_expect(tracer_lock_acquire(&lock, self));
	tracer_lock_release(&lock);
}

Test(tracer_lock, refuses_reentry_while_the_thread_is_still_taking_it)
{
	/* The claim bit is set before the atomic exchange: a handler that
	 * interrupts between the two must not wait for the interrupted code. */
	struct thread_state *self = thread_state();
	self->internal_locks |= 1u << TRACER_LOCK_GRAPH;
	cr_expect_not(tracer_lock_acquire(&lock, self));
	self->internal_locks = 0;
}

static void *hold_for_a_while(void *arg)
{
	struct tracer_lock *l = arg;
	cr_assert(tracer_lock_acquire(l, thread_state()));
	struct timespec t = { 0, 300 * 1000000L };
	nanosleep(&t, NULL);
	tracer_lock_release(l);
	return NULL;
}

Test(tracer_lock, bounded_wait_gives_up_then_succeeds)
{
	static struct tracer_lock other = TRACER_LOCK_INITIALIZER(TRACER_LOCK_DEPOT, "other");
	pthread_t t;
	pthread_create(&t, NULL, hold_for_a_while, &other);
	struct timespec settle = { 0, 50 * 1000000L };
	nanosleep(&settle, NULL);
	cr_expect_not(tracer_lock_acquire_timeout(&other, thread_state(), 50), "held by the other thread");
	cr_expect_eq(thread_state()->internal_locks, 0u, "a failed wait leaves no claim behind");
	cr_expect(tracer_lock_acquire_timeout(&other, thread_state(), 5000));
	tracer_lock_release(&other);
	pthread_join(t, NULL);
}

Test(tracer_lock, fork_child_frees_what_a_vanished_thread_held)
{
	static struct tracer_lock l = TRACER_LOCK_INITIALIZER(TRACER_LOCK_CLASSES, "fork");
	struct thread_state *self = thread_state();
	/* held by a thread that does not exist in the child */
	l.word = 1;
	cr_expect_eq(tracer_lock_fork_child(&l, self), 1, "the data may be half-updated");
	cr_expect(tracer_lock_acquire(&l, self));
	tracer_lock_release(&l);
	/* taken by prepare: released, data consistent */
	tracer_lock_fork_prepare(&l, self);
	cr_expect(l.taken_for_fork && tracer_lock_held_by(&l, self));
	cr_expect_eq(tracer_lock_fork_child(&l, self), 0);
	cr_expect_not(tracer_lock_held_by(&l, self));
	cr_expect(tracer_lock_acquire(&l, self));
	/* held by the forking thread itself (fork in a signal handler): the
	 * preparation could not take it again, and the child keeps it */
	tracer_lock_fork_prepare(&l, self);
	cr_expect_not(l.taken_for_fork);
	cr_expect_eq(tracer_lock_fork_child(&l, self), 0);
	cr_expect(tracer_lock_held_by(&l, self));
	tracer_lock_release(&l);
	/* free and not taken: left alone, nothing half-updated */
	cr_expect_eq(tracer_lock_fork_child(&l, self), 0);
	cr_expect_eq(l.word, 0);
}

Test(tracer_lock, fork_parent_releases_what_prepare_took)
{
	static struct tracer_lock l = TRACER_LOCK_INITIALIZER(TRACER_LOCK_CLASSES, "fork");
	struct thread_state *self = thread_state();
	tracer_lock_fork_prepare(&l, self);
	cr_expect(tracer_lock_held_by(&l, self));
	tracer_lock_fork_parent(&l);
	cr_expect_not(tracer_lock_held_by(&l, self));
	cr_expect_eq(l.word, 0);
	/* held by this thread before the fork (a signal handler forked):
	 * the parent's handler does not release what prepare did not take */
	cr_expect(tracer_lock_acquire(&l, self));
	tracer_lock_fork_prepare(&l, self);
	tracer_lock_fork_parent(&l);
	cr_expect(tracer_lock_held_by(&l, self));
	tracer_lock_release(&l);
}

/* Holds the lock 400 ms (several looks of a waiter at its holder), its
 * thread id known. */
static void *hold_with_tid(void *arg)
{
	struct tracer_lock *l = arg;
	thread_state()->tid = gettid();
	cr_assert(tracer_lock_acquire(l, thread_state()));
	struct timespec t = { 0, 400 * 1000000L };
	nanosleep(&t, NULL);
	tracer_lock_release(l);
	return NULL;
}

static void *note_own_tid(void *arg)
{
	*(int *)arg = gettid();
	return NULL;
}

/* A raw clone()'s child has only the thread that called it: a lock another
 * thread held at the clone is never released. The waiter finds its holder
 * gone, gives up without taking it, and stops tracing for good (the data
 * it guards may be half-updated) instead of waiting forever. */
Test(tracer_lock, a_waiter_gives_up_on_a_holder_gone_from_the_process, .timeout = 10)
{
	static struct tracer_lock l = TRACER_LOCK_INITIALIZER(TRACER_LOCK_INSTANCES, "gone");
	struct thread_state *self = thread_state();
	self->tid = gettid();
	int gone_tid = 0;
	pthread_t t;
	pthread_create(&t, NULL, note_own_tid, &gone_tid);
	pthread_join(t, NULL);
	cr_assert(gone_tid > 0);
	l.word = gone_tid;   /* held by that thread */
	int in_tracer = self->in_tracer;
	cr_expect_not(tracer_lock_acquire(&l, self), "not taken: its data may be half-updated");
	cr_expect_geq(self->in_tracer, in_tracer + ABANDONED_TRACER_DEPTH, "the thread stops tracing");
	cr_expect_eq(self->internal_locks, 0u, "no claim left behind");
	self->in_tracer = in_tracer;

	/* a holder that is alive is waited for, however long */
	static struct tracer_lock alive = TRACER_LOCK_INITIALIZER(TRACER_LOCK_DEPOT, "alive");
	pthread_create(&t, NULL, hold_with_tid, &alive);
	struct timespec settle = { 0, 50 * 1000000L };
	nanosleep(&settle, NULL);
	cr_expect(tracer_lock_acquire(&alive, self));
	cr_expect_eq(self->in_tracer, in_tracer);
	tracer_lock_release(&alive);
	pthread_join(t, NULL);
}
