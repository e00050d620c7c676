/* The lock-order validator: kernel lockdep's dependency graph between lock
 * classes, in userspace. Each blocking acquisition while other locks are
 * held adds edges held-class -> new-class; an edge that closes a cycle is a
 * possible deadlock. RCU read sides are recursive read acquisitions of their
 * flavor's class, grace-period waits a write acquisition and release (the
 * kernel's lock_sync()), so synchronize_rcu() under a lock that readers take
 * is found like any ABBA. The cost is paid once per new chain of held
 * classes: validated chains are remembered in a lock-free set. */
#ifndef LOCKDEP_RCU_LOCK_GRAPH_H
#define LOCKDEP_RCU_LOCK_GRAPH_H

#include "runtime/thread_state.h"
#include "classes/lock_classes.h"
#include "base/key_set.h"
#include "rcu/urcu_reader_state.h"
#include "classes/mutex_class_tag.h"

#define MAX_LOCKDEP_EDGES 65536
/* A cache: when full it is emptied and chains are validated again. */
#define MAX_LOCKDEP_CHAINS (1u << 16)     /* power of two */
#define DEPENDENCY_FRAMES 12
/* Cycles one acquisition may close at once (each is reported). */
#define MAX_CYCLES_PER_ACQUISITION 8

/* How the new lock is taken. */
enum acquire_op {
	ACQUIRE_LOCK,    /* blocking, exclusive (or a read that waits for writers) */
	ACQUIRE_RLOCK,   /* recursive read: never waits for other readers */
	ACQUIRE_SYNC,    /* a grace-period wait: acquire and release at once */
};

/* The class of the liburcu flavor / header flavor, created on first use:
 * a load once it exists (every read-side section needs it). */
extern uint32_t rcu_flavor_classes[NR_FLAVORS];
uint32_t rcu_flavor_class_slow(enum rcu_flavor flavor);
static inline uint32_t rcu_flavor_class(enum rcu_flavor flavor)
{
	uint32_t id = __atomic_load_n(&rcu_flavor_classes[flavor], __ATOMIC_RELAXED);
	return __builtin_expect(id != 0, 1) ? id : rcu_flavor_class_slow(flavor);
}

/* Whether the validator runs (option detect_deadlocks). */
extern int lock_graph_enabled;

/* Called (outside the graph lock) after an acquisition added dependencies
 * into class_id; set by the signal usage checks once the program
 * installed a handler (check_signal_usage.h), NULL before. */
extern void (*lock_graph_new_dependency_hook)(struct thread_state *ts, const void *lock, uint32_t class_id,
					      uintptr_t ip);

/* ---- what the graph finds, for the layer above to print -------------------
 * Detection and printing are apart (as ThreadSanitizer's deadlock detector
 * hands its runtime a report): the graph describes a deadlock it found and
 * gives the description to the sink its caller passed in; the checks layer
 * prints it (checks/lock_order_report.c), a test keeps it. */

/* A cycle this acquisition closes: the thread holds P (`held`) and takes N
 * (`lock`, of class_id), and the graph has a path N -> ... -> P. */
struct lock_cycle {
	const struct held_lock *held;   /* P */
	struct held_lock implicit;      /* P's copy when it is a read side no wrapper saw */
	const void *lock;               /* N */
	uint32_t class_id;
	enum acquire_op op;
	uintptr_t ip;                   /* the program's call */
	uint32_t stack;                 /* this acquisition's stack (stack depot id) */
};

/* One edge of a cycle's path: `to` was taken while `from` was held. */
struct lock_cycle_edge {
	uint32_t from, to;
	uint32_t stack;                 /* where `to` was taken (stack depot id) */
	uint8_t held_read;              /* `from` was held for read */
	uint8_t acquired_read;          /* `to` was taken for read */
	uint8_t sync;                   /* `to` is a grace-period wait */
};
#define LOCK_CYCLE_MAX_EDGES 64

