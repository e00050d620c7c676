/* What every lock wrapper does around the real call, shared by pthread
 * mutexes, rwlocks, spinlocks and C11 mutexes. Inline: this is the fast
 * path, a few loads and stores to this thread's TLS and nothing else. A
 * lock's class is looked up only when something is taken on top of it (or
 * it on top of something): a lone acquisition never touches a table. */
#ifndef LOCKDEP_RCU_LOCK_TRACKING_H
#define LOCKDEP_RCU_LOCK_TRACKING_H

#include <pthread.h>
#include "runtime/thread_state.h"
#include "checks/checks.h"
#include "graph/lock_graph.h"
#include "checks/lock_order_report.h"
#include "runtime/perturb.h"
#include "unwind/backtrace.h"
#include "classes/lock_class_keys.h"
#include "report/lock_stat.h"
#include "checks/lock_wait.h"
#include "runtime/signal_state.h"
#include "checks/check_signal_usage.h"
#include "classes/lock_instances.h"
#include "graph/instance_pairs.h"

/* From the options at startup: lock_slow_paths and lock_slow_hooks. */
void lock_tracking_setup(void);

/* Records an acquisition. Returns the entry, or NULL when held[] is full.
 * Inline: every lock wrapper does this, and a call would cost as much as
 * the work. */
static inline struct held_lock *held_lock_push(struct thread_state *ts, const void *lock,
					       enum held_kind kind, uintptr_t ip,
					       uint32_t class_id, uint8_t attr)
{
	if (__builtin_expect(ts->foreign_pending, 0))
		foreign_releases_apply(ts);
	unsigned d = ts->depth;
	if (__builtin_expect(d >= MAX_LOCK_DEPTH, 0)) {
		held_lock_overflow(ts, lock, kind, ip);
		return 0;
	}
	struct held_lock *h = &ts->held[d];
	ts->depth = d + 1;      /* reserve: a handler now stacks above */
	signal_fence();
	h->lock = lock;
	h->acquire_ip = ip;
	signal_fence();
	/* Publish: class_id, references, kind and attr are one aligned 8-byte
	 * word (held_lock_word), stored at once, so the kind goes last with
	 * the fields beside it. */
	uint64_t word = (uint64_t)class_id | (uint64_t)1 << 32 | (uint64_t)kind << 48 | (uint64_t)attr << 56;
	__builtin_memcpy(&h->class_id, &word, sizeof(word));
	signal_fence();
	if (kind == HELD_RCU_READ)
		ts->nr_readers++;
	else
		ts->nr_locks++;
	return h;
}


#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define CALLER_IP() ((uintptr_t)__builtin_return_address(0))

/* glibc keeps the mutex type in __kind; the low bits are the POSIX type
 * (stable ABI: the initializers in <bits/struct_mutex.h> depend on it). */
static inline int mutex_type(const pthread_mutex_t *m)
{
	return m->__data.__kind & 3;
}

static inline int mutex_relock_would_block(const pthread_mutex_t *m)
{
	int type = mutex_type(m);
	return type != PTHREAD_MUTEX_RECURSIVE && type != PTHREAD_MUTEX_ERRORCHECK;
}

/* The class of the lock about to be taken, with the nesting annotation the
 * header may have set for this one acquisition. */
static inline uint32_t lock_class_for_acquire_instance(struct thread_state *ts, const void *lock,
						       enum held_kind kind, uintptr_t ip, uint32_t *generation)
{
	uint32_t class_id = lock_class_of_kind(lock, kind, ip, generation);
	if (unlikely(ts->next_subclass)) {
		class_id = lock_class_nested(class_id, ts->next_subclass);
		ts->next_subclass = 0;
	}
	return class_id;
}

static inline uint32_t lock_class_for_acquire(struct thread_state *ts, const void *lock, enum held_kind kind,
					      uintptr_t ip)
{
	uint32_t generation;
	return lock_class_for_acquire_instance(ts, lock, kind, ip, &generation);
}

/* The read sides no wrapper saw begin that this thread is in: inlined
 * ones (a bit per flavor) and, as the QSBR bit, being an online QSBR
 * reader. */
static inline unsigned implicit_readers(const struct thread_state *ts)
{
	return (urcu_readable_flavors ? inline_readers(ts) : 0) |
	       (unsigned)qsbr_thread_is_reader(ts) << FLAVOR_qsbr;
}

