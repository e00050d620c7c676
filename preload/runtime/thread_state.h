/* Per-thread state of the tracer: the locks this thread holds, innermost last,
 * and its RCU read-side nesting and registration per flavor.
 * It lives in initial-exec TLS, so it exists from the thread's first
 * instruction (before any constructor ran) and costs one %fs-relative access.
 *
 * Signal safety. A signal handler may lock, unlock or enter a read side at
 * any instruction of the interrupted code, also in the middle of an update
 * of this state. Handlers run to completion and leave the state as they
 * found it (they release what they take), so the invariants are:
 *  - slots at and above ->depth are HELD_NONE;
 *  - an entry is written while it is HELD_NONE and published by storing its
 *    kind last; readers skip HELD_NONE entries;
 *  - ->depth grows before an entry is written (the handler then stacks on
 *    top of it) and shrinks after the entry was retired;
 *  - removing a middle entry shifts the ones above it down one at a time,
 *    each retired before it is overwritten: a handler may see a duplicate
 *    of one entry, never a torn or stale one.
 * Counters are read-modify-written without atomics: a handler that
 * interrupts between the load and the store puts back what it changed
 * before the store happens. signal_fence() keeps the compiler from
 * reordering the stores (the hardware does not reorder them as seen by the
 * same thread). */
#ifndef LOCKDEP_RCU_THREAD_STATE_H
#define LOCKDEP_RCU_THREAD_STATE_H

#include <pthread.h>
#include <stdint.h>
#include "base/flavors.h"

struct rcu_deref_set;

/* The kernel's MAX_LOCK_DEPTH. A recursive relock counts on its entry
 * (held_lock.references), so 48 is the number of distinct locks held. */
#define MAX_LOCK_DEPTH 48

enum held_kind {
	HELD_NONE,         /* free slot, or one being written */
	HELD_MUTEX,
	HELD_RWLOCK_READ,
	HELD_RWLOCK_WRITE,
	HELD_SPIN,
	HELD_RCU_READ,     /* a read-side critical section of ->flavor */
	NR_HELD_KINDS,
};

/* held_lock.attr: for HELD_RCU_READ, the flavor and the liburcu flavor
 * that really protects it (the header's bh/sched/SRCU are built on the
 * program's flavor); for locks, whether it is a recursive read. */
#define HELD_ATTR_FLAVOR(a)      ((a) & 7u)
#define HELD_ATTR_UNDERLYING(a)  (((a) >> 3) & 7u)
#define HELD_ATTR_RCU(f, u)      ((uint8_t)((f) | (u) << 3))
#define HELD_ATTR_READ_RECURSIVE 0x01u  /* a read that never waits for other
					   readers (reader-preferring rwlock) */
#define HELD_ATTR_AGGREGATE      0x20u  /* stands for `references` locks of its
					   class (held[] was full): their
					   addresses are not kept */
#define HELD_ATTR_TRYLOCK        0x40u  /* taken by a trylock: it never blocked */
#define HELD_ATTR_INHERITED      0x80u  /* held when the process forked: the
					   child's copy is not this thread's doing */

struct held_lock {
	const void *lock;       /* lock address; SRCU: the srcu_struct; RCU: NULL */
	uintptr_t acquire_ip;   /* return address of the acquiring call */
	/* One aligned 8-byte word, written whole when the entry is published
	 * (held_lock_push()): */
	uint32_t class_id;      /* lock_classes.h; 0 until looked up (lazily) */
	uint16_t references;    /* acquisitions of this lock (recursive mutexes) */
	uint8_t kind;           /* enum held_kind, stored last */
	uint8_t attr;           /* HELD_ATTR_* */
};
_Static_assert(__builtin_offsetof(struct held_lock, class_id) % 8 == 0 &&
	       __builtin_offsetof(struct held_lock, references) == __builtin_offsetof(struct held_lock, class_id) + 4 &&
	       __builtin_offsetof(struct held_lock, kind) == __builtin_offsetof(struct held_lock, class_id) + 6 &&
	       __builtin_offsetof(struct held_lock, attr) == __builtin_offsetof(struct held_lock, class_id) + 7,
	       "held_lock_push() writes class_id, references, kind and attr as one little-endian word");

