/* Deferred reclamation: call_rcu(), defer_rcu() and the call_rcu worker
 * data, for all five flavor libraries, against liburcu's documented rules
 * (rcu-api.md, urcu/defer.h):
 *  - call_rcu() and get_call_rcu_data() "should be called from registered
 *    RCU read-side threads; for QSBR, the caller should be online";
 *  - get_cpu_call_rcu_data(): "the call to this function and use of the
 *    returned call_rcu_data should be protected by RCU read-side lock";
 *  - defer_rcu(): "each thread queuing memory reclamation must be
 *    registered with rcu_defer_register_thread()", and "*NEVER* use
 *    defer_rcu() within a RCU read-side critical section, because this
 *    primitive need to call synchronize_rcu()";
 *  - free_all_cpu_call_rcu_data() calls synchronize_rcu(): a grace-period
 *    wait for the lock-order validator, as defer_rcu() may be.
 * rcu_barrier() from a worker is checked with the other grace-period waits
 * (intercept_urcu.c). What liburcu calls while serving these is part of the
 * call, not the program's. */
#define _GNU_SOURCE
#include "rcu/urcu_calls.h"
#include "checks/rcu_tracking.h"
#include "runtime/real_functions.h"

struct rcu_head;
struct call_rcu_data;

static void unregistered_caller(struct thread_state *ts, enum rcu_flavor f, uintptr_t ip, const char *what)
{
	char msg[256];
	if (f == FLAVOR_qsbr && ts->registered[f] == URCU_REGISTERED)
		__builtin_snprintf(msg, sizeof(msg), "%s by a QSBR thread that is offline", what);
	else
		__builtin_snprintf(msg, sizeof(msg),
				   "%s by a thread that is not registered with liburcu flavor %s", what,
				   flavor_name[f]);
	print_suspicious_rcu_detail(ts, urcu_program_site(ip), msg,
				    "liburcu: it should be called from registered RCU read-side threads "
				    "(for QSBR, online)");
}

static inline void urcu_call_rcu(enum rcu_flavor f, void (*real)(struct rcu_head *, void (*)(struct rcu_head *)),
				 struct rcu_head *head, void (*func)(struct rcu_head *), uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (likely(urcu_call_is_ours(ts)) && unlikely(!urcu_registered_reader(ts, f)))
		unregistered_caller(ts, f, ip, "call_rcu()");
	URCU_INNER(ts, real(head, func));
}

static inline void urcu_defer_rcu(enum rcu_flavor f, void (*real)(void (*)(void *), void *),
				  void (*fct)(void *), void *p, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (likely(urcu_call_is_ours(ts))) {
		if (unlikely(urcu_in_read_side(ts, f)))
			print_suspicious_rcu_detail(ts, urcu_program_site(ip),
						    "Illegal defer_rcu() in RCU read-side critical section",
						    "defer_rcu() calls synchronize_rcu() when the thread's queue is "
						    "full, which waits for this very read side (urcu/defer.h: "
						    "*NEVER* use defer_rcu() within a RCU read-side critical section)");
		else if (unlikely(!ts->defer_registered[f]))
			print_suspicious_rcu_detail(ts, urcu_program_site(ip),
						    "defer_rcu() by a thread that did not call rcu_defer_register_thread()",
						    "urcu/defer.h: each thread queuing memory reclamation must be "
						    "registered with rcu_defer_register_thread()");
		/* It may wait for a grace period: held locks must allow it. */
		rcu_grace_period_wait(ts, f, NULL, ip);
	}
	URCU_INNER(ts, real(fct, p));
}

static inline int urcu_defer_register(enum rcu_flavor f, int (*real)(void))
{
	struct thread_state *ts = thread_state();
	int ret;
	URCU_INNER(ts, ret = real());
	if (ret == 0)
		ts->defer_registered[f] = 1;
	return ret;
}

static inline void urcu_defer_unregister(enum rcu_flavor f, void (*real)(void))
{
	struct thread_state *ts = thread_state();
	URCU_INNER(ts, real());
	ts->defer_registered[f] = 0;
}

static inline struct call_rcu_data *urcu_get_cpu_call_rcu_data(enum rcu_flavor f,
							       struct call_rcu_data *(*real)(int), int cpu,
							       uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	/* liburcu calls it too, through its own PLT, from entry points no
	 * wrapper marks as liburcu's (create_all_cpu_call_rcu_data() reads
	 * the per-CPU table under its call_rcu_mutex, the update side): a
	 * call from liburcu's code is liburcu's business. */
	if (likely(urcu_call_is_ours(ts)) && !urcu_in_read_side(ts, f) &&
	    !(f == FLAVOR_qsbr && qsbr_thread_is_reader(ts)) && !is_urcu_code(ip))
		print_suspicious_rcu_detail(ts, urcu_program_site(ip),
					    "get_cpu_call_rcu_data() outside an RCU read-side critical section",
					    "liburcu: the call and the use of the call_rcu_data it returns "
					    "should be protected by the RCU read-side lock");
	struct call_rcu_data *ret;
	URCU_INNER(ts, ret = real(cpu));
	return ret;
}

static inline struct call_rcu_data *urcu_get_call_rcu_data(enum rcu_flavor f, struct call_rcu_data *(*real)(void),
							   uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (likely(urcu_call_is_ours(ts)) && unlikely(!urcu_registered_reader(ts, f)))
		unregistered_caller(ts, f, ip, "get_call_rcu_data()");
	struct call_rcu_data *ret;
	URCU_INNER(ts, ret = real());
	return ret;
}

