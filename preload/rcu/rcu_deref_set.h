/* What a thread inside an RCU read-side critical section dereferenced there,
 * so that a free() by another thread can tell whether a reader holds the
 * memory (check_rcu_free.c). The set is "open" from the section's first
 * dereference to the end of its outermost section (QSBR: to its next
 * quiescent state or going offline); closing forgets it all.
 *
 * One set per thread, in a page of its own (not TLS: glibc carves static TLS
 * out of every thread's stack, and small stacks must keep working), taken
 * from a pool at the thread's first dereference inside a section and given
 * back when the thread ends. Pages are never unmapped, so another thread
 * may read any set at any time without a lock.
 *
 * The owner is the only writer of its set (and its signal handlers, which
 * nest: see rcu_deref_record()); freeing threads read it unsynchronized, as
 * a seqlock reader: `gen` is odd while the set is open and changes at every
 * open and close, and a reader keeps what it read only if `gen` was the same
 * odd value before and after. So a racing read can miss a dereference (the
 * section ended or began meanwhile), never invent one.
 *
 * Bounded: the last DEREF_SET_ENTRIES distinct dereferences of a section
 * are kept (a ring; the same pointer dereferenced twice in a row is one
 * entry). Older ones are overwritten and counted, and a report says how
 * many were not remembered: a free of one of those is missed, never
 * reported wrongly. */
#ifndef LOCKDEP_RCU_RCU_DEREF_SET_H
#define LOCKDEP_RCU_RCU_DEREF_SET_H

#include <stdint.h>
#include "runtime/thread_state.h"
#include "rcu/urcu_reader_state.h"
#include "runtime/perturb.h"

#define DEREF_SET_ENTRIES 64          /* a power of two */
#define MAX_DEREF_SETS 16384          /* threads dereferencing at once */

struct rcu_deref {
	uintptr_t ptr;   /* what rcu_dereference() returned; 0 while rewritten */
	uintptr_t ip;    /* where it was called */
};

/* Section info says where the protection began: the outermost read-side
 * section, or for a QSBR reader outside any section, its last quiescent
 * state (or going online, or registering). */
#define DEREF_SECTION_QSBR_ONLINE 0x100u   /* in `section`: QSBR online, no section */

struct rcu_deref_set {
	/* Written by the owner. */
	uint64_t gen;          /* odd while open; only ever grows */
	uint64_t count;        /* dereferences recorded since the open */
	uintptr_t section_ip;  /* where the protection began */
	uint32_t section;      /* its flavor, | DEREF_SECTION_QSBR_ONLINE */
	int32_t tid;           /* the owner, set when taken from the pool */
	/* Written by the owner and by freeing threads. */
	uint32_t owned;        /* 0: in the pool */
	uint32_t advertised;   /* counted in rcu_deref_sets_advertised */
	uint64_t spare[3];
	/* Written by freeing threads only: a cache line of its own, so their
	 * writes do not bounce the owner's line. */
	uint64_t scanned_gen __attribute__((aligned(64)));  /* the closed gen a scan last saw */
	struct rcu_deref entries[DEREF_SET_ENTRIES] __attribute__((aligned(64)));
};

/* Sets that may be open. A thread advertises its set at an open when it is
 * not advertised already, and a freeing thread retires a set it finds
 * closed at two scans in a row: a thread in sections all the time stays
 * advertised without touching this shared counter again, and a program
 * whose readers are idle (or that never dereferences) pays one load and a
 * branch per free(). */
extern unsigned rcu_deref_sets_advertised;

static inline int rcu_deref_sets_may_be_open(void)
{
	return __atomic_load_n(&rcu_deref_sets_advertised, __ATOMIC_RELAXED) != 0;
}

/* Out of line: the first dereference of a thread (its set from the pool),
 * the unusual opens (not inside a section begun first, or not advertised),
 * the thread's end, fork. */
struct rcu_deref_set *rcu_deref_set_claim(struct thread_state *ts);
void rcu_deref_set_describe(struct thread_state *ts, struct rcu_deref_set *s);
void rcu_deref_set_advertise(struct rcu_deref_set *s);
void rcu_deref_set_qsbr_online(struct thread_state *ts, struct rcu_deref_set *s);
void rcu_deref_set_release(struct thread_state *ts);
void rcu_deref_sets_fork_child(struct thread_state *self);

