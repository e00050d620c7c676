/*
 * lockdep-rcu.h - the kernel's lockdep-RCU checking API for userspace C.
 *
 * Include it after your liburcu flavor's header (<urcu.h>, <urcu-qsbr.h>,
 * <urcu-bp.h>, ...). Every macro below works in two configurations, like the
 * kernel's CONFIG_PROVE_RCU and !CONFIG_PROVE_RCU, chosen at run time:
 *
 *  - with liblockdep-rcu.so preloaded, each check site is checked and a
 *    failed check prints a one-shot "WARNING: suspicious RCU usage" splat;
 *  - without it, every *_held() is non-zero, nothing warns and check
 *    conditions are never evaluated (but they are still type-checked).
 *
 * Define LOCKDEP_RCU_OFF to compile every check away.
 *
 * Following the 2010 article, rcu_dereference_check(p, c) warns iff !c: it
 * does NOT add rcu_read_lock_held() to c as today's kernel does. Write
 * rcu_dereference_check(p, rcu_read_lock_held() || lockdep_is_held(&l)).
 */
#ifndef LOCKDEP_RCU_H
#define LOCKDEP_RCU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the interface to the preloaded tracer ------------------------------ */

#define LOCKDEP_RCU_API_VERSION 1

/* Flavors as the tracer numbers them: liburcu's five, then the header's. */
enum lockdep_rcu_flavor {
	LOCKDEP_RCU_FLAVOR_MEMB, LOCKDEP_RCU_FLAVOR_MB, LOCKDEP_RCU_FLAVOR_SIGNAL,
	LOCKDEP_RCU_FLAVOR_QSBR, LOCKDEP_RCU_FLAVOR_BP,
	LOCKDEP_RCU_FLAVOR_BH, LOCKDEP_RCU_FLAVOR_SCHED, LOCKDEP_RCU_FLAVOR_SRCU,
	LOCKDEP_RCU_FLAVOR_VANILLA = -1, /* any liburcu flavor: rcu_read_lock() */
};

enum lockdep_rcu_qsbr_event {
	LOCKDEP_RCU_QSBR_QUIESCENT, LOCKDEP_RCU_QSBR_OFFLINE, LOCKDEP_RCU_QSBR_ONLINE,
};

/* Exported by liblockdep-rcu.so as the data symbol `lockdep_rcu_api`.
 * Functions that take no call-site argument use their return address. */
struct lockdep_rcu_api {
	unsigned int version;
	unsigned int size;
	int (*read_lock_held)(int flavor, const void *srcu);
	int (*lock_is_held)(const void *lock);
	void (*suspicious)(const char *file, int line, const char *message);
	void (*assert_held)(const void *lock, int want_held, const char *file, int line,
			    const char *expression);
	/* A header read side built on the program's liburcu flavor: the
	 * liburcu call between begin and end is accounted as `flavor`. */
	void (*read_lock_begin)(void);
	void (*read_lock_end)(int flavor, int underlying, const void *srcu);
	void (*read_unlock_begin)(int flavor, const void *srcu);
	void (*read_unlock_end)(void);
	/* synchronize_srcu() and friends: checked, then liburcu's wait. */
	void (*sync_begin)(int flavor, int underlying, const void *srcu, const char *what);
	void (*sync_end)(void);
	/* QSBR state changes of _LGPL_SOURCE programs, which liburcu inlines. */
	void (*qsbr_event)(int event);
	/* Lock-order annotations. */
	void (*set_class)(const void *lock, const void *key, const char *name);
	void (*set_next_subclass)(unsigned subclass);
	/* The pointer a checked dereference loaded: a reader holds it until
	 * its read-side section ends (a free() meanwhile is reported). */
	void (*dereferenced)(const void *p);
	/* A checked cds_lfht traversal's condition holds: the table call that
	 * starts it (made between allowed=1 and allowed=0) is legal. */
	void (*traversal_allowed)(int allowed);
	/* rcu_assign_pointer()/rcu_set_pointer() of v to *p, inlined by an
	 * _LGPL_SOURCE program: called before the store. */
	void (*published)(void *const *p, const void *v);
};

