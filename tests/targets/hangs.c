/* Hangs the watchdog must explain (stall_timeout, hung_task_timeout), and
 * long waits it must leave alone. Each thread names itself, so reports can
 * be checked for the right names. */
#include "target.h"
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int hold_seconds = 4;   /* argv[2] */
static int reader_in[2];        /* the reader writes a byte once inside */

/* sleep() that liburcu-signal's SIGUSR1 does not cut short */
static void sleep_fully(double seconds)
{
	struct timespec left = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
	while (nanosleep(&left, &left))
		;
}

static void *stuck_reader(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "stuck_reader", 0, 0, 0);
	rcu_register_thread();
#ifndef TARGET_QSBR
	rcu_read_lock();
#else
	rcu_quiescent_state();   /* its last: the stall names it */
#endif
	printf("site %d\n", __LINE__ - 4);
	printf("site %d\n", __LINE__ - 3);
	if (write(reader_in[1], "x", 1) != 1)
		abort();
	sleep_fully(hold_seconds);   /* never a quiescent state */
#ifndef TARGET_QSBR
	rcu_read_unlock();
#endif
	rcu_unregister_thread();
	return NULL;
}

/* synchronize_rcu() waits for a reader that stays in its read side (QSBR:
 * online without a quiescent state) for hold_seconds. */
SCENARIO reader_stalls_grace_period(void)
{
	prctl(PR_SET_NAME, "updater", 0, 0, 0);
	if (pipe(reader_in))
		abort();
	pthread_t t;
	pthread_create(&t, NULL, stuck_reader, NULL);
	char c;
	if (read(reader_in[0], &c, 1) != 1)
		abort();
	rcu_register_thread();
#ifdef TARGET_QSBR
	rcu_thread_offline();
#endif
	synchronize_rcu();
#ifdef TARGET_QSBR
	rcu_thread_online();
#endif
	rcu_unregister_thread();
	pthread_join(t, NULL);
	printf("done\n");
}

/* Two threads, each with a mutex on its own stack (locks the validator
 * does not class), take them in opposite orders: a real deadlock. */
static pthread_mutex_t *stack_locks[2];
static pthread_barrier_t both_hold;

static void *abba_thread(void *arg)
{
	int me = (int)(long)arg;
	prctl(PR_SET_NAME, me ? "abba_b" : "abba_a", 0, 0, 0);
	pthread_mutex_t mine;
	pthread_mutex_init(&mine, NULL);
	stack_locks[me] = &mine;
	pthread_mutex_lock(&mine);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(stack_locks[!me]);   /* never returns */
	pthread_mutex_unlock(stack_locks[!me]);
	pthread_mutex_unlock(&mine);
	return NULL;
}

SCENARIO stack_locks_deadlock(void)
{
	pthread_barrier_init(&both_hold, NULL, 2);
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, abba_thread, (void *)i);
	printf("deadlocking\n");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

/* A writer takes the table's rwlock and keeps it for hold_seconds; a
 * reader blocks in pthread_rwlock_rdlock() meanwhile (the tracer takes a
 * read lock of a rwlock in its read phase with the real rdlock, and must
 * still see this one wait). */
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static int writer_in[2];

static void *keeping_writer(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "keeping_writer", 0, 0, 0);
	pthread_rwlock_wrlock(&table_lock);
	if (write(writer_in[1], "x", 1) != 1)
		abort();
	sleep_fully(hold_seconds);
	pthread_rwlock_unlock(&table_lock);
	return NULL;
}

static void *blocked_reader(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "blocked_reader", 0, 0, 0);
	pthread_rwlock_rdlock(&table_lock);
	pthread_rwlock_unlock(&table_lock);
	return NULL;
}

SCENARIO rwlock_writer_keeps_it(void)
{
	char c;
	pthread_t w, r;
	if (pipe(writer_in) != 0)
		abort();
	pthread_create(&w, NULL, keeping_writer, NULL);
	if (read(writer_in[0], &c, 1) != 1)
		abort();
	pthread_create(&r, NULL, blocked_reader, NULL);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	printf("done\n");
}

/* A condition variable waited on for hold_seconds, and a mutex another
 * thread holds for less than the timeout: correct, and quiet. */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

static void *signaller(void *arg)
{
	(void)arg;
	sleep((unsigned)hold_seconds);
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
	return NULL;
}

SCENARIO long_condition_wait(void)
{
	pthread_t t;
	pthread_create(&t, NULL, signaller, NULL);
	pthread_mutex_lock(&m);
	while (!ready)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	printf("done\n");
}

static void *short_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	if (write(reader_in[1], "x", 1) != 1)
		abort();
	usleep(1500 * 1000);
	pthread_mutex_unlock(&m);
	return NULL;
}

/* Blocked for a second and a half (announced to the watchdog after one),
 * under the timeout: nothing to say. */
SCENARIO short_lock_wait(void)
{
	if (pipe(reader_in))
		abort();
	pthread_t t;
	pthread_create(&t, NULL, short_holder, NULL);
	char c;
	if (read(reader_in[0], &c, 1) != 1)
		abort();
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	printf("done\n");
}

/* The names of this process's threads, sorted, one line. */
static void list_threads(const char *when)
{
	char command[128];
	snprintf(command, sizeof(command), "cat /proc/%d/task/*/comm | sort | tr '\\n' ' '", (int)getpid());
	printf("%s: ", when);
	fflush(stdout);
	if (system(command) < 0)
		abort();
	printf("\n");
}

/* Which threads there are around waits: no thread of the tracer's until
 * a wait lasted. */
SCENARIO threads_around_waits(void)
{
	hold_seconds = 1;
	long_condition_wait();
	list_threads("after a condition wait");
	short_lock_wait();
	list_threads("after a lock wait");
}

int main(int argc, char **argv)
{
	if (argc > 2)
		hold_seconds = atoi(argv[2]);
	static const struct scenario scenarios[] = {
		{ "rwlock-writer-keeps-it", rwlock_writer_keeps_it },
		{ "reader-stalls-grace-period", reader_stalls_grace_period },
		{ "stack-locks-deadlock", stack_locks_deadlock },
		{ "long-condition-wait", long_condition_wait },
		{ "short-lock-wait", short_lock_wait },
		{ "threads-around-waits", threads_around_waits },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
