/* A host that loads its plugin with RTLD_DEEPBIND, and the plugin's lock
 * calls: what the tracer sees of them must be what it sees of the host's.
 *   deepbind_host PLUGIN ok     a lock taken here, released in the plugin,
 *                               on a thread that then ends (correct: silent)
 *   deepbind_host PLUGIN abba   A then B here, B then A in the plugin
 *                               (reported)
 *   deepbind_host NAME runpath  NAME (no '/') loaded without RTLD_DEEPBIND:
 *                               found through this program's RUNPATH
 *                               ($ORIGIN), as glibc looks for its caller's
 * Prints "done" at the end. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_rwlock_t object_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;

static void (*unlock_rwlock)(pthread_rwlock_t *);
static void (*unlock_mutex)(pthread_mutex_t *);
static void (*lock_in_reverse)(pthread_mutex_t *, pthread_mutex_t *);

static void *worker(void *unused)
{
	(void)unused;
	pthread_rwlock_rdlock(&object_lock);
	unlock_rwlock(&object_lock);     /* released in the plugin */
	pthread_mutex_lock(&table_lock); /* nothing held here in fact */
	unlock_mutex(&table_lock);
	return NULL;                     /* and nothing held at the end */
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s PLUGIN ok|abba\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[2], "runpath")) {
		void *h = dlopen(argv[1], RTLD_NOW);
		printf("%s\n", h ? "found" : dlerror());
		puts("done");
		return 0;
	}
	void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	if (!plugin) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	unlock_rwlock = (void (*)(pthread_rwlock_t *))dlsym(plugin, "plugin_unlock_rwlock");
	unlock_mutex = (void (*)(pthread_mutex_t *))dlsym(plugin, "plugin_unlock_mutex");
	lock_in_reverse = (void (*)(pthread_mutex_t *, pthread_mutex_t *))dlsym(plugin, "plugin_lock_in_reverse");
	if (!strcmp(argv[2], "ok")) {
		pthread_t t;
		pthread_create(&t, NULL, worker, NULL);
		pthread_join(t, NULL);
		pthread_mutex_lock(&table_lock);   /* the table, then an object: the only order */
		pthread_rwlock_rdlock(&object_lock);
		pthread_rwlock_unlock(&object_lock);
		pthread_mutex_unlock(&table_lock);
	} else {
		pthread_mutex_lock(&lock_a);
		pthread_mutex_lock(&lock_b);
		pthread_mutex_unlock(&lock_b);
		pthread_mutex_unlock(&lock_a);
		lock_in_reverse(&lock_a, &lock_b);
	}
	puts("done");
	return 0;
}
