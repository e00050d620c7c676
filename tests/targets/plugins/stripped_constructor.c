/* A stripped library with a generic lock constructor called by two static
 * functions (OpenSSL's CRYPTO_THREAD_lock_new() in libcrypto.so.3): the
 * classes its callers make are two, and must print as two though the
 * callers have no symbol. stripped_abba() takes them in both orders. */
#include <pthread.h>
#include <stdlib.h>

pthread_mutex_t *lock_new(void)
{
	pthread_mutex_t *m = malloc(sizeof(*m));
	pthread_mutex_init(m, NULL);
	return m;
}

static __attribute__((noinline)) pthread_mutex_t *table_lock_new(void)
{
	pthread_mutex_t *m = lock_new();
	__asm__ volatile("" ::: "memory");   /* not a tail call: a frame of its own */
	return m;
}

static __attribute__((noinline)) pthread_mutex_t *entry_lock_new(void)
{
	pthread_mutex_t *m = lock_new();
	__asm__ volatile("" ::: "memory");
	return m;
}

void stripped_abba(void)
{
	pthread_mutex_t *table = table_lock_new(), *entry = entry_lock_new();
	pthread_mutex_lock(table);
	pthread_mutex_lock(entry);
	pthread_mutex_unlock(entry);
	pthread_mutex_unlock(table);
	pthread_mutex_lock(entry);
	pthread_mutex_lock(table);
	pthread_mutex_unlock(table);
	pthread_mutex_unlock(entry);
}
