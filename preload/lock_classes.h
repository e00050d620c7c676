/* Lock classes, as kernel lockdep has them: what the lock-order validator
 * reasons about instead of lock instances. A lock initialized with
 * pthread_mutex_init() and friends belongs to the class of its init call
 * site (all per-connection locks made in conn_new() are one class); a
 * statically initialized lock is a class of its own (its address); each RCU
 * flavor and SRCU domain is a class; annotations can name a class. */
#ifndef LOCKDEP_RCU_LOCK_CLASSES_H
#define LOCKDEP_RCU_LOCK_CLASSES_H

#include <stddef.h>
#include <stdint.h>

#define MAX_LOCK_CLASSES 8192          /* class ids are 1..MAX_LOCK_CLASSES-1 */
#define MAX_LOCK_INSTANCES (1u << 16)  /* lock addresses remembered (power of 2) */
#define MAX_LOCK_SUBCLASSES 8          /* nesting annotations, as in the kernel */
/* Instance map value of a lock the validator does not follow: in heap or
 * stack memory, never initialized by a call, so it has no class (the
 * kernel refuses such "non-static" locks too). */
#define LOCK_CLASS_UNTRACKED 0xffffffffu

enum class_key_kind {
	CLASS_STATIC,      /* key: the lock's address (never initialized by a call) */
	CLASS_INIT_SITE,   /* key: return address of the init call */
	CLASS_RCU_FLAVOR,  /* key: enum rcu_flavor */
	CLASS_SRCU,        /* key: the srcu_struct's address */
	CLASS_NAMED,       /* key: the annotation's key address, with a name */
};

struct lock_class {
	uintptr_t key;
	uint8_t key_kind;      /* enum class_key_kind */
	uint8_t subclass;
	const char *name;      /* CLASS_NAMED only: the annotation's string */
	uintptr_t first_instance;    /* CLASS_INIT_SITE: the first lock made there;
					when it is a static variable, the class is
					named after it, as the kernel names a class
					after its first lock */
	uint32_t first_dependency;   /* lock_graph.c: head of the out-edge list */
};

extern struct lock_class lock_classes[MAX_LOCK_CLASSES];

/* The class for a key, created on first use. 0 when the class table is
 * full (the validator then ignores the lock and says so once). */
uint32_t lock_class_for_key(uintptr_t key, enum class_key_kind kind, unsigned subclass,
			    const char *name);
/* The same, remembering `instance` as the first lock of a new class. */
uint32_t lock_class_for_instance(uintptr_t key, enum class_key_kind kind, const void *instance);

/* The class of the lock at `lock`, created if needed; `ip` is where it is
 * being acquired. 0 when the validator does not follow the lock. Looked
 * up only when the lock is taken while something else is held. */
uint32_t lock_class_of(const void *lock, uintptr_t ip);
/* The class of `lock` if it has one already; never creates one. */
uint32_t lock_class_peek(const void *lock);
/* The instance generation of `lock` (bumped at each init and destroy, so
 * that a reused address is a new instance), 0 if unknown. */
uint32_t lock_instance_generation(const void *lock);

struct lock_instance {
	uintptr_t lock;            /* 0: free slot */
	uint64_t class_and_gen;    /* class id | generation << 32, one atomic word */
};
extern struct lock_instance lock_instances[MAX_LOCK_INSTANCES];

static inline uint32_t lock_instance_hash(const void *lock)
{
	uint64_t h = (uint64_t)(uintptr_t)lock * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> 40) & (MAX_LOCK_INSTANCES - 1);
}

/* pthread_mutex_init() and friends at `site`: the lock joins that class. */
void lock_class_init_instance(const void *lock, uintptr_t site);
/* A lock the validator does not follow (see LOCK_CLASS_UNTRACKED). */
void lock_class_untrack_instance(const void *lock);
/* destroy: forget the class; a later static use of the address is new. */
void lock_class_destroy_instance(const void *lock);
/* lockdep_set_class_and_name()-style annotation. */
void lock_class_set_named(const void *lock, const void *key, const char *name);
/* The class `subclass` levels below `class_id` (nesting annotation). */
uint32_t lock_class_nested(uint32_t class_id, unsigned subclass);

/* "stats_lock", "conn_new+0x2a", "rcu_read_lock_memb", "name/1": for reports. */
void lock_class_name(uint32_t class_id, char *buf, size_t size);

struct thread_state;
/* fork: the registry's lock must not stay taken by a vanished thread. */
void lock_classes_fork_prepare(struct thread_state *self);
void lock_classes_fork_parent(void);
void lock_classes_fork_child(struct thread_state *self);

struct held_lock;
/* The class of a held entry, looked up now and cached in the entry. */
uint32_t held_class_lookup(struct held_lock *h);

#endif