#ifndef LOCKDEP_RCU_IMPLEMENTATION

#if defined(LOCKDEP_RCU_OFF)
#define lockdep_rcu_api_get() ((const struct lockdep_rcu_api *)0)
#else
#include <dlfcn.h>

/* Looked up once per translation unit; racing first lookups store the same
 * value. Without the preload the cached NULL makes every check one load. */
static const struct lockdep_rcu_api *lockdep_rcu__api __attribute__((unused));
static int lockdep_rcu__api_looked_up __attribute__((unused));

static __attribute__((noinline, unused)) const struct lockdep_rcu_api *lockdep_rcu__lookup(void)
{
	const struct lockdep_rcu_api *api =
		(const struct lockdep_rcu_api *)dlsym((void *)0 /* RTLD_DEFAULT */, "lockdep_rcu_api");
	if (api && (api->version != LOCKDEP_RCU_API_VERSION ||
		    api->size < sizeof(struct lockdep_rcu_api)))
		api = (const struct lockdep_rcu_api *)0;
	__atomic_store_n(&lockdep_rcu__api, api, __ATOMIC_RELAXED);
	__atomic_store_n(&lockdep_rcu__api_looked_up, 1, __ATOMIC_RELEASE);
	return api;
}

static inline __attribute__((always_inline, unused)) const struct lockdep_rcu_api *
lockdep_rcu_api_get(void)
{
	if (__builtin_expect(__atomic_load_n(&lockdep_rcu__api_looked_up, __ATOMIC_ACQUIRE), 1))
		return __atomic_load_n(&lockdep_rcu__api, __ATOMIC_RELAXED);
	return lockdep_rcu__lookup();
}
#endif /* LOCKDEP_RCU_OFF */

#define LOCKDEP_RCU__INLINE static inline __attribute__((always_inline, unused))

/* ---- which liburcu flavor this program uses ----------------------------- */

#if defined(_URCU_QSBR_H)
#define LOCKDEP_RCU__URCU LOCKDEP_RCU_FLAVOR_QSBR
#define LOCKDEP_RCU__PREFIX(op) urcu_qsbr_##op
#elif defined(_URCU_BP_H)
#define LOCKDEP_RCU__URCU LOCKDEP_RCU_FLAVOR_BP
#define LOCKDEP_RCU__PREFIX(op) urcu_bp_##op
#elif defined(_URCU_MEMB_H)
#define LOCKDEP_RCU__URCU LOCKDEP_RCU_FLAVOR_MEMB
#define LOCKDEP_RCU__PREFIX(op) urcu_memb_##op
#elif defined(_URCU_MB_H)
#define LOCKDEP_RCU__URCU LOCKDEP_RCU_FLAVOR_MB
#define LOCKDEP_RCU__PREFIX(op) urcu_mb_##op
#elif defined(_URCU_SIGNAL_H)
#define LOCKDEP_RCU__URCU LOCKDEP_RCU_FLAVOR_SIGNAL
#define LOCKDEP_RCU__PREFIX(op) urcu_signal_##op
#endif

/* ---- "held" queries: the article's quick reference --------------------- */

LOCKDEP_RCU__INLINE int rcu_read_lock_held(void)
{
	const struct lockdep_rcu_api *api = lockdep_rcu_api_get();
	return api ? api->read_lock_held(LOCKDEP_RCU_FLAVOR_VANILLA, (const void *)0) : 1;
}

LOCKDEP_RCU__INLINE int rcu_read_lock_bh_held(void)
{
	const struct lockdep_rcu_api *api = lockdep_rcu_api_get();
	return api ? api->read_lock_held(LOCKDEP_RCU_FLAVOR_BH, (const void *)0) : 1;
}