/* The path N -> ... -> P of cycle c as the graph has it now (it only grows,
 * so the path found is still there), at most max edges; 0 when none is
 * found or the graph lock is this thread's (a handler inside validation). */
size_t lock_graph_cycle_path(struct thread_state *ts, const struct lock_cycle *c,
			     struct lock_cycle_edge *edges, size_t max);

/* Two instances taken in both orders: `lock` (of class_id) now, with
 * `held` held, and the other order before. */
struct lock_instance_inversion {
	const struct held_lock *held;
	const void *lock;
	uint32_t class_id;
	uintptr_t ip;
	uint64_t other_where;   /* where the other order took its second lock (instance_pair_where()) */
	uint32_t stack;         /* this acquisition's (stack depot id), 0 when none */
};

/* Where the graph hands what it finds; called outside the graph lock. */
struct lock_graph_sink {
	void (*cycle)(struct thread_state *ts, const struct lock_cycle *c);
	void (*instance_inversion)(struct thread_state *ts, const struct lock_instance_inversion *v);
};

/* Generations already looked up by the caller, 0 where not: the new
 * lock's, and the first held lock's of its class (at held index `index`). */
struct instance_hint {
	uint32_t lock_generation;
	uint32_t held_generation;
	unsigned held_index;
};

/* The slow path: validate the chain with key `chain_key` (not yet in the
 * validated set). Returns the class the lock is taken as: class_id, or a
 * subclass of it when it is nested in itself through another class (see
 * lock_graph.c). */
uint32_t lock_graph_validate(struct thread_state *ts, const void *lock, uint32_t class_id,
			     enum acquire_op op, uintptr_t ip, uint64_t chain_key,
			     const struct lock_graph_sink *sink);

/* Nonzero once a class pair is watched instance by instance (a nesting
 * through another class was seen): acquisitions then call
 * lock_graph_check_watched(). */
extern int lock_graph_watching;
void lock_graph_check_watched(struct thread_state *ts, const void *lock, uint32_t class_id, uint32_t generation,
			      uintptr_t ip, const struct lock_graph_sink *sink);

/* The held locks of the new lock's class, other instances: each pair in
 * the instance-pair cache, an inversion reported. */
void lock_graph_check_instances(struct thread_state *ts, const void *lock, uint32_t class_id, uintptr_t ip,
				const struct instance_hint *hint, const struct lock_graph_sink *sink);

extern uint64_t validated_chains[MAX_LOCKDEP_CHAINS];

/* An edge of the graph, copied out for graph_path. */
struct dependency_view {
	uint32_t from, to;
	uint32_t stack;              /* stack depot id of the first acquisition */
	uint8_t read_only;           /* `to` only ever taken for recursive read */
	uint8_t sync;                /* a grace-period wait */
	uint8_t in_reported_cycle;
	uint8_t urcu_workers_only;   /* only liburcu's own threads made it */
};
/* Copies the live edges (up to max) under the graph lock; returns how
 * many (0 when the lock is this thread's already). */
size_t lock_graph_snapshot(struct thread_state *ts, struct dependency_view *out, size_t max);

/* One dependency of a path, for reports that print it. */
struct dependency_step {
	uint32_t from, to;
	uint32_t stack;              /* stack depot id: where `to` was taken behind `from` */
	uint8_t to_read;             /* `to` taken for a recursive read there */
};
#define MAX_DEPENDENCY_PATH 16

/* The shortest strong path (see find_strong_path() in lock_graph.c) from
 * class `from`, held for a recursive read iff from_read, to a class other
 * than `from` for which match(class, taken_for_read, arg) holds: the
 * kernel's find_usage_forwards(), for the signal usage checks. match runs
 * under the graph lock and must only read. Returns the class (0: none)
 * and copies the path (up to MAX_DEPENDENCY_PATH steps) into path. */
uint32_t lock_graph_find_forwards(struct thread_state *ts, uint32_t from, int from_read,
				  int (*match)(uint32_t class_id, int taken_for_read, void *arg), void *arg,
				  struct dependency_step *path, size_t *path_len);


