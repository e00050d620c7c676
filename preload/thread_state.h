/* Per-thread state of the tracer: the locks this thread holds, innermost last,
 * and its RCU read-side nesting and registration per flavor.
 * It lives in initial-exec TLS, so it exists from the thread's first
 * instruction (before any constructor ran) and costs one %fs-relative access. */
#ifndef LOCKDEP_RCU_THREAD_STATE_H
#define LOCKDEP_RCU_THREAD_STATE_H

#include <stdint.h>
#include "flavors.h"

/* Deep enough for real programs (the kernel uses 48); bounded so the state
 * stays near 1 KiB of static TLS, which comes out of every thread's stack. */
#define MAX_LOCK_DEPTH 36

enum held_kind {
	HELD_MUTEX,
	HELD_RWLOCK_READ,
	HELD_RWLOCK_WRITE,
	HELD_SPIN,
	HELD_RCU_READ,  /* a read-side critical section of ->flavor */
};

struct held_lock {
	const void *lock;       /* lock address; SRCU: the srcu_struct; RCU: NULL */
	uintptr_t acquire_ip;   /* return address of the acquiring call */
	uint8_t kind;           /* enum held_kind */
	uint8_t flavor;         /* HELD_RCU_READ: enum rcu_flavor */
	uint8_t underlying;     /* HELD_RCU_READ: the liburcu flavor that really protects */
	uint8_t trylock;        /* taken by a trylock: it never blocked */
	uint8_t read_recursive; /* held for a read that never waits for other readers
				   (RCU readers, reader-preferring rwlocks): lock-order rules */
	uint8_t pad[3];
	uint32_t class_id;      /* lock_classes.h; 0 when unknown */
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
	unsigned next_subclass; /* nesting annotation for the next acquisition */
	uint64_t perturb_state; /* perturb=1: this thread's random stream */
	unsigned depth;         /* entries used in held[] */
	unsigned untracked;     /* acquisitions dropped because held[] was full */
	unsigned nr_locks;      /* entries that are locks, not read-side sections */
	unsigned nr_readers;    /* entries that are read-side sections */
	uint16_t nesting[NR_FLAVORS];
	uint8_t registered[NR_URCU_FLAVORS];
	uint8_t qsbr_offline;   /* registered with QSBR but offline */
	struct held_lock held[MAX_LOCK_DEPTH];
};

extern __thread struct thread_state tracer_thread
	__attribute__((tls_model("initial-exec")));

static inline struct thread_state *thread_state(void)
{
	return &tracer_thread;
}

#define KIND_BIT(k) (1u << (k))
#define KIND_ANY_LOCK (KIND_BIT(HELD_MUTEX) | KIND_BIT(HELD_RWLOCK_READ) | \
		       KIND_BIT(HELD_RWLOCK_WRITE) | KIND_BIT(HELD_SPIN))

/* held[] is full: count the acquisition in ->untracked, print the limit
 * once. Out of line: it never happens in a healthy program. */
void held_lock_overflow(struct thread_state *ts);

/* Records an acquisition. Returns 0 when held[] is full. Inline: every
 * lock wrapper does this, and a call would cost as much as the work. */
static inline int held_lock_push(struct thread_state *ts, const void *lock, enum held_kind kind,
				 uintptr_t ip, int trylock, uint32_t class_id, int read_recursive)
{
	if (__builtin_expect(ts->depth >= MAX_LOCK_DEPTH, 0)) {
		held_lock_overflow(ts);
		return 0;
	}
	struct held_lock *h = &ts->held[ts->depth++];
	h->lock = lock;
	h->acquire_ip = ip;
	h->kind = (uint8_t)kind;
	h->flavor = FLAVOR_NONE;
	h->underlying = FLAVOR_NONE;
	h->trylock = (uint8_t)trylock;
	h->read_recursive = (uint8_t)read_recursive;
	h->class_id = class_id;
	if (kind == HELD_RCU_READ)
		ts->nr_readers++;
	else
		ts->nr_locks++;
	return 1;
}

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
		if (h->kind == HELD_RCU_READ && h->flavor == flavor &&
		    (flavor != FLAVOR_srcu || h->lock == domain))
			return i;
	}
	return -1;
}

/* Removes entry i, keeping the order of the others. */
static inline void held_lock_remove(struct thread_state *ts, int i)
{
	if (ts->held[i].kind == HELD_RCU_READ)
		ts->nr_readers--;
	else
		ts->nr_locks--;
	unsigned last = --ts->depth;
	for (unsigned j = (unsigned)i; j < last; j++)
		ts->held[j] = ts->held[j + 1];
}

/* Whether the thread is in a read-side section whose protection comes from
 * liburcu flavor `underlying` (any header flavor built on it counts). */
int held_reader_on(const struct thread_state *ts, enum rcu_flavor underlying);

/* Entering and leaving the tracer's own code; the guard nests. */
static inline void tracer_enter(struct thread_state *ts) { ts->in_tracer++; __asm__ volatile("" ::: "memory"); }
static inline void tracer_leave(struct thread_state *ts) { __asm__ volatile("" ::: "memory"); ts->in_tracer--; }

#endif
