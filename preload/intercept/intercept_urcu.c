/* Interposed liburcu entry points, for all five flavor libraries. One
 * generic implementation per operation; the X-macro table in flavors.h
 * stamps out the exported urcu_<flavor>_* symbols that call it.
 * liburcu is never linked: the real functions are looked up on first use,
 * so a program using one flavor, or none, or dlopening liburcu late, works. */
#define _GNU_SOURCE
#include "checks/check_publication.h"
#include "rcu/urcu_calls.h"
#include "checks/rcu_tracking.h"
#include "runtime/real_functions.h"
#include "runtime/signal_state.h"

#include "rcu/urcu_inline_read.h"

/* ---- generic operations ----------------------------------------------- */

static inline __attribute__((always_inline)) void urcu_read_lock(enum rcu_flavor f, void (*real)(void), uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (unlikely(!urcu_call_is_ours(ts))) {
		real();
		return;
	}
	if (unlikely(!urcu_registered_reader(ts, f)))
		check_unregistered_reader(ts, f, urcu_program_site(ip), "rcu_read_lock()");
	if (likely(urcu_inline_ready(f)))
		urcu_inline_read_lock(f);
	else
		real();
	rcu_read_acquired(ts, f, f, NULL, ip);
}

/* A read unlock that is not the fast path's: liburcu's own call, perturb
 * on, or not simply the innermost section. Ends with the real unlock. */
typedef void (*urcu_void_fn)(void);

static __attribute__((noinline)) void urcu_read_unlock_slow(enum rcu_flavor f, urcu_void_fn real,
							     urcu_void_fn (*resolve)(const void *), uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (likely(urcu_call_is_ours(ts))) {
		rcu_read_released(ts, f, NULL, ip);
		perturb_point(ts);
	}
	if (unlikely(!real))
		real = resolve((const void *)ip);
	real();
}

/* `real` is the real unlock, NULL until resolved (then the slow path
 * resolves it with `resolve`). Only tail calls: nothing is kept across a
 * call and no register saved; the caller's address is read only on the
 * slow path. */
#define URCU_READ_UNLOCK(f, real_ptr, resolve) do {                               \
	struct thread_state *ts_ = thread_state();                               \
	urcu_void_fn real_ = __atomic_load_n(&(real_ptr), __ATOMIC_RELAXED);     \
	if (likely(real_ != NULL) && likely(urcu_call_is_ours(ts_) && !tracer_options.perturb) && \
	    likely(rcu_read_release_innermost(ts_, f))) {                        \
		if (likely(urcu_inline_ready(f))) {                              \
			urcu_inline_read_unlock(f);                              \
			return;                                                  \
		}                                                                \
		real_();                                                         \
		return;                                                          \
	}                                                                        \
	urcu_read_unlock_slow(f, real_, resolve, CALLER_IP());                   \
} while (0)

/* synchronize_rcu() and rcu_barrier() wait for every reader of the flavor,
 * the caller's own too: inside a read-side section of the flavor (or of a
 * header flavor built on it, or an inlined one) they never return. Said
 * before the call. rcu_barrier() also waits for the call_rcu() workers: a
 * callback (which runs on one of them) that calls it waits for itself. */
/* The real wait, announced to the watchdog (stall warnings): every grace
 * period wait, the program's, the header's and liburcu's own workers'. */
static inline void grace_period_wait(struct thread_state *ts, enum rcu_flavor f, void (*real)(void),
				     uintptr_t ip, int is_barrier)
{
	if (likely(!stall_checks) || ts->in_tracer) {
		real();
		return;
	}
	wait_begin(ts, WAIT_GRACE_PERIOD, NULL, 0, (uint8_t)f, is_barrier, ip, lock_stat_now());
	real();
	wait_end(ts);
}

