/* The class registry and the lock -> class resolution. Looking up a class
 * by key is lock-free; creating one (once per class) takes the registry
 * lock. Instances live in lock_instances.c. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include "classes/lock_classes.h"
#include "classes/mutex_tag_key.h"
#include "base/flavors.h"
#include "classes/lock_class_keys.h"
#include "classes/lock_instances.h"
#include "rcu/urcu_calls.h"
#include "base/options.h"
#include "symbolize/symbolize.h"
#include "runtime/thread_state.h"
#include "runtime/tracer_lock.h"
#include "runtime/log_output.h"
#include "symbolize/symbolizer_lock.h"

struct lock_class lock_classes[MAX_LOCK_CLASSES];
static uint32_t nr_lock_classes = 1;   /* 0 means "no class" */

uint32_t lock_classes_count(void)
{
	return __atomic_load_n(&nr_lock_classes, __ATOMIC_ACQUIRE);
}

/* key -> class id, open addressing; written under the registry lock, read
 * lock-free (ids are published with release stores). */
#define CLASS_HASH_SIZE (2 * MAX_LOCK_CLASSES)
static uint32_t class_hash[CLASS_HASH_SIZE];

/* Taken to create a class (once per class): a signal handler that
 * interrupts a creation on its own thread gets no class for its lock
 * (it is then not validated) rather than waiting for itself. */
static struct tracer_lock registry = TRACER_LOCK_INITIALIZER(TRACER_LOCK_CLASSES, "lock classes");

void lock_classes_fork_prepare(struct thread_state *self)
{
	tracer_lock_fork_prepare(&registry, self);
	lock_instances_fork_prepare(self);
}

void lock_classes_fork_parent(void)
{
	lock_instances_fork_parent();
	tracer_lock_fork_parent(&registry);
}

void lock_classes_fork_child(struct thread_state *self)
{
	lock_instances_fork_child(self);
	/* A half-made class is not published before it is complete: the
	 * tables stay consistent whatever a vanished thread was doing. */
	tracer_lock_fork_child(&registry, self);
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
	return c->key == key && c->key_kind == kind && c->subclass == subclass && !c->dead;
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

/* The class for the key; a new one is made from `proto` (its naming
 * fields). */
static uint32_t class_for(uintptr_t key, enum class_key_kind kind, unsigned subclass,
			  const struct lock_class *proto)
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
		if (proto)
			*c = *proto;
		else
			memset(c, 0, sizeof(*c));
		c->key = key;
		c->key_kind = (uint8_t)kind;
		c->subclass = (uint8_t)subclass;
		c->dead = 0;
		c->first_dependency = 0;
		__atomic_store_n(&class_hash[free_slot], id, __ATOMIC_RELEASE);
	}
	tracer_lock_release(&registry);
	if (!id)
		log_output_limit_once("MAX_LOCK_CLASSES too low!",
				  "lock class table full: locks of new classes are not validated");
	return id;
}

uint32_t lock_class_for_key(uintptr_t key, enum class_key_kind kind, unsigned subclass,
			    const char *name)
{
	struct lock_class proto = { .name = name };
	return class_for(key, kind, subclass, &proto);
}

/* ---- static storage -------------------------------------------------------
 * The writable segments (data and bss) of the loaded objects, listed again
 * when the loader's load and unload counters moved. Read and rebuilt under
 * the registry lock: used once per lock address. */

struct range {
	uintptr_t lo, hi;
};
static struct range static_ranges[MAX_STATIC_RANGES];
static int nr_static_ranges;
static int static_ranges_stale = 1;
static unsigned long long listed_adds, listed_subs;   /* the loader's counters then */

void lock_classes_objects_changed(void)
{
	__atomic_store_n(&static_ranges_stale, 1, __ATOMIC_RELEASE);
	lock_instance_epoch_advance();   /* classes of static locks may die */
	mutex_class_tags_void();
}

/* The loader counts loads and unloads: a changed count means a new list. */
static int read_load_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *counters = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		counters[0] = info->dlpi_adds;
		counters[1] = info->dlpi_subs;
	}
	return 1;
}

static int list_writable_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	for (size_t i = 0; i < info->dlpi_phnum && nr_static_ranges < MAX_STATIC_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		static_ranges[nr_static_ranges++] = (struct range){ lo, lo + ph->p_memsz };
	}
	return 0;
}