/* What the thread is blocked in, for the watchdog (wait_state.h). Written
 * by the thread itself, read by the watchdog without its cooperation:
 * `kind` is stored last on begin and first on end, and `seq` tells one wait
 * from the next. */
struct wait_state {
	uint8_t kind;           /* enum wait_kind; WAIT_NONE: not blocked */
	uint8_t lock_kind;      /* WAIT_LOCK: enum held_kind of the lock */
	uint8_t flavor;         /* WAIT_GRACE_PERIOD: the liburcu flavor */
	uint8_t barrier;        /* WAIT_GRACE_PERIOD: rcu_barrier() */
	uint32_t seq;           /* one more per wait */
	const void *object;     /* the lock */
	uintptr_t ip;           /* the program's call */
	uint64_t since;         /* CLOCK_MONOTONIC ns: when the wait began */
	uint32_t stack;         /* stack depot id of the waiting call, 0 if none */
};

/* A blocking acquisition made before with the same locks held, already
 * validated: its class, as long as no lock instance changed since
 * (lock_instance_epoch). Two words, each stored whole, so that a signal
 * handler's update racing the thread's own can only leave an entry that
 * matches no key: `check` is the key xor'ed with `value`. */
#define ACQUIRE_CACHE_ENTRIES 8           /* a power of two */
struct acquire_cache_entry {
	uint64_t check;         /* key ^ value */
	uint64_t value;         /* class id | epoch << 32 */
};

/* Registration values in thread_state.registered[]. */
enum urcu_registration { URCU_NEVER_REGISTERED = 0, URCU_REGISTERED = 1, URCU_UNREGISTERED = 2 };

/* The event a QSBR thread's protection began with, the last the tracer
 * saw (one inlined by _LGPL_SOURCE is not seen): what a stall report names. */
enum qsbr_since {
	QSBR_SINCE_UNKNOWN,
	QSBR_SINCE_REGISTERED,
	QSBR_SINCE_ONLINE,
	QSBR_SINCE_QUIESCENT,
};

