/* Thread lifetime: the thread-end checks (locks and read-side sections
 * still held, liburcu registrations left behind), and the stack bounds the
 * tracer needs to know how much of a thread's stack it may use. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "lock_tracking.h"
#include "real_functions.h"
#include "report.h"
#include "thread_registry.h"
#include "urcu_calls.h"
#include "rcu_deref_set.h"

INTERPOSE(pthread_create);
INTERPOSE(pthread_exit);

struct thread_start {
	void *(*start_routine)(void *);
	void *arg;
	size_t stack_size;      /* 0: unknown (the default, which is large) */
	int urcu_worker;        /* started in liburcu (a call_rcu worker) */
	uintptr_t stack_addr;   /* the lowest address, when the caller gave the stack */
};

/* A pthread key whose destructor runs after the start routine and its TLS
 * destructors: programs may unregister from liburcu in a destructor of
 * their own, so the registration check waits for the last round. */
static pthread_key_t thread_end_key;
static pthread_once_t thread_end_key_once = PTHREAD_ONCE_INIT;

static void thread_ends(void *unused);

static void registration_check_at_key_destruction(void *value)
{
	uintptr_t round = (uintptr_t)value;
	struct thread_state *ts = thread_state();
	/* Re-arm once: the next round runs after every other key's destructor
	 * of this round (glibc runs up to PTHREAD_DESTRUCTOR_ITERATIONS). */
	if (round == 1) {
		/* The main thread's pthread_exit() has no trampoline cleanup:
		 * its locks are checked here, after its cleanup handlers. */
		thread_ends(NULL);
		pthread_setspecific(thread_end_key, (void *)2);
		return;
	}
	check_registered_at_thread_end(ts);
	thread_registry_remove(ts);
	lock_stat_thread_end(ts);
	rcu_deref_set_release(ts);
}

static void create_thread_end_key(void)
{
	pthread_key_create(&thread_end_key, registration_check_at_key_destruction);
}

/* The start routine returned, called pthread_exit, or was cancelled. */
static void thread_ends(void *unused)
{
	(void)unused;
	struct thread_state *ts = thread_state();
	if (ts->thread_ended)
		return;
	ts->thread_ended = 1;
	if (ts->foreign_pending)
		foreign_releases_apply(ts);
	check_locks_held_at_thread_end(ts);
}

static void *thread_trampoline(void *p)
{
	struct thread_start start = *(struct thread_start *)p;
	free(p);
	struct thread_state *ts = thread_state();
	thread_registry_add(ts);
	/* The lowest usable address: what the tracer's stack capture must stay
	 * above (glibc puts the thread's TLS and descriptor at the top of the
	 * block, so measuring down from here is conservative). */
	if (start.stack_addr)
		ts->stack_limit = start.stack_addr;
	else if (start.stack_size)
		ts->stack_limit = (uintptr_t)__builtin_frame_address(0) - start.stack_size;
	ts->urcu_worker = (uint8_t)start.urcu_worker;
	pthread_setspecific(thread_end_key, (void *)1);
	void *ret;
	pthread_cleanup_push(thread_ends, NULL);
	ret = start.start_routine(start.arg);
	pthread_cleanup_pop(1);
	return ret;
}

int tracer_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start_routine)(void *), void *arg)
{
	return REAL(pthread_create)(thread, attr, start_routine, arg);
}

int pthread_create(pthread_t *restrict thread, const pthread_attr_t *restrict attr,
		   void *(*start_routine)(void *), void *restrict arg)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer)
		return REAL(pthread_create)(thread, attr, start_routine, arg);
	pthread_once(&thread_end_key_once, create_thread_end_key);
	struct thread_start *start = malloc(sizeof(*start));
	if (!start)   /* keep the program's semantics: create it untraced */
		return REAL(pthread_create)(thread, attr, start_routine, arg);
	start->start_routine = start_routine;
	start->arg = arg;
	start->stack_size = 0;
	start->stack_addr = 0;
	start->urcu_worker = is_urcu_code((uintptr_t)start_routine);
	if (attr) {
		void *addr = NULL;
		size_t size = 0;
		if (!pthread_attr_getstack(attr, &addr, &size) && addr)
			start->stack_addr = (uintptr_t)addr;
		else if (!pthread_attr_getstacksize(attr, &size))
			start->stack_size = size;
	}
	int ret = REAL(pthread_create)(thread, attr, thread_trampoline, start);
	if (ret != 0)
		free(start);
	return ret;
}

void pthread_exit(void *retval)
{
	struct thread_state *ts = thread_state();
	if (!ts->in_tracer) {
		/* The main thread has no trampoline: arm the key for it too. */
		pthread_once(&thread_end_key_once, create_thread_end_key);
		if (!pthread_getspecific(thread_end_key))
			pthread_setspecific(thread_end_key, (void *)1);
	}
	REAL(pthread_exit)(retval);
}
