/* Two libraries from one source, the same layout: A takes its static lock
 * before the host's stats lock, B after it. Loaded one after the other at
 * the same address, B's lock must not be A's. */
#include <pthread.h>

pthread_mutex_t plugin_lock = PTHREAD_MUTEX_INITIALIZER;

void plugin_run(pthread_mutex_t *stats)
{
#ifdef ORDER_A
	pthread_mutex_lock(&plugin_lock);
	pthread_mutex_lock(stats);
	pthread_mutex_unlock(stats);
	pthread_mutex_unlock(&plugin_lock);
#else
	pthread_mutex_lock(stats);
	pthread_mutex_lock(&plugin_lock);
	pthread_mutex_unlock(&plugin_lock);
	pthread_mutex_unlock(stats);
#endif
}