static inline void urcu_wait_for_readers(enum rcu_flavor f, void (*real)(void), uintptr_t ip,
					 const char *what, int is_barrier)
{
	struct thread_state *ts = thread_state();
	if (unlikely(!urcu_call_is_ours(ts))) {
		grace_period_wait(ts, f, real, ip, is_barrier);
		return;
	}
	if (unlikely(urcu_in_read_side(ts, f)))
		print_illegal_sync(ts, urcu_program_site(ip), what);
	else if (unlikely(signal_usage_tracked) && signal_handler_running())
		print_illegal_sync_in_handler(ts, urcu_program_site(ip), what, signal_handler_running());
	else if (unlikely(is_barrier && ts->urcu_worker))
		print_suspicious_rcu_detail(ts, urcu_program_site(ip),
					    "rcu_barrier() from a call_rcu() worker thread",
					    "rcu_barrier() waits for the call_rcu() callbacks queued before it, "
					    "on every worker: a callback calling it waits for itself (liburcu: "
					    "rcu_barrier() should never be called from a call_rcu() thread)");
	if (unlikely(urcu_readable_flavors))
		check_inline_readers(ts, ip);
	rcu_grace_period_wait(ts, f, NULL, ip);
	URCU_INNER(ts, grace_period_wait(ts, f, real, urcu_program_site(ip), is_barrier));
}

static void urcu_register_thread(enum rcu_flavor f, void (*real)(void), uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	real();
	if (ts->in_tracer)
		return;
	ts->registered[f] = URCU_REGISTERED;
	registered_ip[f] = ip;
	forget_unregistered_reads(f);
	if (f == FLAVOR_qsbr) {
		ts->qsbr_offline = 0;   /* registration puts a QSBR thread online */
		ts->qsbr_since_ip = ip;
		ts->qsbr_since_what = QSBR_SINCE_REGISTERED;
	}
}

static void urcu_unregister_thread(enum rcu_flavor f, void (*real)(void), uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (urcu_call_is_ours(ts) && urcu_in_read_side(ts, f))
		print_suspicious_rcu(ts, urcu_program_site(ip), NULL, 0,
				     "rcu_unregister_thread() in RCU read-side critical section");
	rcu_deref_close(ts);   /* grace periods stop waiting for it */
	real();
	if (!ts->in_tracer && !ts->in_urcu && ts->registered[f] == URCU_REGISTERED)
		ts->registered[f] = URCU_UNREGISTERED;
}

/* QSBR: announcing a quiescent state, or going offline, inside a read-side
 * section lets a grace period end under the reader's feet. Either ends what
 * the thread holds: its dereference set closes before the real call (also
 * when liburcu calls it itself: synchronize_rcu() goes offline). */
static inline void qsbr_quiescent(void (*real)(void), uintptr_t ip, const char *what, int offline)
{
	struct thread_state *ts = thread_state();
	if (likely(urcu_call_is_ours(ts))) {
		if (unlikely(ts->nr_readers) && held_reader_on(ts, FLAVOR_qsbr)) {
			char msg[96];
			__builtin_snprintf(msg, sizeof(msg), "%s in RCU read-side critical section", what);
			print_suspicious_rcu(ts, urcu_program_site(ip), NULL, 0, msg);
		}
		if (offline)
			ts->qsbr_offline = 1;
		rcu_deref_perturb(ts);
	}
	rcu_deref_close(ts);
	real();
	if (!offline) {
		ts->qsbr_since_ip = ip;
		ts->qsbr_since_what = QSBR_SINCE_QUIESCENT;
	}
}

/* ---- the exported symbols, per flavor ----------------------------------- */

#define URCU_PROTOTYPES(fl, reg)                  \
	void urcu_##fl##_read_lock(void);          \
	void urcu_##fl##_read_unlock(void);        \
	int urcu_##fl##_read_ongoing(void);        \
	void urcu_##fl##_register_thread(void);    \
	void urcu_##fl##_unregister_thread(void);  \
	void urcu_##fl##_synchronize_rcu(void);    \
	void urcu_##fl##_barrier(void);
URCU_FLAVORS(URCU_PROTOTYPES)

