/* A program built with _LGPL_SOURCE and NOT instrumented with the header:
 * rcu_read_lock(), rcu_read_unlock() (and QSBR's online/offline) are
 * inlined, no wrapper sees them. The tracer reads liburcu's own reader
 * state at the events it does see. Built for every flavor with
 * -D_LGPL_SOURCE (build/targets/lgpl_inline.<flavor>.lgpl). */
#include "target.h"

#define SITE(stmt) do { printf("site %d\n", __LINE__); fflush(stdout); stmt; } while (0)

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

#if defined(TARGET_QSBR)
#define IS_QSBR 1
#else
#define IS_QSBR 0
#endif

/* ---- waiting for a grace period inside one's own read side --------------- */

SCENARIO bug_sync_in_reader(void)
{
	REGISTER();
	rcu_read_lock();
	SITE(synchronize_rcu());   /* never returns */
	rcu_read_unlock();
	UNREGISTER();
}

SCENARIO bug_barrier_in_reader(void)
{
	REGISTER();
	rcu_read_lock();
	SITE(rcu_barrier());       /* never returns */
	rcu_read_unlock();
	UNREGISTER();
}

/* ---- a lock taken inside a read side, held across a grace period ----------- */

static void *reader_takes_table_lock(void *arg)
{
	(void)arg;
	REGISTER();
	rcu_read_lock();
	pthread_mutex_lock(&table_lock);
	pthread_mutex_unlock(&table_lock);
	rcu_read_unlock();
	UNREGISTER();
	return NULL;
}

SCENARIO bug_grace_period_deadlock(void)
{
	in_thread(reader_takes_table_lock);
	pthread_mutex_lock(&table_lock);
	SITE(synchronize_rcu());
	pthread_mutex_unlock(&table_lock);
	printf("done\n");
}

/* ---- thread end, unregister, never registered ------------------------------- */

static void *returns_inside_reader(void *arg)
{
	(void)arg;
	REGISTER();
	rcu_read_lock();
	return NULL;
}

SCENARIO bug_thread_ends_in_reader(void)
{
	in_thread(returns_inside_reader);
	printf("done\n");
}

SCENARIO bug_unregister_in_reader(void)
{
	REGISTER();
	rcu_read_lock();
	SITE(UNREGISTER());
	rcu_read_unlock();
	printf("done\n");
}

static void *never_registers(void *arg)
{
	(void)arg;
	rcu_read_lock();
	pthread_mutex_lock(&table_lock);   /* an event the tracer sees */
	pthread_mutex_unlock(&table_lock);
	rcu_read_unlock();
	return NULL;
}

SCENARIO bug_never_registered(void)
{
	in_thread(never_registers);
	printf("done\n");
}

/* ---- the correct twin ----------------------------------------------------------- */

static void *good_reader(void *arg)
{
	(void)arg;
	REGISTER();
	for (int i = 0; i < 1000; i++) {
		rcu_read_lock();
		pthread_mutex_lock(&table_lock);
		pthread_mutex_unlock(&table_lock);
		rcu_read_unlock();
		if (IS_QSBR)
			rcu_quiescent_state();
	}
	UNREGISTER();
	return NULL;
}

SCENARIO ok(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, good_reader, NULL);
	for (int i = 0; i < 50; i++) {
		pthread_mutex_lock(&table_lock);
		pthread_mutex_unlock(&table_lock);
		synchronize_rcu();   /* no lock held across it */
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
}

static const struct scenario scenarios[] = {
	{ "bug-sync-in-reader", bug_sync_in_reader },
	{ "bug-barrier-in-reader", bug_barrier_in_reader },
	{ "bug-grace-period-deadlock", bug_grace_period_deadlock },
	{ "bug-thread-ends-in-reader", bug_thread_ends_in_reader },
	{ "bug-unregister-in-reader", bug_unregister_in_reader },
	{ "bug-never-registered", bug_never_registered },
	{ "ok", ok },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return run_scenario(argc, argv, scenarios);
}
