/* mutex_class_tag.h - a pthread mutex's class, kept in the mutex itself:
 * kernel lockdep's lockdep_map.class_cache, in the 16 bytes of glibc's
 * pthread_mutex_t that only robust mutexes use (__data.__list, the links of
 * the owner's robust list). With 200,000 live locks the instance map is
 * megabytes, and each lookup a cache miss; the mutex's own line is loaded
 * by the acquisition anyway.
 *
 * The tag is a cache of the instance map, never the truth: the map's value
 * for the address (class | generation << 32) and a check word combining
 * that value, the mutex's address and a per-run key. A tag whose check
 * does not match (never written, copied with its object to another
 * address, written by another run, or written before the key changed) is
 * ignored, and the map answers and writes a new one. Why a valid tag stays
 * true:
 *  - pthread_mutex_init() clears all 40 bytes, and PTHREAD_MUTEX_INITIALIZER
 *    is all zero there, so a new lock at an old address starts without one
 *    (the init wrapper then writes the one the init recorded);
 *  - pthread_mutex_destroy() sets the kind to -1, which is not taggable;
 *  - the map forgets instances whose memory is freed or unmapped (a lock
 *    used there afterwards is a use after free);
 *  - any other change of a live lock's class (an annotation, an unloaded
 *    library's classes) changes the key, which voids every tag at once.
 * Only mutexes of kinds that glibc never links into a list (not robust,
 * priority-inheriting, priority-protected or process-shared) are tagged,
 * and none in memory a file or another process sees (shared_mappings.h).
 * glibc itself never reads those bytes for them; a program reading them
 * (comparing a used mutex with PTHREAD_MUTEX_INITIALIZER, say) may turn
 * this off with class_cache=0. */
#ifndef LOCKDEP_RCU_MUTEX_CLASS_TAG_H
#define LOCKDEP_RCU_MUTEX_CLASS_TAG_H

#include <pthread.h>
#include <stdint.h>
#include "classes/lock_classes.h"
#include "classes/mutex_tag_key.h"

/* glibc's private kind bits (nptl/pthreadP.h): robust 16, priority
 * inheritance 32, priority protection 64, process-shared 128. */
#define MUTEX_KIND_LISTED_BITS 0xf0

static inline int mutex_taggable(const pthread_mutex_t *m)
{
	return (m->__data.__kind & MUTEX_KIND_LISTED_BITS) == 0;
}

static inline uint64_t *mutex_tag_words(const pthread_mutex_t *m)
{
	return (uint64_t *)(uintptr_t)&m->__data.__list;
}

/* A bijection of each of address, value and key, the others fixed: a tag
 * moved to another address, torn between two writes, or written under
 * another key never matches; zero bytes never do either (the key is odd,
 * addresses are not). */
static inline uint64_t mutex_tag_check(const pthread_mutex_t *m, uint64_t value, uint64_t key)
{
	return (uint64_t)(uintptr_t)m ^ key ^ value;
}

/* The map's way, then a tag for next time. Out of line. */
uint32_t mutex_class_lookup(const pthread_mutex_t *m, uintptr_t ip, uint32_t *generation, uint64_t key);

/* The key, read before a lookup that a new tag is to vouch for (acquire:
 * paired with mutex_class_tags_void()). */
static inline uint64_t mutex_tag_key_now(void)
{
	return __atomic_load_n(&mutex_tag_key, __ATOMIC_ACQUIRE);
}

/* The class and generation m's tag holds: 1, or 0 when it has none that
 * counts (key 0: tags are off). The kind is not looked at: only taggable
 * mutexes are written, and the robust list links in another's bytes match
 * their address's check as random words would (2^-64). */
static inline int mutex_tag_read(const pthread_mutex_t *m, uint64_t key, uint32_t *class_id, uint32_t *generation)
{
	if (!key)
		return 0;
	const uint64_t *tag = mutex_tag_words(m);
	uint64_t value = __atomic_load_n(&tag[0], __ATOMIC_RELAXED);
	uint64_t check = __atomic_load_n(&tag[1], __ATOMIC_RELAXED);
	*class_id = (uint32_t)value;
	*generation = (uint32_t)(value >> 32);
	return check == mutex_tag_check(m, value, key);
}

/* The class and instance generation of mutex m (lock_class_and_generation()
 * for a pthread mutex: 0 for a lock not followed): two loads and a hash
 * when it carries its tag. */
static inline uint32_t mutex_class_and_generation(const pthread_mutex_t *m, uintptr_t ip, uint32_t *generation)
{
	uint64_t key = mutex_tag_key_now();
	uint32_t class_id;
	if (__builtin_expect(mutex_tag_read(m, key, &class_id, generation), 1))
		return class_id == LOCK_CLASS_UNTRACKED ? 0 : class_id;
	return mutex_class_lookup(m, ip, generation, key);
}

/* A mutex just initialized (ret: the real call's result) gets its tag now,
 * while the instance map's line is still in this core's cache from the
 * init: its first acquisition would otherwise look the map up (with
 * 200,000 locks a cache miss, at the first of every lock's acquisitions).
 * Out of line. */
void mutex_class_tag_initialized(const pthread_mutex_t *m, int ret);


/* At start-up: the key from the kernel's random bytes, or tags off. */
void mutex_class_tags_init(int enabled);

#endif