/* Whether acquisitions of this thread depend on anything right now: a
 * lock, a read side the wrappers saw, or one they could not see (QSBR
 * online, inlined). */
static inline int thread_holds_anything(const struct thread_state *ts)
{
	return ts->nr_locks | ts->nr_readers | implicit_readers(ts);
}

/* The acquisition cache's key: the new lock and how it is taken, every
 * held entry (address, kind, attributes: what its class and its part of
 * the chain come from), the implicit read sides and whose thread this is.
 * Addresses fit in 48 bits; kinds and attributes go above them (an entry's
 * kind and attr are the top 16 bits of its held_lock word). A slot being
 * rewritten under a signal handler folds in as it is: the key then matches
 * nothing the thread normally holds. */
static inline uint64_t acquire_cache_key(const struct thread_state *ts, const void *lock, unsigned how,
					 unsigned implicit, uint64_t deliverable)
{
	/* The new lock is mixed in before the held entries: folded in
	 * alike, A taken on B and B taken on A would share a key. */
	uint64_t key = ((uintptr_t)lock ^ (uint64_t)how << 60 ^
			(uint64_t)(implicit | (unsigned)ts->urcu_worker << 7) << 48) * 0xC2B2AE3D27D4EB4Full ^
		       deliverable * 0x165667B19E3779F9ull;
	for (unsigned i = 0, n = ts->depth; i < n; i++) {
		uint64_t word;
		__builtin_memcpy(&word, &ts->held[i].class_id, sizeof(word));
		key = (key ^ (uintptr_t)ts->held[i].lock ^ (word & 0xffff000000000000ull)) * 0x9E3779B97F4A7C15ull;
	}
	return (key ^ key >> 29) | 1;
}

static inline struct acquire_cache_entry *acquire_cache_slot(struct thread_state *ts, uint64_t key)
{
	return &ts->acquire_cache[(key >> 32) & (ACQUIRE_CACHE_ENTRIES - 1)];
}

/* The cache's answer for an acquisition with no implicit read side: 1
 * and the class when it was validated before on top of the same held
 * entries and no lock instance changed since. */
static inline __attribute__((always_inline)) int acquire_cache_hit(struct thread_state *ts, const void *lock,
								   unsigned how, unsigned implicit, uint64_t deliverable,
								   uint32_t *class_id, uint64_t *key_out,
								   uint32_t *epoch_out)
{
	/* Acquire: paired with lock_instance_epoch_advance(); an epoch read
	 * before the class lookup it vouches for. */
	uint32_t epoch = __atomic_load_n(&lock_instance_epoch, __ATOMIC_ACQUIRE);
	uint64_t key = acquire_cache_key(ts, lock, how, implicit, deliverable);
	const struct acquire_cache_entry *e = acquire_cache_slot(ts, key);
	uint64_t value = e->value, check = e->check;
	*class_id = (uint32_t)value;
	*key_out = key;
	*epoch_out = epoch;
	return (check ^ value) == key && (uint32_t)(value >> 32) == epoch;
}

/* Remembers a validated acquisition (nothing reported) under the key and
 * epoch of its probe. The check word goes last, so an entry is whole or
 * matches nothing (a signal handler may run any of this in between). */
/* fast_paths=1 (the default): acquisitions validated before are answered
 * by the acquisition cache, and a mutex taken on one other by
 * mutex_lock_on_one(). 0: neither, every acquisition with something held
 * goes through lock_before_blocking_slow(): the general path the fast ones
 * must agree with (the differential test compares the two). */
extern int lock_fast_paths;

static inline void acquire_cache_fill(struct thread_state *ts, uint64_t key, uint32_t epoch, uint32_t class_id)
{
	if (unlikely(!lock_fast_paths))
		return;   /* an empty cache answers nothing */
	struct acquire_cache_entry *e = acquire_cache_slot(ts, key);
	uint64_t value = (uint64_t)epoch << 32 | class_id;
	__atomic_store_n(&e->check, 0, __ATOMIC_RELAXED);
	signal_fence();
	__atomic_store_n(&e->value, value, __ATOMIC_RELAXED);
	signal_fence();
	__atomic_store_n(&e->check, key ^ value, __ATOMIC_RELAXED);
}

