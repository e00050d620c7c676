/* Lock classes, as kernel lockdep has them: what the lock-order validator
 * reasons about instead of lock instances.
 *  - A lock initialized by a call (pthread_mutex_init() and friends) is of
 *    the class of its init site: the call's source location and the
 *    functions that called it (lock_class_keys.h). All connection locks
 *    made in conn_new() are one class; the table locks a generic
 *    constructor makes for two caches are two.
 *  - A lock never initialized by a call in static storage is of the class
 *    of its variable (an array of them is one class).
 *  - A lock never initialized by a call in heap memory (calloc()'d, or set
 *    to PTHREAD_MUTEX_INITIALIZER) is of the class of the site where it
 *    was first taken, keyed the same way as an init site: that can only
 *    split locks of one kind into several classes, never merge unrelated
 *    ones, and the class ends with the memory (lock_instances.h).
 *  - Each RCU flavor and SRCU domain is a class; annotations name a class.
 * Locks on the stack of the thread that makes them are not followed (the
 * hand-offs of one call, where class order gives false cycles). */
#ifndef LOCKDEP_RCU_LOCK_CLASSES_H
#define LOCKDEP_RCU_LOCK_CLASSES_H

#include <stddef.h>
#include <stdint.h>
#include "classes/lock_instances.h"

#define MAX_LOCK_CLASSES 65536         /* class ids are 1..MAX_LOCK_CLASSES-1 */
#define MAX_LOCK_SUBCLASSES 8          /* nesting annotations, as in the kernel */
#define MAX_STATIC_RANGES 1024         /* writable segments of loaded objects */
/* Instance class of a lock the validator does not follow. */
#define LOCK_CLASS_UNTRACKED 0xffffffffu

enum class_key_kind {
	CLASS_STATIC,      /* key: the variable's address */
	CLASS_INIT_SITE,   /* key: lock_class_keys.h site key of the init call */
	CLASS_FIRST_USE,   /* key: site key of the first acquisition */
	CLASS_RCU_FLAVOR,  /* key: enum rcu_flavor */
	CLASS_SRCU,        /* key: the srcu_struct's address */
	CLASS_NAMED,       /* key: the annotation's key address, with a name */
};

struct lock_class {
	uintptr_t key;
	uint8_t key_kind;      /* enum class_key_kind */
	uint8_t subclass;
	uint8_t dead;          /* its code or variable was unloaded (dlclose) */
	uint8_t nr_callers;    /* site classes: callers that key it */
	uint8_t urcu_internal; /* site classes: made inside liburcu's libraries
				  (the lock-free hash table's resize mutex) */
	uint8_t handed_off;    /* one of its locks was released by a thread that
				  did not take it (orphaned_locks.h) */
	uint8_t auto_nested;   /* a subclass the validator gave locks taken
				  nested in their own class through another
				  (lock_graph.c): cycles through it are judged
				  by instances */
	const char *name;      /* CLASS_NAMED only: the annotation's string */
	uintptr_t first_instance;    /* site classes: the first lock; when it is a
					static variable, the class is named after
					it, as the kernel names a class after its
					first lock */
	uintptr_t site;        /* site classes: the return address of the call */
	uintptr_t callers[2];  /* site classes: the first callers' functions */
	uint32_t first_dependency;   /* lock_graph.c: head of the out-edge list */
};

extern struct lock_class lock_classes[MAX_LOCK_CLASSES];

/* The class for a key, created on first use. 0 when the class table is
 * full (the validator then ignores the lock and says so once). */
uint32_t lock_class_for_key(uintptr_t key, enum class_key_kind kind, unsigned subclass,
			    const char *name);

/* The class of the lock at `lock`, created if needed; `ip` is where it is
 * being acquired (it keys the class of a heap lock never initialized by a
 * call). 0 when the validator does not follow the lock. */
uint32_t lock_class_of(const void *lock, uintptr_t ip);
/* The same, with the instance generation the class was found with (0 when
 * the class was created now: look it up if needed). Inline when the lock
 * has its instance already (the out-of-line part makes one). */
uint32_t lock_class_first_seen(const void *lock, uintptr_t ip);
static inline uint32_t lock_class_and_generation(const void *lock, uintptr_t ip, uint32_t *generation)
{
	uint32_t id;
	if (__builtin_expect(lock_instance_get(lock, &id, generation), 1))
		return id == LOCK_CLASS_UNTRACKED ? 0 : id;
	*generation = 0;
	return lock_class_first_seen(lock, ip);
}
/* The class of `lock` if it has one already; never creates one. */
uint32_t lock_class_peek(const void *lock);
/* The instance generation of `lock`, 0 if unknown: a new one at each init,
 * so a reused address is a new instance. */
uint32_t lock_instance_generation(const void *lock);

/* pthread_mutex_init() and friends called at `ip`, from the call chain
 * `frames` (unwound in the wrapper: frames[0] is ip): the lock joins the
 * class of that init site. */
void lock_class_init_instance(const void *lock, uintptr_t ip, const uintptr_t *frames, size_t nr_frames);
/* A lock the validator does not follow (on its maker's stack). */
void lock_class_untrack_instance(const void *lock);
/* destroy: the instance ends. */
void lock_class_destroy_instance(const void *lock);
/* lockdep_set_class_and_name()-style annotation. */
void lock_class_set_named(const void *lock, const void *key, const char *name);
/* The class `subclass` levels below `class_id` (nesting annotation). */
uint32_t lock_class_nested(uint32_t class_id, unsigned subclass);

/* An object in [lo, hi) is being unloaded: its static locks' classes die
 * (a library loaded there later has locks of its own). */
void lock_classes_forget_range(uintptr_t lo, uintptr_t hi);
/* A library was unloaded: the static ranges are stale. */
void lock_classes_objects_changed(void);

/* "stats_lock", "conn_new+0x2a", "lruhash_create+0x4a from slabhash_create",
 * "rcu_read_lock_memb", "name/1": for reports. */
void lock_class_name(uint32_t class_id, char *buf, size_t size);
/* Classes made so far, plus one: ids run from 1 below it. */
uint32_t lock_classes_count(void);

struct thread_state;
/* fork: the registry's lock must not stay taken by a vanished thread. */
void lock_classes_fork_prepare(struct thread_state *self);
void lock_classes_fork_parent(void);
void lock_classes_fork_child(struct thread_state *self);

struct held_lock;
/* The class of a held entry, looked up now and cached in the entry. */
uint32_t held_class_lookup(struct held_lock *h);

/* The class of a held entry, looked up the first time it is needed. */
static inline uint32_t held_class(struct held_lock *h)
{
	if (__builtin_expect(h->class_id != 0, 1))
		return h->class_id;
	return held_class_lookup(h);
}

#endif
