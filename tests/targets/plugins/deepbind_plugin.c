/* A plugin that its host loads with RTLD_DEEPBIND (nfs-ganesha loads every
 * FSAL so): its own references bind in its own scope first, libc's pthread
 * functions before the preload's, unless the tracer sees to it. */
#include <pthread.h>

/* Releases a lock its caller took (FSAL_VFS's read path releases the
 * object lock the caller's find_fd() took). */
void plugin_unlock_rwlock(pthread_rwlock_t *l)
{
	pthread_rwlock_unlock(l);
}

void plugin_unlock_mutex(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
}

/* Takes `second` then `first`: the opposite of its host's order. */
void plugin_lock_in_reverse(pthread_mutex_t *first, pthread_mutex_t *second)
{
	pthread_mutex_lock(second);
	pthread_mutex_lock(first);
	pthread_mutex_unlock(first);
	pthread_mutex_unlock(second);
}
