/* Class tags in pthread mutexes (mutex_class_tag.h). */
#include <time.h>
#include <unistd.h>
#include "classes/mutex_class_tag.h"
#include "classes/lock_instances.h"
#include "classes/shared_mappings.h"

/* Until the constructor runs: a fixed key (tags written then are voided
 * by the random one). */

/* Writes m's tag for the map's value (class id, generation); `got` is
 * what lock_instance_get() answered (2: the instance is marked tagged). */
static void mutex_tag_write(const pthread_mutex_t *m, uint32_t id, uint32_t generation, uint64_t key, int got)
{
	/* Never into memory a file or another process sees. */
	if (key && mutex_taggable(m) &&
	    !shared_mappings_overlap((uintptr_t)m, (uintptr_t)m + sizeof(*m))) {
		uint64_t value = (uint64_t)generation << 32 | id;
		uint64_t *tag = mutex_tag_words(m);
		/* A reader between the two stores sees a check that does not
		 * match: torn tags are ignored. */
		__atomic_store_n(&tag[0], value, __ATOMIC_RELAXED);
		__atomic_store_n(&tag[1], mutex_tag_check(m, value, key), __ATOMIC_RELAXED);
		if (got != 2)
			lock_instance_mark_tagged(m, generation);
	}
}

/* Whether m's tag bytes are all zero: what pthread_mutex_init(), a memset()
 * and PTHREAD_MUTEX_INITIALIZER leave there. */
static int mutex_tag_wiped(const pthread_mutex_t *m)
{
	const uint64_t *tag = mutex_tag_words(m);
	return (__atomic_load_n(&tag[0], __ATOMIC_RELAXED) | __atomic_load_n(&tag[1], __ATOMIC_RELAXED)) == 0;
}

uint32_t mutex_class_lookup(const pthread_mutex_t *m, uintptr_t ip, uint32_t *generation, uint64_t key)
{
	/* The map's own value: a lock not followed (LOCK_CLASS_UNTRACKED)
	 * is tagged so too. A lock seen for the first time gets its class
	 * (and instance) first. */
	uint32_t id;
	int got = lock_instance_get(m, &id, generation);
	/* Tagged once, its tag now zero: the mutex's bytes were written over
	 * since (a memset(), PTHREAD_MUTEX_INITIALIZER assigned, memory an
	 * allocator of the program's own handed out again and zeroed): a new
	 * lock, classed where it is first taken like any such mutex, not by
	 * the role the old one had there (a pool whose objects change roles
	 * gave a false cycle). A voided key leaves tags, not zeros. */
	if (got == 2 && key && mutex_tag_wiped(m)) {
		lock_instance_forget(m);
		got = 0;
	}
	if (!got) {
		uint32_t first = lock_class_first_seen(m, ip);
		if (!(got = lock_instance_get(m, &id, generation))) {
			*generation = 0;
			return first;   /* not recorded (no memory): not tagged */
		}
	}
	mutex_tag_write(m, id, *generation, key, got);
	return id == LOCK_CLASS_UNTRACKED ? 0 : id;
}

void mutex_class_tag_initialized(const pthread_mutex_t *m, int ret)
{
	const struct thread_state *ts = thread_state();
	uint64_t key = mutex_tag_key_now();
	uint32_t id, generation;
	int got;
	/* Only what the init recorded (lock_initialized()): a lock it could
	 * not record gets its class where it is first taken, as before. */
	if (ret == 0 && key && !(ts->in_tracer | ts->in_urcu) && (got = lock_instance_get(m, &id, &generation)))
		mutex_tag_write(m, id, generation, key, got);
}

void mutex_class_tags_init(int enabled)
{
	uint64_t key = 0;
	if (enabled) {
		/* Not a secret, only this run's own: a tag left in a file-backed
		 * mapping by another run does not count. */
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		key = ((uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec << 30 ^ (uint64_t)getpid() << 40) *
			      0x9E3779B97F4A7C15ull ^
		      (uint64_t)(uintptr_t)&mutex_tag_key;
		key |= 1;
	}
	__atomic_store_n(&mutex_tag_key, key, __ATOMIC_RELEASE);
}
