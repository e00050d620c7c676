/* Checked publication: rcu_assign_pointer() by concurrent updaters that
 * share no lock, and its correct twins (one lock, one updater, start-up
 * publications, work handed over, the atomic exchanges). Every publication
 * prints "site <line>" first, so the test matches the report's file:line
 * (the buggy second updater) and the other updater's. Two updater threads
 * take turns through a barrier: each scenario is deterministic. */
#include "target.h"
#include <lockdep-rcu.h>

#define SITE(stmt) do { printf("site %d\n", __LINE__); fflush(stdout); stmt; } while (0)

struct config {
	int generation;
};

static struct config *current_config;
static struct config configs[8];
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t config_rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t turn;
/* Counted after each publication: at -O2 a publication that ends its
 * function would be a tail call, which leaves no frame of its own. */
static volatile int publications;

enum how { NO_LOCK, CONFIG_LOCK, OWN_LOCK, READ_LOCK, XCHG };

struct updater {
	enum how how;
	pthread_mutex_t *own;
	int first;                 /* publishes before the other (turn 1) or after (turn 2) */
};

/* One publication, under what the updater takes. Each kind of publication
 * has its own line, so the report's site and the other's can be told. */
static void publish(const struct updater *u, struct config *c)
{
	switch (u->how) {
	case NO_LOCK:
		SITE(rcu_assign_pointer(current_config, c));
		publications++;
		break;
	case CONFIG_LOCK:
		pthread_mutex_lock(&config_lock);
		SITE(rcu_assign_pointer(current_config, c));
		pthread_mutex_unlock(&config_lock);
		break;
	case OWN_LOCK:
		pthread_mutex_lock(u->own);
		SITE(rcu_assign_pointer(current_config, c));
		pthread_mutex_unlock(u->own);
		break;
	case READ_LOCK:
		pthread_rwlock_rdlock(&config_rwlock);
		SITE(rcu_assign_pointer(current_config, c));
		pthread_rwlock_unlock(&config_rwlock);
		break;
	case XCHG:
		SITE((void)rcu_xchg_pointer(&current_config, c));
		publications++;
		break;
	}
}

static void *updater(void *arg)
{
	const struct updater *u = arg;
	REGISTER();
	pthread_barrier_wait(&turn);   /* both exist */
	if (u->first)
		publish(u, &configs[1]);
	pthread_barrier_wait(&turn);
	if (!u->first)
		publish(u, &configs[2]);
	pthread_barrier_wait(&turn);   /* the first lives on until the second published */
	UNREGISTER();
	return NULL;
}

/* Two updaters, alive together, one after the other. */
static void two_updaters(struct updater a, struct updater b)
{
	pthread_t ta, tb;
	a.first = 1;
	b.first = 0;
	pthread_barrier_init(&turn, NULL, 2);
	if (pthread_create(&ta, NULL, updater, &a) || pthread_create(&tb, NULL, updater, &b))
		exit(3);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_barrier_destroy(&turn);
	printf("generation %d\n", current_config ? current_config->generation : -1);
}

/* The bug: each updater holds a lock of its own. */
SCENARIO own_locks(void)
{
	two_updaters((struct updater){ OWN_LOCK, &lock_a, 0 }, (struct updater){ OWN_LOCK, &lock_b, 0 });
}

/* The bug, plainer: no lock at all on either side. */
SCENARIO no_locks(void)
{
	two_updaters((struct updater){ NO_LOCK, NULL, 0 }, (struct updater){ NO_LOCK, NULL, 0 });
}

/* A read lock excludes no other reader: both hold it, nothing in common. */
SCENARIO read_locks(void)
{
	two_updaters((struct updater){ READ_LOCK, NULL, 0 }, (struct updater){ READ_LOCK, NULL, 0 });
}

/* The correct twin: one lock for every updater. */
SCENARIO one_lock(void)
{
	two_updaters((struct updater){ CONFIG_LOCK, NULL, 0 }, (struct updater){ CONFIG_LOCK, NULL, 0 });
}

/* Atomic by design: the exchange returns the old value to act on. */
SCENARIO exchanges(void)
{
	two_updaters((struct updater){ XCHG, NULL, 0 }, (struct updater){ XCHG, NULL, 0 });
}

static void *lone_updater(void *arg)
{
	(void)arg;
	static const struct updater u = { NO_LOCK, NULL, 0 };
	REGISTER();
	for (int i = 3; i < 8; i++)
		publish(&u, &configs[i]);
	UNREGISTER();
	return NULL;
}

/* One updater needs no lock, and the start-up publication of the main
 * thread, made before the updater existed, is not a second updater. */
SCENARIO single_updater(void)
{
	static const struct updater init = { NO_LOCK, NULL, 0 };
	publish(&init, &configs[0]);
	in_thread(lone_updater);
	printf("generation %d\n", current_config->generation);
}

/* Work handed over: the first updater ends before the second, which was
 * already running, publishes. */
static void *first_then_exit(void *arg)
{
	(void)arg;
	static const struct updater u = { NO_LOCK, NULL, 0 };
	publish(&u, &configs[1]);
	return NULL;
}

static void *second_after_join(void *arg)
{
	(void)arg;
	static const struct updater u = { NO_LOCK, NULL, 0 };
	pthread_barrier_wait(&turn);   /* the first one has been joined */
	publish(&u, &configs[2]);
	return NULL;
}

SCENARIO handed_over(void)
{
	pthread_t first, second;
	pthread_barrier_init(&turn, NULL, 2);
	if (pthread_create(&second, NULL, second_after_join, NULL) ||
	    pthread_create(&first, NULL, first_then_exit, NULL))
		exit(3);
	pthread_join(first, NULL);
	pthread_barrier_wait(&turn);
	pthread_join(second, NULL);
	pthread_barrier_destroy(&turn);
	printf("generation %d\n", current_config->generation);
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 8; i++)
		configs[i].generation = i;
	static const struct scenario scenarios[] = {
		{ "own-locks", own_locks },
		{ "no-locks", no_locks },
		{ "read-locks", read_locks },
		{ "one-lock", one_lock },
		{ "exchanges", exchanges },
		{ "single-updater", single_updater },
		{ "handed-over", handed_over },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
