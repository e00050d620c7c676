/* Condition variables release the mutex while waiting and take it again
 * before returning, inside the C library. Used correctly, every wait
 * (pthread_cond_wait, _timedwait, _clockwait, C11 cnd_wait, cnd_timedwait,
 * with and without timeouts, and cancellation inside a wait) is silent, and
 * the mutex counts as held again after the wait: lockdep_assert_held()
 * passes and the unlock that follows is balanced. */
#include "target.h"
#include <errno.h>
#include <threads.h>
#include <time.h>
#include <lockdep-rcu.h>

#define SITE(stmt) do { printf("site %d\n", __LINE__); stmt; } while (0)

#define ITEMS 2000
#define RING 8

static struct timespec in_ms(clockid_t clock, long ms)
{
	struct timespec t;
	clock_gettime(clock, &t);
	t.tv_nsec += ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

/* ---- pthread producer/consumer -------------------------------------------- */

enum wait_kind { WAIT, TIMEDWAIT, CLOCKWAIT };
static enum wait_kind wait_kind;

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t queue_nonfull = PTHREAD_COND_INITIALIZER;
static int ring[RING], head, tail;   /* tail - head items queued */

/* One wait on c for queue_lock, of the scenario's kind. Short deadlines:
 * the timed kinds time out now and then, and the caller loops. */
static void queue_wait(pthread_cond_t *c)
{
	struct timespec t;
	int ret;
	switch (wait_kind) {
	case WAIT:
		ret = pthread_cond_wait(c, &queue_lock);
		break;
	case TIMEDWAIT:
		t = in_ms(CLOCK_REALTIME, 2);
		ret = pthread_cond_timedwait(c, &queue_lock, &t);
		break;
	default:
		t = in_ms(CLOCK_MONOTONIC, 2);
		ret = pthread_cond_clockwait(c, &queue_lock, CLOCK_MONOTONIC, &t);
		break;
	}
	if (ret && ret != ETIMEDOUT)
		printf("wait returned %d\n", ret);
	lockdep_assert_held(&queue_lock);
}

static void *consumer(void *arg)
{
	long *sum = arg;
	for (int i = 0; i < ITEMS; i++) {
		pthread_mutex_lock(&queue_lock);
		while (tail == head)
			queue_wait(&queue_nonempty);
		*sum += ring[head++ % RING];
		pthread_cond_signal(&queue_nonfull);
		pthread_mutex_unlock(&queue_lock);
	}
	return NULL;
}

static void produce_and_consume(enum wait_kind kind)
{
	wait_kind = kind;
	long sum = 0;
	pthread_t t;
	pthread_create(&t, NULL, consumer, &sum);
	for (int i = 1; i <= ITEMS; i++) {
		pthread_mutex_lock(&queue_lock);
		while (tail - head == RING)
			queue_wait(&queue_nonfull);
		ring[tail++ % RING] = i;
		pthread_cond_signal(&queue_nonempty);
		pthread_mutex_unlock(&queue_lock);
	}
	pthread_join(t, NULL);
	printf("sum %ld\n", sum);
}

SCENARIO cond_wait_pair(void) { produce_and_consume(WAIT); }
SCENARIO cond_timedwait_pair(void) { produce_and_consume(TIMEDWAIT); }
SCENARIO cond_clockwait_pair(void) { produce_and_consume(CLOCKWAIT); }

/* Nobody signals: the timed waits time out, with the mutex held again. */
SCENARIO cond_waits_time_out(void)
{
	pthread_mutex_lock(&queue_lock);
	struct timespec t = in_ms(CLOCK_REALTIME, 20);
	int a = pthread_cond_timedwait(&queue_nonempty, &queue_lock, &t);
	lockdep_assert_held(&queue_lock);
	t = in_ms(CLOCK_MONOTONIC, 20);
	int b = pthread_cond_clockwait(&queue_nonempty, &queue_lock, CLOCK_MONOTONIC, &t);
	lockdep_assert_held(&queue_lock);
	int c = pthread_mutex_unlock(&queue_lock);
	printf("timedwait %d clockwait %d unlock %d ETIMEDOUT=%d\n", a, b, c,
	       a == ETIMEDOUT && b == ETIMEDOUT);
}

/* The bug next to it: one unlock too many after the wait. */
SCENARIO unlock_twice_after_wait(void)
{
	pthread_mutex_lock(&queue_lock);
	struct timespec t = in_ms(CLOCK_REALTIME, 20);
	int a = pthread_cond_timedwait(&queue_nonempty, &queue_lock, &t);
	pthread_mutex_unlock(&queue_lock);
	SITE(pthread_mutex_unlock(&queue_lock));
	printf("timedwait %d\n", a);
}

/* lockdep_assert_held() is not a no-op: after the unlock it fires. */
SCENARIO assert_held_after_unlock(void)
{
	pthread_mutex_lock(&queue_lock);
	struct timespec t = in_ms(CLOCK_REALTIME, 20);
	int a = pthread_cond_timedwait(&queue_nonempty, &queue_lock, &t);
	pthread_mutex_unlock(&queue_lock);
	SITE(lockdep_assert_held(&queue_lock));
	printf("timedwait %d\n", a);
}

/* ---- C11 producer/consumer ------------------------------------------------ */

static mtx_t c11_lock;
static cnd_t c11_nonempty, c11_nonfull;
static int c11_timed;

static void c11_wait(cnd_t *c)
{
	int ret;
	if (c11_timed) {
		struct timespec t = in_ms(CLOCK_REALTIME, 2);
		ret = cnd_timedwait(c, &c11_lock, &t);
	} else {
		ret = cnd_wait(c, &c11_lock);
	}
	if (ret != thrd_success && ret != thrd_timedout)
		printf("wait returned %d\n", ret);
	lockdep_assert_held(&c11_lock);
}

static int c11_consumer(void *arg)
{
	long *sum = arg;
	for (int i = 0; i < ITEMS; i++) {
		mtx_lock(&c11_lock);
		while (tail == head)
			c11_wait(&c11_nonempty);
		*sum += ring[head++ % RING];
		cnd_signal(&c11_nonfull);
		mtx_unlock(&c11_lock);
	}
	return 0;
}

static void c11_produce_and_consume(int timed)
{
	c11_timed = timed;
	long sum = 0;
	thrd_t t;
	thrd_create(&t, c11_consumer, &sum);
	for (int i = 1; i <= ITEMS; i++) {
		mtx_lock(&c11_lock);
		while (tail - head == RING)
			c11_wait(&c11_nonfull);
		ring[tail++ % RING] = i;
		cnd_signal(&c11_nonempty);
		mtx_unlock(&c11_lock);
	}
	thrd_join(t, NULL);
	printf("sum %ld\n", sum);
}

SCENARIO cnd_wait_pair(void) { c11_produce_and_consume(0); }
SCENARIO cnd_timedwait_pair(void) { c11_produce_and_consume(1); }

SCENARIO cnd_timedwait_times_out(void)
{
	mtx_lock(&c11_lock);
	struct timespec t = in_ms(CLOCK_REALTIME, 20);
	int a = cnd_timedwait(&c11_nonempty, &c11_lock, &t);
	lockdep_assert_held(&c11_lock);
	int b = mtx_unlock(&c11_lock);
	printf("cnd_timedwait %d unlock %d timedout=%d\n", a, b, a == thrd_timedout);
}

/* ---- cancellation inside a wait ------------------------------------------- */

static pthread_mutex_t cancel_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cancel_cond = PTHREAD_COND_INITIALIZER;
static int waiting, never;
static int cancel_timed;

static void unlock_cancel_lock(void *arg)
{
	pthread_mutex_unlock(arg);
}

static void *cancelled_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cancel_lock);
	pthread_cleanup_push(unlock_cancel_lock, &cancel_lock);
	waiting = 1;
	while (!never) {
		if (cancel_timed) {
			struct timespec t = in_ms(CLOCK_REALTIME, 60000);
			pthread_cond_timedwait(&cancel_cond, &cancel_lock, &t);
		} else {
			pthread_cond_wait(&cancel_cond, &cancel_lock);
		}
	}
	pthread_cleanup_pop(1);
	return NULL;
}

