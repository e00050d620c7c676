/* The class registry and the lock-address -> class map. Lookups are
 * lock-free (one probe in the common case); creating classes and claiming
 * instance slots, which happen once per class or lock address, take a
 * spinlock of the tracer's own. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "lock_classes.h"
#include "flavors.h"
#include "report.h"
#include "symbolize.h"
#include "options.h"
#include "thread_state.h"
#include "tracer_lock.h"

struct lock_class lock_classes[MAX_LOCK_CLASSES];
struct lock_instance lock_instances[MAX_LOCK_INSTANCES];
static uint32_t nr_lock_classes = 1;   /* 0 means "no class" */

/* key -> class id, open addressing; written under registry_lock, read
 * lock-free (ids are published with release stores). */
#define CLASS_HASH_SIZE (2 * MAX_LOCK_CLASSES)
static uint32_t class_hash[CLASS_HASH_SIZE];

/* Taken to create a class (once per class): a signal handler that
 * interrupts a creation on its own thread gets no class for its lock
 * (it is then not validated) rather than waiting for itself. */
static struct tracer_lock registry = TRACER_LOCK_INITIALIZER(TRACER_LOCK_CLASSES, "lock classes");
static int registry_taken_for_fork;

void lock_classes_fork_prepare(struct thread_state *self)
{
	registry_taken_for_fork = tracer_lock_fork_prepare(&registry, self);
}

void lock_classes_fork_parent(void)
{
	tracer_lock_fork_parent(&registry, registry_taken_for_fork);
}

void lock_classes_fork_child(struct thread_state *self)
{
	/* A half-made class is not published before it is complete: the
	 * tables stay consistent whatever a vanished thread was doing. */
	tracer_lock_fork_child(&registry, registry_taken_for_fork, self);
}

static uint32_t class_key_hash(uintptr_t key, enum class_key_kind kind, unsigned subclass)
{
	uint64_t h = ((uint64_t)key ^ ((uint64_t)kind << 58) ^ ((uint64_t)subclass << 61)) *
		     0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> 32) % CLASS_HASH_SIZE;
}

static int class_matches(uint32_t id, uintptr_t key, enum class_key_kind kind, unsigned subclass)
{
	const struct lock_class *c = &lock_classes[id];
	return c->key == key && c->key_kind == kind && c->subclass == subclass;
}

static uint32_t class_lookup(uintptr_t key, enum class_key_kind kind, unsigned subclass,
			     uint32_t *free_slot)
{
	uint32_t h = class_key_hash(key, kind, subclass);
	for (uint32_t probe = 0; probe < CLASS_HASH_SIZE; probe++) {
		uint32_t slot = (h + probe) % CLASS_HASH_SIZE;
		uint32_t id = __atomic_load_n(&class_hash[slot], __ATOMIC_ACQUIRE);
		if (!id) {
			*free_slot = slot;
			return 0;
		}
		if (class_matches(id, key, kind, subclass))
			return id;
	}
	*free_slot = CLASS_HASH_SIZE;
	return 0;
}

static uint32_t class_for_key(uintptr_t key, enum class_key_kind kind, unsigned subclass,
			      const char *name, uintptr_t instance)
{
	uint32_t free_slot;
	uint32_t id = class_lookup(key, kind, subclass, &free_slot);
	if (id)
		return id;
	if (!tracer_lock_acquire(&registry, thread_state()))
		return 0;
	id = class_lookup(key, kind, subclass, &free_slot);   /* lost a race? */
	if (!id && free_slot < CLASS_HASH_SIZE && nr_lock_classes < MAX_LOCK_CLASSES) {
		id = nr_lock_classes++;
		struct lock_class *c = &lock_classes[id];
		c->key = key;
		c->key_kind = (uint8_t)kind;
		c->subclass = (uint8_t)subclass;
		c->name = name;
		c->first_instance = instance;
		c->first_dependency = 0;
		__atomic_store_n(&class_hash[free_slot], id, __ATOMIC_RELEASE);
	}
	tracer_lock_release(&registry);
	if (!id)
		report_limit_once("MAX_LOCK_CLASSES too low!",
				  "lock class table full: locks of new classes are not validated");
	return id;
}

