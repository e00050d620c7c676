/* liburcu's RCU lock-free queue and stack (liburcu-cds, urcu/rculfqueue.h
 * and urcu/rculfstack.h): the calls their headers ask to be made in a
 * read-side critical section, cds_lfq_enqueue_rcu() and
 * cds_lfq_dequeue_rcu() ("Should be called under rcu read lock critical
 * section") and cds_lfs_pop_rcu() ("Should be called under rcu read-side
 * lock"). The read side is what keeps the queue's and the stack's cmpxchg
 * free of ABA: a node a thread read as the head cannot be freed and come
 * back at the same address while it looks. cds_lfs_push_rcu() needs none
 * (static/rculfstack.h explains why it is ABA-free) and is not interposed,
 * nor the non-RCU stack of urcu/lfstack.h, which a mutex protects.
 * liburcu-cds is built with _LGPL_SOURCE, so these entry points are where
 * a program's misuse shows; a program built with _LGPL_SOURCE inlines them
 * from the static headers, and nothing is seen (docs/limits.md).
 *
 * A queue's flavor is the one whose call_rcu() the program handed
 * cds_lfq_init_rcu() (cds_lfq_init_rcu(&q, call_rcu), call_rcu being
 * urcu_memb_call_rcu or another flavor's): the flavor that frees its
 * dummy nodes, so the flavor whose read side protects it. The queue keeps
 * that pointer in its public struct (struct cds_lfq_queue_rcu, the ABI of
 * liburcu-cds.so.8), written once by the init, and this file reads it there
 * at each call rather than keeping a table of queues: nothing to fill, no
 * queue to forget at its destruction, and a queue initialised by the
 * inlined _cds_lfq_init_rcu() is known too. The loader bound the
 * program's urcu_<flavor>_call_rcu to this library's wrapper
 * (intercept_urcu_deferred.c), so the pointer is compared with those.
 *
 * A queue whose call_rcu is none of them (a function of the program's own
 * that calls the flavor's) has no known flavor: a read side of any flavor
 * counts, as for an exported rcu_dereference() (dereference_is_protected()),
 * which is what the call does first. That reports no correct program: a
 * thread that is in no read side of any flavor protects no head it reads.
 * The stack has no flavor at all, and is checked the same way.
 *
 * A call made holding a lock is taken as the update side's, as an
 * rcu_dereference() under a lock is and as the hash table's calls are (the
 * article's rule 2: which lock guards the structure is not known, and a
 * program that serialises its dequeues with a mutex has no ABA to fear).
 * Calls liburcu makes itself are its own business. The call_rcu() a
 * dequeue makes for a dummy node it passed is not hidden: its wrapper
 * checks it as any, and from an offline QSBR thread reports it at the
 * program's dequeue, lock or no lock (liburcu's call_rcu() needs the thread
 * online); with the dequeue's own report, that is one report for the line.
 *
 * A call made while the caller is the program's only thread (liburcu's
 * call_rcu workers aside) is not reported either: the read side keeps a
 * node from being freed and reused under a concurrent enqueuer, dequeuer
 * or popper, and there is none. That is how programs set a queue up
 * before starting their threads and drain it after joining them:
 * liburcu's own benchmarks (tests/benchmark/test_urcu_lfq.c and
 * test_urcu_lfs_rcu.c, test_end()) dequeue and pop outside any read side
 * once their threads are joined, "no more concurrent access". Threads are
 * counted from the registry, only for a call about to be reported; a
 * thread is listed once it runs, so one created an instant before the call
 * is not counted yet: a call racing with its very first steps goes
 * unreported, which a later call from the same line, made once it runs,
 * is not.
 *
 * The node cds_lfq_dequeue_rcu() and cds_lfs_pop_rcu() hand the program
 * counts as dereferenced in the caller's read side, as the hash table's
 * nodes do (intercept_lfht.c, note_node()): a free() of it by another
 * thread while that section lasts is reported (check_rcu_free.c). A free()
 * after the section ends without a grace period is a bug too (a concurrent
 * dequeuer may still read the node's next), but that dequeuer's hold is
 * inside liburcu-cds, which no wrapper sees: not reported. */
#define _GNU_SOURCE
#include <stdint.h>
#include "rcu/urcu_calls.h"
#include "checks/checks.h"
#include "checks/rcu_tracking.h"
#include "runtime/real_functions.h"
#include "runtime/thread_registry.h"
#include "rcu/rcu_deref_set.h"

struct rcu_head;

/* urcu/rculfqueue.h */
struct cds_lfq_node_rcu;
struct cds_lfq_queue_rcu {
	struct cds_lfq_node_rcu *head, *tail;
	void (*queue_call_rcu)(struct rcu_head *head, void (*func)(struct rcu_head *head));
};
/* urcu/rculfstack.h */
struct cds_lfs_node_rcu;
struct cds_lfs_stack_rcu;