static void cancel_in_wait(int timed)
{
	cancel_timed = timed;
	pthread_t t;
	pthread_create(&t, NULL, cancelled_waiter, NULL);
	/* Once we get the mutex with waiting set, the waiter is in the wait. */
	for (;;) {
		pthread_mutex_lock(&cancel_lock);
		int w = waiting;
		pthread_mutex_unlock(&cancel_lock);
		if (w)
			break;
		sched_yield();
	}
	pthread_cancel(t);
	void *res;
	pthread_join(t, &res);
	/* The cleanup handler released the mutex: it is free again. */
	int a = pthread_mutex_trylock(&cancel_lock);
	int b = pthread_mutex_unlock(&cancel_lock);
	printf("cancelled %d trylock %d unlock %d\n", res == PTHREAD_CANCELED, a, b);
}

SCENARIO cancel_in_cond_wait(void) { cancel_in_wait(0); }
SCENARIO cancel_in_cond_timedwait(void) { cancel_in_wait(1); }

int main(int argc, char **argv)
{
	mtx_init(&c11_lock, mtx_timed);
	cnd_init(&c11_nonempty);
	cnd_init(&c11_nonfull);
	static const struct scenario scenarios[] = {
		{ "ok-cond-wait", cond_wait_pair },
		{ "ok-cond-timedwait", cond_timedwait_pair },
		{ "ok-cond-clockwait", cond_clockwait_pair },
		{ "ok-cond-timeouts", cond_waits_time_out },
		{ "ok-cnd-wait", cnd_wait_pair },
		{ "ok-cnd-timedwait", cnd_timedwait_pair },
		{ "ok-cnd-timeout", cnd_timedwait_times_out },
		{ "ok-cancel-in-wait", cancel_in_cond_wait },
		{ "ok-cancel-in-timedwait", cancel_in_cond_timedwait },
		{ "bug-unlock-twice-after-wait", unlock_twice_after_wait },
		{ "bug-assert-held-after-unlock", assert_held_after_unlock },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
