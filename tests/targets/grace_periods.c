/* Grace periods wait for readers, whoever runs the read side: correct
 * programs whose output says whether synchronize_rcu() returned too early.
 * Under the preload the memb flavor's read side is done by the tracer
 * itself (as liburcu's _LGPL_SOURCE headers do), so these check that it
 * keeps liburcu's protocol: a reader's outermost section holds up a grace
 * period, nested ones do not end it early, and an updater that went to
 * sleep waiting for a reader is woken when the reader leaves. */
#include "target.h"
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

static int reader_in[2];
static atomic_int leaving;

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&t, &t))
		;
}

/* In its section (nested three deep) for 300 ms: long enough for the
 * updater to stop spinning and sleep on liburcu's futex. */
static void *long_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_lock();
	rcu_read_lock();
	if (write(reader_in[1], "x", 1) != 1)
		abort();
	rcu_read_unlock();   /* still inside: the outermost holds the grace period */
	sleep_ms(150);
	rcu_read_unlock();
	sleep_ms(150);
	atomic_store(&leaving, 1);
	rcu_read_unlock();
	rcu_unregister_thread();
	return NULL;
}

SCENARIO grace_period_waits_for_a_nested_reader(void)
{
	char c;
	pthread_t t;
	if (pipe(reader_in) != 0)
		abort();
	rcu_register_thread();
	pthread_create(&t, NULL, long_reader, NULL);
	if (read(reader_in[0], &c, 1) != 1)
		abort();
	synchronize_rcu();
	printf(atomic_load(&leaving) ? "waited\n" : "returned while the reader was inside\n");
	pthread_join(t, NULL);
	rcu_unregister_thread();
}

/* An updater replaces and frees a node 2,000 times while two readers check
 * every node they read: a grace period too short shows as a poisoned node. */
struct node {
	long value;
	long check;     /* ~value while the node is live */
};

static struct node *current;
static atomic_int readers_done;

static void *checking_reader(void *arg)
{
	long bad = 0;
	(void)arg;
	rcu_register_thread();
	while (atomic_load(&readers_done) == 0) {
		for (int i = 0; i < 1000; i++) {
			rcu_read_lock();
			struct node *n = rcu_dereference(current);
			if (n && n->check != ~n->value)
				bad++;
			rcu_read_unlock();
		}
#ifdef TARGET_QSBR
		rcu_quiescent_state();
#endif
	}
	rcu_unregister_thread();
	return (void *)bad;
}

SCENARIO grace_periods_protect_readers(void)
{
	pthread_t r[2];
	rcu_register_thread();
	struct node *first = malloc(sizeof(*first));
	first->value = 0;
	first->check = ~0L;
	rcu_assign_pointer(current, first);
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, checking_reader, NULL);
	for (long v = 1; v <= 2000; v++) {
		struct node *n = malloc(sizeof(*n)), *old = current;
		n->value = v;
		n->check = ~v;
		rcu_assign_pointer(current, n);
		synchronize_rcu();
		old->check = 12345;   /* poisoned: no reader may see it now */
		free(old);
	}
	atomic_store(&readers_done, 1);
	long bad = 0;
	for (int i = 0; i < 2; i++) {
		void *b;
		pthread_join(r[i], &b);
		bad += (long)b;
	}
	printf(bad ? "a reader saw a freed node %ld times\n" : "no reader saw a freed node\n", bad);
	free(current);
	rcu_unregister_thread();
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "grace-period-waits-for-a-nested-reader", grace_period_waits_for_a_nested_reader },
		{ "grace-periods-protect-readers", grace_periods_protect_readers },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
