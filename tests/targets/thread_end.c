/* What a thread leaves behind when it ends: locks and read-side sections
 * still held (kernel: "still has locks held!"), and liburcu registrations
 * whose registry entry would then point at the thread's freed memory. */
#include "target.h"
#include <threads.h>
#include <unistd.h>

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static void *returns_holding_mutex(void *arg)
{
	(void)arg;
	printf("site %d\n", __LINE__ + 1);
	pthread_mutex_lock(&table_lock);
	return NULL;
}

static void *returns_inside_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	printf("site %d\n", __LINE__ + 1);
	rcu_read_lock();
	return NULL;
}

static void *exits_holding_mutex(void *arg)
{
	(void)arg;
	printf("site %d\n", __LINE__ + 1);
	pthread_mutex_lock(&table_lock);
	pthread_exit(NULL);
}

static void *stays_registered(void *arg)
{
	(void)arg;
	printf("site %d\n", __LINE__ + 1);
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	return NULL;
}

static void *clean_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	pthread_mutex_lock(&table_lock);
	pthread_mutex_unlock(&table_lock);
	rcu_unregister_thread();
	return NULL;
}

/* Unregistering from a thread-specific-data destructor is correct too. */
static pthread_key_t registration_key;
static void unregister_at_thread_exit(void *value)
{
	(void)value;
	rcu_unregister_thread();
}

static void *unregisters_in_key_destructor(void *arg)
{
	(void)arg;
	rcu_register_thread();
	pthread_setspecific(registration_key, (void *)1);
	rcu_read_lock();
	rcu_read_unlock();
	return NULL;
}

/* A cancelled thread whose cleanup handler releases its lock: correct. */
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static void unlock_table(void *arg)
{
	(void)arg;
	pthread_mutex_unlock(&table_lock);
}

static void *waits_until_cancelled(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&table_lock);
	pthread_cleanup_push(unlock_table, NULL);
	for (;;)
		pthread_cond_wait(&never, &table_lock);
	pthread_cleanup_pop(1);
	return NULL;
}

SCENARIO bug_return_locked(void) { in_thread(returns_holding_mutex); printf("done\n"); }
SCENARIO bug_return_in_reader(void) { in_thread(returns_inside_reader); printf("done\n"); }
SCENARIO bug_pthread_exit_locked(void) { in_thread(exits_holding_mutex); printf("done\n"); }
SCENARIO bug_still_registered(void) { in_thread(stays_registered); printf("done\n"); }

/* C11 threads: glibc's thrd_create() starts them through its internal
 * pthread_create, and an int comes back through thrd_join(). */
static int c11_returns_holding_mutex(void *arg)
{
	(void)arg;
	printf("site %d\n", __LINE__ + 1);
	pthread_mutex_lock(&table_lock);
	return 7;
}

static int c11_exits_holding_mutex(void *arg)
{
	(void)arg;
	printf("site %d\n", __LINE__ + 1);
	pthread_mutex_lock(&table_lock);
	thrd_exit(8);
}

static int c11_clean(void *arg)
{
	pthread_mutex_lock(&table_lock);
	pthread_mutex_unlock(&table_lock);
	return *(int *)arg;
}

static void c11_run(thrd_start_t fn, void *arg)
{
	thrd_t t;
	int res = -1;
	if (thrd_create(&t, fn, arg) != thrd_success || thrd_join(t, &res) != thrd_success)
		printf("thrd_create/thrd_join failed\n");
	printf("thread result %d\n", res);
}

SCENARIO bug_c11_return_locked(void) { c11_run(c11_returns_holding_mutex, NULL); printf("done\n"); }
SCENARIO bug_c11_exit_locked(void) { c11_run(c11_exits_holding_mutex, NULL); printf("done\n"); }
SCENARIO ok_c11(void)
{
	int arg = 42;
	c11_run(c11_clean, &arg);
	printf("done\n");
}

/* A daemon's shutdown: take the lock that makes cleanup run once, clean up,
 * exit() holding it (glusterfs cleanup_and_exit, redis SHUTDOWN). Not a
 * thread ending with locks held: the process ends, with its own status. */
SCENARIO ok_exit_locked(void)
{
	pthread_mutex_lock(&table_lock);
	printf("done\n");
	exit(15);
}

/* The same, but an atexit handler on this thread takes the lock again:
 * that hangs for real, and is the recursive-locking report. */
static void cleanup_taking_table_lock(void)
{
	pthread_mutex_lock(&table_lock);
}

SCENARIO bug_exit_locked_relocked_at_exit(void)
{
	atexit(cleanup_taking_table_lock);
	pthread_mutex_lock(&table_lock);
	printf("done\n");
	exit(15);
}

SCENARIO ok(void)
{
	pthread_key_create(&registration_key, unregister_at_thread_exit);
	in_thread(clean_reader);
	in_thread(unregisters_in_key_destructor);
	pthread_t t;
	pthread_create(&t, NULL, waits_until_cancelled, NULL);
	usleep(20000);
	pthread_cancel(t);
	pthread_join(t, NULL);
	pthread_mutex_lock(&table_lock);   /* the cancelled thread did release it */
	pthread_mutex_unlock(&table_lock);
	printf("done\n");
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "bug-return-locked", bug_return_locked },
		{ "bug-return-in-reader", bug_return_in_reader },
		{ "bug-pthread-exit-locked", bug_pthread_exit_locked },
		{ "bug-still-registered", bug_still_registered },
		{ "ok-exit-locked", ok_exit_locked },
		{ "bug-exit-locked-relocked-at-exit", bug_exit_locked_relocked_at_exit },
		{ "ok", ok },
		{ "bug-c11-return-locked", bug_c11_return_locked },
		{ "bug-c11-exit-locked", bug_c11_exit_locked },
		{ "ok-c11", ok_c11 },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
