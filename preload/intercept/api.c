/* The tracer's side of include/lockdep-rcu.h: the exported `lockdep_rcu_api`
 * table that instrumented check sites call through. Each function's return
 * address is the check site in the program. */
#define _GNU_SOURCE
#define LOCKDEP_RCU_IMPLEMENTATION
#include "checks/check_publication.h"
#include "../../include/lockdep-rcu.h"
#include "checks/rcu_tracking.h"

_Static_assert((int)LOCKDEP_RCU_FLAVOR_MEMB == (int)FLAVOR_memb &&
	       (int)LOCKDEP_RCU_FLAVOR_QSBR == (int)FLAVOR_qsbr &&
	       (int)LOCKDEP_RCU_FLAVOR_BP == (int)FLAVOR_bp && (int)LOCKDEP_RCU_FLAVOR_BH == (int)FLAVOR_bh &&
	       (int)LOCKDEP_RCU_FLAVOR_SRCU == (int)FLAVOR_srcu,
	       "the header's flavor numbers must match the tracer's");

static int valid_flavor(int flavor)
{
	return flavor >= 0 && flavor < NR_FLAVORS;
}

/* Vanilla RCU is any liburcu flavor's read side, and for QSBR being an
 * online registered thread. The header's bh/sched/SRCU sides do not count:
 * the article's rcu_dereference() checks only for vanilla RCU. */
static int api_read_lock_held(int flavor, const void *srcu)
{
	const struct thread_state *ts = thread_state();
	if (flavor == LOCKDEP_RCU_FLAVOR_VANILLA) {
		for (int f = 0; f < NR_URCU_FLAVORS; f++)
			if (ts->nesting[f])
				return 1;
		return ts->registered[FLAVOR_qsbr] == URCU_REGISTERED && !ts->qsbr_offline;
	}
	if (!valid_flavor(flavor))
		return 0;
	if (flavor == FLAVOR_srcu)
		return held_reader_find(ts, FLAVOR_srcu, srcu) >= 0;
	return ts->nesting[flavor] != 0;
}

static int api_lock_is_held(const void *lock)
{
	return held_lock_find(thread_state(), lock, KIND_ANY_LOCK) >= 0;
}

static void api_suspicious(const char *file, int line, const char *message)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer)
		return;
	print_suspicious_rcu(ts, CALLER_IP(), file, line, message);
}

static void api_assert_held(const void *lock, int want_held, const char *file, int line,
			    const char *expression)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer)
		return;
	int held = held_lock_find(ts, lock, KIND_ANY_LOCK) >= 0;
	if (held == !!want_held)
		return;
	char message[256];
	__builtin_snprintf(message, sizeof(message), "%s failed: the lock is %s", expression,
			   held ? "held" : "not held");
	print_assertion(ts, CALLER_IP(), file, line, message);
}

static void api_read_lock_begin(void)
{
	thread_state()->in_proxy++;
}

static void api_read_lock_end(int flavor, int underlying, const void *srcu)
{
	struct thread_state *ts = thread_state();
	ts->in_proxy--;
	if (ts->in_tracer || !valid_flavor(flavor) || underlying < 0 || underlying >= NR_URCU_FLAVORS)
		return;
	uintptr_t ip = CALLER_IP();
	if (flavor_needs_registration[underlying] &&
	    (ts->registered[underlying] != URCU_REGISTERED ||
	     (underlying == FLAVOR_qsbr && ts->qsbr_offline))) {
		const char *what = flavor == FLAVOR_srcu ? "srcu_read_lock()" :
				   flavor == FLAVOR_bh ? "rcu_read_lock_bh()" :
				   flavor == FLAVOR_sched ? "rcu_read_lock_sched()" : "rcu_read_lock()";
		check_unregistered_reader(ts, (enum rcu_flavor)underlying, ip, what);
	}
	rcu_read_acquired(ts, (enum rcu_flavor)flavor, (enum rcu_flavor)underlying, srcu, ip);
}

static void api_read_unlock_begin(int flavor, const void *srcu)
{
	struct thread_state *ts = thread_state();
	if (!ts->in_tracer && valid_flavor(flavor))
		rcu_read_released(ts, (enum rcu_flavor)flavor, srcu, CALLER_IP());
	ts->in_proxy++;
}

static void api_read_unlock_end(void)
{
	thread_state()->in_proxy--;
}

