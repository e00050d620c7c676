/* A correct multi-threaded liburcu program: registered readers, updaters
 * publishing under a mutex and waiting with synchronize_rcu() or call_rcu(),
 * a condition-variable hand-off, and a fork. Under the preload it must run
 * exactly as without it and print nothing else. */
#include "target.h"
#include <sys/wait.h>
#include <unistd.h>

struct item {
	struct rcu_head rcu;
	long value;
	long check;   /* ~value: a torn or freed read shows */
};

static struct item *current;
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t stats_lock = PTHREAD_RWLOCK_INITIALIZER;
static long reads_done;

/* Work queue between a producer and a consumer. */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static int queued, queue_closed;

#define READS 20000
#define UPDATES 200

static void free_item(struct rcu_head *head)
{
	free(caa_container_of(head, struct item, rcu));
}

static void *reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	for (int i = 0; i < READS; i++) {
		rcu_read_lock();
		struct item *it = rcu_dereference(current);
		if (it->check != ~it->value)
			abort();
		rcu_read_unlock();
#ifdef TARGET_QSBR
		if (i % 64 == 0)
			rcu_quiescent_state();
#endif
	}
	pthread_rwlock_wrlock(&stats_lock);
	reads_done += READS;
	pthread_rwlock_unlock(&stats_lock);
	rcu_unregister_thread();
	return NULL;
}

static void publish(long value, int deferred)
{
	struct item *fresh = malloc(sizeof(*fresh));
	fresh->value = value;
	fresh->check = ~value;
	pthread_mutex_lock(&update_lock);
	struct item *old = rcu_dereference(current);   /* under the update lock */
	rcu_assign_pointer(current, fresh);
	pthread_mutex_unlock(&update_lock);
	if (deferred) {
		call_rcu(&old->rcu, free_item);
	} else {
		synchronize_rcu();
		free(old);
	}
}

static void *updater(void *arg)
{
	long deferred = (long)arg;
	rcu_register_thread();
	for (int i = 0; i < UPDATES; i++) {
		publish(i, (int)deferred);
#ifdef TARGET_QSBR
		rcu_quiescent_state();
#endif
	}
	rcu_unregister_thread();
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	int taken = 0;
	pthread_mutex_lock(&queue_lock);
	for (;;) {
		while (!queued && !queue_closed)
			pthread_cond_wait(&queue_cond, &queue_lock);
		if (!queued)
			break;
		queued--;
		taken++;
	}
	pthread_mutex_unlock(&queue_lock);
	return (void *)(long)taken;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	current = malloc(sizeof(*current));
	current->value = 0;
	current->check = ~0L;
	rcu_register_thread();

#ifdef TARGET_QSBR
	rcu_thread_offline();   /* an online QSBR thread that blocks stalls grace periods */
#endif
	pthread_t readers[3], updaters[2], cons;
	for (int i = 0; i < 3; i++)
		pthread_create(&readers[i], NULL, reader, NULL);
	pthread_create(&updaters[0], NULL, updater, (void *)0L);
	pthread_create(&updaters[1], NULL, updater, (void *)1L);
	pthread_create(&cons, NULL, consumer, NULL);
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&queue_lock);
		queued++;
		pthread_cond_signal(&queue_cond);
		pthread_mutex_unlock(&queue_lock);
	}
	pthread_mutex_lock(&queue_lock);
	queue_closed = 1;
	pthread_cond_broadcast(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
	void *taken;
	pthread_join(cons, &taken);
	for (int i = 0; i < 3; i++)
		pthread_join(readers[i], NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(updaters[i], NULL);
#ifdef TARGET_QSBR
	rcu_thread_online();
#endif
	rcu_barrier();

	/* fork with a lock held: the child inherits it held and releases it. */
	pthread_mutex_lock(&update_lock);
	pid_t child = fork();
	if (child == 0) {
		pthread_mutex_unlock(&update_lock);
		rcu_read_lock();
		long v = rcu_dereference(current)->value;
		rcu_read_unlock();
		exit(v == UPDATES - 1 || v >= 0 ? 0 : 1);
	}
	pthread_mutex_unlock(&update_lock);
	int status;
	waitpid(child, &status, 0);

	rcu_read_lock();
	long last = rcu_dereference(current)->value;
	rcu_read_unlock();
	rcu_unregister_thread();
	printf("reads %ld taken %ld last %ld child %d\n", reads_done, (long)taken, last,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