/* How an acquisition is taken, for the cache key: the kind, and whether
 * taking it again would block (which decides the recursion check). */
static inline unsigned acquire_how(enum held_kind kind, int relock_blocks)
{
	return (unsigned)kind | (unsigned)!!relock_blocks << 3;
}

/* An acquisition with something held that the cache did not answer will
 * look up the new lock's instance and the innermost held one's: started
 * at once, so that a program with more locks than the caches hold waits
 * for one miss, not two in turn (and the program's own lock line loads
 * meanwhile). */
static inline void acquire_prefetch(const struct thread_state *ts, const void *lock, enum held_kind kind)
{
	unsigned d = ts->depth;
	const struct held_lock *top = &ts->held[d ? d - 1 : 0];
	int top_is_lock = d && top->kind != HELD_RCU_READ && top->kind != HELD_NONE && top->lock != lock;
	/* Mutexes carry their class (mutex_class_tag.h): their own lines
	 * answer, the innermost one's is in the cache already. */
	int tagged = mutex_tag_key != 0;
	const void *top_lookup = top_is_lock && !top->class_id && !(tagged && top->kind == HELD_MUTEX) ? top->lock : NULL;
	if (!(tagged && kind == HELD_MUTEX) || top_lookup)
		lock_instances_prefetch(lock, top_lookup);
}

/* Out of line: an acquisition with something held that the cache did not
 * answer, or that is not to be cached (cache_key 0). */
uint32_t lock_before_blocking_slow(struct thread_state *ts, const void *lock, enum held_kind kind,
				   uintptr_t ip, int relock_blocks, unsigned implicit,
				   uint64_t cache_key, uint32_t epoch);

/* Whether this thread is inside a read side no wrapper saw. */
int implicit_readers_out_of_line(const struct thread_state *ts);

/* ---- what makes an acquisition unusual: one definition ---------------------
 * Everything below that takes an acquisition off its common path is
 * spelled with these. Bitwise, not logical: the fast paths test them
 * together without branches. */

/* Work this thread must do at its next acquisition, whatever the
 * acquisition cache says: a nesting annotation to apply, a release another
 * thread made of one of its locks to apply. */
static inline __attribute__((always_inline)) unsigned acquire_pending(const struct thread_state *ts)
{
	return ts->next_subclass | (unsigned)ts->foreign_pending;
}

/* The same, or program-wide hooks at every acquisition: perturb's delays,
 * lock_stat's counting. */
static inline __attribute__((always_inline)) unsigned acquire_has_work(const struct thread_state *ts)
{
	return acquire_pending(ts) | (unsigned)lock_slow_hooks;
}

/* Read sides no wrapper sees may be open in this thread: liburcu's
 * inline read sides are in use, or the thread is an online QSBR reader. */
static inline __attribute__((always_inline)) unsigned unseen_readers_possible(const struct thread_state *ts)
{
	return urcu_readable_flavors | (unsigned)(ts->registered[FLAVOR_qsbr] == 1);
}

/* Unusual for more than a signal handler installed. */
static inline __attribute__((always_inline)) int acquire_unusual_beyond_signals(const struct thread_state *ts)
{
	return (acquire_has_work(ts) | unseen_readers_possible(ts)) != 0;
}

/* Unusual: the above, or a signal handler installed. The same test as
 * acquire_unusual_beyond_signals() || signal_usage_tracked, with the
 * program-wide flags read as one word (acquire_unusual_globals, whose
 * bits mirror lock_slow_hooks, urcu_readable_flavors and
 * signal_usage_tracked). */
static inline __attribute__((always_inline)) int acquire_unusual(const struct thread_state *ts)
{
	return (acquire_pending(ts) | __atomic_load_n(&acquire_unusual_globals, __ATOMIC_RELAXED) |
		(unsigned)(ts->registered[FLAVOR_qsbr] == 1)) != 0;
}

/* Whether a blocking acquisition has anything to check before the real
 * call: the thread holds something (or is in a read side no wrapper saw),
 * it has work pending, perturb or lock_stat is on, or a signal handler is
 * installed. Most acquisitions of most programs hold nothing: they pay
 * these loads and lock_acquired_first(). */
static inline __attribute__((always_inline)) int acquire_checks_needed(const struct thread_state *ts)
{
	return (ts->nr_locks | ts->nr_readers | acquire_has_work(ts) | (unsigned)signal_usage_tracked) != 0 ||
	       (unlikely(unseen_readers_possible(ts)) && implicit_readers_out_of_line(ts));
}

