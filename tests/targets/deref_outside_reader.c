/* rcu_dereference() through liburcu's exported rcu_dereference_sym(): legal
 * in a read-side section, under a lock (the article's rule 2), and in an
 * online QSBR thread; a bug anywhere else. */
#include "target.h"

struct config {
	int value;
};

static struct config *current_config;
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;

/* The bug: no read-side section, no lock. */
SCENARIO read_config_unprotected(void)
{
	rcu_register_thread();
#ifdef TARGET_QSBR
	rcu_thread_offline();   /* an offline QSBR thread is not a reader */
#endif
	struct config *c = rcu_dereference(current_config);
	printf("value %d\n", c->value);
#ifdef TARGET_QSBR
	rcu_thread_online();
#endif
	rcu_unregister_thread();
}

/* Correct twin: inside rcu_read_lock(). */
SCENARIO read_config_in_reader(void)
{
	rcu_register_thread();
	rcu_read_lock();
	struct config *c = rcu_dereference(current_config);
	printf("value %d\n", c->value);
	rcu_read_unlock();
	rcu_unregister_thread();
}

/* Correct twin: the update side, under the update-side lock. */
SCENARIO read_config_under_lock(void)
{
	pthread_mutex_lock(&config_lock);
	struct config *c = rcu_dereference(current_config);
	printf("value %d\n", c->value);
	pthread_mutex_unlock(&config_lock);
}

/* The same buggy site run from many threads at once: one report. */
static void *racing_reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		struct config *c = rcu_dereference(current_config);
		if (c->value != 42)
			abort();
	}
	return NULL;
}

SCENARIO many_threads_one_site(void)
{
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, racing_reader, NULL);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	printf("value %d\n", current_config->value);
}

int main(int argc, char **argv)
{
	static struct config initial = { 42 };
	current_config = &initial;
	static const struct scenario scenarios[] = {
		{ "bug", read_config_unprotected },
		{ "ok", read_config_in_reader },
		{ "ok-locked", read_config_under_lock },
		{ "bug-many-threads", many_threads_one_site },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