struct thread_state {
	/* Non-zero while the tracer itself runs (reporting, unwinding,
	 * symbolizing): every wrapper then goes straight to the real call.
	 * volatile: glibc declares dlsym/dladdr leaf functions and GCC drops
	 * plain stores around them. */
	volatile int in_tracer;
	/* Non-zero inside a liburcu entry point the program called: the
	 * library's own PLT calls (QSBR synchronize_rcu -> thread_offline, ...)
	 * are not the program's and are not checked. */
	int in_urcu;
	/* Non-zero while the header builds a bh/sched/SRCU read side out of the
	 * program's liburcu flavor: that liburcu call is accounted by the header. */
	int in_proxy;
	int thread_ended;       /* the thread-end checks already ran */
	uint32_t internal_locks; /* tracer_lock.h: the internal locks this thread
				    holds or is taking, a bit each */
	int tid;                /* set when the thread is listed */
	uint32_t start_seq;     /* thread_start_seq_next() when it was created;
				 * 0: the main thread, or one created unseen */
	int listed;             /* in thread_registry.c */
	/* Locks this thread holds that another thread released (a mutex used
	 * as a semaphore): posted by the releasing thread, dropped from held[]
	 * by this thread at its next acquisition or at its end. */
	int foreign_pending;    /* 1: see foreign_released; 2: it overflowed */
	unsigned nr_aggregates; /* entries with HELD_ATTR_AGGREGATE */
	const void *foreign_released[8];
	unsigned next_subclass; /* nesting annotation for the next acquisition */
	int traversal_allowed;  /* a checked liburcu-cds traversal's condition holds
				 * (lockdep-rcu.h): its first call is legal */
	/* intercept_lfht.c: the hash table this thread called last and its
	 * flavor, while no table was destroyed since (lfht_generation). */
	const void *lfht_table;
	uint32_t lfht_generation;
	int lfht_flavor;
	uint64_t perturb_state; /* perturb=1: this thread's random stream */
	uintptr_t stack_limit;  /* lowest usable stack address, 0 if unknown */
	unsigned depth;         /* entries used in held[] */
	unsigned untracked;     /* acquisitions dropped because held[] was full */
	unsigned nr_locks;      /* published entries that are locks */
	unsigned nr_readers;    /* published entries that are read-side sections */
	uint16_t nesting[NR_FLAVORS];
	uint8_t registered[NR_URCU_FLAVORS];   /* enum urcu_registration */
	uint8_t qsbr_offline;   /* registered with QSBR but offline */
	uint8_t urcu_worker;    /* a thread liburcu made (call_rcu workers) */
	uint8_t defer_registered[NR_URCU_FLAVORS];   /* rcu_defer_register_thread() */
	uint8_t hold_stamps_gone; /* lock_stat: the thread's stamps were given back */
	uint64_t *hold_stamps;  /* lock_stat=1: when each held[] entry was taken
				   (a page of its own, not TLS: small stacks) */
	struct wait_state wait;
	struct held_lock held[MAX_LOCK_DEPTH];
	/* What this thread dereferenced in its current read-side section
	 * (rcu_deref_set.h): a page from a pool, taken at its first
	 * dereference in a section; gone once the thread ended. After held[],
	 * whose place the lock wrappers' fast paths are tuned for. */
	struct rcu_deref_set *deref_set;
	uintptr_t qsbr_since_ip; /* QSBR: its last quiescent state, going online
				    or registering: where its protection began */
	uint8_t qsbr_since_what;   /* which of those (enum qsbr_since) */
	uint8_t deref_set_gone;
	struct acquire_cache_entry acquire_cache[ACQUIRE_CACHE_ENTRIES];
	/* The last chain of one held mutex and a mutex taken on top that
	 * mutex_lock_on_one() found validated: held class << 33 | held by
	 * trylock << 32 | new class (0: none). Validated chains stay valid
	 * (dependencies are never removed), so no invalidation. */
	uint64_t on_one_validated;
	/* Where this thread's stack ends above (stack_limit below): a stack
	 * pointer outside both, and outside every stack the tracer knows, is
	 * on a stack the program made (a coroutine's). 0: not known. */
	uintptr_t stack_top;
	/* tracer_stack.h: the thread's check stack (its guard page), whether
	 * checks run on it now, and the frame they were called from. */
	char *check_stack;
	uintptr_t check_stack_caller;
	volatile uint8_t check_stack_busy;
	/* The acquisition under validation was reported as an inversion of
	 * two instances (a watched class pair): the class cycle it also
	 * closes is the same bug, not printed twice (lock_graph.c). */
	uint8_t inversion_reported;
};

/* What takes every acquisition off the wrappers' common paths, program-wide,
 * a bit each beside its own flag, so that acquire_unusual() loads one word:
 * perturb or lock_stat (lock_slow_hooks), read sides of liburcu's that no
 * wrapper sees (urcu_readable_flavors), a signal handler installed
 * (signal_usage_tracked). Set by their setters after the flag itself. */
#define UNUSUAL_SLOW_HOOKS 1u
#define UNUSUAL_URCU_READERS 2u
#define UNUSUAL_SIGNALS 4u
extern unsigned acquire_unusual_globals;
static inline void acquire_unusual_globals_set(unsigned bit, int on)
{
	if (on)
		__atomic_or_fetch(&acquire_unusual_globals, bit, __ATOMIC_RELEASE);
	else
		__atomic_and_fetch(&acquire_unusual_globals, ~bit, __ATOMIC_RELEASE);
}

extern __thread struct thread_state tracer_thread
	__attribute__((tls_model("initial-exec")));

static inline struct thread_state *thread_state(void)
{
	return &tracer_thread;
}

#define signal_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

#define KIND_BIT(k) (1u << (k))
#define KIND_ANY_LOCK (KIND_BIT(HELD_MUTEX) | KIND_BIT(HELD_RWLOCK_READ) | \
		       KIND_BIT(HELD_RWLOCK_WRITE) | KIND_BIT(HELD_SPIN))

static inline int held_read_recursive(const struct held_lock *h)
{
	return h->kind == HELD_RCU_READ || (h->attr & HELD_ATTR_READ_RECURSIVE);
}