/* A probe of the acquisition cache that missed, for the checked path to
 * fill in after validating instead of hashing the held entries again (key
 * 0: not probed, or probed for another `how`), and whether it was made
 * with nothing unusual going on (acquire_unusual() false). */
struct acquire_miss {
	uint64_t key;
	uint32_t epoch;
	uint32_t usual;
};

/* ACQUIRE_FAST()'s unusual cases, out of its common path. */

/* A signal handler installed, nothing else unusual: the acquisition cache
 * answers in a known signal context, which is part of its key
 * (signal_context_cacheable(); lock_before_blocking()'s key too). Returns
 * 2 on a hit (the class in *class_id: the wrapper's condition on a hit
 * applies), else 0. */
static inline __attribute__((always_inline)) int acquire_fast_signals(struct thread_state *ts, const void *lock,
								      unsigned how, uint32_t *class_id,
								      struct acquire_miss *miss)
{
	uint64_t deliverable;
	if (!signal_context_cacheable(&deliverable))
		return 0;
	return acquire_cache_hit(ts, lock, how, 0, deliverable, class_id, &miss->key, &miss->epoch) ? 2 : 0;
}

/* Anything else unusual. A nesting annotation, a pending foreign release,
 * perturb or lock_stat: the checked path runs, held locks or not (it
 * applies the annotation or the release, and counts for lock_stat, which
 * lock_acquired_first() does not). liburcu loaded (read sides no wrapper sees), with or without a
 * handler: the cache answers with the read sides it cannot see in its key
 * (and the signal context), except inside an inlined read side (whose
 * checks run at every acquisition). Returns 1 when the acquisition may skip
 * the checks holding nothing, 2 on a cache hit, else 0. Out of line: the
 * common path stays small. */
static __attribute__((noinline, unused)) int acquire_fast_unusual(struct thread_state *ts, const void *lock,
								    unsigned how, uint32_t *class_id,
								    struct acquire_miss *miss)
{
	if (acquire_has_work(ts))
		return 0;
	uint64_t deliverable = 0;
	if (signal_usage_tracked && !signal_context_cacheable(&deliverable))
		return 0;
	unsigned implicit = implicit_readers(ts);
	if (implicit & ~(1u << FLAVOR_qsbr))
		return 0;
	if (!(ts->nr_locks | ts->nr_readers | implicit | (unsigned)signal_usage_tracked))
		return 1;
	return acquire_cache_hit(ts, lock, how, implicit, deliverable, class_id, &miss->key, &miss->epoch) ? 2 : 0;
}

/* The wrappers' own test before a blocking acquisition: 1 when the checks
 * can be skipped, with the class to record (0 when nothing is held).
 * Holding locks (or exported read sides) and nothing unusual, the
 * acquisition cache may answer right here; anything else is
 * lock_before_blocking()'s, out of line. `how` is evaluated only when
 * something is held, `hit_also_if` only after a hit (the condition the
 * wrapper puts on the cache's answer). When the answer is 0, `miss` holds
 * the probe's key and epoch (key 0 when the cache was not asked), for the
 * checked path (lock_before_blocking_after()), and whether nothing unusual
 * was going on (miss->usual); when it is 1, `miss` is not to be read. */
#define ACQUIRE_FAST(ts, lock, how, class_id, hit_also_if, miss) ({                \
	int fast_ = 1;                                                           \
	*(class_id) = 0;                                                         \
	if (unlikely(acquire_unusual(ts))) {                                     \
		/* locals: the caller's stay in registers on its fast path */   \
		uint32_t c_ = 0;                                                 \
		struct acquire_miss m_ = { 0, 0, 0 };                            \
		int r_ = acquire_unusual_beyond_signals(ts)                      \
			? acquire_fast_unusual(ts, lock, how, &c_, &m_)          \
			: acquire_fast_signals(ts, lock, how, &c_, &m_);         \
		*(class_id) = c_;                                                \
		*(miss) = m_;                                                    \
		fast_ = r_ == 1 || (r_ == 2 && (hit_also_if));                   \
	}                                                                        \
	else if (unlikely((ts)->nr_locks | (ts)->nr_readers)) {                  \
		(miss)->usual = 1;                                               \
		fast_ = acquire_cache_hit(ts, lock, how, 0, 0, class_id,         \
					  &(miss)->key, &(miss)->epoch) &&       \
			(hit_also_if);                                           \
	}                                                                        \
	fast_;                                                                   \
})