/* synchronize_srcu(sp) inside a reader of sp, or inside any read side built
 * on the same liburcu flavor (ours are: their grace periods are one), never
 * returns. The kernel's message, verbatim for SRCU. */
static void api_sync_begin(int flavor, int underlying, const void *srcu, const char *what)
{
	struct thread_state *ts = thread_state();
	if (!ts->in_tracer && ts->nr_readers && valid_flavor(flavor) &&
	    underlying >= 0 && underlying < NR_URCU_FLAVORS) {
		int same_domain = flavor == FLAVOR_srcu ? held_reader_find(ts, FLAVOR_srcu, srcu) >= 0
							: ts->nesting[flavor] != 0;
		if (same_domain || held_reader_on(ts, (enum rcu_flavor)underlying)) {
			if (flavor == FLAVOR_srcu) {
				char message[160];
				__builtin_snprintf(message, sizeof(message),
						   "Illegal %s in same-type SRCU (or in RCU) read-side critical section",
						   what);
				print_suspicious_rcu(ts, CALLER_IP(), NULL, 0, message);
			} else {
				print_illegal_sync(ts, CALLER_IP(), what);
			}
		}
	}
	if (!ts->in_tracer && valid_flavor(flavor))
		rcu_grace_period_wait(ts, (enum rcu_flavor)flavor, srcu, CALLER_IP());
	ts->in_proxy++;
}

static void api_sync_end(void)
{
	thread_state()->in_proxy--;
}

static void api_qsbr_event(int event)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer || ts->in_urcu)
		return;
	if (event != LOCKDEP_RCU_QSBR_ONLINE && ts->nr_readers && held_reader_on(ts, FLAVOR_qsbr))
		print_suspicious_rcu(ts, CALLER_IP(), NULL, 0,
				     event == LOCKDEP_RCU_QSBR_QUIESCENT
					     ? "rcu_quiescent_state() in RCU read-side critical section"
					     : "rcu_thread_offline() in RCU read-side critical section");
	if (event == LOCKDEP_RCU_QSBR_OFFLINE)
		ts->qsbr_offline = 1;
	else if (event == LOCKDEP_RCU_QSBR_ONLINE)
		ts->qsbr_offline = 0;
	/* Called before the inlined liburcu code: the dereference set closes
	 * before a grace period may end. */
	if (event != LOCKDEP_RCU_QSBR_ONLINE) {
		rcu_deref_perturb(ts);
		rcu_deref_close(ts);
	}
	if (event != LOCKDEP_RCU_QSBR_OFFLINE) {
		ts->qsbr_since_ip = CALLER_IP();
		ts->qsbr_since_what = event == LOCKDEP_RCU_QSBR_ONLINE ? QSBR_SINCE_ONLINE : QSBR_SINCE_QUIESCENT;
	}
}

/* The header's checked dereferences (rcu_dereference(), _bh, _sched,
 * srcu_dereference(), rcu_dereference_check()) give the pointer they
 * loaded: a reader's is remembered until its section ends. */
static void api_dereferenced(const void *p)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer)
		return;
	rcu_deref_note(ts, p, CALLER_IP());
}

static void api_traversal_allowed(int allowed)
{
	thread_state()->traversal_allowed = allowed;
}

static void api_published(void *const *p, const void *v)
{
	check_publication(thread_state(), p, v, CALLER_IP());
}

static void api_set_class(const void *lock, const void *key, const char *name)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer)
		return;
	lock_class_set_named(lock, key, name);
}

static void api_set_next_subclass(unsigned subclass)
{
	thread_state()->next_subclass = subclass;
}

__attribute__((visibility("default")))
const struct lockdep_rcu_api lockdep_rcu_api = {
	.version = LOCKDEP_RCU_API_VERSION,
	.size = sizeof(struct lockdep_rcu_api),
	.read_lock_held = api_read_lock_held,
	.lock_is_held = api_lock_is_held,
	.suspicious = api_suspicious,
	.assert_held = api_assert_held,
	.read_lock_begin = api_read_lock_begin,
	.read_lock_end = api_read_lock_end,
	.read_unlock_begin = api_read_unlock_begin,
	.read_unlock_end = api_read_unlock_end,
	.sync_begin = api_sync_begin,
	.sync_end = api_sync_end,
	.qsbr_event = api_qsbr_event,
	.set_class = api_set_class,
	.set_next_subclass = api_set_next_subclass,
	.dereferenced = api_dereferenced,
	.traversal_allowed = api_traversal_allowed,
	.published = api_published,
};