static inline int held_is_trylock(const struct held_lock *h)
{
	return h->kind != HELD_RCU_READ && (h->attr & HELD_ATTR_TRYLOCK);
}

static inline int held_is_inherited(const struct held_lock *h)
{
	return h->kind != HELD_RCU_READ && (h->attr & HELD_ATTR_INHERITED);
}

static inline enum rcu_flavor held_flavor(const struct held_lock *h)
{
	return (enum rcu_flavor)HELD_ATTR_FLAVOR(h->attr);
}

static inline enum rcu_flavor held_underlying(const struct held_lock *h)
{
	return (enum rcu_flavor)HELD_ATTR_UNDERLYING(h->attr);
}

static inline int held_is_aggregate(const struct held_lock *h)
{
	return h->kind != HELD_RCU_READ && (h->attr & HELD_ATTR_AGGREGATE);
}

/* Another thread released locks this thread holds: drop them. */
void foreign_releases_apply(struct thread_state *ts);

/* Index of the innermost entry for lock with one of the kinds in kind_mask
 * (bit per enum held_kind), or -1. Locks are mostly released innermost
 * first, so the first probe usually hits. */
static inline int held_lock_find(const struct thread_state *ts, const void *lock, unsigned kind_mask)
{
	for (int i = (int)ts->depth - 1; i >= 0; i--)
		if (ts->held[i].lock == lock && (kind_mask & KIND_BIT(ts->held[i].kind)))
			return i;
	return -1;
}

/* Index of the innermost read-side section of flavor (and SRCU domain), or -1. */
static inline int held_reader_find(const struct thread_state *ts, enum rcu_flavor flavor,
				   const void *domain)
{
	for (int i = (int)ts->depth - 1; i >= 0; i--) {
		const struct held_lock *h = &ts->held[i];
		if (h->kind == HELD_RCU_READ && held_flavor(h) == flavor &&
		    (flavor != FLAVOR_srcu || h->lock == domain))
			return i;
	}
	return -1;
}

/* Closes the gap at slot i: each entry above moves down one slot, the
 * slot retired before it is overwritten. Out of line: locks are mostly
 * released innermost first. */
void held_lock_close_gap(struct thread_state *ts, unsigned i);

/* Removes entry i, keeping the order of the others. */
static inline void held_lock_remove(struct thread_state *ts, int i)
{
	struct held_lock *h = &ts->held[i];
	if (h->kind == HELD_RCU_READ)
		ts->nr_readers--;
	else
		ts->nr_locks--;
	if (__builtin_expect(h->attr & HELD_ATTR_AGGREGATE, 0) && h->kind != HELD_RCU_READ)
		ts->nr_aggregates--;
	unsigned last = ts->depth - 1;
	if (__builtin_expect((unsigned)i != last, 0))
		held_lock_close_gap(ts, (unsigned)i);
	signal_fence();
	ts->held[last].kind = HELD_NONE;
	signal_fence();
	ts->depth = last;
}

/* Whether the thread is in a read-side section whose protection comes from
 * liburcu flavor `underlying` (any header flavor built on it counts). */
int held_reader_on(const struct thread_state *ts, enum rcu_flavor underlying);

/* Entering and leaving the tracer's own code; the guard nests. */
static inline void tracer_enter(struct thread_state *ts) { ts->in_tracer++; signal_fence(); }

/* Added to in_tracer for good when the thread found one of the tracer's
 * locks held by a thread gone from the process (tracer_lock.h): far above
 * any nesting of tracer_enter(), so every wrapper is the real call. */
#define ABANDONED_TRACER_DEPTH (1 << 24)

/* The tracer's slow work (naming from ELF files, writing a report) calls
 * open() and write(), which are cancellation points; the lock calls it
 * runs in are not. A thread with a cancellation request pending would be
 * cancelled inside pthread_mutex_lock(), with its locks (and the tracer's)
 * held. Deferred cancellation is held off around that work. */
static inline int tracer_cancel_off(void)
{
	int old = PTHREAD_CANCEL_DISABLE;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void tracer_cancel_restore(int old)
{
	if (old == PTHREAD_CANCEL_ENABLE)
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
}
static inline void tracer_leave(struct thread_state *ts) { signal_fence(); ts->in_tracer--; }

#endif