/* After an acquisition that ACQUIRE_FAST() let through: the entry, and
 * nothing else (no foreign release pending, lock_stat off). */
static inline __attribute__((always_inline)) void lock_acquired_first(struct thread_state *ts, const void *lock,
								      enum held_kind kind, uintptr_t ip,
								      uint32_t class_id, uint8_t attr)
{
	unsigned d = ts->depth;
	if (unlikely(d >= MAX_LOCK_DEPTH)) {
		held_lock_overflow(ts, lock, kind, ip);
		return;
	}
	struct held_lock *h = &ts->held[d];
	ts->depth = d + 1;      /* reserve: a handler now stacks above */
	signal_fence();
	h->lock = lock;
	h->acquire_ip = ip;
	signal_fence();
	uint64_t word = (uint64_t)class_id | (uint64_t)1 << 32 | (uint64_t)kind << 48 | (uint64_t)attr << 56;
	__builtin_memcpy(&h->class_id, &word, sizeof(word));   /* publish (held_lock_push()) */
	signal_fence();
	ts->nr_locks++;
}

/* Before a blocking acquisition (when acquire_checks_needed()): if this
 * thread already holds the same lock in a way that makes the call block
 * forever, say so now, because the call will never return to let us say it
 * later; then the lock-order validator, also before the call, so a real
 * deadlock is explained before it hangs. Returns the class when it was
 * needed (0: look it up later). An acquisition made before on top of the
 * same held entries, and validated then, is answered by the thread's
 * acquisition cache: a hash of the held entries and two loads (kernel
 * lockdep's chain-key cache, per thread and by address); the rest is out
 * of line. */
static inline __attribute__((always_inline)) uint32_t lock_before_blocking(struct thread_state *ts,
									   const void *lock, enum held_kind kind,
									   uintptr_t ip, int relock_blocks)
{
	perturb_point(ts);
	unsigned implicit = unlikely(unseen_readers_possible(ts)) ? implicit_readers(ts) : 0;
	/* signal_usage_tracked: the program installed a signal handler; every
	 * blocking acquisition records its signal usage (nothing held too),
	 * from the cache only in a known signal context, which is part of the
	 * key (signal_context_cacheable()). */
	uint64_t deliverable = 0;
	if (unlikely(!(ts->nr_locks | ts->nr_readers | implicit | (unsigned)signal_usage_tracked) ||
		     acquire_pending(ts) ||
		     (signal_usage_tracked && !signal_context_cacheable(&deliverable))))
		return lock_before_blocking_slow(ts, lock, kind, ip, relock_blocks, implicit, 0, 0);
	uint32_t class_id, epoch;
	uint64_t key;
	if (likely(acquire_cache_hit(ts, lock, acquire_how(kind, relock_blocks), implicit, deliverable, &class_id, &key,
				     &epoch))) {
		if (unlikely(implicit & ~(1u << FLAVOR_qsbr)) && !ts->in_urcu)
			check_inline_readers(ts, ip);
		return class_id;
	}
	return lock_before_blocking_slow(ts, lock, kind, ip, relock_blocks, implicit, key, epoch);
}

static inline __attribute__((always_inline)) uint32_t lock_before_blocking_after(struct thread_state *ts,
										 const void *lock, enum held_kind kind,
										 uintptr_t ip, int relock_blocks,
										 const struct acquire_miss *miss)
{
	/* ACQUIRE_FAST() probed the cache for this acquisition and missed,
	 * with nothing unusual going on: straight to the checks. */
	if (miss->key && !acquire_unusual_beyond_signals(ts))
		return lock_before_blocking_slow(ts, lock, kind, ip, relock_blocks, 0, miss->key, miss->epoch);
	return lock_before_blocking(ts, lock, kind, ip, relock_blocks);
}

static inline void lock_acquired(struct thread_state *ts, const void *lock, enum held_kind kind,
				 uintptr_t ip, uint32_t class_id, uint8_t attr)
{
	struct held_lock *h = held_lock_push(ts, lock, kind, ip, class_id, attr);
	if (unlikely(lock_stat_enabled) && h)
		lock_stat_acquired(ts, (unsigned)(h - ts->held));
}

