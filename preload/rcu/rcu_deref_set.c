/* The pool of dereference sets and the freeing thread's side: finding the
 * readers that hold a block (rcu_deref_set.h has the owner's fast path and
 * the argument why an unsynchronized read can only miss). */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>
#include "rcu/rcu_deref_set.h"
#include "runtime/tracer_arena.h"
#include "runtime/log_output.h"

unsigned rcu_deref_sets_advertised;

/* Published with release once initialized; slots below nr_deref_sets may
 * still be NULL while their page is being made. Pages are never unmapped:
 * a set given back goes to the next thread that needs one. */
static struct rcu_deref_set *deref_sets[MAX_DEREF_SETS];
static unsigned nr_deref_sets;

struct rcu_deref_set *rcu_deref_set_claim(struct thread_state *ts)
{
	if (ts->deref_set_gone || ts->in_tracer)
		return NULL;
	int tid = ts->tid ? ts->tid : gettid();
	unsigned n = __atomic_load_n(&nr_deref_sets, __ATOMIC_ACQUIRE);
	struct rcu_deref_set *s = NULL;
	for (unsigned i = 0; i < n && !s; i++) {
		struct rcu_deref_set *candidate = __atomic_load_n(&deref_sets[i], __ATOMIC_ACQUIRE);
		uint32_t unowned = 0;
		if (candidate && __atomic_compare_exchange_n(&candidate->owned, &unowned, 1, 0,
							    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			s = candidate;
	}
	if (!s) {
		unsigned i = __atomic_fetch_add(&nr_deref_sets, 1, __ATOMIC_ACQ_REL);
		void *page = i < MAX_DEREF_SETS ? tracer_pages_map(sizeof(struct rcu_deref_set)) : NULL;
		if (!page) {
			if (i >= MAX_DEREF_SETS)
				__atomic_store_n(&nr_deref_sets, MAX_DEREF_SETS, __ATOMIC_RELAXED);
			ts->deref_set_gone = 1;
			log_output_limit_once("MAX_DEREF_SETS too low!",
					  "(or no memory): the dereferences of further threads are not "
					  "remembered, and a free() of what they hold is not reported");
			return NULL;
		}
		s = page;
		s->owned = 1;
		__atomic_store_n(&deref_sets[i], s, __ATOMIC_RELEASE);
	}
	/* Closed (gen even) while it changes hands: a scan that saw the previous
	 * owner's open section cannot see this one's tid with it. */
	__atomic_store_n(&s->tid, tid, __ATOMIC_RELAXED);
	__atomic_store_n(&s->count, 0, __ATOMIC_RELAXED);
	/* A signal handler that interrupted this claim may have claimed a set
	 * for the thread already: keep that one (a second set would stay
	 * owned, and maybe open, forever). */
	struct rcu_deref_set *none = NULL;
	if (!__atomic_compare_exchange_n(&ts->deref_set, &none, s, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&s->owned, 0, __ATOMIC_RELEASE);
		return none;
	}
	return s;
}

/* Where the protection of what the thread dereferences now began: its
 * outermost read-side section, or its last quiescent state (QSBR). */
void rcu_deref_set_describe(struct thread_state *ts, struct rcu_deref_set *s)
{
	for (unsigned i = 0; i < ts->depth; i++) {
		const struct held_lock *h = &ts->held[i];
		if (h->kind == HELD_RCU_READ) {
			__atomic_store_n(&s->section, (uint32_t)held_flavor(h), __ATOMIC_RELAXED);
			__atomic_store_n(&s->section_ip, h->acquire_ip, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_store_n(&s->section, FLAVOR_qsbr | DEREF_SECTION_QSBR_ONLINE, __ATOMIC_RELAXED);
	__atomic_store_n(&s->section_ip, ts->qsbr_since_ip, __ATOMIC_RELAXED);
}

/* Counted once until a scan retires it. A scan retiring the set right now
 * may miss the open that calls this (the store of gen may not be visible
 * to it yet): a missed section, never a wrong report; the next open
 * advertises again. */
void rcu_deref_set_advertise(struct rcu_deref_set *s)
{
	uint32_t unadvertised = 0;
	if (__atomic_compare_exchange_n(&s->advertised, &unadvertised, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		__atomic_fetch_add(&rcu_deref_sets_advertised, 1, __ATOMIC_RELEASE);
}

/* A QSBR thread's explicit section ended while it stays online: what it
 * dereferenced is still protected, now by its being online. */
void rcu_deref_set_qsbr_online(struct thread_state *ts, struct rcu_deref_set *s)
{
	__atomic_store_n(&s->section, FLAVOR_qsbr | DEREF_SECTION_QSBR_ONLINE, __ATOMIC_RELAXED);
	__atomic_store_n(&s->section_ip, ts->qsbr_since_ip, __ATOMIC_RELAXED);
}

static void unadvertise(struct rcu_deref_set *s)
{
	uint32_t advertised = 1;
	if (__atomic_compare_exchange_n(&s->advertised, &advertised, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		__atomic_fetch_sub(&rcu_deref_sets_advertised, 1, __ATOMIC_RELEASE);
}

/* The thread ends: its set goes back to the pool, closed, and the thread
 * records nothing more (a late TLS destructor reading under RCU is not
 * followed rather than given a set nobody would give back). */
void rcu_deref_set_release(struct thread_state *ts)
{
	ts->deref_set_gone = 1;
	signal_fence();
	struct rcu_deref_set *s = ts->deref_set;
	ts->deref_set = NULL;
	signal_fence();
	if (!s)
		return;
	/* Closed after it left the thread: a signal handler that opened it in
	 * between cannot leave it open in the pool. */
	rcu_deref_set_close(s);
	unadvertise(s);
	__atomic_store_n(&s->owned, 0, __ATOMIC_RELEASE);
}

/* The child has one thread: the others' sets are closed and free. */
void rcu_deref_sets_fork_child(struct thread_state *self)
{
	unsigned n = nr_deref_sets < MAX_DEREF_SETS ? nr_deref_sets : MAX_DEREF_SETS;
	unsigned advertised = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rcu_deref_set *s = deref_sets[i];
		if (!s)
			continue;
		if (s == self->deref_set) {
			advertised += s->advertised;
			continue;
		}
		/* Only what changes is written: each page written in the
		 * child is a copy-on-write fault at every fork. */
		if (s->gen & 1)
			s->gen++;
		if (s->advertised)
			s->advertised = 0;
		if (s->owned)
			s->owned = 0;
	}
	if (rcu_deref_sets_advertised != advertised)
		rcu_deref_sets_advertised = advertised;
}

/* A scan found s closed. Closed at two scans in a row with no section in
 * between, it stops being advertised. If its owner opened a section
 * meanwhile (and so did not advertise it, seeing it still advertised), it
 * is advertised again. */
static void retire_if_idle(struct rcu_deref_set *s, uint64_t gen)
{
	if (__atomic_load_n(&s->scanned_gen, __ATOMIC_RELAXED) != gen) {
		__atomic_store_n(&s->scanned_gen, gen, __ATOMIC_RELAXED);
		return;
	}
	uint32_t advertised = 1;
	if (!__atomic_compare_exchange_n(&s->advertised, &advertised, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return;
	__atomic_fetch_sub(&rcu_deref_sets_advertised, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->gen, __ATOMIC_SEQ_CST) != gen) {
		uint32_t unadvertised = 0;
		if (__atomic_compare_exchange_n(&s->advertised, &unadvertised, 1, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			__atomic_fetch_add(&rcu_deref_sets_advertised, 1, __ATOMIC_SEQ_CST);
	}
}

/* The entry of s with a pointer in [lo, hi), the newest first; 0 if none.
 * An entry being rewritten (its pointer 0, or changed between the reads)
 * is skipped. */
static int find_entry(const struct rcu_deref_set *s, uint64_t count, uintptr_t lo, uintptr_t hi,
		      struct rcu_holder *h)
{
	uint64_t kept = count < DEREF_SET_ENTRIES ? count : DEREF_SET_ENTRIES;
	for (uint64_t k = 0; k < kept; k++) {
		const struct rcu_deref *e = &s->entries[(count - 1 - k) % DEREF_SET_ENTRIES];
		uintptr_t ptr = __atomic_load_n(&e->ptr, __ATOMIC_ACQUIRE);
		if (ptr < lo || ptr >= hi)
			continue;
		uintptr_t ip = __atomic_load_n(&e->ip, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->ptr, __ATOMIC_RELAXED) != ptr)
			continue;
		h->ptr = ptr;
		h->deref_ip = ip;
		h->forgotten = count - kept;
		return 1;
	}
	return 0;
}

unsigned rcu_deref_find_holders(struct thread_state *self, uintptr_t lo, uintptr_t hi,
				struct rcu_holder *holders)
{
	unsigned n = __atomic_load_n(&nr_deref_sets, __ATOMIC_ACQUIRE), found = 0;
	if (n > MAX_DEREF_SETS)
		n = MAX_DEREF_SETS;
	for (unsigned i = 0; i < n; i++) {
		struct rcu_deref_set *s = __atomic_load_n(&deref_sets[i], __ATOMIC_ACQUIRE);
		if (!s || !__atomic_load_n(&s->advertised, __ATOMIC_RELAXED))
			continue;
		uint64_t gen = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
		if (!(gen & 1)) {
			retire_if_idle(s, gen);   /* the caller's own too */
			continue;
		}
		if (s == self->deref_set)
			continue;   /* what the freeing thread holds itself is its business */
		struct rcu_holder h;
		uint64_t count = __atomic_load_n(&s->count, __ATOMIC_ACQUIRE);
		if (!find_entry(s, count, lo, hi, &h))
			continue;
		h.tid = __atomic_load_n(&s->tid, __ATOMIC_RELAXED);
		h.section = __atomic_load_n(&s->section, __ATOMIC_RELAXED);
		h.section_ip = __atomic_load_n(&s->section_ip, __ATOMIC_RELAXED);
		/* Seqlock validation: the same open section all along, so what
		 * was read is what that section dereferenced (paired with the
		 * release fence at the open, and the release stores of entries). */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->gen, __ATOMIC_RELAXED) != gen)
			continue;
		if (found < MAX_HOLDERS_REPORTED)
			holders[found] = h;
		found++;
	}
	return found;
}

/* rcu_deref_record()'s unusual cases: the thread's first dereference (its
 * set from the pool), an open outside a section begun first or of a set
 * not advertised. */
void rcu_deref_record_slow(struct thread_state *ts, const void *p, uintptr_t ip)
{
	struct rcu_deref_set *s = ts->deref_set;
	if (!s && !(s = rcu_deref_set_claim(ts)))
		return;
	uint64_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED), n = 0;
	if (!(gen & 1)) {
		rcu_deref_set_open(ts, s, gen);
	} else {
		n = __atomic_load_n(&s->count, __ATOMIC_RELAXED);
		if (n && __atomic_load_n(&s->entries[(n - 1) % DEREF_SET_ENTRIES].ptr, __ATOMIC_RELAXED) ==
				 (uintptr_t)p)
			return;
	}
	struct rcu_deref *e = &s->entries[n % DEREF_SET_ENTRIES];
	__atomic_store_n(&e->ptr, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->ip, ip, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ptr, (uintptr_t)p, __ATOMIC_RELEASE);
	__atomic_store_n(&s->count, n + 1, __ATOMIC_RELEASE);
}