uint32_t lock_class_for_key(uintptr_t key, enum class_key_kind kind, unsigned subclass,
			    const char *name)
{
	return class_for_key(key, kind, subclass, name, 0);
}

uint32_t lock_class_for_instance(uintptr_t key, enum class_key_kind kind, const void *instance)
{
	return class_for_key(key, kind, 0, NULL, (uintptr_t)instance);
}

/* In a loaded object's data or bss: a static lock. */
static int is_static_storage(const void *lock)
{
	Dl_info info;
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	int found = dladdr(lock, &info) && info.dli_fbase;
	tracer_leave(ts);
	return found;
}

/* The instance slot of `lock`, claimed if needed; NULL when the table is full. */
static struct lock_instance *instance_slot(const void *lock, int claim)
{
	uint32_t h = lock_instance_hash(lock);
	for (uint32_t probe = 0; probe < 64; probe++) {
		struct lock_instance *slot = &lock_instances[(h + probe) & (MAX_LOCK_INSTANCES - 1)];
		uintptr_t cur = __atomic_load_n(&slot->lock, __ATOMIC_ACQUIRE);
		if (cur == (uintptr_t)lock)
			return slot;
		if (cur == 0) {
			if (!claim)
				return NULL;
			uintptr_t expected = 0;
			if (__atomic_compare_exchange_n(&slot->lock, &expected, (uintptr_t)lock, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
			    expected == (uintptr_t)lock)
				return slot;
		}
	}
	if (claim)
		report_limit_once("MAX_LOCK_INSTANCES too low!",
				  "lock address table full: some locks are classed by address only");
	return NULL;
}

/* Sets the class of an instance and starts a new generation. A slot is
 * claimed first with class 0, so readers never see a half-made entry. */
static void lock_class_set(const void *lock, uint32_t class_id)
{
	struct lock_instance *slot = instance_slot(lock, 1);
	if (!slot)
		return;
	uint64_t old = __atomic_load_n(&slot->class_and_gen, __ATOMIC_RELAXED), new;
	do {
		new = (((old >> 32) + 1) << 32) | class_id;
	} while (!__atomic_compare_exchange_n(&slot->class_and_gen, &old, new, 0, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

static uint32_t instance_class(const struct lock_instance *slot, uint32_t *generation)
{
	uint64_t v = __atomic_load_n(&slot->class_and_gen, __ATOMIC_RELAXED);
	if (generation)
		*generation = (uint32_t)(v >> 32);
	return (uint32_t)v;
}

uint32_t lock_class_peek(const void *lock)
{
	struct lock_instance *slot = instance_slot(lock, 0);
	uint32_t id = slot ? instance_class(slot, NULL) : 0;
	return id == LOCK_CLASS_UNTRACKED ? 0 : id;
}

uint32_t lock_instance_generation(const void *lock)
{
	uint32_t gen = 0;
	struct lock_instance *slot = instance_slot(lock, 0);
	if (slot)
		instance_class(slot, &gen);
	return gen;
}

uint32_t lock_class_of(const void *lock, uintptr_t ip)
{
	(void)ip;
	struct lock_instance *slot = instance_slot(lock, 1);
	if (slot) {
		uint32_t id = instance_class(slot, NULL);
		if (id)
			return id == LOCK_CLASS_UNTRACKED ? 0 : id;
	}
	/* Never initialized by a call (or destroyed since). In static storage
	 * it is a class of its own. In heap or stack memory its address is
	 * reused by unrelated locks, so it cannot name a class: not followed. */
	uint32_t id = is_static_storage(lock)
		? lock_class_for_key((uintptr_t)lock, CLASS_STATIC, 0, NULL) : LOCK_CLASS_UNTRACKED;
	if (slot && id) {
		uint64_t old = __atomic_load_n(&slot->class_and_gen, __ATOMIC_RELAXED);
		if (!(uint32_t)old)
			__atomic_compare_exchange_n(&slot->class_and_gen, &old, (old & ~0xffffffffull) | id,
						    0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
	return id == LOCK_CLASS_UNTRACKED ? 0 : id;
}

uint32_t held_class_lookup(struct held_lock *h)
{
	if (!h->class_id && h->kind != HELD_NONE && h->kind != HELD_RCU_READ)
		h->class_id = lock_class_of(h->lock, h->acquire_ip);
	return h->class_id;
}

void lock_class_init_instance(const void *lock, uintptr_t site)
{
	uint32_t id = lock_class_for_instance(site, CLASS_INIT_SITE, lock);
	if (id)
		lock_class_set(lock, id);
}

void lock_class_untrack_instance(const void *lock)
{
	lock_class_set(lock, LOCK_CLASS_UNTRACKED);
}

void lock_class_destroy_instance(const void *lock)
{
	if (instance_slot(lock, 0))
		lock_class_set(lock, 0);
}

void lock_class_set_named(const void *lock, const void *key, const char *name)
{
	uint32_t id = lock_class_for_key((uintptr_t)key, CLASS_NAMED, 0, name);
	if (id)
		lock_class_set(lock, id);
}

uint32_t lock_class_nested(uint32_t class_id, unsigned subclass)
{
	if (!class_id || !subclass)
		return class_id;
	if (subclass >= MAX_LOCK_SUBCLASSES)
		subclass = MAX_LOCK_SUBCLASSES - 1;
	const struct lock_class *c = &lock_classes[class_id];
	return class_for_key(c->key, (enum class_key_kind)c->key_kind, subclass, c->name, c->first_instance);
}

void lock_class_name(uint32_t class_id, char *buf, size_t size)
{
	buf[0] = 0;
	if (!class_id || class_id >= MAX_LOCK_CLASSES) {
		snprintf(buf, size, "?");
		return;
	}
	const struct lock_class *c = &lock_classes[class_id];
	char base[256] = "";
	switch ((enum class_key_kind)c->key_kind) {
	case CLASS_RCU_FLAVOR:
		snprintf(base, sizeof(base), "%s", c->key < NR_FLAVORS ? flavor_lock_name[c->key] : "rcu");
		break;
	case CLASS_NAMED:
		snprintf(base, sizeof(base), "%s", c->name ? c->name : "?");
		break;
	case CLASS_INIT_SITE: {
		char where[512] = "";
		/* A static first lock names the class ("counter_spin" for
		 * "locks+0x28": the array, not the element). */
		if (tracer_options.symbolize && c->first_instance &&
		    symbolize_data(c->first_instance, base, sizeof(base))) {
			char *plus = strstr(base, "+0x");
			if (plus)
				*plus = 0;
			break;
		}
		if (tracer_options.symbolize)
			symbolize_code(c->key, where, sizeof(where));
		char *space = strchr(where, ' ');
		if (space)
			*space = 0;
		/* "func+0x2a/0x90": the class is the site, the size is noise */
		char *slash = strchr(where, '/');
		if (slash && strstr(where, "+0x"))
			*slash = 0;
		snprintf(base, sizeof(base), "%s", where[0] ? where : "lock");
		break;
	}
	case CLASS_STATIC:
	case CLASS_SRCU:
		if (tracer_options.symbolize)
			symbolize_data(c->key, base, sizeof(base));
		if (!base[0])
			snprintf(base, sizeof(base), "lock@%lx", (unsigned long)c->key);
		break;
	}
	if (c->key_kind == CLASS_SRCU)
		snprintf(buf, size, "srcu:%s%s", base, "");
	else
		snprintf(buf, size, "%s", base);
	if (c->subclass) {
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "/%u", c->subclass);
	}
}