LOCKDEP_RCU__INLINE int rcu_read_lock_sched_held(void)
{
	const struct lockdep_rcu_api *api = lockdep_rcu_api_get();
	return api ? api->read_lock_held(LOCKDEP_RCU_FLAVOR_SCHED, (const void *)0) : 1;
}

struct srcu_struct;
LOCKDEP_RCU__INLINE int srcu_read_lock_held(const struct srcu_struct *sp)
{
	const struct lockdep_rcu_api *api = lockdep_rcu_api_get();
	return api ? api->read_lock_held(LOCKDEP_RCU_FLAVOR_SRCU, sp) : 1;
}

/* Non-zero if this thread holds the pthread mutex, rwlock (either side),
 * spinlock or C11 mtx_t at `lock`. Always non-zero without the preload. */
#define lockdep_is_held(lock) \
	(lockdep_rcu_api_get() ? lockdep_rcu_api_get()->lock_is_held((const void *)(lock)) : 1)

/* ---- dereferencing ---------------------------------------------------- */

/* p must be an lvalue, as in the kernel. Never checks. */
#define rcu_dereference_raw(p) __extension__ ({                                  \
	__typeof__(p) lockdep_rcu__p1 = __atomic_load_n(&(p), __ATOMIC_CONSUME);   \
	(lockdep_rcu__p1);                                                        \
})

/* Warns iff !c (and the tracer is present): the article's semantics. The
 * condition is not evaluated without the tracer, but it is compiled. The
 * tracer also learns the pointer loaded: inside a read-side section, a
 * free() of that object by another thread before the section ends is the
 * bug RCU exists to prevent. */
#define rcu_dereference_check(p, c) __extension__ ({                             \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a && !(c))                                               \
		lockdep_rcu__a->suspicious(__FILE__, __LINE__,                     \
					   "suspicious rcu_dereference_check() usage"); \
	__typeof__(p) lockdep_rcu__p2 = rcu_dereference_raw(p);                  \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->dereferenced((const void *)lockdep_rcu__p2);       \
	(lockdep_rcu__p2);                                                        \
})

#undef rcu_dereference
#define rcu_dereference(p) rcu_dereference_check(p, rcu_read_lock_held())
#define rcu_dereference_bh(p) rcu_dereference_check(p, rcu_read_lock_bh_held())
#define rcu_dereference_sched(p) rcu_dereference_check(p, rcu_read_lock_sched_held())
#define srcu_dereference(p, sp) rcu_dereference_check(p, srcu_read_lock_held(sp))
#define srcu_dereference_check(p, sp, c) rcu_dereference_check(p, (c) || srcu_read_lock_held(sp))

/* Update side: the caller holds what keeps the pointer stable, so no
 * ordering is needed; the condition says what that is. */
#define rcu_dereference_protected(p, c) __extension__ ({                         \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a && !(c))                                               \
		lockdep_rcu__a->suspicious(__FILE__, __LINE__,                     \
					   "suspicious rcu_dereference_protected() usage"); \
	(p);                                                                      \
})

/* The pointer's value, not to be dereferenced: no protection needed. */
#define rcu_access_pointer(p) __extension__ ({                                   \
	__typeof__(p) lockdep_rcu__p1 = __atomic_load_n(&(p), __ATOMIC_RELAXED);   \
	(lockdep_rcu__p1);                                                        \
})

/* Warns, with message, when c is TRUE (the kernel's RCU_LOCKDEP_WARN). */
#define RCU_LOCKDEP_WARN(c, message) do {                                        \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a && (c))                                                \
		lockdep_rcu__a->suspicious(__FILE__, __LINE__, message);           \
} while (0)

#define lockdep_assert_held(lock) do {                                           \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->assert_held((const void *)(lock), 1, __FILE__, __LINE__, \
					    "lockdep_assert_held(" #lock ")");      \
} while (0)

#define lockdep_assert_not_held(lock) do {                                       \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->assert_held((const void *)(lock), 0, __FILE__, __LINE__, \
					    "lockdep_assert_not_held(" #lock ")");  \
} while (0)

/* ---- lock-order annotations (kernel lockdep's) --------------------------- */