#define URCU_REAL_FUNCTIONS(fl, reg)              \
	INTERPOSE(urcu_##fl##_read_lock);          \
	INTERPOSE(urcu_##fl##_read_unlock);        \
	INTERPOSE(urcu_##fl##_read_ongoing);       \
	INTERPOSE(urcu_##fl##_register_thread);    \
	INTERPOSE(urcu_##fl##_unregister_thread);  \
	INTERPOSE(urcu_##fl##_synchronize_rcu);    \
	INTERPOSE(urcu_##fl##_barrier);
URCU_FLAVORS(URCU_REAL_FUNCTIONS)

#define URCU_WRAPPERS(fl, reg)                                                   \
	void urcu_##fl##_read_lock(void)                                         \
	{                                                                        \
		urcu_read_lock(FLAVOR_##fl, REAL(urcu_##fl##_read_lock), CALLER_IP()); \
	}                                                                        \
	void urcu_##fl##_read_unlock(void)                                       \
	{                                                                        \
		URCU_READ_UNLOCK(FLAVOR_##fl, real_urcu_##fl##_read_unlock,      \
				 real_urcu_##fl##_read_unlock_slow);             \
	}                                                                        \
	int urcu_##fl##_read_ongoing(void)                                       \
	{                                                                        \
		return REAL(urcu_##fl##_read_ongoing)();                         \
	}                                                                        \
	void urcu_##fl##_register_thread(void)                                   \
	{                                                                        \
		if (reg)                                                         \
			urcu_register_thread(FLAVOR_##fl, REAL(urcu_##fl##_register_thread), CALLER_IP()); \
		else                                                             \
			REAL(urcu_##fl##_register_thread)();                     \
	}                                                                        \
	void urcu_##fl##_unregister_thread(void)                                 \
	{                                                                        \
		if (reg)                                                         \
			urcu_unregister_thread(FLAVOR_##fl, REAL(urcu_##fl##_unregister_thread), CALLER_IP()); \
		else                                                             \
			REAL(urcu_##fl##_unregister_thread)();                   \
	}                                                                        \
	void urcu_##fl##_synchronize_rcu(void)                                   \
	{                                                                        \
		urcu_wait_for_readers(FLAVOR_##fl, REAL(urcu_##fl##_synchronize_rcu), \
				      CALLER_IP(), "synchronize_rcu()", 0);      \
	}                                                                        \
	void urcu_##fl##_barrier(void)                                           \
	{                                                                        \
		urcu_wait_for_readers(FLAVOR_##fl, REAL(urcu_##fl##_barrier),    \
				      CALLER_IP(), "rcu_barrier()", 1);          \
	}
URCU_FLAVORS(URCU_WRAPPERS)

/* ---- QSBR's quiescent-state announcements ------------------------------- */

void urcu_qsbr_quiescent_state(void);
void urcu_qsbr_thread_offline(void);
void urcu_qsbr_thread_online(void);
INTERPOSE(urcu_qsbr_quiescent_state);
INTERPOSE(urcu_qsbr_thread_offline);
INTERPOSE(urcu_qsbr_thread_online);

void urcu_qsbr_quiescent_state(void)
{
	qsbr_quiescent(REAL(urcu_qsbr_quiescent_state), CALLER_IP(), "rcu_quiescent_state()", 0);
}

void urcu_qsbr_thread_offline(void)
{
	qsbr_quiescent(REAL(urcu_qsbr_thread_offline), CALLER_IP(), "rcu_thread_offline()", 1);
}

void urcu_qsbr_thread_online(void)
{
	struct thread_state *ts = thread_state();
	REAL(urcu_qsbr_thread_online)();
	if (urcu_call_is_ours(ts))
		ts->qsbr_offline = 0;
	ts->qsbr_since_ip = CALLER_IP();
	ts->qsbr_since_what = QSBR_SINCE_ONLINE;
}

/* ---- pointer publication and dereference -------------------------------- */

void *rcu_dereference_sym(void *p);
void *urcu_bp_dereference_sym(void *p);
void *rcu_set_pointer_sym(void **p, void *v);
void *urcu_bp_set_pointer_sym(void **p, void *v);
void *rcu_xchg_pointer_sym(void **p, void *v);
void *urcu_bp_xchg_pointer_sym(void **p, void *v);
void *rcu_cmpxchg_pointer_sym(void **p, void *old, void *_new);
void *urcu_bp_cmpxchg_pointer_sym(void **p, void *old, void *_new);
INTERPOSE(rcu_dereference_sym);
INTERPOSE(urcu_bp_dereference_sym);
INTERPOSE(rcu_set_pointer_sym);
INTERPOSE(urcu_bp_set_pointer_sym);
INTERPOSE(rcu_xchg_pointer_sym);
INTERPOSE(urcu_bp_xchg_pointer_sym);
INTERPOSE(rcu_cmpxchg_pointer_sym);
INTERPOSE(urcu_bp_cmpxchg_pointer_sym);

/* An uninstrumented rcu_dereference(): legal in any read-side section, under
 * any lock (rule 2: we cannot know which lock is the update-side one), or
 * in an online registered QSBR thread. Checked sites use the header instead.
 * A reader's dereference is remembered until its section ends (the free()
 * check); p is what the program loaded, the value this call returns. */
static __attribute__((noinline)) void check_dereference_slow(struct thread_state *ts, const void *p, uintptr_t ip)
{
	if (unlikely(!dereference_is_protected(ts)))
		check_suspicious_dereference(ts, ip);
	else
		rcu_deref_note(ts, p, ip);
}

static inline __attribute__((always_inline)) void check_dereference(const void *p, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer | ts->in_urcu)
		return;
	if (likely(ts->nr_readers && !ts->nr_locks)) {   /* a reader: the common case */
		if (p)
			rcu_deref_record(ts, p, ip);
	} else {
		check_dereference_slow(ts, p, ip);
	}
}

/* The wrappers: a reader holding no lock records the pointer with no call
 * and tail-calls the real function (no register saved); everything else,
 * an unresolved real function included, goes through the slow path. */
typedef void *(*deref_fn)(void *);

static __attribute__((noinline)) void *dereference_slow(void *p, uintptr_t ip, deref_fn real,
							  deref_fn (*resolve)(const void *))
{
	check_dereference(p, ip);
	if (unlikely(!real))
		real = resolve((const void *)ip);
	return real(p);
}

/* The fast path records the pointer and returns it: liburcu's own
 * rcu_dereference_sym() is `return p` on x86-64 (a load of its argument;
 * _rcu_dereference()'s read barrier is empty there), so the real one is
 * called only from the slow path. */
#define DEREFERENCE_WRAPPER(real_ptr, resolve) do {                               \
	struct thread_state *ts_ = thread_state();                               \
	if (likely(!(ts_->in_tracer | ts_->in_urcu)) &&                          \
	    likely(ts_->nr_readers && !ts_->nr_locks && p) &&                    \
	    likely(rcu_deref_record_fast(ts_, p, CALLER_IP())))                  \
		return p;                                                        \
	return dereference_slow(p, CALLER_IP(), __atomic_load_n(&(real_ptr), __ATOMIC_RELAXED), resolve); \
} while (0)

void *rcu_dereference_sym(void *p)
{
	DEREFERENCE_WRAPPER(real_rcu_dereference_sym, real_rcu_dereference_sym_slow);
}

void *urcu_bp_dereference_sym(void *p)
{
	DEREFERENCE_WRAPPER(real_urcu_bp_dereference_sym, real_urcu_bp_dereference_sym_slow);
}

/* Publication: rcu_assign_pointer() and rcu_set_pointer() of programs built
 * without _LGPL_SOURCE, checked for concurrent updaters that share no lock
 * (check_publication.h; the header does it for the inline ones). The
 * exchanges are atomic by design: not checked. */
void *rcu_set_pointer_sym(void **p, void *v)
{
	check_publication(thread_state(), p, v, CALLER_IP());
	return REAL(rcu_set_pointer_sym)(p, v);
}

void *urcu_bp_set_pointer_sym(void **p, void *v)
{
	check_publication(thread_state(), p, v, CALLER_IP());
	return REAL(urcu_bp_set_pointer_sym)(p, v);
}

void *rcu_xchg_pointer_sym(void **p, void *v) { return REAL(rcu_xchg_pointer_sym)(p, v); }
void *urcu_bp_xchg_pointer_sym(void **p, void *v) { return REAL(urcu_bp_xchg_pointer_sym)(p, v); }
void *rcu_cmpxchg_pointer_sym(void **p, void *old, void *_new)
{
	return REAL(rcu_cmpxchg_pointer_sym)(p, old, _new);
}
void *urcu_bp_cmpxchg_pointer_sym(void **p, void *old, void *_new)
{
	return REAL(urcu_bp_cmpxchg_pointer_sym)(p, old, _new);
}
