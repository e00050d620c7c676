/* The slow half of lock_tracking.h: an acquisition with something held
 * that the thread's acquisition cache did not answer. */
#include "unwind/backtrace.h"
#include "checks/lock_tracking.h"
#include "runtime/tracer_stack.h"

int lock_slow_paths, lock_slow_hooks;
int lock_fast_paths = 1;

void lock_tracking_setup(void)
{
	__atomic_store_n(&lock_slow_paths, hung_task_checks | lock_stat_enabled, __ATOMIC_RELAXED);
	__atomic_store_n(&lock_slow_hooks, (tracer_options.perturb != 0) | lock_stat_enabled, __ATOMIC_RELAXED);
	acquire_unusual_globals_set(UNUSUAL_SLOW_HOOKS, lock_slow_hooks);
	__atomic_store_n(&lock_fast_paths, tracer_options.fast_paths != 0, __ATOMIC_RELAXED);
}


static uint32_t lock_checks(struct thread_state *ts, const void *lock, enum held_kind kind, uintptr_t ip,
			    int relock_blocks, unsigned implicit, uint64_t cache_key, uint32_t epoch);

struct lock_checks_job {
	struct thread_state *ts;
	const void *lock;
	enum held_kind kind;
	uintptr_t ip;
	int relock_blocks;
	unsigned implicit;
	uint64_t cache_key;
	uint32_t epoch;
	uint32_t class_id;
};

static void lock_checks_job_run(void *p)
{
	struct lock_checks_job *j = p;
	j->class_id = lock_checks(j->ts, j->lock, j->kind, j->ip, j->relock_blocks, j->implicit, j->cache_key, j->epoch);
}

uint32_t lock_before_blocking_slow(struct thread_state *ts, const void *lock, enum held_kind kind,
				   uintptr_t ip, int relock_blocks, unsigned implicit,
				   uint64_t cache_key, uint32_t epoch)
{
	if (!(ts->nr_locks | ts->nr_readers | implicit | ts->next_subclass | signal_usage_tracked))
		return 0;   /* nothing held (perturb brought us here) */
	if (likely(!stack_short(LOCK_CHECKS_STACK_NEEDED)))
		return lock_checks(ts, lock, kind, ip, relock_blocks, implicit, cache_key, epoch);
	/* A handler on a small alternate stack, a thread near its stack's
	 * end, a stack the program made (a coroutine's): the checks would
	 * overflow it (a 4 KiB sigaltstack, most of it the kernel's signal
	 * frame, crashed; so did a 4 KiB makecontext() stack). They run on the
	 * thread's check stack; when that cannot be (in use by the checks
	 * this handler interrupted), the acquisition is only recorded and its
	 * class looked up when needed. */
	struct lock_checks_job job = { ts, lock, kind, ip, relock_blocks, implicit, cache_key, epoch, 0 };
	return run_on_check_stack(ts, lock_checks_job_run, &job) ? job.class_id : 0;
}

/* The checks of an acquisition, with the stack they need. */
static uint32_t lock_checks(struct thread_state *ts, const void *lock, enum held_kind kind, uintptr_t ip,
			    int relock_blocks, unsigned implicit, uint64_t cache_key, uint32_t epoch)
{
	if (unlikely(ts->foreign_pending))
		foreign_releases_apply(ts);   /* before the recursion check */
	if ((implicit & ~(1u << FLAVOR_qsbr)) && !ts->in_urcu)
		check_inline_readers(ts, ip);   /* liburcu's own inner read sides are not */
	unsigned mask;
	switch (kind) {
	case HELD_RWLOCK_WRITE:   /* write behind our own read blocks; write
				     behind our own write is EDEADLK */
		mask = KIND_BIT(HELD_RWLOCK_READ);
		break;
	case HELD_RWLOCK_READ:    /* read behind read blocks only on a writer-
				     preferring rwlock; read behind write is EDEADLK */
		mask = relock_blocks ? KIND_BIT(HELD_RWLOCK_READ) : 0;
		break;
	default:
		mask = relock_blocks ? KIND_BIT(kind) : 0;
		break;
	}
	uint32_t generation;
	uint32_t class_id = lock_class_for_acquire_instance(ts, lock, kind, ip, &generation);
	int read = kind == HELD_RWLOCK_READ && !relock_blocks;
	/* The usage first, as the kernel's __lock_acquire() marks it before
	 * validating: a handler taking a lock its thread holds is reported as
	 * the inconsistent lock state it is, then as the recursion it makes. */
	if (unlikely(signal_usage_tracked))
		signal_usage_acquire(ts, lock, class_id, kind, read, ip);
	int clean = 1;
	if (mask && ts->nr_locks) {
		int i = held_lock_find(ts, lock, mask);
		if (unlikely(i >= 0)) {
			print_recursive_locking(ts, ip, lock, kind, i);
			clean = 0;
		}
	}
	clean &= lock_graph_acquire_instance_as(ts, lock, &class_id, generation, read ? ACQUIRE_RLOCK : ACQUIRE_LOCK,
						ip, &lock_order_reports);
	/* Validated, nothing reported: the same acquisition on top of the
	 * same held entries is answered from the cache until an instance
	 * changes. */
	if (clean && cache_key)
		acquire_cache_fill(ts, cache_key, epoch, class_id);
	return class_id;
}

int implicit_readers_out_of_line(const struct thread_state *ts)
{
	return implicit_readers(ts) != 0;
}