/* A trylock cannot block, so it adds no edge into the lock; it is held
 * afterwards and later acquisitions depend on it. */
static inline void lock_acquired_by_trylock(struct thread_state *ts, const void *lock,
					    enum held_kind kind, uintptr_t ip, uint8_t attr)
{
	uint32_t class_id = unlikely(ts->next_subclass) ? lock_class_for_acquire(ts, lock, kind, ip) : 0;
	if (unlikely(signal_usage_tracked))   /* held with a signal deliverable */
		signal_usage_trylocked(ts, lock, class_id, kind, attr & HELD_ATTR_READ_RECURSIVE, ip);
	struct held_lock *h = held_lock_push(ts, lock, kind, ip, class_id, attr | HELD_ATTR_TRYLOCK);
	if (unlikely(lock_stat_enabled) && h)
		lock_stat_acquired(ts, (unsigned)(h - ts->held));
}

/* A recursive mutex this thread holds, taken again: one more reference on
 * its entry (the kernel's held_lock.references), no new entry, no edge.
 * Returns the entry, or NULL when it is not held here. */
static inline struct held_lock *recursive_relock(struct thread_state *ts, const pthread_mutex_t *m)
{
	if (likely(!ts->nr_locks) || mutex_type(m) != PTHREAD_MUTEX_RECURSIVE)
		return 0;
	int i = held_lock_find(ts, m, KIND_BIT(HELD_MUTEX));
	return i >= 0 ? &ts->held[i] : 0;
}

static inline void add_reference(struct thread_state *ts, struct held_lock *h)
{
	if (likely(h->references < UINT16_MAX))
		h->references++;
	else
		ts->untracked++;
}

/* Release: the innermost entry for the lock loses a reference and goes
 * with its last; a lock we never saw taken is the kernel's bad unlock
 * balance (lock_release_unheld() tells the other cases apart). The perturb
 * point comes after the real unlock (see the wrappers): never a delay with
 * the lock still held and the thread cancellable. */
static inline void lock_released(struct thread_state *ts, const void *lock, unsigned kind_mask,
				 uintptr_t ip, const char *type_name)
{
	int i = held_lock_find(ts, lock, kind_mask);
	if (likely(i >= 0)) {
		struct held_lock *h = &ts->held[i];
		if (unlikely(h->references > 1)) {
			h->references--;
		} else {
			if (unlikely(lock_stat_enabled))
				lock_stat_released(ts, (unsigned)i);
			held_lock_remove(ts, i);
		}
	} else {
		lock_release_unheld(ts, lock, kind_mask, ip, type_name);
	}
}

/* The release fast path of the wrappers: the innermost entry is this
 * lock, taken once, not an aggregate (and lock_slow_hooks is off: the
 * caller's test); it is retired here as held_lock_remove() does (counted
 * out, retired, then ->depth shrinks).
 * Returns 0, having changed nothing, for anything else: then the wrapper
 * calls lock_released(). kind_mask holds lock kinds only. */
static inline int lock_release_innermost(struct thread_state *ts, const void *lock, unsigned kind_mask)
{
	unsigned d = ts->depth;
	if (unlikely(!d))
		return 0;
	struct held_lock *h = &ts->held[d - 1];
	uint64_t word;   /* references, kind and attr at once */
	__builtin_memcpy(&word, &h->class_id, sizeof(word));
	unsigned kind = (unsigned)(word >> 48) & 0xff;
	if (unlikely(h->lock != lock || (word & ((uint64_t)HELD_ATTR_AGGREGATE << 56 | 0xffffull << 32)) != (uint64_t)1 << 32 ||
		     !(kind_mask & KIND_BIT(kind))))
		return 0;
	ts->nr_locks--;
	signal_fence();
	h->kind = HELD_NONE;
	signal_fence();
	ts->depth = d - 1;
	return 1;
}

/* Destroying a lock this thread holds is reported before the real call.
 * Returns the held[] index to forget if the destroy succeeds (glibc refuses
 * some with EBUSY, and then the lock stays held), or -1. */