/* The flavors' call_rcu, as exported here (intercept_urcu_deferred.c). */
#define FLAVOR_CALL_RCU(name, reg) void urcu_##name##_call_rcu(struct rcu_head *, void (*)(struct rcu_head *));
URCU_FLAVORS(FLAVOR_CALL_RCU)
#undef FLAVOR_CALL_RCU

/* The queue's flavor, or -1. */
static int queue_flavor(const struct cds_lfq_queue_rcu *q)
{
	void (*queue_call_rcu)(struct rcu_head *, void (*)(struct rcu_head *)) =
		__atomic_load_n(&q->queue_call_rcu, __ATOMIC_RELAXED);
#define FLAVOR_MATCH(name, reg)                            \
	if (queue_call_rcu == urcu_##name##_call_rcu)      \
		return FLAVOR_##name;
	URCU_FLAVORS(FLAVOR_MATCH)
#undef FLAVOR_MATCH
	return -1;
}

/* Whether the thread is where the call may be made: in a read side of
 * flavor f (QSBR: online), of any flavor when f < 0. */
static int in_read_side_of(const struct thread_state *ts, int f)
{
	if (f < 0)
		return dereference_is_protected(ts);
	return urcu_in_read_side(ts, (enum rcu_flavor)f) || (f == FLAVOR_qsbr && qsbr_thread_is_reader(ts));
}

static int is_program_thread(struct thread_state *other, void *unused)
{
	(void)unused;
	return !other->urcu_worker;
}

/* Whether another thread of the program is listed: one that could race
 * with the call. Not known (-1, the registry lock is this thread's: a
 * signal handler interrupted it) counts as one, so no call goes
 * unchecked for it. */
static int other_program_threads(struct thread_state *ts)
{
	return thread_registry_find(ts, is_program_thread, NULL) != 0;
}

/* The call `what` at ip, asked to be made in a read side of flavor f (-1:
 * any); header names where liburcu says so. */
static void check_call(int f, const char *what, const char *header, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (!urcu_call_is_ours(ts) || ts->nr_locks || in_read_side_of(ts, f) || is_urcu_code(ip) ||
	    !other_program_threads(ts))
		return;
	char msg[128], detail[160];
	__builtin_snprintf(msg, sizeof(msg), "%s outside an RCU read-side critical section", what);
	__builtin_snprintf(detail, sizeof(detail), "%s: call under rcu_read_lock%s", header,
			   f == FLAVOR_qsbr ? "; a QSBR thread must be online" : "");
	print_suspicious_rcu_detail(ts, urcu_program_site(ip), msg, detail);
}

/* The node a call handed the program, dereferenced in its read side: the
 * same conditions as the hash table's nodes (intercept_lfht.c): a read side
 * the wrappers saw begin, whose end is seen too; not a QSBR thread's being
 * online. */
static void note_node(const void *node, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (node && ts->nr_readers && urcu_call_is_ours(ts))
		rcu_deref_note(ts, node, ip);
}

void cds_lfq_enqueue_rcu(struct cds_lfq_queue_rcu *q, struct cds_lfq_node_rcu *node);
struct cds_lfq_node_rcu *cds_lfq_dequeue_rcu(struct cds_lfq_queue_rcu *q);
struct cds_lfs_node_rcu *cds_lfs_pop_rcu(struct cds_lfs_stack_rcu *s);

INTERPOSE(cds_lfq_enqueue_rcu);
INTERPOSE(cds_lfq_dequeue_rcu);
INTERPOSE(cds_lfs_pop_rcu);

void cds_lfq_enqueue_rcu(struct cds_lfq_queue_rcu *q, struct cds_lfq_node_rcu *node)
{
	check_call(queue_flavor(q), "cds_lfq_enqueue_rcu()", "urcu/rculfqueue.h", CALLER_IP());
	REAL(cds_lfq_enqueue_rcu)(q, node);
}

struct cds_lfq_node_rcu *cds_lfq_dequeue_rcu(struct cds_lfq_queue_rcu *q)
{
	check_call(queue_flavor(q), "cds_lfq_dequeue_rcu()", "urcu/rculfqueue.h", CALLER_IP());
	struct cds_lfq_node_rcu *node = REAL(cds_lfq_dequeue_rcu)(q);
	note_node(node, CALLER_IP());
	return node;
}

struct cds_lfs_node_rcu *cds_lfs_pop_rcu(struct cds_lfs_stack_rcu *s)
{
	check_call(-1, "cds_lfs_pop_rcu()", "urcu/rculfstack.h", CALLER_IP());
	struct cds_lfs_node_rcu *node = REAL(cds_lfs_pop_rcu)(s);
	note_node(node, CALLER_IP());
	return node;
}