/* The class and instance generation of a lock taken as `kind`: a pthread
 * mutex from its tag (mutex_class_tag.h), anything else from the map. */
static inline uint32_t lock_class_of_kind(const void *lock, enum held_kind kind, uintptr_t ip, uint32_t *generation)
{
	if (kind == HELD_MUTEX)
		return mutex_class_and_generation(lock, ip, generation);
	return lock_class_and_generation(lock, ip, generation);
}

static inline uint64_t chain_mix(uint64_t key, uint64_t v)
{
	key = (key ^ v) * 0x9E3779B97F4A7C15ull;
	return key ^ (key >> 29);
}

static inline int chain_is_validated(uint64_t key)
{
	return key_set_contains(validated_chains, MAX_LOCKDEP_CHAINS, key);
}

/* A chain key, in three steps: who acquires (the read sides no wrapper
 * saw, and whether liburcu's own threads: their edges into liburcu's
 * locks are judged apart), each held entry in order, the new lock. */
static inline uint64_t chain_key_begin(int qsbr_reader, unsigned inline_rd, unsigned urcu_worker)
{
	return chain_mix(qsbr_reader ? 0x51 : 0x17, inline_rd | urcu_worker << 16);
}

static inline uint64_t chain_key_add_held(uint64_t key, const struct held_lock *h, uint32_t held_id)
{
	return chain_mix(key, (uint64_t)held_id << 2 | (uint64_t)held_read_recursive(h) << 1 |
			      (uint64_t)held_is_trylock(h));
}

static inline uint64_t chain_key_end(uint64_t key, uint32_t class_id, enum acquire_op op)
{
	return chain_mix(key, (uint64_t)class_id << 3 | (uint64_t)op) | 1;   /* 0 marks a free slot */
}

/* `held` (instance generation gen_held) is held while `lock` (gen_new),
 * of its class, is taken: the pair recorded, the inversion it makes with
 * the other order reported (once). Returns 1 when reported. */
int lock_graph_check_instance_pair(struct thread_state *ts, const struct held_lock *held, uint32_t gen_held,
				   const void *lock, uint32_t gen_new, uint32_t class_id, uintptr_t ip,
				   const struct lock_graph_sink *sink);
/* The report half of it, for callers that probed the pair themselves
 * (instance_pairs_probe() said PAIR_INVERTED, with where the other order
 * took its second lock): records this order, then reports. wrapper_frame
 * as instance_pair_capture() takes it. */
struct instance_pair_probe;
int lock_graph_report_instance_inversion(struct thread_state *ts, const struct held_lock *held, uint32_t gen_held,
					 const void *lock, uint32_t gen_new, uint32_t class_id, uintptr_t ip,
					 const struct instance_pair_probe *probe, uint64_t other_where,
					 const void *wrapper_frame, const struct lock_graph_sink *sink);

/* Before acquiring `lock` of class_id: the held classes (and the read sides
 * no wrapper saw: an online QSBR thread's, inlined ones) each gain an edge
 * to it. Inline fast path:
 * a chain already validated costs a hash and one probe. Held entries get
 * their class here, the first time something is taken on top of them.
 * Returns 1 when there was nothing to validate (the chain was known, or the
 * lock is not followed), 0 when the slow path ran. */
/* The gate of this thread's acquisitions: its outermost held entry when
 * that is a lock held exclusively (a mutex, a spinlock, a write lock),
 * as a nonzero hash of its address; 0 for none. Two dependencies taken
 * under one gate never wait at once (one thread at a time is inside it):
 * a cycle all of whose edges were only ever taken under the same gate is
 * not a deadlock (QEMU: its AioContext locks in both orders, each by a
 * thread holding the Big QEMU Lock). The gate is not one of an edge's
 * own: the edges out of the outermost lock itself have none. Why it holds:
 * held[0] was taken before every lock now held and held since (a lock
 * released and taken again, a condition wait's mutex included, goes back
 * on top of the stack), so two threads waiting in two edges of the cycle
 * would both hold it at once. */
