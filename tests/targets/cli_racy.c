/* A bug that shows up only in some interleavings, for `lockdep-rcu stress`.
 *
 * A refresher thread publishes the first cache at its first tick: it ticks
 * every millisecond, aligned to the clock, like a periodic timer. A request
 * handler started at the same time looks 0.5 ms later; when the cache is not
 * published yet it takes a shortcut, "nothing to protect yet", and reads the
 * pointer without rcu_read_lock(). That is the bug (the refresher can publish,
 * and a later update free, under it), and lockdep-rcu reports it whenever the
 * shortcut is taken, even when nothing went wrong this time.
 *
 * Whether the handler looks before the first tick depends on the phase of the
 * process start against the clock's millisecond boundary, which is different
 * in every run: the shortcut is taken in roughly four runs out of ten, so out
 * of 20 runs some report it and some do not. (With memb, mb, signal; a QSBR
 * thread that is online is a reader, so the QSBR build is always silent.) */
#include "target.h"
#include <time.h>
#include <unistd.h>

#define TICK_NS 1000000L          /* the refresher's period */
#define HANDLER_DELAY_US 500      /* when the handler looks */

struct cache {
	int entries;
};

static struct cache *cache;
static int published;

static void *refresher(void *arg)
{
	(void)arg;
	rcu_register_thread();
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long t = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
	long long tick = (t / TICK_NS + 1) * TICK_NS;
	struct timespec at = { (time_t)(tick / 1000000000LL), (long)(tick % 1000000000LL) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
		;
	struct cache *fresh = calloc(1, sizeof(*fresh));
	fresh->entries = 3;
	rcu_assign_pointer(cache, fresh);
	__atomic_store_n(&published, 1, __ATOMIC_RELEASE);
	rcu_unregister_thread();
	return NULL;
}

/* The buggy shortcut, a function of its own so the report names it. */
__attribute__((noinline)) static int peek_unpublished(void)
{
	struct cache *c = rcu_dereference(cache);   /* no read-side section: the bug */
	return c ? c->entries : 0;
}

static void *handler(void *arg)
{
	(void)arg;
	rcu_register_thread();
	usleep(HANDLER_DELAY_US);
	int entries;
	if (!__atomic_load_n(&published, __ATOMIC_ACQUIRE)) {
		entries = peek_unpublished();
	} else {
		rcu_read_lock();
		struct cache *c = rcu_dereference(cache);
		entries = c ? c->entries : 0;
		rcu_read_unlock();
	}
	rcu_unregister_thread();
	return (void *)(long)entries;
}

int main(void)
{
	pthread_t r, h;
	void *entries;
	if (pthread_create(&r, NULL, refresher, NULL) || pthread_create(&h, NULL, handler, NULL))
		return 3;
	pthread_join(r, NULL);
	pthread_join(h, &entries);
	printf("entries %ld\n", (long)entries);
	synchronize_rcu();
	free(cache);
	return 0;
}
