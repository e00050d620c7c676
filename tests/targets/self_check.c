/* Bugs the tracer reports, for the test of its self-checks: run with
 * self_check_fault=N, the Nth new lock dependency fails the graph's
 * internal check, as a corrupted graph would. From then on the tracer must
 * report nothing and change nothing: the program's output and exit status
 * are its own. Run without it, the same program is reported (the twin).
 *
 * Each scenario prints "done" when it finished. */
#include "target.h"

static pthread_mutex_t A = PTHREAD_MUTEX_INITIALIZER, B = PTHREAD_MUTEX_INITIALIZER;

struct config {
	int value;
};
static struct config default_config = { 7 };
static struct config *current_config = &default_config;

static void nest(pthread_mutex_t *outer, pthread_mutex_t *inner)
{
	pthread_mutex_lock(outer);
	pthread_mutex_lock(inner);
	pthread_mutex_unlock(inner);
	pthread_mutex_unlock(outer);
}

/* A -> B (the first new dependency), B -> A (an inversion), then an
 * rcu_dereference() outside any read side, and an unlock of a mutex this
 * thread does not hold. */
SCENARIO bugs_after_first_dependency(void)
{
	rcu_register_thread();
	nest(&A, &B);
	nest(&B, &A);
	struct config *c = rcu_dereference(current_config);
	printf("value %d\n", c->value);
	int ret = pthread_mutex_unlock(&A);   /* a default mutex: 0, undefined by POSIX */
	printf("unlock %d\n", ret);
	rcu_unregister_thread();
	printf("done\n");
}

/* Threads that each make new dependencies at once, between two locks of
 * their own (each a static variable: a class of its own), and then invert
 * them: a fault in any of them turns the checks off for all, with one
 * line. */
enum { THREADS = 4 };
static pthread_mutex_t a0 = PTHREAD_MUTEX_INITIALIZER, b0 = PTHREAD_MUTEX_INITIALIZER,
		       a1 = PTHREAD_MUTEX_INITIALIZER, b1 = PTHREAD_MUTEX_INITIALIZER,
		       a2 = PTHREAD_MUTEX_INITIALIZER, b2 = PTHREAD_MUTEX_INITIALIZER,
		       a3 = PTHREAD_MUTEX_INITIALIZER, b3 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *const own[THREADS][2] = { { &a0, &b0 }, { &a1, &b1 }, { &a2, &b2 }, { &a3, &b3 } };
static pthread_barrier_t start;

static void *thread_inverts(void *arg)
{
	pthread_mutex_t *const *m = own[(long)arg];
	pthread_barrier_wait(&start);
	nest(m[0], m[1]);
	nest(m[1], m[0]);
	return NULL;
}

SCENARIO threads_at_once(void)
{
	pthread_t t[THREADS];
	pthread_barrier_init(&start, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, thread_inverts, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "bugs-after-first-dependency", bugs_after_first_dependency },
		{ "threads-at-once", threads_at_once },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