/* Puts `lock` in the class identified by the address `key` (any static
 * object), named `name` in reports: locks made by a common helper can be
 * told apart, or locks made in different places put together. */
#define lockdep_set_class_and_name(lock, key, name) do {                          \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->set_class((const void *)(lock), (const void *)(key), name); \
} while (0)

/* Takes a lock of a class already held, one nesting level down (parent
 * then child of a tree): subclass 1..7 is a class of its own. */
#define LOCKDEP_RCU__NESTED(subclass, call) __extension__ ({                      \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->set_next_subclass(subclass);                       \
	call;                                                                     \
})
#define pthread_mutex_lock_nested(m, subclass) LOCKDEP_RCU__NESTED(subclass, pthread_mutex_lock(m))
#define pthread_rwlock_wrlock_nested(rw, subclass) LOCKDEP_RCU__NESTED(subclass, pthread_rwlock_wrlock(rw))
#define pthread_rwlock_rdlock_nested(rw, subclass) LOCKDEP_RCU__NESTED(subclass, pthread_rwlock_rdlock(rw))

/* ---- read sides userspace lacks, built on the program's liburcu flavor --- */

#ifdef LOCKDEP_RCU__URCU

/* One read-side entry of `flavor`, protected by a real liburcu read side. */
#define LOCKDEP_RCU__READ_LOCK(flavor, sp) do {                                  \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->read_lock_begin();                                 \
	LOCKDEP_RCU__PREFIX(read_lock)();                                         \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->read_lock_end(flavor, LOCKDEP_RCU__URCU, sp);       \
} while (0)

#define LOCKDEP_RCU__READ_UNLOCK(flavor, sp) do {                                \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->read_unlock_begin(flavor, sp);                     \
	LOCKDEP_RCU__PREFIX(read_unlock)();                                       \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->read_unlock_end();                                 \
} while (0)

#define LOCKDEP_RCU__SYNCHRONIZE(flavor, sp, what) do {                          \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->sync_begin(flavor, LOCKDEP_RCU__URCU, sp, what);    \
	LOCKDEP_RCU__PREFIX(synchronize_rcu)();                                   \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->sync_end();                                        \
} while (0)

#define rcu_read_lock_bh() LOCKDEP_RCU__READ_LOCK(LOCKDEP_RCU_FLAVOR_BH, (const void *)0)
#define rcu_read_unlock_bh() LOCKDEP_RCU__READ_UNLOCK(LOCKDEP_RCU_FLAVOR_BH, (const void *)0)
#define rcu_read_lock_sched() LOCKDEP_RCU__READ_LOCK(LOCKDEP_RCU_FLAVOR_SCHED, (const void *)0)
#define rcu_read_unlock_sched() LOCKDEP_RCU__READ_UNLOCK(LOCKDEP_RCU_FLAVOR_SCHED, (const void *)0)
#define synchronize_rcu_bh() LOCKDEP_RCU__SYNCHRONIZE(LOCKDEP_RCU_FLAVOR_BH, (const void *)0, "synchronize_rcu_bh()")
#define synchronize_sched() LOCKDEP_RCU__SYNCHRONIZE(LOCKDEP_RCU_FLAVOR_SCHED, (const void *)0, "synchronize_sched()")

/* SRCU: each domain is its own flavor for the checks; the protection is the
 * program's liburcu flavor, so a grace period of one domain also waits for
 * the readers of every other domain (correct, if slower than the kernel's). */
struct srcu_struct {
	int lockdep_rcu_initialized;
};
#define DEFINE_SRCU(name) struct srcu_struct name = { 1 }
#define DEFINE_STATIC_SRCU(name) static struct srcu_struct name = { 1 }

LOCKDEP_RCU__INLINE int init_srcu_struct(struct srcu_struct *sp)
{
	sp->lockdep_rcu_initialized = 1;
	return 0;
}

LOCKDEP_RCU__INLINE void cleanup_srcu_struct(struct srcu_struct *sp)
{
	sp->lockdep_rcu_initialized = 0;
}