static inline void urcu_free_all_cpu_call_rcu_data(enum rcu_flavor f, void (*real)(void), uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (likely(urcu_call_is_ours(ts))) {
		if (unlikely(urcu_in_read_side(ts, f)))
			print_illegal_sync(ts, urcu_program_site(ip), "free_all_cpu_call_rcu_data()");
		rcu_grace_period_wait(ts, f, NULL, ip);
	}
	URCU_INNER(ts, real());
}

/* rcu_defer_barrier() and rcu_defer_barrier_thread() wait for a grace
 * period under liburcu's defer mutex: the wait is the program's, the
 * mutex liburcu's. */
static inline void urcu_defer_barrier(enum rcu_flavor f, void (*real)(void), uintptr_t ip, const char *what)
{
	struct thread_state *ts = thread_state();
	if (likely(urcu_call_is_ours(ts))) {
		if (unlikely(urcu_in_read_side(ts, f)))
			print_illegal_sync(ts, urcu_program_site(ip), what);
		rcu_grace_period_wait(ts, f, NULL, ip);
	}
	URCU_INNER(ts, real());
}

#define DEFERRED_PROTOTYPES(fl, reg)                                                           \
	void urcu_##fl##_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *));     \
	void urcu_##fl##_defer_rcu(void (*fct)(void *), void *p);                             \
	int urcu_##fl##_defer_register_thread(void);                                          \
	void urcu_##fl##_defer_unregister_thread(void);                                       \
	struct call_rcu_data *urcu_##fl##_get_cpu_call_rcu_data(int cpu);                     \
	struct call_rcu_data *urcu_##fl##_get_call_rcu_data(void);                            \
	void urcu_##fl##_free_all_cpu_call_rcu_data(void);                                    \
	void urcu_##fl##_defer_barrier(void);                                                 \
	void urcu_##fl##_defer_barrier_thread(void);
URCU_FLAVORS(DEFERRED_PROTOTYPES)

#define DEFERRED_REAL_FUNCTIONS(fl, reg)                   \
	INTERPOSE(urcu_##fl##_call_rcu);                    \
	INTERPOSE(urcu_##fl##_defer_rcu);                   \
	INTERPOSE(urcu_##fl##_defer_register_thread);       \
	INTERPOSE(urcu_##fl##_defer_unregister_thread);     \
	INTERPOSE(urcu_##fl##_get_cpu_call_rcu_data);       \
	INTERPOSE(urcu_##fl##_get_call_rcu_data);           \
	INTERPOSE(urcu_##fl##_free_all_cpu_call_rcu_data);  \
	INTERPOSE(urcu_##fl##_defer_barrier);               \
	INTERPOSE(urcu_##fl##_defer_barrier_thread);
URCU_FLAVORS(DEFERRED_REAL_FUNCTIONS)

#define DEFERRED_WRAPPERS(fl, reg)                                                                    \
	void urcu_##fl##_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *))             \
	{                                                                                             \
		urcu_call_rcu(FLAVOR_##fl, REAL(urcu_##fl##_call_rcu), head, func, CALLER_IP());      \
	}                                                                                             \
	void urcu_##fl##_defer_rcu(void (*fct)(void *), void *p)                                      \
	{                                                                                             \
		urcu_defer_rcu(FLAVOR_##fl, REAL(urcu_##fl##_defer_rcu), fct, p, CALLER_IP());        \
	}                                                                                             \
	int urcu_##fl##_defer_register_thread(void)                                                   \
	{                                                                                             \
		return urcu_defer_register(FLAVOR_##fl, REAL(urcu_##fl##_defer_register_thread));     \
	}                                                                                             \
	void urcu_##fl##_defer_unregister_thread(void)                                                \
	{                                                                                             \
		urcu_defer_unregister(FLAVOR_##fl, REAL(urcu_##fl##_defer_unregister_thread));        \
	}                                                                                             \
	struct call_rcu_data *urcu_##fl##_get_cpu_call_rcu_data(int cpu)                              \
	{                                                                                             \
		return urcu_get_cpu_call_rcu_data(FLAVOR_##fl, REAL(urcu_##fl##_get_cpu_call_rcu_data), \
						  cpu, CALLER_IP());                                  \
	}                                                                                             \
	struct call_rcu_data *urcu_##fl##_get_call_rcu_data(void)                                     \
	{                                                                                             \
		return urcu_get_call_rcu_data(FLAVOR_##fl, REAL(urcu_##fl##_get_call_rcu_data),       \
					      CALLER_IP());                                           \
	}                                                                                             \
	void urcu_##fl##_free_all_cpu_call_rcu_data(void)                                             \
	{                                                                                             \
		urcu_free_all_cpu_call_rcu_data(FLAVOR_##fl, REAL(urcu_##fl##_free_all_cpu_call_rcu_data), \
						CALLER_IP());                                         \
	}                                                                                             \
	void urcu_##fl##_defer_barrier(void)                                                          \
	{                                                                                             \
		urcu_defer_barrier(FLAVOR_##fl, REAL(urcu_##fl##_defer_barrier), CALLER_IP(),         \
				   "rcu_defer_barrier()");                                            \
	}                                                                                             \
	void urcu_##fl##_defer_barrier_thread(void)                                                   \
	{                                                                                             \
		urcu_defer_barrier(FLAVOR_##fl, REAL(urcu_##fl##_defer_barrier_thread), CALLER_IP(),  \
				   "rcu_defer_barrier_thread()");                                     \
	}
URCU_FLAVORS(DEFERRED_WRAPPERS)