static inline int rcu_deref_set_is_open(const struct rcu_deref_set *s)
{
	return s && (__atomic_load_n(&s->gen, __ATOMIC_RELAXED) & 1);
}

/* The first dereference of a section opens the set: what it remembers from
 * now on belongs to this section. Inline, since every section that
 * dereferences opens it: the section that protects it is usually the
 * first held entry. */
static inline void rcu_deref_set_open(struct thread_state *ts, struct rcu_deref_set *s, uint64_t gen)
{
	/* Everything written from here on belongs to the new section: a scan
	 * that reads it sees the close before it (paired with the scan's
	 * acquire fence), so it cannot take it for the old section's. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->count, 0, __ATOMIC_RELAXED);
	const struct held_lock *outermost = &ts->held[0];
	if (__builtin_expect(ts->depth && outermost->kind == HELD_RCU_READ, 1)) {
		__atomic_store_n(&s->section, (uint32_t)held_flavor(outermost), __ATOMIC_RELAXED);
		__atomic_store_n(&s->section_ip, outermost->acquire_ip, __ATOMIC_RELAXED);
	} else {
		rcu_deref_set_describe(ts, s);
	}
	__atomic_store_n(&s->gen, gen + 1, __ATOMIC_RELEASE);
	if (__builtin_expect(!__atomic_load_n(&s->advertised, __ATOMIC_RELAXED), 0))
		rcu_deref_set_advertise(s);
}

/* Records that this thread, in a read-side section, dereferenced p at ip.
 * A few stores to the thread's own page. A signal handler that interrupts
 * it runs its own sections nested in the thread's (so it never closes the
 * set under it) and may at worst overwrite the entry being written, which
 * only loses a dereference. */
void rcu_deref_record_slow(struct thread_state *ts, const void *p, uintptr_t ip);

/* rcu_deref_record() without a call: returns 0, having written nothing,
 * when the record needs rcu_deref_record_slow() (the thread's first
 * dereference, an open outside a section begun first or of a set not
 * advertised). */
static inline __attribute__((always_inline)) int rcu_deref_record_fast(struct thread_state *ts, const void *p,
								    uintptr_t ip)
{
	struct rcu_deref_set *s = ts->deref_set;
	if (__builtin_expect(!s, 0))
		return 0;
	uint64_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED), n;
	if (__builtin_expect(!(gen & 1), 0)) {
		/* The section's first dereference: the open and its entry in
		 * one go. The entry, its count and the section are written
		 * before the store of gen that publishes them (a scan that
		 * sees the new gen sees them all; one that saw the old gen
		 * finds it changed when it looks again and drops what it read),
		 * so the entry needs no withdrawing. The usual case only: the
		 * section that protects it is the outermost held entry, and the
		 * set is advertised. */
		const struct held_lock *outermost = &ts->held[0];
		if (__builtin_expect(!ts->depth || outermost->kind != HELD_RCU_READ ||
				     !__atomic_load_n(&s->advertised, __ATOMIC_RELAXED), 0))
			return 0;
		/* Paired with the scan's acquire fence: after the close. */
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n(&s->entries[0].ip, ip, __ATOMIC_RELAXED);
		__atomic_store_n(&s->entries[0].ptr, (uintptr_t)p, __ATOMIC_RELAXED);
		__atomic_store_n(&s->count, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&s->section, (uint32_t)held_flavor(outermost), __ATOMIC_RELAXED);
		__atomic_store_n(&s->section_ip, outermost->acquire_ip, __ATOMIC_RELAXED);
		__atomic_store_n(&s->gen, gen + 1, __ATOMIC_RELEASE);
		return 1;
	}
	n = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
	if (n && __atomic_load_n(&s->entries[(n - 1) % DEREF_SET_ENTRIES].ptr, __ATOMIC_RELAXED) == (uintptr_t)p)
		return 1;
	struct rcu_deref *e = &s->entries[n % DEREF_SET_ENTRIES];
	/* The pointer is withdrawn while the site changes, so a reader sees a
	 * site beside its own pointer (check_rcu_free.c re-reads it). Paired
	 * with the acquire fence of that reader. */
	__atomic_store_n(&e->ptr, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->ip, ip, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ptr, (uintptr_t)p, __ATOMIC_RELEASE);
	/* Entries below count are this section's: published after them. */
	__atomic_store_n(&s->count, n + 1, __ATOMIC_RELEASE);
	return 1;
}