/* Macros rather than functions so that a report names the caller's line. */
LOCKDEP_RCU__INLINE const struct srcu_struct *lockdep_rcu__srcu(const struct srcu_struct *sp)
{
	return sp;   /* type-checks the argument */
}

#define srcu_read_lock(sp) __extension__ ({                                      \
	LOCKDEP_RCU__READ_LOCK(LOCKDEP_RCU_FLAVOR_SRCU, lockdep_rcu__srcu(sp));   \
	0;                                                                        \
})
#define srcu_read_unlock(sp, idx) do {                                           \
	(void)(idx);                                                              \
	LOCKDEP_RCU__READ_UNLOCK(LOCKDEP_RCU_FLAVOR_SRCU, lockdep_rcu__srcu(sp));  \
} while (0)
#define synchronize_srcu(sp) \
	LOCKDEP_RCU__SYNCHRONIZE(LOCKDEP_RCU_FLAVOR_SRCU, lockdep_rcu__srcu(sp), "synchronize_srcu()")

/* _LGPL_SOURCE programs inline liburcu's read side, which no preload can
 * see: route it through the tracer here. Other programs call the exported
 * functions, which the preload interposes directly. */
#if defined(_LGPL_SOURCE) || defined(URCU_INLINE_SMALL_FUNCTIONS)
#undef rcu_read_lock
#undef rcu_read_unlock
#define rcu_read_lock() LOCKDEP_RCU__READ_LOCK(LOCKDEP_RCU__URCU, (const void *)0)
#define rcu_read_unlock() LOCKDEP_RCU__READ_UNLOCK(LOCKDEP_RCU__URCU, (const void *)0)
/* Publication, inlined: told to the tracer (checked for concurrent updaters
 * that share no lock) before liburcu's store; rcu_assign_pointer() is built
 * on it. */
#undef rcu_set_pointer
#define rcu_set_pointer(p, v) do {                                               \
	__typeof__(*(p)) lockdep_rcu__v = (v);                                   \
	const struct lockdep_rcu_api *lockdep_rcu__p = lockdep_rcu_api_get();     \
	if (lockdep_rcu__p)                                                      \
		lockdep_rcu__p->published((void *const *)(p), (const void *)lockdep_rcu__v); \
	_rcu_set_pointer(p, lockdep_rcu__v);                                     \
} while (0)
#if LOCKDEP_RCU__URCU == LOCKDEP_RCU_FLAVOR_QSBR
#define LOCKDEP_RCU__QSBR(event, call) do {                                      \
	const struct lockdep_rcu_api *lockdep_rcu__a = lockdep_rcu_api_get();      \
	if (lockdep_rcu__a)                                                       \
		lockdep_rcu__a->qsbr_event(event);                                 \
	call();                                                                   \
} while (0)
#undef rcu_quiescent_state
#undef rcu_thread_offline
#undef rcu_thread_online
#define rcu_quiescent_state() LOCKDEP_RCU__QSBR(LOCKDEP_RCU_QSBR_QUIESCENT, urcu_qsbr_quiescent_state)
#define rcu_thread_offline() LOCKDEP_RCU__QSBR(LOCKDEP_RCU_QSBR_OFFLINE, urcu_qsbr_thread_offline)
#define rcu_thread_online() LOCKDEP_RCU__QSBR(LOCKDEP_RCU_QSBR_ONLINE, urcu_qsbr_thread_online)
#endif
#endif

/* liburcu's RCU list traversals, checked (the article's first future
 * direction; the kernel's list_for_each_entry_rcu() and
 * hlist_for_each_entry_rcu() since 5.4). With <urcu/rculist.h> or
 * <urcu/rcuhlist.h> included before this header, their traversals take an
 * optional last argument, a lockdep condition under which the traversal is
 * legal outside a read-side section:
 * cds_list_for_each_entry_rcu(pos, head, member, lockdep_is_held(&list_lock)).
 * It is checked once, at the traversal's start, as the kernel does: one
 * report per site, "RCU-list traversed in non-reader section!!". The
 * entries are loaded as liburcu loads them, and the tracer learns each (a
 * free() of one by another thread while the section lasts is reported).
 * Without the preload the condition is not evaluated. */
