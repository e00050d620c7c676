/* The demo: a small liburcu-based configuration cache with the kind of bugs
 * lockdep-rcu finds. Run it plain and it "works"; run it under the preload
 * (make demo) and each bug is reported once, where it is. */
#include "target.h"
#include <unistd.h>

struct route {
	int id;
	char name[32];
};

static struct route *current_route;
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;

/* Bug 1: a statistics helper reads the RCU-protected pointer with neither
 * rcu_read_lock() nor the update-side lock. */
__attribute__((noinline)) static int route_stats(void)
{
	struct route *r = rcu_dereference(current_route);
	return r->id;
}

/* Correct: readers register and read inside a read-side section. */
static void *reader(void *arg)
{
	long sum = 0;
	(void)arg;
	rcu_register_thread();
	for (int i = 0; i < 10000; i++) {
		rcu_read_lock();
		sum += rcu_dereference(current_route)->id;
		rcu_read_unlock();
	}
	rcu_unregister_thread();
	return (void *)sum;
}

/* Bug 2: a worker added later forgot rcu_register_thread(): its reads are
 * not waited for by synchronize_rcu(), so it can see freed memory. */
static void *late_worker(void *arg)
{
	(void)arg;
	rcu_read_lock();
	int id = rcu_dereference(current_route)->id;
	rcu_read_unlock();
	return (void *)(long)id;
}

/* Correct updater: publish under the update-side lock, wait, free. */
__attribute__((noinline)) static void update_route(int id)
{
	struct route *fresh = calloc(1, sizeof(*fresh));
	fresh->id = id;
	snprintf(fresh->name, sizeof(fresh->name), "route-%d", id);
	pthread_mutex_lock(&update_lock);
	struct route *old = rcu_dereference(current_route);   /* legal: lock held */
	rcu_assign_pointer(current_route, fresh);
	pthread_mutex_unlock(&update_lock);
	synchronize_rcu();
	free(old);
}

/* Bug 3: an error path returns with the update lock still held. */
static void *failing_updater(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&update_lock);
	if (current_route->id > 0)
		return NULL;   /* forgot pthread_mutex_unlock(&update_lock) */
	pthread_mutex_unlock(&update_lock);
	return NULL;
}

int main(void)
{
	current_route = calloc(1, sizeof(*current_route));
	pthread_t readers[2], worker, failing;
	for (int i = 0; i < 2; i++)
		pthread_create(&readers[i], NULL, reader, NULL);
	for (int id = 1; id <= 3; id++)
		update_route(id);
	for (int i = 0; i < 2; i++)
		pthread_join(readers[i], NULL);
	pthread_create(&worker, NULL, late_worker, NULL);
	pthread_join(worker, NULL);
	printf("route stats: %d\n", route_stats());
	pthread_create(&failing, NULL, failing_updater, NULL);
	pthread_join(failing, NULL);
	printf("done\n");
	return 0;
}