static int is_static_storage(const void *lock)
{
	struct thread_state *ts = thread_state();
	if (!tracer_lock_acquire(&registry, ts))
		return 0;
	unsigned long long counters[2] = { 0, 0 };
	tracer_enter(ts);
	dl_iterate_phdr(read_load_counters, counters);
	if (__atomic_exchange_n(&static_ranges_stale, 0, __ATOMIC_ACQ_REL) || counters[0] != listed_adds ||
	    counters[1] != listed_subs) {
		nr_static_ranges = 0;
		dl_iterate_phdr(list_writable_segments, NULL);
		listed_adds = counters[0];
		listed_subs = counters[1];
	}
	tracer_leave(ts);
	int found = 0;
	for (int i = 0; i < nr_static_ranges && !found; i++)
		found = (uintptr_t)lock >= static_ranges[i].lo && (uintptr_t)lock < static_ranges[i].hi;
	tracer_lock_release(&registry);
	return found;
}

/* The variable a static lock belongs to (an array of locks is one
 * variable): its start, or the lock's own address without a symbol. */
struct variable_lookup {
	uintptr_t addr;
	uintptr_t start;
};

static void find_variable(void *arg)
{
	struct variable_lookup *v = arg;
	char name[256];
	if (!symbolize_data(v->addr, name, sizeof(name)))
		return;
	const char *plus = strstr(name, "+0x");
	unsigned long offset = 0;
	if (plus && sscanf(plus + 3, "%lx", &offset) == 1 && offset <= v->addr)
		v->start = v->addr - offset;
	else if (!plus)
		v->start = v->addr;
}

static uint32_t static_class(const void *lock)
{
	struct variable_lookup v = { (uintptr_t)lock, (uintptr_t)lock };
	symbolizer_run(thread_state(), find_variable, &v);
	struct lock_class proto = { .first_instance = v.start, .urcu_internal = (uint8_t)is_urcu_code(v.start) };
	return class_for(v.start, CLASS_STATIC, 0, &proto);
}

/* ---- site classes ------------------------------------------------------------ */

static uint32_t site_class(enum class_key_kind kind, const void *lock, uintptr_t ip,
			   const uintptr_t *frames, size_t nr_frames)
{
	struct site_key k;
	struct thread_state *ts = thread_state();
	int keyed = frames ? site_key_of(ts, ip, frames, nr_frames, &k) : site_key_here(ts, ip, &k);
	if (!keyed) {
		k.key = ip;
		k.site = ip;
		k.nr_callers = 0;
	}
	/* A class that exists is the answer (most inits: one site, many
	 * locks); what a new one needs is worked out only for it. is_urcu_code()
	 * asks dladdr(), which takes the loader's lock: on every init, a
	 * raw clone()'s child inherited it held by whichever thread was in
	 * there, and hung in its first lock call. */
	uint32_t free_slot;
	uint32_t id = class_lookup(k.key, kind, 0, &free_slot);
	if (id)
		return id;
	struct lock_class proto = { .first_instance = (uintptr_t)lock, .site = k.site,
				    .nr_callers = (uint8_t)k.nr_callers,
				    .urcu_internal = (uint8_t)is_urcu_code(k.site) };
	for (int i = 0; i < k.nr_callers && i < 2; i++)
		proto.callers[i] = k.callers[i];
	return class_for(k.key, kind, 0, &proto);
}

/* A lock on the stack of the thread that handles it, near its frame. */
static int on_own_stack(const void *lock)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	return (uintptr_t)lock >= sp && (uintptr_t)lock - sp < (1u << 20);
}

/* ---- lock -> class ------------------------------------------------------------ */

uint32_t lock_class_peek(const void *lock)
{
	uint32_t id;
	if (!lock_instance_get(lock, &id, NULL) || id == LOCK_CLASS_UNTRACKED)
		return 0;
	return id;
}

uint32_t lock_instance_generation(const void *lock)
{
	uint32_t id, gen;
	return lock_instance_get(lock, &id, &gen) ? gen : 0;
}

uint32_t lock_class_of(const void *lock, uintptr_t ip)
{
	uint32_t generation;
	return lock_class_and_generation(lock, ip, &generation);
}