#define LOCKDEP_RCU__SECOND(a, b, ...) b
/* 1 when a condition was given, 0 otherwise: a constant either way. */
#define LOCKDEP_RCU__THIRD(a, b, c, ...) c
#define LOCKDEP_RCU__HAS_CONDITION(...) LOCKDEP_RCU__THIRD(0, ##__VA_ARGS__, 1, 0)
#define LOCKDEP_RCU__CONDITION(...) LOCKDEP_RCU__SECOND(0, ##__VA_ARGS__, 0)
#if defined(_URCU_RCULIST_H) || defined(_URCU_RCUHLIST_H)
#define LOCKDEP_RCU__LIST_CHECK(...)                                                   \
	((lockdep_rcu_api_get() && !(rcu_read_lock_held() || LOCKDEP_RCU__CONDITION(__VA_ARGS__))) \
		 ? lockdep_rcu_api_get()->suspicious(__FILE__, __LINE__,                 \
						     "RCU-list traversed in non-reader section!") \
		 : (void)0)
#define LOCKDEP_RCU__LIST_NEXT(p) __extension__ ({                                \
	__typeof__(p) lockdep_rcu__n = rcu_dereference_raw(p);                    \
	const struct lockdep_rcu_api *lockdep_rcu__l = lockdep_rcu_api_get();      \
	if (lockdep_rcu__l)                                                       \
		lockdep_rcu__l->dereferenced((const void *)lockdep_rcu__n);        \
	(lockdep_rcu__n);                                                         \
})
#endif
#ifdef _URCU_RCULIST_H
#undef cds_list_for_each_rcu
#define cds_list_for_each_rcu(pos, head, ...)                                          \
	for (LOCKDEP_RCU__LIST_CHECK(__VA_ARGS__), pos = LOCKDEP_RCU__LIST_NEXT((head)->next); \
	     (pos) != (head); pos = LOCKDEP_RCU__LIST_NEXT((pos)->next))