static inline uint32_t lock_graph_gate(const struct thread_state *ts)
{
	const struct held_lock *g = &ts->held[0];
	if (!ts->depth || (g->kind != HELD_MUTEX && g->kind != HELD_SPIN && g->kind != HELD_RWLOCK_WRITE))
		return 0;
	uint64_t h = (uint64_t)(uintptr_t)g->lock * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> 32) | 1;
}

static inline int lock_graph_acquire_instance_as(struct thread_state *ts, const void *lock, uint32_t *class_io,
						 uint32_t generation, enum acquire_op op, uintptr_t ip,
						 const struct lock_graph_sink *sink)
{
	uint32_t class_id = *class_io;
	int qsbr_reader = qsbr_thread_is_reader(ts);
	unsigned inline_rd = urcu_readable_flavors ? inline_readers(ts) : 0;
	if (!class_id || !lock_graph_enabled || (ts->depth == 0 && !qsbr_reader && !inline_rd))
		return 1;
	uint64_t key = chain_key_begin(qsbr_reader, inline_rd, ts->urcu_worker);
	int same_class = 0;
	struct instance_hint hint = { generation, 0, 0 };
	for (unsigned i = 0; i < ts->depth; i++) {
		struct held_lock *h = &ts->held[i];
		if (h->kind == HELD_NONE)
			continue;
		uint32_t held_gen = 0, held_id = h->class_id;
		if (!held_id && h->kind != HELD_RCU_READ)   /* looked up the first time it is needed */
			held_id = h->class_id = lock_class_of_kind(h->lock, h->kind, h->acquire_ip, &held_gen);
		key = chain_key_add_held(key, h, held_id);
		if (held_id == class_id && h->lock != lock && !same_class++) {
			hint.held_generation = held_gen;
			hint.held_index = i;
		}
	}
	/* The outermost lock, when it can be a gate (lock_graph_gate()): its
	 * instance is part of the chain, whose validation records under which
	 * gate each of its edges was taken. */
	if (ts->depth >= 2)
		key = chain_mix(key, lock_graph_gate(ts));
	key = chain_key_end(key, class_id, op);
	/* Class pairs watched instance by instance (a nesting through another
	 * class): checked on every acquisition the caches did not answer. */
	if (__builtin_expect(__atomic_load_n(&lock_graph_watching, __ATOMIC_ACQUIRE), 0) && op != ACQUIRE_SYNC) {
		ts->inversion_reported = 0;
		lock_graph_check_watched(ts, lock, class_id, generation, ip, sink);
	}
	/* Same-class nesting is checked on every acquisition (the pairs
	 * are of instances, the chain of classes), and never cached. */
	if (__builtin_expect(same_class, 0)) {
		lock_graph_check_instances(ts, lock, class_id, ip, &hint, sink);
		if (chain_is_validated(key))
			return 0;
	} else if (__builtin_expect(chain_is_validated(key), 1)) {
		return 1;
	}
	*class_io = lock_graph_validate(ts, lock, class_id, op, ip, key, sink);
	return 0;
}

static inline int lock_graph_acquire_instance(struct thread_state *ts, const void *lock, uint32_t class_id,
					      uint32_t generation, enum acquire_op op, uintptr_t ip,
					      const struct lock_graph_sink *sink)
{
	return lock_graph_acquire_instance_as(ts, lock, &class_id, generation, op, ip, sink);
}

static inline int lock_graph_acquire(struct thread_state *ts, const void *lock, uint32_t class_id,
				     enum acquire_op op, uintptr_t ip, const struct lock_graph_sink *sink)
{
	return lock_graph_acquire_instance(ts, lock, class_id, 0, op, ip, sink);
}

void lock_graph_fork_prepare(struct thread_state *self);
void lock_graph_fork_parent(void);
void lock_graph_fork_child(struct thread_state *self);

#endif