uint32_t lock_class_first_seen(const void *lock, uintptr_t ip)
{
	uint32_t id;
	/* Never initialized by a call (or destroyed or freed since). */
	if (is_static_storage(lock))
		id = static_class(lock);
	else if (on_own_stack(lock))
		id = LOCK_CLASS_UNTRACKED;
	else
		id = site_class(CLASS_FIRST_USE, lock, ip, NULL, 0);
	if (!id)
		return 0;
	id = lock_instance_set_if_new(lock, id);
	return id == LOCK_CLASS_UNTRACKED ? 0 : id;
}

uint32_t held_class_lookup(struct held_lock *h)
{
	if (!h->class_id && h->kind != HELD_NONE && h->kind != HELD_RCU_READ)
		h->class_id = lock_class_of(h->lock, h->acquire_ip);
	return h->class_id;
}

void lock_class_init_instance(const void *lock, uintptr_t ip, const uintptr_t *frames, size_t nr_frames)
{
	uint32_t id = site_class(CLASS_INIT_SITE, lock, ip, frames, nr_frames);
	if (id)
		lock_instance_set(lock, id);
	else
		lock_instance_forget(lock);
}

void lock_class_untrack_instance(const void *lock)
{
	lock_instance_set(lock, LOCK_CLASS_UNTRACKED);
}

void lock_class_destroy_instance(const void *lock)
{
	lock_instance_forget(lock);
}

void lock_class_set_named(const void *lock, const void *key, const char *name)
{
	uint32_t id = lock_class_for_key((uintptr_t)key, CLASS_NAMED, 0, name);
	if (id) {
		lock_instance_set(lock, id);
		mutex_class_tags_void();   /* a live lock changed class */
	}
}

uint32_t lock_class_nested(uint32_t class_id, unsigned subclass)
{
	if (!class_id || !subclass)
		return class_id;
	if (subclass >= MAX_LOCK_SUBCLASSES)
		subclass = MAX_LOCK_SUBCLASSES - 1;
	const struct lock_class *c = &lock_classes[class_id];
	return class_for(c->key, (enum class_key_kind)c->key_kind, subclass, c);
}

void lock_classes_forget_range(uintptr_t lo, uintptr_t hi)
{
	uint32_t n = __atomic_load_n(&nr_lock_classes, __ATOMIC_ACQUIRE);
	for (uint32_t id = 1; id < n; id++) {
		struct lock_class *c = &lock_classes[id];
		uintptr_t where = c->key_kind == CLASS_STATIC || c->key_kind == CLASS_SRCU ? c->key : 0;
		if (where >= lo && where < hi)
			__atomic_store_n(&c->dead, 1, __ATOMIC_RELEASE);
	}
	lock_classes_objects_changed();
}

/* ---- names ----------------------------------------------------------------------- */

/* "func+0x2a" of a return address, or "" */
/* A name for an address no symbol covers: "lock@module+0xoffset", the
 * file address as frames print it and addr2line reads it, the same in
 * every run (the address itself moves with ASLR); "lock@ADDR" outside
 * every module or without symbolization. */
/* "module+0xoff" of a code or data address, the same in every run: 1, or 0
 * when it is in no listed object. */
static int module_offset_name(uintptr_t address, char *buf, size_t size)
{
	char path[4096];
	uintptr_t offset;
	if (!tracer_options.symbolize || !symbolize_module(address, path, sizeof(path), &offset))
		return 0;
	const char *base = strrchr(path, '/');
	snprintf(buf, size, "%.200s+0x%lx", base ? base + 1 : path, (unsigned long)offset);
	return 1;
}

static void unnamed_lock_name(uintptr_t address, char *buf, size_t size)
{
	char where[256];
	if (module_offset_name(address, where, sizeof(where)))
		snprintf(buf, size, "lock@%s", where);
	else
		snprintf(buf, size, "lock@%lx", (unsigned long)address);
}

static void site_name(uintptr_t site, char *buf, size_t size)
{
	char where[512] = "";
	buf[0] = 0;
	if (!tracer_options.symbolize)
		return;
	symbolize_code(site, where, sizeof(where));
	char *space = strchr(where, ' ');
	if (space)
		*space = 0;
	/* "func+0x2a/0x90": the class is the site, the size is noise */
	char *slash = strchr(where, '/');
	if (slash && strstr(where, "+0x"))
		*slash = 0;
	if (where[0] != '0')   /* not a raw "0x..." */
		snprintf(buf, size, "%s", where);
}