#undef cds_list_for_each_entry_rcu
#define cds_list_for_each_entry_rcu(pos, head, member, ...)                            \
	for (LOCKDEP_RCU__LIST_CHECK(__VA_ARGS__),                                    \
	     pos = cds_list_entry(LOCKDEP_RCU__LIST_NEXT((head)->next), __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                                 \
	     pos = cds_list_entry(LOCKDEP_RCU__LIST_NEXT((pos)->member.next), __typeof__(*(pos)), member))
#endif /* _URCU_RCULIST_H */
#ifdef _URCU_RCUHLIST_H
#undef cds_hlist_for_each_rcu
#define cds_hlist_for_each_rcu(pos, head, ...)                                         \
	for (LOCKDEP_RCU__LIST_CHECK(__VA_ARGS__), pos = LOCKDEP_RCU__LIST_NEXT((head)->next); \
	     (pos) != NULL; pos = LOCKDEP_RCU__LIST_NEXT((pos)->next))
#undef cds_hlist_for_each_entry_rcu
#define cds_hlist_for_each_entry_rcu(entry, pos, head, member, ...)                    \
	for (LOCKDEP_RCU__LIST_CHECK(__VA_ARGS__), pos = LOCKDEP_RCU__LIST_NEXT((head)->next), \
	     entry = cds_hlist_entry(pos, __typeof__(*(entry)), member);               \
	     (pos) != NULL;                                                            \
	     pos = LOCKDEP_RCU__LIST_NEXT((pos)->next),                                \
	     entry = cds_hlist_entry(pos, __typeof__(*(entry)), member))
#undef cds_hlist_for_each_entry_rcu_2
#define cds_hlist_for_each_entry_rcu_2(entry, head, member, ...)                       \
	for (LOCKDEP_RCU__LIST_CHECK(__VA_ARGS__),                                    \
	     entry = cds_hlist_entry_safe(LOCKDEP_RCU__LIST_NEXT((head)->next), __typeof__(*(entry)), member); \
	     (entry) != NULL;                                                          \
	     entry = cds_hlist_entry_safe(LOCKDEP_RCU__LIST_NEXT((entry)->member.next), \
					  __typeof__(*(entry)), member))
#endif /* _URCU_RCUHLIST_H */

#ifdef _URCU_RCULFHASH_H
/* The hash table's traversals: the preload checks the table calls that
 * start them (cds_lfht_first(), cds_lfht_lookup()) against the table's
 * flavor and reports at the traversal's line. With this header they take
 * an optional last argument, a lockdep condition under which the traversal
 * is legal outside a read-side section, as the lists do; when it holds,
 * the starting call is made as allowed. Without a condition they are
 * liburcu's own; without the preload the condition is not evaluated. */
#define LOCKDEP_RCU__LFHT_START(call, ...)                                             \
	((LOCKDEP_RCU__HAS_CONDITION(__VA_ARGS__) && lockdep_rcu_api_get() &&           \
	  (LOCKDEP_RCU__CONDITION(__VA_ARGS__)))                                         \
		 ? (lockdep_rcu_api_get()->traversal_allowed(1), (call),                 \
		    lockdep_rcu_api_get()->traversal_allowed(0))                          \
		 : (void)(call))
#undef cds_lfht_for_each
#define cds_lfht_for_each(ht, iter, node, ...)                                          \
	for (LOCKDEP_RCU__LFHT_START(cds_lfht_first(ht, iter), __VA_ARGS__),            \
	     node = cds_lfht_iter_get_node(iter);                                       \
	     node != NULL; cds_lfht_next(ht, iter), node = cds_lfht_iter_get_node(iter))
#undef cds_lfht_for_each_duplicate
#define cds_lfht_for_each_duplicate(ht, hash, match, key, iter, node, ...)             \
	for (LOCKDEP_RCU__LFHT_START(cds_lfht_lookup(ht, hash, match, key, iter), __VA_ARGS__), \
	     node = cds_lfht_iter_get_node(iter);                                       \
	     node != NULL;                                                              \
	     cds_lfht_next_duplicate(ht, match, key, iter), node = cds_lfht_iter_get_node(iter))
#undef cds_lfht_for_each_entry
#define cds_lfht_for_each_entry(ht, iter, pos, member, ...)                             \
	for (LOCKDEP_RCU__LFHT_START(cds_lfht_first(ht, iter), __VA_ARGS__),            \
	     pos = caa_container_of(cds_lfht_iter_get_node(iter), __typeof__(*(pos)), member); \
	     cds_lfht_iter_get_node(iter) != NULL;                                      \
	     cds_lfht_next(ht, iter),                                                   \
	     pos = caa_container_of(cds_lfht_iter_get_node(iter), __typeof__(*(pos)), member))
#undef cds_lfht_for_each_entry_duplicate
#define cds_lfht_for_each_entry_duplicate(ht, hash, match, key, iter, pos, member, ...) \
	for (LOCKDEP_RCU__LFHT_START(cds_lfht_lookup(ht, hash, match, key, iter), __VA_ARGS__), \
	     pos = caa_container_of(cds_lfht_iter_get_node(iter), __typeof__(*(pos)), member); \
	     cds_lfht_iter_get_node(iter) != NULL;                                      \
	     cds_lfht_next_duplicate(ht, match, key, iter),                             \
	     pos = caa_container_of(cds_lfht_iter_get_node(iter), __typeof__(*(pos)), member))
#endif /* _URCU_RCULFHASH_H */

#endif /* LOCKDEP_RCU__URCU */
#endif /* LOCKDEP_RCU_IMPLEMENTATION */

#ifdef __cplusplus
}
#endif

#endif /* LOCKDEP_RCU_H */