static inline __attribute__((always_inline)) void rcu_deref_record(struct thread_state *ts, const void *p,
							     uintptr_t ip)
{
	if (__builtin_expect(!rcu_deref_record_fast(ts, p, ip), 0))
		rcu_deref_record_slow(ts, p, ip);
}

/* A dereference by this thread: recorded when it is a reader (a read-side
 * section the tracer saw begin, or an online QSBR thread) holding no lock.
 * Under a lock, the object may be protected by that lock rather than by
 * RCU (the article's rule 2: we cannot know which lock is the update-side
 * one), and its updater may rightly free it without a grace period once it
 * holds the lock; so it is not recorded, even inside a read-side section.
 * An inlined read side (a program mixing _LGPL_SOURCE and exported calls)
 * has no end the tracer sees: not recorded either. */
static inline void rcu_deref_note(struct thread_state *ts, const void *p, uintptr_t ip)
{
	if (p && !ts->nr_locks && (__builtin_expect(ts->nr_readers != 0, 1) || qsbr_thread_is_reader(ts)))
		rcu_deref_record(ts, p, ip);
}

/* The thread stops holding what it dereferenced: the set closes. An
 * absolute store, so a signal handler that closed it meanwhile changes
 * nothing. Closed before the real liburcu call that lets a grace period
 * end (read unlock, quiescent state, offline, unregister), so the set
 * never claims more than liburcu protects. */
static inline void rcu_deref_set_close(struct rcu_deref_set *s)
{
	uint64_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
	if (gen & 1)
		__atomic_store_n(&s->gen, gen + 1, __ATOMIC_RELEASE);
}

static inline void rcu_deref_close(struct thread_state *ts)
{
	struct rcu_deref_set *s = ts->deref_set;
	if (s)
		rcu_deref_set_close(s);
}

/* perturb=1: the window of this bug is between a dereference and the end
 * of its section; a delay there lets an updater's free() land in it. */
static inline void rcu_deref_perturb(struct thread_state *ts)
{
	if (__builtin_expect(tracer_options.perturb, 0) && rcu_deref_set_is_open(ts->deref_set))
		perturb_slow(ts);
}

/* The outermost read-side section ended: the set closes, unless the thread
 * is an online QSBR reader, which holds what it dereferenced until its next
 * quiescent state. */
static inline void rcu_deref_sections_ended(struct thread_state *ts)
{
	struct rcu_deref_set *s = ts->deref_set;
	if (!s)
		return;
	uint64_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
	if (!(gen & 1))
		return;
	if (__builtin_expect(ts->registered[FLAVOR_qsbr] == 1, 0) && qsbr_thread_is_reader(ts))
		rcu_deref_set_qsbr_online(ts, s);
	else
		__atomic_store_n(&s->gen, gen + 1, __ATOMIC_RELEASE);
}

/* For reports: the readers that hold [lo, hi), found without a lock. */
struct rcu_holder {
	int tid;
	uint32_t section;      /* flavor | DEREF_SECTION_QSBR_ONLINE */
	uintptr_t section_ip;
	uintptr_t ptr;         /* the dereferenced pointer inside the block */
	uintptr_t deref_ip;
	uint64_t forgotten;    /* dereferences of the section no longer kept */
};

#define MAX_HOLDERS_REPORTED 4

/* Fills holders (up to MAX_HOLDERS_REPORTED) with the readers other than
 * self whose open set has a pointer in [lo, hi); returns how many readers
 * hold it in all. */
unsigned rcu_deref_find_holders(struct thread_state *self, uintptr_t lo, uintptr_t hi,
				struct rcu_holder *holders);

#endif