/* Whether another live class comes from the same init site: then the
 * callers that tell them apart are part of the name. */
static int site_shared(uint32_t class_id)
{
	const struct lock_class *c = &lock_classes[class_id];
	uint32_t n = __atomic_load_n(&nr_lock_classes, __ATOMIC_ACQUIRE);
	for (uint32_t id = 1; id < n; id++)
		if (id != class_id && lock_classes[id].site == c->site && lock_classes[id].key != c->key &&
		    lock_classes[id].key_kind == c->key_kind)
			return 1;
	return 0;
}

/* Whether another class's first lock is in the static variable named
 * `name` (offsets stripped): then the offsets tell them apart. */
static int variable_shared(uint32_t class_id, const char *name)
{
	const struct lock_class *c = &lock_classes[class_id];
	uint32_t n = __atomic_load_n(&nr_lock_classes, __ATOMIC_ACQUIRE);
	for (uint32_t id = 1; id < n; id++) {
		const struct lock_class *o = &lock_classes[id];
		char other[256];
		if (id == class_id || o->key == c->key || !o->first_instance ||
		    (o->key_kind != CLASS_INIT_SITE && o->key_kind != CLASS_FIRST_USE) ||
		    !symbolize_data(o->first_instance, other, sizeof(other)))
			continue;
		char *plus = strstr(other, "+0x");
		if (plus)
			*plus = 0;
		if (strcmp(other, name) == 0)
			return 1;
	}
	return 0;
}

static void site_class_name(uint32_t class_id, char *base, size_t size)
{
	const struct lock_class *c = &lock_classes[class_id];
	/* A static first lock names the class ("counter_spin"; "locks" for
	 * "locks+0x28": the array, not the element), with its offset when
	 * another class's lock is in the same variable ("demux+0x28": the
	 * fields of a struct, each made at its own site). */
	if (tracer_options.symbolize && c->first_instance && symbolize_data(c->first_instance, base, size)) {
		char *plus = strstr(base, "+0x");
		if (plus) {
			*plus = 0;
			if (variable_shared(class_id, base))
				*plus = '+';
		}
		return;
	}
	site_name(c->site, base, size);
	if (!base[0])
		unnamed_lock_name(c->site, base, size);
	if (!site_shared(class_id))
		return;
	for (int i = 0; i < c->nr_callers && i < 2; i++) {
		char caller[272] = "", where[256];
		if (tracer_options.symbolize)
			symbolize_function(c->callers[i] + 1, caller, sizeof(caller));
		/* A caller with no symbol (a static function of a stripped
		 * library) by its place: two classes of one site must not
		 * print alike. */
		if (!caller[0] && module_offset_name(c->callers[i], where, sizeof(where)))
			snprintf(caller, sizeof(caller), "[%s]", where);
		size_t len = strlen(base);
		if (caller[0])
			snprintf(base + len, size - len, " from %s", caller);
	}
}

void lock_class_name(uint32_t class_id, char *buf, size_t size)
{
	buf[0] = 0;
	if (!class_id || class_id >= MAX_LOCK_CLASSES) {
		snprintf(buf, size, "?");
		return;
	}
	const struct lock_class *c = &lock_classes[class_id];
	char base[512] = "";
	switch ((enum class_key_kind)c->key_kind) {
	case CLASS_RCU_FLAVOR:
		snprintf(base, sizeof(base), "%s", c->key < NR_FLAVORS ? flavor_lock_name[c->key] : "rcu");
		break;
	case CLASS_NAMED:
		snprintf(base, sizeof(base), "%s", c->name ? c->name : "?");
		break;
	case CLASS_INIT_SITE:
	case CLASS_FIRST_USE:
		site_class_name(class_id, base, sizeof(base));
		break;
	case CLASS_STATIC:
	case CLASS_SRCU:
		if (tracer_options.symbolize)
			symbolize_data(c->key, base, sizeof(base));
		if (!base[0])
			unnamed_lock_name(c->key, base, sizeof(base));
		break;
	}
	if (c->key_kind == CLASS_SRCU)
		snprintf(buf, size, "srcu:%s", base);
	else
		snprintf(buf, size, "%s", base);
	if (c->subclass) {
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "/%u", c->subclass);
	}
}