static inline int lock_before_destroy(struct thread_state *ts, const void *lock, unsigned kind_mask,
				      unsigned long size, uintptr_t ip)
{
	if (likely(ts->nr_locks == 0))
		return -1;
	int i = held_lock_find(ts, lock, kind_mask);
	if (unlikely(i >= 0))
		print_held_lock_freed(ts, ip, lock, size, i);
	return i;
}

/* An init call succeeded: the lock joins the class of this init site.
 * A lock on the initializing thread's own stack (within 1 MiB above its
 * stack pointer) is not followed: such locks live for one call and serve
 * hand-offs between threads (the kernel's completions), where class-level
 * ordering gives false cycles (seen in Knot DNS). */
static inline void lock_initialized(const void *lock, int ret, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (ret != 0 || ts->in_tracer | ts->in_urcu)
		return;
	/* Initializing a lock this thread holds releases it (jemalloc's fork
	 * child handler re-initializes the arena mutexes its prepare handler
	 * locked): no report, and nothing left held. */
	if (unlikely(ts->nr_locks)) {
		int i = held_lock_find(ts, lock, KIND_ANY_LOCK);
		if (i >= 0)
			held_lock_remove(ts, i);
	}
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	if ((uintptr_t)lock >= sp && (uintptr_t)lock - sp < (1u << 20)) {
		lock_class_untrack_instance(lock);
		return;
	}
	/* The call chain is unwound right here in the wrapper: fewer of the
	 * tracer's frames to step through first. */
	uintptr_t frames[CLASS_KEY_MAX_CALLERS + 1];
	size_t n = backtrace_capture(frames, site_key_frames_wanted());
	lock_class_init_instance(lock, ip, frames, n);
}

/* The destroy succeeded: forget the lock, so the one bug does not come back
 * as "still has locks held" at thread end. */
static inline void lock_after_destroy(struct thread_state *ts, const void *lock, int held_index, int ret)
{
	if (unlikely(held_index >= 0) && ret == 0)
		held_lock_remove(ts, held_index);
	if (ret == 0)
		lock_class_destroy_instance(lock);
}

/* Condition waits release the mutex inside the C library and take it again
 * before returning, where no wrapper sees it. The entry is set aside for the
 * wait and put back by mutex_wait_end(), which is also the cancellation
 * cleanup handler: cancellation unwinds with the mutex held again. */
struct mutex_wait_frame {
	struct thread_state *ts;
	struct held_lock entry;
	int was_held;
};

static inline void mutex_wait_begin(struct mutex_wait_frame *f, struct thread_state *ts,
				    const void *mutex, uintptr_t ip)
{
	f->ts = ts;
	int i = held_lock_find(ts, mutex, KIND_BIT(HELD_MUTEX));
	f->was_held = i >= 0;
	if (f->was_held) {
		f->entry = ts->held[i];
		if (unlikely(lock_stat_enabled))
			lock_stat_released(ts, (unsigned)i);
		held_lock_remove(ts, i);
		/* The wake-up takes the mutex again behind the locks still
		 * held: validate that order now, before the wait. */
		if (thread_holds_anything(ts)) {
			uint32_t class_id = held_class(&f->entry);
			lock_graph_acquire(ts, mutex, class_id, ACQUIRE_LOCK, ip, &lock_order_reports);
		}
	}
}

/* Whatever the real wait returned, the mutex is held again. */
static inline void mutex_wait_end(void *arg)
{
	struct mutex_wait_frame *f = arg;
	if (f->was_held) {
		struct held_lock *h = held_lock_push(f->ts, f->entry.lock, HELD_MUTEX, f->entry.acquire_ip,
						     f->entry.class_id, f->entry.attr);
		if (h) {
			h->references = f->entry.references;
			if (unlikely(lock_stat_enabled))
				lock_stat_acquired(f->ts, (unsigned)(h - f->ts->held));
		}
	}
}

/* The body of every condition-wait wrapper; `m` is the mutex argument. */
#define MUTEX_WAIT(call)                                                         \
	struct thread_state *ts = thread_state();                                \
	if (unlikely(ts->in_tracer | ts->in_urcu))                               \
		return call;                                                     \
	struct mutex_wait_frame frame;                                           \
	mutex_wait_begin(&frame, ts, m, CALLER_IP());                            \
	int ret;                                                                 \
	pthread_cleanup_push(mutex_wait_end, &frame);                            \
	ret = call;                                                              \
	pthread_cleanup_pop(1);                                                  \
	return ret

#endif
