/* Thread lifetime: the thread-end checks (locks and read-side sections
 * still held, liburcu registrations left behind) and fork, whose child keeps
 * only the forking thread and so only that thread's state. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "lock_tracking.h"
#include "real_functions.h"
#include "report.h"

INTERPOSE(pthread_create);
INTERPOSE(pthread_exit);
INTERPOSE(fork);

struct thread_start {
	void *(*start_routine)(void *);
	void *arg;
};

/* A pthread key whose destructor runs after the start routine and its TLS
 * destructors: programs may unregister from liburcu in a destructor of
 * their own, so the registration check waits for the last round. */
static pthread_key_t thread_end_key;
static pthread_once_t thread_end_key_once = PTHREAD_ONCE_INIT;

static void registration_check_at_key_destruction(void *value)
{
	uintptr_t round = (uintptr_t)value;
	struct thread_state *ts = thread_state();
	/* Re-arm once: the next round runs after every other key's destructor
	 * of this round (glibc runs up to PTHREAD_DESTRUCTOR_ITERATIONS). */
	if (round == 1) {
		pthread_setspecific(thread_end_key, (void *)2);
		return;
	}
	check_registered_at_thread_end(ts);
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
	check_locks_held_at_thread_end(ts);
}

static void *thread_trampoline(void *p)
{
	struct thread_start start = *(struct thread_start *)p;
	free(p);
	pthread_setspecific(thread_end_key, (void *)1);
	void *ret;
	pthread_cleanup_push(thread_ends, NULL);
	ret = start.start_routine(start.arg);
	pthread_cleanup_pop(1);
	return ret;
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
	int ret = REAL(pthread_create)(thread, attr, thread_trampoline, start);
	if (ret != 0)
		free(start);
	return ret;
}

void pthread_exit(void *retval)
{
	struct thread_state *ts = thread_state();
	if (!ts->in_tracer) {
		thread_ends(NULL);
		/* The main thread has no trampoline: arm the key for it too. */
		pthread_once(&thread_end_key_once, create_thread_end_key);
		if (!pthread_getspecific(thread_end_key))
			pthread_setspecific(thread_end_key, (void *)1);
	}
	REAL(pthread_exit)(retval);
}

pid_t fork(void)
{
	report_fork_prepare();
	pid_t pid = REAL(fork)();
	if (pid == 0)
		report_fork_child();
	else
		report_fork_parent();
	return pid;
}
